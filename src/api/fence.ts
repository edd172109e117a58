/**
 * The fence of a writer: what must still hold for it to send a write (its owner lease, a queue job's lock). The API
 * takes no fencing token, so the check sits as late as the client allows: `ready()` where a write is about to be sent
 * (it may renew a lease that ran short), and the synchronous `check()` in the request's undici handler, right before
 * the request's first byte is written to its socket. A request that fails the check is not sent: it rejects with a
 * LeaseLostError.
 *
 * A run's fence is carried by its clients (ApiClients.forRun, run-scope.ts), which every write of the run goes
 * through — the executor's, a brand created while resolving labels, its repairs — so each of them is fenced.
 */
import { existsSync, writeFileSync } from 'node:fs';
import type { Agent as UndiciAgent, Dispatcher } from 'undici';

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

/** undici's handler interface as its `request()` API implements it (what its client calls). */
type Handler = {
  onConnect?(abort: (err?: Error) => void, context?: unknown): void;
  onError?(err: Error): void;
  onUpgrade?(statusCode: number, headers: unknown, socket: unknown): void;
  onResponseStarted?(): void;
  onHeaders?(statusCode: number, headers: Buffer[], resume: () => void, statusText: string): boolean;
  onData?(chunk: Buffer): boolean;
  onComplete?(trailers: string[] | null): void;
  onBodySent?(chunkSize: number, totalBytesSent: number): void;
  onRequestSent?(): void;
};

/** Hands every event on to `inner`, after checking the fence when the request is about to be written. */
class FencedHandler implements Handler {
  readonly #inner: Handler;
  readonly #fence: Fence;
  readonly #request: string | undefined;

  constructor(inner: Handler, fence: Fence, request: string | undefined) {
    this.#inner = inner;
    this.#fence = fence;
    this.#request = request;
  }

  onConnect(abort: (err?: Error) => void, context?: unknown): void {
    try {
      this.#fence.check();
    } catch (err) {
      abort(err as Error);
      return;
    }
    if (testHold) holdForTest(this.#request!);
    this.#inner.onConnect?.(abort, context);
  }

  onError(err: Error): void {
    this.#inner.onError?.(err);
  }

  onUpgrade(statusCode: number, headers: unknown, socket: unknown): void {
    this.#inner.onUpgrade?.(statusCode, headers, socket);
  }

  onResponseStarted(): void {
    this.#inner.onResponseStarted?.();
  }

  onHeaders(statusCode: number, headers: Buffer[], resume: () => void, statusText: string): boolean {
    return this.#inner.onHeaders?.(statusCode, headers, resume, statusText) ?? true;
  }

  onData(chunk: Buffer): boolean {
    return this.#inner.onData?.(chunk) ?? true;
  }

  onComplete(trailers: string[] | null): void {
    this.#inner.onComplete?.(trailers);
  }

  onBodySent(chunkSize: number, totalBytesSent: number): void {
    this.#inner.onBodySent?.(chunkSize, totalBytesSent);
  }

  onRequestSent(): void {
    this.#inner.onRequestSent?.();
  }
}

/**
 * undici's Agent with fenced writes: a request with a fence is checked when its connection is about to write it —
 * undici calls its handler's `onConnect` right before the request line goes to the socket — not when it was queued: a
 * request that waited for a connection, or whose process was paused meanwhile, is checked at the last moment. Requests
 * without a fence go as they are. (Not an interceptor, `agent.compose(…)`: a composed agent converts every request's
 * handler to undici's newer handler interface and back, each answer's headers parsed and encoded again on the way.)
 */
export function fencedAgent(Agent: typeof UndiciAgent): typeof UndiciAgent {
  return class FencedAgent extends Agent {
    override dispatch(opts: Dispatcher.DispatchOptions, handler: Dispatcher.DispatchHandler): boolean {
      const fence = (opts as FencedDispatchOptions).fence;
      if (!fence) return super.dispatch(opts, handler);
      const request = testHold ? `${opts.method} ${opts.path}` : undefined;
      const fenced = new FencedHandler(handler as Handler, fence, request);
      return super.dispatch(opts, fenced as Dispatcher.DispatchHandler);
    }
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
