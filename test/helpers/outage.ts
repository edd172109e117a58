// What the Redis outage tests (redis-outage*.test.ts) share: a queued command's environment on a Redis of the test's
// own, and the JSON log lines of a process's stderr.
import { join } from 'node:path';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { queueEnv } from './env.ts';

/** A queued command of the demo owner against the sandbox `url` and Redis at `redisUrl`, its state under `dir`. */
export function outageEnv(
  url: string,
  dir: string,
  redisUrl: string,
  extra: Record<string, string> = {},
): Record<string, string> {
  return queueEnv(url, redisUrl, 'ps-outage', dir, {
    OWNER_COMPANY_ID: DEMO_COMPANY_ID,
    STATE_DIR: join(dir, 'state'),
    API_CONCURRENCY: '2',
    LOG_FORMAT: 'json',
    ...extra,
  });
}

/** Log lines (JSON) of `stderr` whose message matches `re`. */
export const logLines = (stderr: string, re: RegExp): string[] =>
  stderr.split('\n').filter((l) => l.startsWith('{') && re.test((JSON.parse(l) as { msg: string }).msg));
