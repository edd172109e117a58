/** Every failure product-sync raises, with a stable code. Row problems are never errors: they are issues (data). */
import { redact } from './redact.ts';

/** The table of error codes: code → [default message, retryable]. Documented in docs/errors.md (a test checks). */
export const ERROR_CODES = {
  PS_ERR_CONFIG_INVALID: ['invalid configuration', false],
  PS_ERR_CLI_USAGE: ['bad invocation', false],
  PS_ERR_MAPPING_INVALID: ['invalid mapping file', false],
  PS_ERR_FEED_INVALID: ['invalid feed definition', false],
  PS_ERR_FILE_UNREADABLE: ['file cannot be read', false],
  PS_ERR_SOURCE_UNAVAILABLE: ["a feed's source cannot be reached", true],
  PS_ERR_SOURCE_REFUSED: ["a feed's source address is refused", false],
  PS_ERR_SOURCE_TOO_LARGE: ["a feed's file exceeds its size limit", false],
  PS_ERR_SOURCE_TIMEOUT: ["a feed's source took longer than its deadline", true],
  PS_ERR_FILE_TYPE: ['file type not supported', false],
  PS_ERR_FILE_TOO_LARGE: ['file exceeds a size limit', false],
  PS_ERR_FILE_HEADER: ['sheet header problem', false],
  PS_ERR_HTTP_STATUS: ['API answered an error status', false],
  PS_ERR_HTTP_UNAUTHORIZED: ['credential rejected', false],
  PS_ERR_HTTP_RATE_LIMITED: ['API rate limit', true],
  PS_ERR_HTTP_UNAVAILABLE: ['API unavailable', true],
  PS_ERR_HTTP_CONNECTION: ['connection to the API failed', true],
  PS_ERR_HTTP_TIMEOUT: ['API request timed out', true],
  PS_ERR_HTTP_BAD_RESPONSE: ['API response could not be parsed', false],
  PS_ERR_HTTP_REQUEST_INVALID: ['request not sent: it breaks the field rules of the operation', false],
  PS_ERR_AUTH_TOKEN: ['could not obtain an access token', false],
  PS_ERR_CIRCUIT_OPEN: ['too many consecutive API failures: circuit open', true],
  PS_ERR_ARCHIVE_GUARD: ['archive guard tripped', false],
  PS_ERR_SCOPE_MISSING: ['full mode and reconcile need a scope', false],
  PS_ERR_RUN_ABORTED: ['run aborted', false],
  PS_ERR_QUALITY_GATE: ["the run is over its mapping's quality gate: planned and reported, nothing written", false],
  PS_ERR_RUN_LOCKED: ['another run holds the lease of this owner and API', false],
  PS_ERR_LEASE_LOST: ['the run lost the lease of its owner and API: it stopped sending', false],
  PS_ERR_RUN_INTERRUPTED: ['the run was interrupted (SIGINT or SIGTERM)', false],
  PS_ERR_REDIS_UNREACHABLE: ['Redis cannot be reached', false],
  PS_ERR_JOURNAL: ['journal cannot be read or written', false],
  PS_ERR_REPORT: ['report cannot be written', false],
  PS_ERR_FILE_WRITE: ['a file or directory cannot be created or written', false],
  PS_ERR_QUEUE: ['queue error', false],
  PS_ERR_JOB_LOST: ['the queued job is gone from Redis', false],
  PS_ERR_SOURCE_HOST_KEY: ["the SFTP server's host key does not match the pinned fingerprint", false],
  PS_ERR_SOURCE_CREDENTIALS: ["a feed source's credentials are missing or refused", false],
  PS_ERR_SOURCE_PATH: ["a source path leaves the source's folder", false],
  PS_ERR_SOURCE_FILE: ['a source file cannot be listed, read, moved or deleted', false],
  PS_ERR_UNDO: ['the run cannot be undone', false],
  PS_ERR_UNDO_BLOCKED: ['later runs changed items of the run to undo', false],
} as const satisfies Record<string, readonly [string, boolean]>;

export type ErrorCode = keyof typeof ERROR_CODES;

