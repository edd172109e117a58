import { setMaxListeners } from 'node:events';
import type { Config } from '../config.ts';
import { ProductSyncError } from '../errors.ts';
import { OAuthClientCredentials, StaticCredential } from './auth.ts';
import type { Credential } from './credential.ts';
import { ApiTransport, DEFAULT_TIMEOUTS, LazyDispatcher, type HttpTimeouts, type RetryInfo } from './http.ts';
import { ProductClient } from './product-client.ts';
import { ReferenceClient } from './reference-client.ts';
import { DEFAULT_RETRY, type RetryOptions } from './retry.ts';
import type { ApiLimiter } from './api-limiter.ts';
import type { ApiName } from './endpoints.ts';
import type { RunScope } from './run-scope.ts';

/** A bearer credential: a static token, or OAuth2 client credentials. */
export type CredentialOptions =
  { token: string } | { tokenUrl: string; clientId: string; clientSecret: string; scope?: string };

/** Settings of {@link createApiClients}. */
export interface ApiClientOptions {
  productApiUrl: string;
  referenceApiUrl: string;
  credentials: CredentialOptions;
  /** Keep-alive connections per origin; should match the request concurrency (default 32). */
  connections?: number;
  timeouts?: Partial<HttpTimeouts>;
  retry?: Partial<RetryOptions>;
  userAgent?: string;
  /** Check request bodies / queries against the field rules before sending (default true). */
  validate?: boolean;
  /** Called before each retry (logging, adaptive throttling). */
  onRetry?: (info: RetryInfo) => void;
  /** Accept header (default application/json; the language-aware lookups may also answer text/plain or text/json). */
  accept?: string;
  /** Source of jitter (tests). */
  random?: () => number;
  /** Clock of the OAuth2 token cache (tests). */
  now?: () => number;
  /** Bounds and paces the product API's requests (api-limiter.ts). */
  limiter?: ApiLimiter;
}

/** Both API clients over one keep-alive connection pool, the request counts per API, and close(). */
export interface ApiClients {
  product: ProductClient;
  reference: ReferenceClient;
  /**
   * Requests sent so far, per API (every attempt counts; token requests do not): by the whole process for its own
   * clients, through these clients and those bound from them for a run's (`forRun`).
   */
  stats: { readonly reference: number; readonly product: number };
  /** The credential in use (an OAuthClientCredentials exposes `fetches`). */
  credential: Credential;
  /** The run these clients are bound to (absent: the process's own clients). */
  readonly scope?: RunScope;
  /**
   * These clients for a run (run-scope.ts): the same connections, their requests counted in the new clients' `stats`,
   * by `scope.count` and by these clients' own count; `scope.fence` / `scope.tally` where given, else these clients'.
   */
  forRun(scope: RunScope): ApiClients;
  /** Aborts waits and in-flight requests and closes the connections. */
  close(): Promise<void>;
}

/** `clients` bound to `scope` (ApiClients.forRun), `stats` counting their requests. */
function boundClients(
  clients: Pick<ApiClients, 'product' | 'reference' | 'credential' | 'close'>,
  stats: ApiClients['stats'],
  scope?: RunScope,
): ApiClients {
  return {
    product: scope ? clients.product.forRun(scope) : clients.product,
    reference: scope ? clients.reference.forRun(scope) : clients.reference,
    stats,
    credential: clients.credential,
    ...(scope ? { scope } : {}),
    forRun(next: RunScope): ApiClients {
      const own: Record<ApiName, number> = { product: 0, reference: 0 };
      const outer = scope?.count;
      const given = next.count;
      const fence = next.fence ?? scope?.fence;
      const tally = next.tally ?? scope?.tally;
      return boundClients(clients, own, {
        ...(fence ? { fence } : {}),
        ...(tally ? { tally } : {}),
        count: (api, n) => {
          own[api] += n;
          given?.(api, n);
          outer?.(api, n);
        },
      });
    },
    close: clients.close,
  };
}

