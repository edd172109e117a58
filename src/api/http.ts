import { EventEmitter } from 'node:events';
import { setTimeout as sleep } from 'node:timers/promises';
import type * as UndiciModule from 'undici';
import type { Agent, Dispatcher } from 'undici';
import { HttpError, LeaseLostError, type ErrorCode } from '../errors.ts';
import { ENDPOINTS, fillPath, joinUrl, type ApiName, type EndpointName, type RetryClass } from './endpoints.ts';
import { DEFAULT_RETRY, mayRetry, parseRetryAfter, retryDelayMs, type RetryOptions } from './retry.ts';
import type { Credential } from './credential.ts';
import { fencedAgent, type Fence } from './fence.ts';
import type { RunScope } from './run-scope.ts';
import type { ApiLimiter, PermitOutcome } from './api-limiter.ts';
import { requestObserver } from './request-observer.ts';

type Undici = typeof UndiciModule;
let undici: Undici | undefined;
let loadingUndici: Promise<Undici> | undefined;

/**
 * undici, loaded with the first request: a command that sends nothing (validate of a mapping without lookups, a
 * mapping refused at start) does not pay for loading it.
 */
export function loadUndici(): Promise<Undici> {
  return (loadingUndici ??= import('undici').then((m) => (undici = m)));
}

/** An undici Agent (a keep-alive pool per origin) created when the first request needs it. */
export class LazyDispatcher {
  readonly #options: Agent.Options;
  #agent: Promise<Dispatcher> | undefined;
  #created: Dispatcher | undefined;
  #closed = false;

  constructor(options: Agent.Options) {
    this.#options = options;
  }

  /**
   * The agent (fenced writes checked at the socket: fence.ts), created on first call; after close() every call rejects.
   */
  get(): Promise<Dispatcher> {
    if (this.#closed) return Promise.reject(new Error('the HTTP client is closed'));
    return (this.#agent ??= loadUndici().then((u) => (this.#created = new (fencedAgent(u.Agent))(this.#options))));
  }

  /** The agent once created, while not closed: what a request takes without waiting on get()'s promise. */
  get created(): Dispatcher | undefined {
    return this.#closed ? undefined : this.#created;
  }

  /** Closes the agent's connections (nothing to do when no request was ever sent). */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#agent) await (await this.#agent).close();
  }
}

/** What requests go through: an undici Dispatcher, or one created on first use. */
export type DispatcherSource = Dispatcher | LazyDispatcher;

/** Connect, response-headers and body-inactivity timeouts, milliseconds. */
export interface HttpTimeouts {
  connectMs: number;
  headersMs: number;
  bodyMs: number;
}

/** Defaults: 10 s to connect, 30 s for the response headers, 30 s of body inactivity. */
export const DEFAULT_TIMEOUTS: HttpTimeouts = { connectMs: 10_000, headersMs: 30_000, bodyMs: 30_000 };

/** What {@link ApiTransport} reports before each retry. */
export interface RetryInfo {
  api: ApiName | 'token';
  endpoint: string;
  method: string;
  url: string;
  /** 1-based number of the retry about to be sent. */
  attempt: number;
  delayMs: number;
  error: HttpError;
}

/** A parsed 2xx answer. */
export interface HttpResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** One request as {@link sendRequest} sends it. */
export interface SendInput {
  method: string;
  url: string;
  headers: Record<string, string>;
  body?: string;
  timeouts: HttpTimeouts;
  signal?: AbortSignal;
  /**
   * A write's fence: made ready before the request is dispatched, checked again right before it is written (fence.ts).
   */
  fence?: Fence;
}

// Failures that happen before a byte of the request can have reached the server: safe to re-send even a create.
const NOT_SENT = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'UND_ERR_CONNECT_TIMEOUT',
]);
const TIMEOUTS = new Set(['UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_HEADERS_TIMEOUT', 'UND_ERR_BODY_TIMEOUT']);

function errorCodeOf(err: unknown): string | undefined {
  const e = err as { code?: unknown; errors?: unknown[] } | null;
  if (e && typeof e.code === 'string') return e.code;
  if (e && Array.isArray(e.errors)) return errorCodeOf(e.errors[0]);
  return undefined;
}

/** True for the errors an abort signal raises (they are passed through untouched, never retried). */
export function isAbortError(err: unknown): boolean {
  return (err as { name?: string } | null)?.name === 'AbortError' || errorCodeOf(err) === 'UND_ERR_ABORTED';
}

