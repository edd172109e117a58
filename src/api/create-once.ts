import { setTimeout as sleep } from 'node:timers/promises';
import { HttpError, isRetryable, LeaseLostError } from '../errors.ts';

/**
 * The rule of every create (trade item, manufactured item, brand): the transport re-sends it only when it certainly did
 * not reach the server (endpoints.ts, retry class `create`); past that, a create that failed in a way that may have
 * done it (5xx, timeout, reset) or says it exists (409) is looked up before it is sent again, and sent at most
 * CREATE_ATTEMPTS times in all, each resend after a look-up that found nothing and a backoff.
 */
export const CREATE_ATTEMPTS = 8;

/** The longest pause before a create is sent again, ms (CREATE_RETRY_MAX_MS). */
export const CREATE_BACKOFF_MAX_MS = 2000;

/** The first resend's longest pause, ms; each later one doubles it, up to the cap. */
const CREATE_BACKOFF_BASE_MS = 50;

/** Pause before resend number `attempt` of a create: full jitter, exponential, capped at `maxMs`. */
export function createBackoffMs(
  attempt: number,
  random: () => number = Math.random,
  maxMs: number = CREATE_BACKOFF_MAX_MS,
): number {
  return Math.min(maxMs, CREATE_BACKOFF_BASE_MS * 2 ** attempt) * random();
}

/** True when a failed create may nevertheless have been done (the API answered 5xx, or the answer was lost). */
export function createMayHaveHappened(err: unknown): boolean {
  return err instanceof HttpError && err.outcomeUnknown;
}

/** What {@link createOnce} needs: how to send the create, and how to find what it may have made. */
export interface CreateOnce<T> {
  send: () => Promise<T>;
  /** What a create may have made (one per name, one per key), or null; its own failures are retried thrice. */
  find: () => Promise<T | null>;
  attempts?: number;
  random?: () => number;
  /** The longest pause before a resend, ms (default {@link CREATE_BACKOFF_MAX_MS}). */
  maxBackoffMs?: number;
  signal?: AbortSignal;
}

/**
 * Sends a create by the rule above. Resolves with what was made and whether this call found it rather than heard it
 * made (`found`); throws the last error when the create cannot be made (a 4xx, a 409 for something the look-up does not
 * find, the attempts spent), and at once on a refusal of the run's fence (LeaseLostError: nothing was sent).
 */
export async function createOnce<T>(o: CreateOnce<T>): Promise<{ value: T; found: boolean }> {
  const attempts = o.attempts ?? CREATE_ATTEMPTS;
  for (let attempt = 1; ; attempt++) {
    try {
      return { value: await o.send(), found: false };
    } catch (err) {
      if (err instanceof LeaseLostError || o.signal?.aborted) throw err;
      const conflict = err instanceof HttpError && err.status === 409;
      const unknown = createMayHaveHappened(err);
      if (!(conflict || unknown || isRetryable(err)) || attempt >= attempts) throw err;
      if (conflict || unknown) {
        const found = await findPatiently(o.find);
        if (found !== null) return { value: found, found: true };
        if (conflict) throw err;
      }
      const pause = createBackoffMs(attempt, o.random, o.maxBackoffMs);
      await sleep(pause, undefined, o.signal ? { signal: o.signal } : undefined);
    }
  }
}

/** `find`, tried again after a pause when the look-up itself keeps failing: a create is never re-sent unverified. */
export async function findPatiently<T>(find: () => Promise<T | null>): Promise<T | null> {
  for (let i = 1; ; i++) {
    try {
      return await find();
    } catch (err) {
      if (!isRetryable(err) || i >= 3) throw err;
      await sleep(500 * i);
    }
  }
}
