// What the fair-queue tests (queue-fairness.test.ts, queue-owner-cap.test.ts) share: a queued run's environment in
// chunks of 20 and the sheet of one owner.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { queueEnv } from './env.ts';
import { writeProductSheet } from './sheets.ts';

/** A queued run against the sandbox `url` under `prefix`: chunks of 20, 4 requests at once, a short job lock. */
export function fairEnv(
  url: string,
  redisUrl: string,
  prefix: string,
  dir: string,
  more: Record<string, string> = {},
): Record<string, string> {
  return queueEnv(url, redisUrl, prefix, dir, {
    API_CONCURRENCY: '4',
    CHUNK_SIZE: '20',
    WORKER_LOCK_MS: '3000',
    ...more,
  });
}

/** A sheet of `rows` products of `owner` in a folder `name` of its own under `dir` (GTINs of family `prefix`). */
export function ownerSheet(dir: string, name: string, rows: number, owner: string, prefix: string) {
  mkdirSync(join(dir, name), { recursive: true });
  return writeProductSheet(join(dir, name), rows, { owner, prefix });
}
