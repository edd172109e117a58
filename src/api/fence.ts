/**
 * The fence of a writer: what must still hold for it to send a write (its owner lease, a queue job's lock). The API
 * takes no fencing token, so the check sits as late as the client allows: `ready()` where a write is about to be sent
 * (it may renew a lease that ran short), and the synchronous `check()` in an undici interceptor, right before the
 * request's first byte is written to its socket. A request that fails the check is not sent: it rejects with a
 * LeaseLostError.
 *
 * A run's fence is carried by its clients (ApiClients.forRun, run-scope.ts), which every write of the run goes
 * through — the executor's, a brand created while resolving labels, its repairs — so each of them is fenced.
 */
import { existsSync, writeFileSync } from 'node:fs';
import type { Dispatcher } from 'undici';

/** What a writer checks before each write. */
export interface Fence {
  /** Throws a LeaseLostError unless the writer still certainly holds what it needs, with time to spare. No I/O. */
  check(): void;
  /** Like check(), after renewing what is close to running out (or ran out while nobody else took it). */
  ready(): Promise<void>;
}

/** Every fence of the list must hold. */
export function allFences(fences: readonly Fence[]): Fence {
  if (fences.length === 1) return fences[0]!;
  return {
    check: () => {
      for (const f of fences) f.check();
    },
    ready: async () => {
      for (const f of fences) await f.ready();
    },
  };
}

/** Dispatch options carrying a fence (set by sendRequest for write requests). */
export interface FencedDispatchOptions extends Dispatcher.DispatchOptions {
  fence?: Fence;
}

type Controller = { abort(reason: Error): void };
type NewStyleHandler = {
  onRequestStart?(controller: Controller, context: unknown): void;
  onRequestUpgrade?(...args: unknown[]): void;
  onResponseStart?(...args: unknown[]): void;
  onResponseData?(...args: unknown[]): void;
  onResponseEnd?(...args: unknown[]): void;
  onResponseError?(...args: unknown[]): void;
};

/** Hands every event on to `inner`, after checking the fence when the request is about to be written. */
class FencedHandler {
  readonly #inner: NewStyleHandler;
  readonly #fence: Fence;
  readonly #request: string;

  constructor(inner: NewStyleHandler, fence: Fence, request: string) {
    this.#inner = inner;
    this.#fence = fence;
    this.#request = request;
  }

  onRequestStart(controller: Controller, context: unknown): void {
    try {
      this.#fence.check();
    } catch (err) {
      controller.abort(err as Error);
      return;
    }
    if (testHold) holdForTest(this.#request);
    this.#inner.onRequestStart?.(controller, context);
  }

  onRequestUpgrade(...args: unknown[]): void {
    this.#inner.onRequestUpgrade?.(...args);
  }

  onResponseStart(...args: unknown[]): void {
    this.#inner.onResponseStart?.(...args);
  }

  onResponseData(...args: unknown[]): void {
    this.#inner.onResponseData?.(...args);
  }

  onResponseEnd(...args: unknown[]): void {
    this.#inner.onResponseEnd?.(...args);
  }

  onResponseError(...args: unknown[]): void {
    this.#inner.onResponseError?.(...args);
  }
}

/**
 * An undici interceptor (`agent.compose(fenceInterceptor)`): a request with a fence is checked when its connection is
 * about to write it — undici calls `onRequestStart` right before the request line goes to the socket — not when it was
 * queued: a request that waited for a connection, or whose process was paused meanwhile, is checked at the last moment.
 */
export function fenceInterceptor(dispatch: Dispatcher.Dispatch): Dispatcher.Dispatch {
  return (opts, handler) => {
    const fence = (opts as FencedDispatchOptions).fence;
    if (!fence) return dispatch(opts, handler);
    return dispatch(
      opts,
      new FencedHandler(
        handler as NewStyleHandler,
        fence,
        `${opts.method} ${opts.path}`,
      ) as unknown as Dispatcher.DispatchHandler,
    );
  };
}

/**
 * Tests only (PS_TEST_FENCE_HOLD, JSON `{match, nth, held, release}`): the `nth` fenced request whose `METHOD path`
 * starts with `match` is held right after it passed the fence, before its first byte is written — the process blocked
 * there as if the scheduler had preempted it — until the file `release` exists (`held` is written when it starts). It
 * forces the fence's last window (docs/concurrency.md) without waiting for a scheduler to open it.
 */
interface TestHold {
  match: string;
  nth: number;
  held: string;
  release: string;
  seen: number;
}

const testHold: TestHold | null = (() => {
  const spec = process.env.PS_TEST_FENCE_HOLD;
  if (!spec) return null;
  const h = JSON.parse(spec) as Omit<TestHold, 'seen'>;
  return { ...h, seen: 0 };
})();

function holdForTest(request: string): void {
  const h = testHold!;
  if (!request.startsWith(h.match) || ++h.seen !== h.nth) return;
  writeFileSync(h.held, request);
  const wait = new Int32Array(new SharedArrayBuffer(4));
  // Blocks the whole thread, as a preempted process is: no timer runs, no lease is renewed.
  while (!existsSync(h.release)) Atomics.wait(wait, 0, 0, 10);
}
