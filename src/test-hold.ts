/**
 * Tests only: a point of the code a test can hold, named by an environment variable whose value is JSON
 * `{nth, held, release}`: its `nth` pass (in this process) writes the file `held`, then waits until the file `release`
 * exists. Unlike the fence's hold (api/fence.ts) the process is not blocked: its other jobs, lock renewals and timers
 * go on, so a test can put one job's step in a chosen order with another job's (docs/concurrency.md).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';

interface TestHold {
  nth: number;
  held: string;
  release: string;
}

const seen = new Map<string, number>();

/** Holds here when the variable `name` asks for it (see above); nothing otherwise. */
export async function holdForTest(name: string): Promise<void> {
  const spec = process.env[name];
  if (!spec) return;
  const h = JSON.parse(spec) as TestHold;
  const n = (seen.get(name) ?? 0) + 1;
  seen.set(name, n);
  if (n !== h.nth) return;
  writeFileSync(h.held, name);
  while (!existsSync(h.release)) await sleep(10);
}
