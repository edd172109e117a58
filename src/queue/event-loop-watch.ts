/**
 * Job locks are renewed by timers: a stretch of synchronous work longer than the lock loses the job to another worker
 * (stalled), which then runs it a second time. This says so when the event loop comes close.
 */
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { logger } from '../logger.ts';

/** Watches the event loop's delay against `lockDuration` (ms); returns how to stop. */
export function watchEventLoop(lockDuration: number): () => void {
  const loop = monitorEventLoopDelay({ resolution: 20 });
  loop.enable();
  const loopCheck = setInterval(() => {
    const maxMs = loop.max / 1e6;
    loop.reset();
    if (maxMs > lockDuration / 3)
      logger.warn(
        { blockedMs: Math.round(maxMs), lockDurationMs: lockDuration },
        'the event loop was blocked for a third of the job lock or more: raise WORKER_LOCK_MS if this repeats',
      );
  }, 5000);
  loopCheck.unref();
  return () => {
    clearInterval(loopCheck);
    loop.disable();
  };
}
