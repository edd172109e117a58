import { open, rm } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { Redis } from 'ioredis';
import { apiClientsFromConfig } from './api/clients.ts';
import { loadConfig, type Config } from './config.ts';
import { ProductSyncError } from './errors.ts';
import { redact } from './redact.ts';
import { sharedRateKey } from './redis-keys.ts';
import { writingTo } from './fs-errors.ts';
import { logger } from './logger.ts';
import { makeDir } from './make-dir.ts';
import { redisReason, redisState } from './redis-state.ts';
import { Throttle } from './pipeline/sync/throttle.ts';
import { ApiLimiter, showLimiter } from './api/api-limiter.ts';
import { SharedRate } from './api/shared-rate.ts';
import type { RunContext } from './pipeline/run/run.ts';
import { createReferenceCache, RUN_CACHE_SETTINGS } from './api/reference-cache.ts';
import { DEMO_COMPANY_ID } from './sandbox/defaults.ts';

/** Options every run command shares. */
export interface RunFlags {
  sandbox?: boolean;
  reportDir?: string;
  owner?: string;
}

/** The one line for a Redis that does not answer (its URL's password redacted). */
export function redisUnreachable(url: string, err: unknown, why = ''): ProductSyncError {
  return new ProductSyncError(
    'PS_ERR_REDIS_UNREACHABLE',
    `cannot reach Redis at ${redact(url)}: ${redisReason(err)}${why}`,
    { cause: err },
  );
}

/**
 * Creates the report directory (mkdir -p, makeDir: one that ends under /proc) and checks a file can be created in it,
 * before anything is read or sent: a report dir below a regular file, read-only, not this user's, or under /proc or
 * /sys is refused at once (PS_ERR_FILE_WRITE, exit 2), not a run that fails when it writes its first file. A probe file
 * is created and removed (access(2) says yes to root on a directory the kernel will refuse). `what` names the setting.
 */
export async function ensureReportDir(dir: string, what = 'REPORT_DIR'): Promise<void> {
  const abs = resolve(dir);
  await writingTo(`cannot create or write the report directory given by ${what}`, abs, async () => {
    await makeDir(abs);
    const probe = join(abs, `.product-sync-probe-${process.pid}`);
    await (await open(probe, 'w')).close();
    await rm(probe, { force: true });
  });
}

/** A run context for a CLI command, and how to release it. */
export interface CommandContext {
  ctx: RunContext;
  owner?: string;
  close(): Promise<void>;
}

/**
 * Builds the run context of an inline command: the configuration (flags win), the API clients (pointed at an in-process
 * sandbox with `--sandbox`, its state kept in `<report-dir>/.sandbox/store.json` so consecutive runs see each other's
 * writes), a shared throttle the client's 429s feed, and Redis only when REDIS_URL is set explicitly.
 */
export async function commandContext(
  flags: RunFlags,
  env: NodeJS.ProcessEnv = process.env,
  opts: { writes?: boolean } = {},
): Promise<CommandContext> {
  const overrides: Record<string, string | undefined> = { ...env };
  if (flags.reportDir) overrides.REPORT_DIR = flags.reportDir;
  let closeSandbox: (() => Promise<void>) | undefined;
  let apiId: string | undefined;
  let owner = flags.owner;
  // Before the sandbox (which keeps its store there) and before the run: a report dir that cannot be written is exit 2.
  await ensureReportDir(
    overrides.REPORT_DIR?.trim() ? overrides.REPORT_DIR : './reports',
    flags.reportDir ? '--report-dir' : 'REPORT_DIR',
  );
  if (flags.sandbox) {
    const { startEmbeddedSandbox } = await import('./embedded-sandbox.ts');
    const reportDir = overrides.REPORT_DIR ?? './reports';
    const sb = await startEmbeddedSandbox(reportDir);
    overrides.PRODUCT_API_URL = sb.url;
    overrides.REFERENCE_API_URL = sb.url;
    overrides.API_TOKEN = 'sandbox-token';
    delete overrides.API_TOKEN_URL;
    delete overrides.API_CLIENT_ID;
    delete overrides.API_CLIENT_SECRET;
    owner ??= overrides.OWNER_COMPANY_ID ?? DEMO_COMPANY_ID;
    closeSandbox = sb.close;
    // Its URL changes at every start; its store does not: the owner lease is named by the store.
    apiId = `sandbox:${sb.storeFile}`;
  }
  const config: Config = loadConfig(overrides);
  // A command that writes keeps its owner lease in Redis when REDIS_URL is set: a Redis that does not answer is exit 2,
  // never a silent fall back to a lock file other machines cannot see.
  const redis = env.REDIS_URL?.trim() ? (opts.writes ? 'required' : 'optional') : 'off';
  return contextFromConfig(config, { owner, closeSandbox, redis, ...(apiId ? { apiId } : {}) });
}