/** Default User-Agent header. */
export const DEFAULT_USER_AGENT = 'product-sync/0.1.0';

/**
 * Builds both clients: one undici Agent (a Pool of `connections` keep-alive sockets per origin, created with the first
 * request), one credential, one retry policy.
 */
export function createApiClients(options: ApiClientOptions): ApiClients {
  const timeouts: HttpTimeouts = { ...DEFAULT_TIMEOUTS, ...options.timeouts };
  const retry: RetryOptions = { ...DEFAULT_RETRY, ...options.retry };
  const userAgent = options.userAgent ?? DEFAULT_USER_AGENT;
  const dispatcher = new LazyDispatcher({
    connections: options.connections ?? 32,
    connect: { timeout: timeouts.connectMs },
    headersTimeout: timeouts.headersMs,
    bodyTimeout: timeouts.bodyMs,
    keepAliveTimeout: 10_000,
  });
  const abort = new AbortController();
  // Every request in flight listens to this one signal: hundreds at once are expected, not a leak.
  setMaxListeners(0, abort.signal);
  const c = options.credentials;
  const credential: Credential =
    'token' in c
      ? new StaticCredential(c.token)
      : new OAuthClientCredentials({
          ...c,
          dispatcher,
          timeouts,
          retry,
          userAgent,
          onRetry: options.onRetry,
          signal: abort.signal,
          now: options.now,
        });
  const transport = new ApiTransport({
    dispatcher,
    credential,
    retry,
    timeouts,
    userAgent,
    accept: options.accept,
    onRetry: options.onRetry,
    random: options.random,
    signal: abort.signal,
    ...(options.limiter ? { limiter: options.limiter } : {}),
  });
  let closing: Promise<void> | undefined;
  const clients = {
    product: new ProductClient({ transport, baseUrl: options.productApiUrl, validate: options.validate }),
    reference: new ReferenceClient({ transport, baseUrl: options.referenceApiUrl, validate: options.validate }),
    credential,
    close() {
      closing ??= (async () => {
        abort.abort();
        await dispatcher.close();
      })();
      return closing;
    },
  };
  return boundClients(clients, transport.stats);
}

/**
 * The clients as the configuration (README, "Configuration") describes them; PS_ERR_CONFIG_INVALID when URLs or
 * credential are missing.
 */
export function apiClientsFromConfig(
  config: Config,
  extra: Omit<ApiClientOptions, 'productApiUrl' | 'referenceApiUrl' | 'credentials' | 'connections'> = {},
): ApiClients {
  const missing: string[] = [];
  if (!config.PRODUCT_API_URL) missing.push('PRODUCT_API_URL');
  if (!config.REFERENCE_API_URL) missing.push('REFERENCE_API_URL');
  const oauth = config.API_TOKEN_URL && config.API_CLIENT_ID && config.API_CLIENT_SECRET;
  if (!config.API_TOKEN && !oauth) missing.push('API_TOKEN (or API_TOKEN_URL + API_CLIENT_ID + API_CLIENT_SECRET)');
  if (missing.length > 0) {
    throw new ProductSyncError(
      'PS_ERR_CONFIG_INVALID',
      `invalid configuration:\n${missing.map((m) => `  ${m}: required to reach the API`).join('\n')}`,
    );
  }
  const credentials: CredentialOptions = config.API_TOKEN
    ? { token: config.API_TOKEN }
    : {
        tokenUrl: config.API_TOKEN_URL!,
        clientId: config.API_CLIENT_ID!,
        clientSecret: config.API_CLIENT_SECRET!,
        scope: config.API_SCOPE,
      };
  return createApiClients({
    ...extra,
    productApiUrl: config.PRODUCT_API_URL!,
    referenceApiUrl: config.REFERENCE_API_URL!,
    credentials,
    connections: config.API_CONCURRENCY,
  });
}
