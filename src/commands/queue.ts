import { resolve } from 'node:path';
import { loadConfig, type Config } from '../config.ts';
import { ProductSyncError } from '../errors.ts';
import { writingTo } from '../fs-errors.ts';
import { makeDir } from '../make-dir.ts';
import { ensureReportDir } from '../runtime.ts';
import { logger } from '../logger.ts';
import { checkInput } from '../pipeline/run/input-gate.ts';
import type { Mode } from '../pipeline/sync/plan.ts';
import { importQueueClient } from '../queue/enqueue.ts';
import { loadFeeds } from '../queue/feeds.ts';
import { sourceLabel } from '../sources/open.ts';
import { openFeedsQueue } from '../queue/queues.ts';
import { requireRedis } from '../queue/redis-health.ts';
import { stopWorkers } from '../queue/worker-stop.ts';
import { startWorkers } from '../queue/workers.ts';
import { consoleAccess } from '../server/console-access.ts';
import { serveMetrics } from '../server/metrics-server.ts';
import { redact } from '../redact.ts';
import { formatSummary } from './summary.ts';

function config(): Config {
  return loadConfig(process.env);
}

/**
 * Resolves on the first SIGTERM or SIGINT; from then on, a second one exits at once (128 + its number) saying so.
 * `again` names what the second signal leaves behind.
 */
function stopSignal(again: string): Promise<'SIGTERM' | 'SIGINT'> {
  return new Promise((resolve) => {
    const first = (s: 'SIGTERM' | 'SIGINT') => {
      process.removeListener('SIGTERM', first);
      process.removeListener('SIGINT', first);
      const second = (s2: 'SIGTERM' | 'SIGINT') => {
        process.stderr.write(`product-sync: ${s2} again: exiting now (${again})\n`);
        process.exit(s2 === 'SIGINT' ? 130 : 143);
      };
      process.on('SIGTERM', second);
      process.on('SIGINT', second);
      resolve(s);
    };
    process.on('SIGTERM', first);
    process.on('SIGINT', first);
  });
}

/** Commands that need Redis ask it first, in bounded time (exit 2 when it does not answer), before any queue exists. */
function redisFirst(cfg: Config, who: string, waitRedis: number | undefined): Promise<void> {
  return requireRedis(cfg.REDIS_URL, { who, ...(waitRedis !== undefined ? { waitSeconds: waitRedis } : {}) });
}

/**
 * `product-sync worker`: BullMQ workers until SIGTERM (then finishes the jobs in hand, closes, exits 0; without Redis,
 * stops sending, journals what was in flight and exits 0 within seconds).
 */
export async function workerCommand(opts: {
  concurrency?: number;
  jobsDir: string;
  waitRedis?: number;
}): Promise<number> {
  const cfg = config();
  // Its runs write there: one that cannot be written is refused now (exit 2), not by every job.
  await ensureReportDir(cfg.REPORT_DIR);
  // The feeds first: an invalid one is exit 2 whether Redis answers or not.
  await loadFeeds(opts.jobsDir);
  await redisFirst(cfg, 'the worker', opts.waitRedis);
  // Listening before the workers start: a SIGTERM while they start (jobs may already be taken) still closes them
  // cleanly.
  const stopping = stopSignal(
    'the jobs in hand go back to the queue when their locks expire, and resume from their journals',
  );
  // METRICS_PORT: /metrics of this worker (and of the queues, feeds and events in Redis), before the workers start.
  const metrics = await serveMetrics(cfg, { fleet: true });
  const set = await startWorkers(cfg, {
    jobsDir: opts.jobsDir,
    importConcurrency: opts.concurrency ?? cfg.WORKER_CONCURRENCY,
    lockDurationMs: cfg.WORKER_LOCK_MS,
    stalledCheckMs: cfg.WORKER_STALLED_CHECK_MS,
    ...(metrics ? { metrics: metrics.own } : {}),
  }).catch(async (err: unknown) => {
    await metrics?.close();
    throw err;
  });
  process.stdout.write(`worker started (feeds: ${set.feeds.map((f) => f.id).join(', ') || 'none'})\n`);
  if (metrics) process.stdout.write(`metrics on ${metrics.url}\n`);
  const signal = await stopping;
  logger.info({ signal }, 'worker stopping: finishing the jobs in hand');
  const stopped = await stopWorkers(set);
  await metrics?.close();
  if (stopped === 'abandoned') {
    process.stderr.write(
      `product-sync: ${signal} while Redis at ${redact(cfg.REDIS_URL)} does not answer: the worker stopped sending; the requests in flight settled and are journalled; its jobs go back to the queue when Redis answers (their locks expire) and resume from their journals\n`,
    );
  }
  return 0;
}