/**
 * The process-wide runtime over a parsed configuration: API clients, throttle, Redis and reference cache (the CLI, the
 * demo and the queue workers).
 */
export async function contextFromConfig(
  config: Config,
  opts: {
    owner?: string;
    closeSandbox?: () => Promise<void>;
    /** 'required': exit 2 when it does not answer; 'optional': the reference cache falls back to in-process. */
    redis?: 'off' | 'optional' | 'required';
    /** Names the product API in the owner lease when its URL does not (the embedded sandbox). */
    apiId?: string;
  },
): Promise<CommandContext> {
  // The product API's limits, learned (api-limiter.ts): API_CONCURRENCY and API_MAX_RPS are upper bounds. Rows in
  // flight are bounded apart, above it, so that a row whose request waits its Retry-After does not idle the API.
  const limiter = new ApiLimiter({
    maxConcurrency: config.API_CONCURRENCY,
    ...(config.API_MAX_RPS ? { maxRps: config.API_MAX_RPS } : {}),
    pace: { minRps: config.API_MIN_RPS },
  });
  showLimiter(limiter);
  const throttle = new Throttle(config.API_CONCURRENCY * 2);
  const clients = apiClientsFromConfig(config, { limiter });
  let redis: Redis | null = null;
  if (opts.redis && opts.redis !== 'off') {
    // Loaded only when used: ioredis costs a quarter of a second of start-up to every inline command otherwise.
    const { Redis: RedisClient } = await import('ioredis');
    redis = new RedisClient(config.REDIS_URL, {
      lazyConnect: true,
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
    });
    // The cache degrades to in-process on errors (reference-cache.ts); the connection's own errors are expected then.
    // connect() fails with "Connection is closed."; the first error event says why.
    let why: unknown;
    redis.on('error', (err: Error) => (why ??= err));
    try {
      await redis.connect();
    } catch (err) {
      redis.disconnect();
      if (opts.redis === 'required') {
        await clients.close();
        await opts.closeSandbox?.();
        throw redisUnreachable(
          config.REDIS_URL,
          why ?? err,
          '. REDIS_URL is set, so the owner lease lives there (unset it to run with a lock file on this machine only)',
        );
      }
      logger.warn({ err: redisReason(why ?? err) }, 'Redis not reachable: the reference cache stays in-process');
      redis = null;
    }
    // Its outages are told with the queue's (once per change of state).
    if (redis) redisState.watch(redis, config.REDIS_URL);
    // Every process sending to this API (workers and inline runs, of every owner) shares its pace.
    if (redis)
      limiter.shareWith(
        new SharedRate(redis, sharedRateKey(config.QUEUE_PREFIX, opts.apiId ?? config.PRODUCT_API_URL ?? '')),
      );
  }
  // One reference cache per process: labels resolved by one run are known to the next (and to every worker through
  // Redis).
  const referenceCache = createReferenceCache({ redis, prefix: config.QUEUE_PREFIX, ...RUN_CACHE_SETTINGS });
  return {
    ctx: {
      config,
      clients,
      redis,
      throttle,
      limiter,
      logger,
      referenceCache,
      ...(opts.apiId ? { apiId: opts.apiId } : {}),
    },
    owner: opts.owner,
    async close() {
      await clients.close();
      redis?.disconnect();
      await opts.closeSandbox?.();
    },
  };
}
