import { HttpError } from '../errors.ts';
import type { RetryClass } from './endpoints.ts';

/**
 * Retry settings: `retries` extra attempts, full-jitter backoff between `baseMs` and the cap `maxMs`, Retry-After
 * capped at `maxRetryAfterMs`.
 */
export interface RetryOptions {
  retries: number;
  baseMs: number;
  maxMs: number;
  maxRetryAfterMs?: number;
  /** Retries of 429 answers (nothing was done), counted apart from `retries`. */
  rateLimitedRetries?: number;
}

/** Defaults: 4 retries, 200 ms doubling up to 10 s, Retry-After honoured up to 60 s, 30 retries of a 429. */
export const DEFAULT_RETRY: Required<RetryOptions> = {
  retries: 4,
  baseMs: 200,
  maxMs: 10_000,
  maxRetryAfterMs: 60_000,
  rateLimitedRetries: 30,
};

/** Milliseconds a Retry-After header asks for (delay-seconds or HTTP-date), or null when absent or unreadable. */
export function parseRetryAfter(value: string | string[] | undefined, now: number = Date.now()): number | null {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return null;
  const s = v.trim();
  if (/^\d+(\.\d+)?$/.test(s)) return Math.round(Number(s) * 1000);
  const at = Date.parse(s);
  if (Number.isNaN(at)) return null;
  return Math.max(0, at - now);
}

/**
 * True when a failed call of this retry class may be sent again: only retryable failures (429, 5xx, connection,
 * timeout), and for creates only those that certainly did not reach the server (429, connect refused / timed out).
 */
export function mayRetry(retryClass: RetryClass, err: unknown): boolean {
  if (!(err instanceof HttpError) || !err.retryable) return false;
  return retryClass === 'retry' || !err.outcomeUnknown;
}

/**
 * Delay before retry number `attempt` (1-based): the server's Retry-After when it gave one (capped), else full jitter
 * — a uniform draw in [0, min(maxMs, baseMs · 2^(attempt-1))].
 */
export function retryDelayMs(
  attempt: number,
  err: unknown,
  options: RetryOptions,
  random: () => number = Math.random,
): number {
  const cap = options.maxRetryAfterMs ?? DEFAULT_RETRY.maxRetryAfterMs;
  if (err instanceof HttpError && err.retryAfterMs !== null) return Math.min(err.retryAfterMs, cap);
  const ceiling = Math.min(options.maxMs, options.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.floor(random() * ceiling);
}
