import { request } from 'undici';
import { eventBody, type ProductSyncEvent } from './catalog.ts';
import { shownUrl, type Endpoint } from './endpoints.ts';
import { signWebhook } from './sign.ts';

/** A delivery attempt the endpoint did not accept (an error status, a timeout, a refused connection). */
export class DeliveryError extends Error {
  constructor(
    message: string,
    readonly status: number | null,
  ) {
    super(message);
    this.name = 'DeliveryError';
  }
}

/**
 * One delivery attempt of `event` to `endpoint`: a POST of `{type, timestamp, data}`, signed (Standard Webhooks),
 * within `timeoutMs`. Resolves on a 2xx; throws a DeliveryError otherwise (its message names the endpoint by its URL
 * without query or credentials, never the secret).
 */
export async function deliverOnce(endpoint: Endpoint, event: ProductSyncEvent, timeoutMs: number): Promise<number> {
  const body = eventBody(event);
  const headers = { 'content-type': 'application/json', ...signWebhook(endpoint.secret, event.id, body) };
  let status: number;
  try {
    const res = await request(endpoint.url, {
      method: 'POST',
      headers,
      body,
      headersTimeout: timeoutMs,
      bodyTimeout: timeoutMs,
      signal: AbortSignal.timeout(timeoutMs),
    });
    status = res.statusCode;
    await res.body.dump().catch(() => undefined);
  } catch (err) {
    const e = err as Error & { code?: string };
    const why =
      e.name === 'TimeoutError' || e.name === 'AbortError' ? `no answer within ${timeoutMs} ms` : (e.code ?? e.message);
    throw new DeliveryError(`${shownUrl(endpoint.url)}: ${why}`, null);
  }
  if (status < 200 || status > 299) throw new DeliveryError(`${shownUrl(endpoint.url)} answered ${status}`, status);
  return status;
}
