import type { ApiName } from './endpoints.ts';

/**
 * Told of every request an {@link ApiTransport} sends, once it has an answer or has failed: which API, the method, the
 * status (`error` when no answer came: connection failed, timed out, aborted) and how long it took. The metrics
 * install one (src/metrics/metrics.ts); without one, a request pays a single check.
 */
export type RequestObserver = (api: ApiName, method: string, status: number | 'error', seconds: number) => void;

let observer: RequestObserver | undefined;

/** Sets the process's request observer (undefined removes it). */
export function observeRequests(fn: RequestObserver | undefined): void {
  observer = fn;
}

/** The process's request observer, if any. */
export function requestObserver(): RequestObserver | undefined {
  return observer;
}