/**
 * `product-sync enqueue`: queues an import, prints its id; `--wait` prints the summary and exits with the run's code.
 */
export async function enqueueCommand(
  file: string,
  opts: {
    mapping: string;
    owner?: string;
    mode?: Mode;
    dryRun?: boolean;
    waiveGate?: boolean;
    wait?: boolean;
    waitLock?: number;
    waitRedis?: number;
  },
): Promise<number> {
  // What the inline import would refuse before sending anything is refused here too, before anything is queued (exit 2,
  // the import's message): the input gate, before Redis is even reached.
  await checkInput({ file, mapping: opts.mapping });
  const cfg = config();
  await redisFirst(cfg, 'enqueue', opts.waitRedis);
  const client = importQueueClient(cfg);
  try {
    const { jobId, existed } = await client.enqueue({
      request: {
        file,
        mapping: opts.mapping,
        mode: opts.mode ?? 'upsert',
        dryRun: Boolean(opts.dryRun),
        ...(opts.owner ? { owner: opts.owner } : {}),
        ...(opts.waiveGate ? { waiveGate: true } : {}),
      },
      origin: 'cli',
      step: 'prepare',
      ...(opts.waitLock !== undefined ? { waitLockSeconds: opts.waitLock } : {}),
    });
    process.stdout.write(`${jobId}${existed ? ' (already queued: the same sheet, mapping and owner run once)' : ''}\n`);
    if (!opts.wait) return 0;
    const result = await client.wait(jobId);
    process.stdout.write(`${formatSummary(result as never)}\n`);
    return result.exitCode;
  } finally {
    await client.close();
  }
}

/** `product-sync feeds list`: each feed's schedule, next run, last run, last success and whether it is overdue. */
export async function feedsListCommand(opts: { jobsDir: string; waitRedis?: number }): Promise<number> {
  const cfg = config();
  const feeds = await loadFeeds(opts.jobsDir);
  await redisFirst(cfg, '`feeds list`', opts.waitRedis);
  const queue = openFeedsQueue(cfg);
  try {
    const schedulers = await queue.schedulers();
    for (const f of feeds) {
      const s = schedulers.get(f.id);
      const last = await queue.last(f.id);
      const next = s?.next ? new Date(s.next).toISOString() : 'not scheduled (start a worker)';
      const lastRun = last.finishedAt
        ? `${last.finishedAt} run ${last.runId} exit ${last.exitCode} (${last.file})`
        : 'never';
      const lastTick = last.tickAt ? `${last.tickAt} ${last.tick ?? ''}` : 'never';
      // The fields the feed deadlines and noteFeedRun keep (feed-deadlines.ts), as the console's GET /feeds reads them.
      const success = last.lastSuccessAt || 'never';
      const overdue = last.overdue === '1' ? `yes since ${last.overdueSince ?? '?'}` : 'no';
      const deadline = f.expect ? `expect ${f.expect}, overdue ${overdue}` : `overdue ${overdue} (no expect)`;
      const listing = last.lastListingAt
        ? `${last.lastListingAt}: files seen ${last.seen ?? 0}, done ${last.done ?? 0}, waiting ${last.waiting ?? 0}`
        : 'never';
      const error = last.lastTickError
        ? `\n  last source error ${last.lastTickErrorAt ?? ''} ${last.lastTickError}`
        : '';
      process.stdout.write(
        `${f.id}\n  schedule ${f.schedule} (${f.timezone})  source ${sourceLabel(f.source)}  mapping ${f.mapping}  mode ${f.mode}\n  next ${next}\n  last run ${lastRun}\n  last success ${success}  ${deadline}\n  last tick ${lastTick}\n  last listing ${listing}${error}\n`,
      );
    }
    if (feeds.length === 0) process.stdout.write(`no feeds in ${opts.jobsDir}/\n`);
    return 0;
  } finally {
    await queue.close();
  }
}