/**
 * An undici / socket failure as an HttpError: PS_ERR_HTTP_TIMEOUT or PS_ERR_HTTP_CONNECTION, outcome unknown unless it
 * failed before sending.
 */
export function transportError(err: unknown, method: string, url: string): HttpError {
  const code = errorCodeOf(err) ?? 'UNKNOWN';
  const psCode: ErrorCode = TIMEOUTS.has(code) ? 'PS_ERR_HTTP_TIMEOUT' : 'PS_ERR_HTTP_CONNECTION';
  const reason = err instanceof Error && err.message ? err.message : code;
  return new HttpError(psCode, {
    method,
    url,
    status: null,
    cause: err,
    outcomeUnknown: !NOT_SENT.has(code),
    message: `${method} ${url}: ${psCode === 'PS_ERR_HTTP_TIMEOUT' ? 'timed out' : 'connection failed'} (${code}: ${reason})`,
  });
}

/** The error code a non-2xx status maps to. */
export function statusCode(status: number): ErrorCode {
  if (status === 401) return 'PS_ERR_HTTP_UNAUTHORIZED';
  if (status === 429) return 'PS_ERR_HTTP_RATE_LIMITED';
  if (status >= 500) return 'PS_ERR_HTTP_UNAVAILABLE';
  return 'PS_ERR_HTTP_STATUS';
}

function parseBody(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: true, value: undefined };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/** An AbortSignal as undici may also take it: an EventEmitter with `aborted` and `reason`. */
class AbortEmitter extends EventEmitter {
  aborted = false;
  reason: unknown = undefined;
}

const abortEmitters = new WeakMap<AbortSignal, AbortEmitter>();

/**
 * The emitter standing for `signal` in undici's requests: one listener on the signal for all of them. undici adds and
 * removes an abort listener per request; on an EventTarget each addition scans the listeners already there (every
 * request in flight), on an EventEmitter it is an array push.
 */
function abortEmitter(signal: AbortSignal): AbortEmitter {
  let e = abortEmitters.get(signal);
  if (e === undefined) {
    const emitter = new AbortEmitter();
    // Every request in flight listens to it: hundreds at once are expected, not a leak.
    emitter.setMaxListeners(0);
    const abort = () => {
      emitter.aborted = true;
      emitter.reason = signal.reason;
      emitter.emit('abort');
    };
    if (signal.aborted) abort();
    else signal.addEventListener('abort', abort, { once: true });
    abortEmitters.set(signal, (e = emitter));
  }
  return e;
}

/**
 * Sends one request and reads the whole answer. Any media type (application/json, text/json, text/plain) is parsed as
 * JSON; an empty body is `undefined`. Throws HttpError: non-2xx (status, parsed problem details, Retry-After),
 * transport failures (connection / timeout), or an unparseable 2xx body (PS_ERR_HTTP_BAD_RESPONSE).
 */
export async function sendRequest(source: DispatcherSource, input: SendInput): Promise<HttpResponse> {
  const { method, url } = input;
  let res: Dispatcher.ResponseData;
  let text: string;
  try {
    const dispatcher = source instanceof LazyDispatcher ? (source.created ?? (await source.get())) : source;
    // A lost lease refuses the write here (and again at the socket, where a dispatcher without the fence check cannot).
    if (input.fence) await input.fence.ready();
    const options = {
      method: method as Dispatcher.HttpMethod,
      headers: input.headers,
      body: input.body,
      headersTimeout: input.timeouts.headersMs,
      bodyTimeout: input.timeouts.bodyMs,
      signal: input.signal ? abortEmitter(input.signal) : undefined,
      ...(input.fence ? { fence: input.fence } : {}),
    };
    const at = originAndPath(url);
    if (at) {
      res = await dispatcher.request(Object.assign(options, at));
    } else {
      const { request } = undici ?? (await loadUndici());
      res = await request(url, { ...options, dispatcher });
    }
  } catch (err) {
    // Refused by the fence: not sent, and not an API failure.
    if (isAbortError(err) || err instanceof LeaseLostError) throw err;
    throw transportError(err, method, url);
  }
  try {
    text = await res.body.text();
  } catch (err) {
    if (isAbortError(err)) throw err;
    // The server answered: whatever it did is done, we just could not read what it said.
    const e = transportError(err, method, url);
    throw new HttpError(e.code, { method, url, status: null, cause: err, outcomeUnknown: true, message: e.message });
  }
  const parsed = parseBody(text);
  const status = res.statusCode;
  if (status >= 200 && status < 300) {
    if (!parsed.ok) {
      throw new HttpError('PS_ERR_HTTP_BAD_RESPONSE', {
        method,
        url,
        status,
        body: text.slice(0, 2000),
        outcomeUnknown: true,
        message: `${method} ${url}: ${status} answer is not JSON`,
      });
    }
    return { status, headers: res.headers, body: parsed.value };
  }
  throw new HttpError(statusCode(status), {
    method,
    url,
    status,
    body: parsed.ok ? parsed.value : text.slice(0, 2000),
    retryAfterMs: parseRetryAfter(res.headers['retry-after']),
  });
}

