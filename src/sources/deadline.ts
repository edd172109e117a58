/**
 * Deadlines on source operations (a listing, a download, a whole feed tick): an operation gets an AbortSignal that
 * fires when its own deadline passes or when its parent's fires (the tick's, or the worker stopping), and its promise
 * settles then whether or not the source heeds the signal — a source stuck in a call that cannot be cut (a hung
 * mount, a library without abort) no longer holds the tick; what it does later is ignored.
 */
import { realClock, type Clock } from '../clock.ts';
import { ProductSyncError } from '../errors.ts';

/** The error of an operation past its deadline: `what` took longer than `ms` (`setting` says where to change it). */
export function pastDeadline(what: string, ms: number, setting: string): ProductSyncError {
  return new ProductSyncError(
    'PS_ERR_SOURCE_TIMEOUT',
    `${what} took longer than its deadline of ${ms / 1000} s (${setting}): stopped`,
  );
}

/**
 * An AbortSignal that fires `ms` after now (by `clock`) with pastDeadline(), or when `parent` fires (with its reason).
 */
export function deadlineSignal(
  ms: number,
  error: () => ProductSyncError,
  parent?: AbortSignal,
  clock: Clock = realClock,
): { signal: AbortSignal; clear(): void } {
  const ctl = new AbortController();
  const cancel = clock.after(ms, () => ctl.abort(error()));
  const onParent = () => ctl.abort(parent!.reason);
  if (parent?.aborted) onParent();
  else parent?.addEventListener('abort', onParent, { once: true });
  return {
    signal: ctl.signal,
    clear() {
      cancel();
      parent?.removeEventListener('abort', onParent);
    },
  };
}

/** `op`'s promise, rejected with the signal's reason as soon as `signal` fires (its own outcome is then ignored). */
export function abortable<T>(signal: AbortSignal, op: Promise<T>): Promise<T> {
  if (signal.aborted) {
    op.catch(() => undefined);
    return Promise.reject(signal.reason as Error);
  }
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    op.then(
      (v) => {
        signal.removeEventListener('abort', onAbort);
        resolve(v);
      },
      (err: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(signal.aborted ? (signal.reason as Error) : (err as Error));
      },
    );
  });
}

/**
 * Runs `op` with a signal that fires after `ms` by `clock` (PS_ERR_SOURCE_TIMEOUT naming `what` and `setting`) or with
 * `parent`; its promise settles by then whatever `op` does.
 */
export async function withDeadline<T>(
  what: string,
  ms: number,
  setting: string,
  parent: AbortSignal | undefined,
  op: (signal: AbortSignal) => Promise<T>,
  clock: Clock = realClock,
): Promise<T> {
  const d = deadlineSignal(ms, () => pastDeadline(what, ms, setting), parent, clock);
  try {
    return await abortable(d.signal, op(d.signal));
  } finally {
    d.clear();
  }
}
