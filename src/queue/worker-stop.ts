/**
 * How a worker stops on SIGTERM / SIGINT. With Redis answering: it stops taking jobs, finishes the jobs in hand and
 * closes (BullMQ records their outcome). Without Redis — lost before the signal or while closing — nothing can be
 * recorded and a close would wait for ever: the chunks in hand stop sending, what is in flight settles and is
 * journalled, and the worker leaves; their jobs go back to the queue when their locks expire.
 */
import { redisState } from '../redis-state.ts';
import type { WorkerSet } from './workers.ts';

/** How the worker stopped: `closed` (jobs in hand finished) or `abandoned` (Redis did not answer). */
export type WorkerStop = 'closed' | 'abandoned';

// How long PING may take at the signal before Redis counts as gone.
const PING_MS = 1000;

/** Stops `set` as above; bounded in time whenever Redis is gone. */
export async function stopWorkers(set: WorkerSet): Promise<WorkerStop> {
  if (redisState.down || !(await set.redisAnswers(PING_MS))) {
    await set.abandon();
    return 'abandoned';
  }
  let lost: (() => void) | undefined;
  const redisLost = new Promise<'lost'>((resolve) => (lost = () => resolve('lost')));
  const unwatch = redisState.onChange((down) => down && lost?.());
  try {
    if ((await Promise.race([set.close().then(() => 'closed' as const), redisLost])) === 'closed') return 'closed';
  } finally {
    unwatch();
  }
  await set.abandon();
  return 'abandoned';
}