/**
 * The origin and path of a plain http(s) URL as `new URL(…).toString()` writes it, split without parsing it again (what
 * undici's `request(url)` does first); null for anything else (credentials in the URL…), which goes through undici's
 * parser.
 */
function originAndPath(url: string): { origin: string; path: string } | null {
  const scheme = url.startsWith('http://') ? 7 : url.startsWith('https://') ? 8 : 0;
  if (scheme === 0) return null;
  const slash = url.indexOf('/', scheme);
  const origin = slash < 0 ? url : url.slice(0, slash);
  if (origin.includes('@') || origin.includes('?') || origin.includes('#')) return null;
  return { origin, path: slash < 0 ? '/' : url.slice(slash) };
}

const fixedUrls = new Map<string, string>();

/**
 * `joinUrl(base, fillPath(path, params), query)`, remembered for calls without params or query: a create's URL is the
 * same for every row, and building it costs a URL parse.
 */
export function requestUrl(
  base: string,
  path: string,
  params?: Record<string, string>,
  query?: Readonly<Record<string, unknown>>,
): string {
  if (params || query || path.includes('{')) return joinUrl(base, fillPath(path, params), query);
  const key = `${base} ${path}`;
  let url = fixedUrls.get(key);
  if (url === undefined) {
    url = joinUrl(base, path);
    if (fixedUrls.size < 1000) fixedUrls.set(key, url);
  }
  return url;
}

/** Settings of {@link withRetry}. */
export interface RetryRun {
  retryClass: RetryClass;
  retry: RetryOptions;
  signal?: AbortSignal;
  random?: () => number;
  onRetry?: (attempt: number, delayMs: number, error: HttpError) => void;
  /** How to wait before a retry (default: a plain sleep); the limiter counts a refusal's wait as time on its limits. */
  wait?: (delayMs: number, error: HttpError) => Promise<void>;
}

/**
 * Runs `attempt` until it succeeds, or until the retry class / budget says stop (then its last error is thrown). A 429
 * (nothing was done) has a budget of its own, `rateLimitedRetries`: an API at its limit refuses often, and the
 * request is simply sent again after its Retry-After.
 */
export async function withRetry<T>(attempt: () => Promise<T>, run: RetryRun): Promise<T> {
  const refusals = run.retry.rateLimitedRetries ?? DEFAULT_RETRY.rateLimitedRetries;
  for (let n = 0, refused = 0; ;) {
    try {
      return await attempt();
    } catch (err) {
      if (run.signal?.aborted || !mayRetry(run.retryClass, err)) throw err;
      const rateLimited = err instanceof HttpError && err.status === 429;
      if (rateLimited ? refused >= refusals : n >= run.retry.retries) throw err;
      if (rateLimited) refused += 1;
      else n += 1;
      const attemptNo = n + refused;
      const delayMs = retryDelayMs(rateLimited ? refused : n, err, run.retry, run.random);
      run.onRetry?.(attemptNo, delayMs, err as HttpError);
      if (run.wait) await run.wait(delayMs, err as HttpError);
      else await sleep(delayMs, undefined, run.signal ? { signal: run.signal } : undefined);
    }
  }
}

/** What a request's end teaches the limiter: a 429 / 503 is a refusal; other failures teach nothing. */
function permitOutcome(err: unknown): PermitOutcome {
  return err instanceof HttpError && (err.status === 429 || err.status === 503) ? 'refused' : 'ignore';
}

/** Settings of an {@link ApiTransport}. */
export interface TransportOptions {
  dispatcher: DispatcherSource;
  credential: Credential;
  retry: RetryOptions;
  timeouts: HttpTimeouts;
  userAgent: string;
  /** Accept header; default application/json. */
  accept?: string;
  onRetry?: (info: RetryInfo) => void;
  random?: () => number;
  /** Aborts waits and in-flight requests (set by close()). */
  signal?: AbortSignal;
  /** Paces and bounds the product API's requests (api-limiter.ts); the reference API is not limited by it. */
  limiter?: ApiLimiter;
}