/** `product-sync feeds run <name>`: one tick now (a worker picks it up). */
export async function feedsRunCommand(name: string, opts: { jobsDir: string; waitRedis?: number }): Promise<number> {
  const cfg = config();
  const feeds = await loadFeeds(opts.jobsDir);
  if (!feeds.some((f) => f.id === name)) {
    process.stderr.write(
      `product-sync: no feed "${name}" in ${opts.jobsDir}/ (have: ${feeds.map((f) => f.id).join(', ') || 'none'})\n`,
    );
    return 2;
  }
  await redisFirst(cfg, '`feeds run`', opts.waitRedis);
  const queue = openFeedsQueue(cfg);
  try {
    const jobId = await queue.tick(name);
    process.stdout.write(`feed ${name}: tick queued (${jobId})\n`);
    return 0;
  } finally {
    await queue.close();
  }
}

/**
 * Where `serve --host` listens: a `*.localhost` name on the loopback interface, as browsers resolve it (RFC 6761):
 * on `localhost` itself, which fastify listens on for each of its addresses; the system's resolver may not know it.
 */
function listenHost(host: string): string {
  return /^[^:]+\.localhost\.?$/i.test(host.trim()) ? 'localhost' : host;
}

/** A failure to listen as a configuration error (exit 2) naming the host or port, when it is one. */
function listenError(err: unknown, host: string, port: number): unknown {
  const code = (err as NodeJS.ErrnoException)?.code;
  const why =
    code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EAI_NONAME'
      ? `the name ${host} does not resolve to an address of this machine (${code}): give --host an address of one of its interfaces (127.0.0.1, ::1, 0.0.0.0) or a name that resolves to one`
      : code === 'EADDRNOTAVAIL'
        ? `${host} is not an address of this machine (EADDRNOTAVAIL): give --host an address of one of its interfaces (127.0.0.1, ::1, 0.0.0.0)`
        : code === 'EADDRINUSE'
          ? `port ${port} on ${host} is already in use (EADDRINUSE): stop what listens there or give another --port`
          : code === 'EACCES'
            ? `not allowed to listen on port ${port} (EACCES): ports below 1024 need privileges; give another --port`
            : null;
  return why
    ? new ProductSyncError('PS_ERR_CONFIG_INVALID', `cannot start the console on --host ${host}: ${why}`)
    : err;
}

/**
 * `product-sync serve`: the web console until SIGTERM. Closed by default (console-access.ts); it starts whether Redis
 * answers or not (`/health` and the pages say so).
 */
export async function serveCommand(opts: { port: number; host: string; insecureNoAuth?: boolean }): Promise<number> {
  const cfg = config();
  const access = consoleAccess(cfg, opts.host, { insecureNoAuth: Boolean(opts.insecureNoAuth) });
  const { buildConsole } = await import('../server/app.ts');
  // Made here, with a plain refusal (exit 2), before the console makes them with Node's mkdir -p, which never returns
  // under /proc.
  await ensureReportDir(cfg.REPORT_DIR);
  await writingTo('cannot create the upload directory given by UPLOAD_DIR', resolve(cfg.UPLOAD_DIR), () =>
    makeDir(cfg.UPLOAD_DIR),
  );
  if (access.warning) process.stderr.write(`product-sync: ${access.warning}\n`);
  const stopping = stopSignal('nothing is lost: the console holds no state of its own');
  // The console's own API requests (the mapper's lookups) on its /metrics.
  const { ProcessMetrics } = await import('../metrics/metrics.ts');
  const metrics = new ProcessMetrics();
  const stopObserving = metrics.observeApiRequests();
  const app = await buildConsole({
    config: cfg,
    metrics,
    host: opts.host,
    ...(access.token ? { token: access.token } : {}),
    ...(access.basic ? { basic: access.basic } : {}),
  });
  try {
    await app.listen({ port: opts.port, host: listenHost(opts.host) });
  } catch (err) {
    await app.close();
    stopObserving();
    throw listenError(err, opts.host, opts.port);
  }
  const { port } = app.server.address() as { port: number };
  process.stdout.write(
    `console on http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}/ (queues at /admin/queues)\n`,
  );
  await stopping;
  await app.close();
  stopObserving();
  return 0;
}