/** Base error: `code` is stable, `retryable` tells drivers whether trying again may help. */
export class ProductSyncError extends Error {
  readonly code: ErrorCode;
  readonly retryable: boolean;
  constructor(code: ErrorCode, message?: string, options?: { cause?: unknown; retryable?: boolean }) {
    super(message ?? ERROR_CODES[code][0], options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ProductSyncError';
    this.code = code;
    this.retryable = options?.retryable ?? ERROR_CODES[code][1];
  }
}

/** One entry of a problem-details `errors` array. */
export interface ProblemEntry {
  code: string;
  property: string;
  message: string;
  detail: string | null;
}

/** A problem-details body as both APIs send it (docs/api-contract.md). */
export interface ProblemDetails {
  type: string;
  title: string;
  status: number;
  errors: ProblemEntry[];
  detail?: string | null;
  instance?: string | null;
  extensions?: Record<string, unknown>;
}

/** An API call that failed: names the call, carries status and the parsed problem-details body (if any). */
export class HttpError extends ProductSyncError {
  readonly method: string;
  readonly url: string;
  readonly status: number | null;
  readonly body: unknown;
  readonly retryAfterMs: number | null;
  /**
   * True when a write may nevertheless have been applied (timeout or reset after sending, any 5xx); false when it
   * certainly was not.
   */
  readonly outcomeUnknown: boolean;
  constructor(
    code: ErrorCode,
    init: {
      method: string;
      url: string;
      status: number | null;
      body?: unknown;
      retryAfterMs?: number | null;
      cause?: unknown;
      message?: string;
      outcomeUnknown?: boolean;
    },
  ) {
    const what = init.status === null ? ERROR_CODES[code][0] : `${init.status} ${ERROR_CODES[code][0]}`;
    // The URL may carry userinfo and the body may echo a token: neither reaches a message or a report (redact.ts).
    super(code, redact(init.message ?? `${init.method} ${init.url}: ${what}${problemSummary(init.body)}`), {
      cause: init.cause,
    });
    this.name = 'HttpError';
    this.method = init.method;
    this.url = redact(init.url);
    this.status = init.status;
    this.body = init.body;
    this.retryAfterMs = init.retryAfterMs ?? null;
    this.outcomeUnknown =
      init.outcomeUnknown ?? (init.status === null ? code === 'PS_ERR_HTTP_TIMEOUT' : init.status >= 500);
  }
  /** The API's own words for the failure: problem entries joined, or the title (credentials redacted). */
  get apiMessage(): string {
    const p = this.body as Partial<ProblemDetails> | undefined;
    if (p && Array.isArray(p.errors) && p.errors.length > 0) {
      return redact(p.errors.map((e) => `${e.property}: ${e.message}`).join('; '));
    }
    return redact(p?.title ?? this.message);
  }
}

function problemSummary(body: unknown): string {
  const p = body as Partial<ProblemDetails> | undefined;
  if (!p || typeof p !== 'object' || !Array.isArray(p.errors) || p.errors.length === 0) return '';
  return ` (${p.errors.map((e) => `${e.property}: ${e.message}`).join('; ')})`;
}

/** True when the error is worth retrying (typed errors say so; unknown errors are not). */
export function isRetryable(err: unknown): boolean {
  return err instanceof ProductSyncError && err.retryable;
}

/** An error as it crosses a worker thread's boundary (structured clone keeps neither its class nor its code). */
export interface ThreadErrorMessage {
  message: string;
  code?: string;
  productSync?: boolean;
  retryable?: boolean;
}

/** An error as a message for another thread (the report thread). */
export function errorMessage(err: unknown): ThreadErrorMessage {
  const e = err as { message?: unknown; code?: unknown } | null;
  return {
    message: typeof e?.message === 'string' ? e.message : String(err),
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
    ...(err instanceof ProductSyncError ? { productSync: true, retryable: err.retryable } : {}),
  };
}

/** The error a message stands for: a ProductSyncError with its code again, or an Error carrying the code (ENOENT…). */
export function errorFrom(m: ThreadErrorMessage): Error {
  if (m.productSync && m.code)
    return new ProductSyncError(
      m.code as ErrorCode,
      m.message,
      m.retryable === undefined ? undefined : { retryable: m.retryable },
    );
  return Object.assign(new Error(m.message), m.code ? { code: m.code } : {});
}

/**
 * A writer's lease (or a queue job's lock) is no longer certainly its own: expired while the process was paused, taken
 * over by another run, or not renewable. The request it stopped was not sent; the run ends as aborted (exit 3).
 */
export class LeaseLostError extends ProductSyncError {
  constructor(message: string, options?: { cause?: unknown }) {
    super('PS_ERR_LEASE_LOST', `lease lost: ${message}`, options);
    this.name = 'LeaseLostError';
  }
}

/** A run stopped by SIGINT / SIGTERM: it sends nothing more, writes its report, and exits 128 + the signal's number. */
export class RunInterrupted extends ProductSyncError {
  constructor(readonly signal: 'SIGINT' | 'SIGTERM') {
    super('PS_ERR_RUN_INTERRUPTED', 'interrupted');
    this.name = 'RunInterrupted';
  }

  /** The shell's convention: 130 for SIGINT, 143 for SIGTERM. */
  get exitCode(): number {
    return this.signal === 'SIGINT' ? 130 : 143;
  }
}