/** The arguments of one endpoint call. */
export interface CallInput {
  base: string;
  params?: Record<string, string>;
  query?: Readonly<Record<string, unknown>>;
  body?: unknown;
}

/**
 * Sends endpoint calls of {@link ENDPOINTS}: bearer credential (refreshed and re-sent once on a 401 when the
 * credential can refresh), retries per the endpoint's retry class, and a request count per API in `stats`.
 */
export class ApiTransport {
  readonly stats: Record<ApiName, number> = { product: 0, reference: 0 };
  private readonly o: TransportOptions;
  /** The request headers for the current token, with and without a JSON body: the same for every request. */
  #headers: { token: string; plain: Record<string, string>; json: Record<string, string> } | undefined;

  constructor(options: TransportOptions) {
    this.o = options;
  }

  /** The headers of a request with `token`; undici only reads them, so one frozen object serves every request. */
  #headersFor(token: string, json: boolean): Record<string, string> {
    let h = this.#headers;
    if (h?.token !== token) {
      const plain = { accept: this.o.accept ?? 'application/json', 'user-agent': this.o.userAgent };
      const auth = { ...plain, authorization: `Bearer ${token}` };
      h = this.#headers = {
        token,
        plain: Object.freeze(auth),
        json: Object.freeze({ ...auth, 'content-type': 'application/json' }),
      };
    }
    return json ? h.json : h.plain;
  }

  /**
   * Calls one endpoint and returns its parsed 2xx body; throws HttpError otherwise. `scope`: the run the call is made
   * for (its clients', run-scope.ts).
   */
  async call<T>(name: EndpointName, input: CallInput, scope?: RunScope): Promise<T> {
    const ep = ENDPOINTS[name];
    const url = requestUrl(input.base, ep.path, input.params, input.query);
    const body = input.body === undefined ? undefined : JSON.stringify(input.body);
    // Writes of a run are fenced by its lease (fence.ts); reads never are. Every request is counted for its run.
    const fence = ep.method === 'GET' ? undefined : (scope?.fence ?? undefined);
    const limiter = ep.api === 'product' ? this.o.limiter : undefined;
    const tally = scope?.tally;
    let refreshed = false;
    const res = await withRetry(
      async () => {
        for (;;) {
          const token = await this.o.credential.token();
          this.stats[ep.api] += 1;
          scope?.count?.(ep.api, 1);
          const headers = this.#headersFor(token, body !== undefined);
          const permit = limiter ? await limiter.acquire(this.o.signal, tally) : undefined;
          const observe = requestObserver();
          const t0 = observe ? performance.now() : 0;
          try {
            const res = await sendRequest(this.o.dispatcher, {
              method: ep.method,
              url,
              headers,
              body,
              timeouts: this.o.timeouts,
              signal: this.o.signal,
              ...(fence ? { fence } : {}),
            });
            if (permit) limiter!.release(permit, 'ok');
            observe?.(ep.api, ep.method, res.status, (performance.now() - t0) / 1000);
            return res;
          } catch (err) {
            if (permit) limiter!.release(permit, permitOutcome(err));
            // A request the fence refused was not sent: not observed.
            if (observe && !(err instanceof LeaseLostError))
              observe(
                ep.api,
                ep.method,
                err instanceof HttpError && err.status !== null ? err.status : 'error',
                (performance.now() - t0) / 1000,
              );
            // A write the fence refused was not sent: not counted.
            if (err instanceof LeaseLostError) {
              this.stats[ep.api] -= 1;
              scope?.count?.(ep.api, -1);
            }
            // A 401 means nothing was done, so even a create may be re-sent once with a fresh token.
            if (err instanceof HttpError && err.status === 401 && !refreshed && this.o.credential.invalidate(token)) {
              refreshed = true;
              continue;
            }
            throw err;
          }
        }
      },
      {
        retryClass: ep.retry,
        retry: this.o.retry,
        signal: this.o.signal,
        random: this.o.random,
        onRetry: (attempt, delayMs, error) =>
          this.o.onRetry?.({ api: ep.api, endpoint: name, method: ep.method, url, attempt, delayMs, error }),
        // A refused request waits its own Retry-After; the others go on at the limiter's pace.
        ...(limiter
          ? {
              wait: (delayMs: number, error: HttpError) =>
                permitOutcome(error) === 'refused'
                  ? limiter.waitRetryAfter(delayMs, this.o.signal, tally)
                  : sleep(delayMs, undefined, this.o.signal ? { signal: this.o.signal } : undefined),
            }
          : {}),
      },
    );
    return res.body as T;
  }
}
