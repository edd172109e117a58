/**
 * What the job handlers of a worker share (wired by startWorkers, workers.ts): the run context, Redis, the event
 * recorder, the lease keeper, and what the jobs in hand are sending (what a worker stopping without Redis waits for).
 */
import type { Redis } from 'ioredis';
import type { Clock } from '../clock.ts';
import type { ProcessMetrics } from '../metrics/metrics.ts';
import type { RunContext } from '../pipeline/run/run.ts';
import type { EventRecorder } from './events-queue.ts';
import type { LeaseKeeper } from '../lease/lease-keeper.ts';
import type { OwnerSlots } from './owner-slots.ts';

export interface JobContext {
  ctx: RunContext;
  /** The worker's own Redis connection (not BullMQ's) and the queue prefix. */
  conn: Redis;
  prefix: string;
  recorder: EventRecorder;
  /** Queued runs' owner leases, kept alive between their jobs (lease-keeper.ts). */
  keeper: LeaseKeeper;
  /** Job lock duration, ms. */
  lockDuration: number;
  /** What the jobs' waits and delays are timed by (a lease waited for). */
  clock: Clock;
  metrics?: ProcessMetrics;
  /** Chunks in progress per owner across the fleet, and the per-owner cap (owner-slots.ts). */
  ownerSlots?: OwnerSlots;
  /** Registers what a job in hand sends (a prepare step, a chunk): returns `p`. */
  track<T>(p: Promise<T>): Promise<T>;
}

/** What the jobs in hand send, settled or not: `track` adds to it, `settled()` waits for all of it. */
export function sendingTracker(): { track: JobContext['track']; settled(): Promise<void[]> } {
  const sending = new Set<Promise<void>>();
  return {
    track: <T>(p: Promise<T>): Promise<T> => {
      const settled: Promise<void> = p
        .then(
          () => undefined,
          () => undefined,
        )
        .finally(() => sending.delete(settled));
      sending.add(settled);
      return p;
    },
    settled: () => Promise.all([...sending]),
  };
}
