// The environment of a command (spawned, in-process, or loadConfig) pointed at a test's own sandbox and directories.
import { join } from 'node:path';

/** The sandbox's token (src/sandbox/defaults.ts accepts it for the demo company). */
export const SANDBOX_TOKEN = 'sandbox-token';

/** Both APIs at the sandbox `url`, with its token; `extra` adds or overrides keys. */
export function apiEnv(url: string, extra: Record<string, string> = {}): Record<string, string> {
  return { PRODUCT_API_URL: url, REFERENCE_API_URL: url, API_TOKEN: SANDBOX_TOKEN, ...extra };
}

/** A command that sends nothing (validate): both APIs unreachable, reports in `reportDir`, errors alone logged. */
export function offlineEnv(reportDir: string): Record<string, string> {
  return apiEnv('http://127.0.0.1:9', { API_TOKEN: 'unused', REPORT_DIR: reportDir, LOG_LEVEL: 'error' });
}

/**
 * An inline run (no Redis) against the sandbox `url`: reports and state under `dir`, 4 requests at once, warnings and
 * errors logged.
 */
export function inlineEnv(url: string, dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return apiEnv(url, {
    REPORT_DIR: join(dir, 'reports'),
    STATE_DIR: join(dir, 'state'),
    API_CONCURRENCY: '4',
    LOG_LEVEL: 'warn',
    REDIS_URL: '',
    ...extra,
  });
}

/**
 * A queued run: Redis at `redisUrl` under the key prefix `prefix` (unique to the test), the sandbox `url`, reports and
 * uploads under `dir`, warnings and errors logged.
 */
export function queueEnv(
  url: string,
  redisUrl: string,
  prefix: string,
  dir: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return apiEnv(url, {
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
    REPORT_DIR: join(dir, 'reports'),
    UPLOAD_DIR: join(dir, 'uploads'),
    LOG_LEVEL: 'warn',
    ...extra,
  });
}

/**
 * A queued run that plans again (queued-replan tests): reports and state under `dir`, chunks of 25, 2 requests at once,
 * the default lease and job lock (which no load lets lapse under a live process: a killed worker's are expired by the
 * test) and a frequent stalled-job check, so that the next worker takes its import job over at once.
 */
export function replanEnv(url: string, dir: string, redisUrl: string, prefix: string): Record<string, string> {
  return apiEnv(url, {
    REPORT_DIR: join(dir, 'reports'),
    STATE_DIR: join(dir, 'state'),
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
    API_CONCURRENCY: '2',
    CHUNK_SIZE: '25',
    WORKER_STALLED_CHECK_MS: '200',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
  });
}
