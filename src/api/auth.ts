import { HttpError, ProductSyncError } from '../errors.ts';
import { addSecret } from '../redact.ts';
import { sendRequest, withRetry, type DispatcherSource, type HttpTimeouts, type RetryInfo } from './http.ts';
import type { RetryOptions } from './retry.ts';
import type { Credential } from './credential.ts';

/** A fixed token (API_TOKEN): never refreshed, so a 401 is final. */
export class StaticCredential implements Credential {
  private readonly value: string;
  constructor(token: string) {
    this.value = token;
    addSecret(token);
  }
  /** The token given at construction. */
  token(): Promise<string> {
    return Promise.resolve(this.value);
  }
  /** Always false: a static token cannot be replaced. */
  invalidate(): boolean {
    return false;
  }
}

/** Settings of {@link OAuthClientCredentials}. */
export interface OAuthOptions {
  tokenUrl: string;
  clientId: string;
  clientSecret: string;
  scope?: string;
  dispatcher: DispatcherSource;
  timeouts: HttpTimeouts;
  retry: RetryOptions;
  userAgent: string;
  /** Refresh this long before expiry; default min(60 s, a tenth of the token's lifetime). */
  refreshSkewMs?: number;
  now?: () => number;
  onRetry?: (info: RetryInfo) => void;
  signal?: AbortSignal;
}

interface CachedToken {
  value: string;
  refreshAt: number;
}

/**
 * OAuth2 client credentials (RFC 6749 §4.4): the token is fetched lazily, cached, refreshed shortly before it
 * expires, and concurrent callers share one fetch. `fetches` counts token requests sent.
 */
export class OAuthClientCredentials implements Credential {
  fetches = 0;
  private readonly o: OAuthOptions;
  private cached: CachedToken | undefined;
  private inflight: Promise<string> | undefined;

  constructor(options: OAuthOptions) {
    this.o = options;
    addSecret(options.clientSecret);
  }

  /** The cached token while it is fresh; otherwise one shared fetch of a new one. */
  token(): Promise<string> {
    const now = (this.o.now ?? Date.now)();
    if (this.cached && now < this.cached.refreshAt) return Promise.resolve(this.cached.value);
    this.inflight ??= this.fetch().finally(() => {
      this.inflight = undefined;
    });
    return this.inflight;
  }

  /** Drops `token` if it is the cached one (a newer token fetched meanwhile is kept); always true: a fetch may help. */
  invalidate(token: string): boolean {
    if (this.cached?.value === token) this.cached = undefined;
    return true;
  }

  private async fetch(): Promise<string> {
    const { tokenUrl: url, clientId, clientSecret, scope } = this.o;
    const form = new URLSearchParams({
      grant_type: 'client_credentials',
      client_id: clientId,
      client_secret: clientSecret,
    });
    if (scope) form.set('scope', scope);
    const started = (this.o.now ?? Date.now)();
    let res;
    try {
      res = await withRetry(
        () => {
          this.fetches += 1;
          return sendRequest(this.o.dispatcher, {
            method: 'POST',
            url,
            headers: {
              'content-type': 'application/x-www-form-urlencoded',
              accept: 'application/json',
              'user-agent': this.o.userAgent,
            },
            body: form.toString(),
            timeouts: this.o.timeouts,
            signal: this.o.signal,
          });
        },
        {
          retryClass: 'retry',
          retry: this.o.retry,
          signal: this.o.signal,
          onRetry: (attempt, delayMs, error) =>
            this.o.onRetry?.({ api: 'token', endpoint: 'oauth.token', method: 'POST', url, attempt, delayMs, error }),
        },
      );
    } catch (err) {
      // The token endpoint refusing the client is a credential problem, not an API outage.
      if (
        err instanceof HttpError &&
        err.status !== null &&
        err.status >= 400 &&
        err.status < 500 &&
        err.status !== 429
      ) {
        throw new HttpError('PS_ERR_AUTH_TOKEN', {
          method: 'POST',
          url,
          status: err.status,
          body: err.body,
          outcomeUnknown: false,
        });
      }
      throw err;
    }
    const body = res.body as { access_token?: unknown; expires_in?: unknown } | undefined;
    if (!body || typeof body.access_token !== 'string' || body.access_token === '') {
      throw new ProductSyncError(
        'PS_ERR_AUTH_TOKEN',
        `POST ${url}: the token endpoint answered without an access_token`,
      );
    }
    const expiresIn = Number(body.expires_in);
    const lifetimeMs = Number.isFinite(expiresIn) && expiresIn > 0 ? expiresIn * 1000 : 3_600_000;
    const skew = this.o.refreshSkewMs ?? Math.min(60_000, lifetimeMs / 10);
    this.cached = { value: body.access_token, refreshAt: started + lifetimeMs - skew };
    addSecret(body.access_token);
    return body.access_token;
  }
}
