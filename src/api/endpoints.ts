import type { BodyOperation } from './fields.ts';

/** Which API an endpoint belongs to (requests are counted per API). */
export type ApiName = 'product' | 'reference';

/**
 * How a failed call may be retried (docs/sync.md "Retries and the circuit"):
 * - `retry`: safe to send again (reads, PATCH, PUT, archive, unarchive) — retried on 429, 5xx, connection errors,
 *   timeouts;
 * - `create`: never blindly re-sent — retried only when the request certainly did not reach the server (429, connect
 *   failure).
 */
export type RetryClass = 'retry' | 'create';

/**
 * One endpoint: method, path template (`{name}` placeholders), retry class, and the body operation whose field rules
 * apply.
 */
export interface Endpoint {
  api: ApiName;
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  retry: RetryClass;
  body?: BodyOperation;
}

/** Every endpoint of both specs, as data: the client dispatches through this table and nothing else. */
export const ENDPOINTS = {
  'tradeItems.search': { api: 'product', method: 'GET', path: '/api/tradeitems', retry: 'retry' },
  'tradeItem.create': {
    api: 'product',
    method: 'POST',
    path: '/api/tradeItem',
    retry: 'create',
    body: 'tradeItem.create',
  },
  'tradeItems.archive': {
    api: 'product',
    method: 'DELETE',
    path: '/api/tradeitems/enable/collections',
    retry: 'retry',
  },
  'tradeItem.unarchive': { api: 'product', method: 'POST', path: '/api/tradeitems/{id}/enable', retry: 'retry' },
  'tradeItem.patch': {
    api: 'product',
    method: 'PATCH',
    path: '/api/tradeItems/{id}',
    retry: 'retry',
    body: 'tradeItem.patch',
  },
  'tradeItem.put': {
    api: 'product',
    method: 'PUT',
    path: '/api/tradeItems/{id}',
    retry: 'retry',
    body: 'tradeItem.put',
  },
  'manufacturedItems.search': { api: 'product', method: 'GET', path: '/api/manufactureditems', retry: 'retry' },
  'manufacturedItem.createUnderTradeItem': {
    api: 'product',
    method: 'POST',
    path: '/api/tradeItem/{id}/manufacturedItem',
    retry: 'create',
    body: 'manufacturedItem.createUnderTradeItem',
  },
  'manufacturedItem.createWithTradeItem': {
    api: 'product',
    method: 'POST',
    path: '/api/manufacturedItem',
    retry: 'create',
    body: 'manufacturedItem.createWithTradeItem',
  },
  'manufacturedItem.patch': {
    api: 'product',
    method: 'PATCH',
    path: '/api/manufacturedItems/{id}',
    retry: 'retry',
    body: 'manufacturedItem.patch',
  },
  'manufacturedItem.put': {
    api: 'product',
    method: 'PUT',
    path: '/api/manufacturedItems/{id}',
    retry: 'retry',
    body: 'manufacturedItem.put',
  },
  'brands.list': { api: 'product', method: 'GET', path: '/api/brands', retry: 'retry' },
  'brand.create': { api: 'product', method: 'POST', path: '/api/brands', retry: 'create' },
  'brand.rename': { api: 'product', method: 'PUT', path: '/api/brands/{id}', retry: 'retry' },
  'brand.archive': { api: 'product', method: 'DELETE', path: '/api/brands/{id}/enable', retry: 'retry' },
  'brand.unarchive': { api: 'product', method: 'POST', path: '/api/brands/{id}/enable', retry: 'retry' },
  'list.get': { api: 'reference', method: 'GET', path: '/v2/lists/{listName}', retry: 'retry' },
  'list.item': { api: 'reference', method: 'GET', path: '/v2/lists/{listName}/{itemId}', retry: 'retry' },
  lookup: { api: 'reference', method: 'GET', path: '/v2/{kind}/{id}', retry: 'retry' },
} as const satisfies Record<string, Endpoint>;

/** The name of an endpoint of {@link ENDPOINTS}. */
export type EndpointName = keyof typeof ENDPOINTS;

/**
 * `base` + `path` + query, keeping any path prefix of `base` (`http://h/ref/` + `/v2/x` → `http://h/ref/v2/x`);
 * undefined/null values are left out.
 */
export function joinUrl(base: string, path: string, query?: Readonly<Record<string, unknown>>): string {
  const url = new URL(base);
  url.pathname = url.pathname.replace(/\/+$/, '') + path;
  url.search = '';
  if (query) {
    for (const [k, v] of Object.entries(query)) {
      if (v === undefined || v === null) continue;
      url.searchParams.append(k, String(v));
    }
  }
  return url.toString();
}

/** A path template with its `{name}` placeholders filled, each value percent-encoded as one path segment. */
export function fillPath(template: string, params: Readonly<Record<string, string>> = {}): string {
  return template.replace(/\{(\w+)\}/g, (_, name: string) => {
    const v = params[name];
    if (v === undefined) throw new TypeError(`path parameter ${name} missing for ${template}`);
    return encodeURIComponent(v);
  });
}
