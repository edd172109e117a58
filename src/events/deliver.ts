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
 * within `timeoutMs` (an OpenLineage endpoint: a POST of `lineage`, the OpenLineage event that goes with it).
 * Resolves on a 2xx; throws a DeliveryError otherwise (its message names the endpoint by its URL without query or
 * credentials, never the secret).
 */
export async function deliverOnce(
  endpoint: Endpoint,
  event: ProductSyncEvent,
  timeoutMs: number,
  lineage?: unknown,
): Promise<number> {
  // An OpenLineage endpoint takes the run's OpenLineage event as it is (the spec's body), with its API key.
  const ol = endpoint.kind === 'openlineage';
  if (ol && !lineage) throw new DeliveryError(`${shownUrl(endpoint.url)}: no OpenLineage event to send`, null);
  const body = ol ? JSON.stringify(lineage) : eventBody(event);
  const headers: Record<string, string> = ol
    ? { 'content-type': 'application/json', ...(endpoint.apiKey ? { authorization: `Bearer ${endpoint.apiKey}` } : {}) }
    : { 'content-type': 'application/json', ...signWebhook(endpoint.secret, event.id, body) };
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
