import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { apiClientsFromConfig, createApiClients, type ApiClientOptions, type ApiClients } from '../src/api/clients.ts';
import { loadConfig } from '../src/config.ts';
import { joinUrl } from '../src/api/endpoints.ts';
import { mayRetry, parseRetryAfter, retryDelayMs } from '../src/api/retry.ts';
import type { OAuthClientCredentials } from '../src/api/auth.ts';
import { HttpError } from '../src/errors.ts';
import type { ProductWriter } from '../src/pipeline/sync/execute.ts';
import { rejection } from './helpers/errors.ts';

const OWNER = '5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f';
const ID = '0f8fad5b-d9cb-469f-a165-70867728950e';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
  socket: number;
}
type Handler = (req: Seen, res: ServerResponse) => void;

const cleanup: (() => Promise<void>)[] = [];
afterEach(async () => {
  while (cleanup.length) await cleanup.pop()!();
});

/** A scripted loopback server: records every request, answers with `handler`. */
async function serve(handler: Handler): Promise<{ url: string; seen: Seen[]; sockets: () => number }> {
  const seen: Seen[] = [];
  let sockets = 0;
  const ids = new WeakMap<object, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const s: Seen = {
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
        socket: ids.get(req.socket)!,
      };
      seen.push(s);
      handler(s, res);
    });
  });
  server.on('connection', (sock) => ids.set(sock, ++sockets));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  cleanup.push(
    () =>
      new Promise((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, sockets: () => sockets };
}

function json(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  res.writeHead(status, { 'content-type': 'application/json', ...headers });
  res.end(body === undefined ? undefined : JSON.stringify(body));
}

function clients(url: string, extra: Partial<ApiClientOptions> = {}): ApiClients {
  const c = createApiClients({
    productApiUrl: url,
    referenceApiUrl: `${url}/ref/`,
    credentials: { token: 't0' },
    retry: { retries: 3, baseMs: 5, maxMs: 20 },
    timeouts: { connectMs: 1000, headersMs: 1000, bodyMs: 1000 },
    ...extra,
  });
  cleanup.push(() => c.close());
  return c;
}

const failure = (p: Promise<unknown>): Promise<HttpError> => rejection(p, HttpError);

describe('client transport', () => {
  it('satisfies the executor interface', () => {
    const c = createApiClients({
      productApiUrl: 'http://127.0.0.1:9',
      referenceApiUrl: 'http://127.0.0.1:9',
      credentials: { token: 'x' },
    });
    cleanup.push(() => c.close());
    const writer: ProductWriter = c.product;
    expect(typeof writer.createTradeItem).toBe('function');
  });

  it('joins paths under a base path prefix and sends bearer, user agent and query', async () => {
    const s = await serve((_, res) => json(res, 200, [{ id: ID, code: 'x', name: 'X' }]));
    const c = clients(s.url, { userAgent: 'ua-test' });
    const items = await c.reference.getList('languages', { languageCode: 'fr-FR', companyId: OWNER });
    expect(items).toEqual([{ id: ID, code: 'x', name: 'X' }]);
    expect(s.seen[0]!.url).toBe(`/ref/v2/lists/languages?LanguageCode=fr-FR&CompanyId=${OWNER}`);
    expect(s.seen[0]!.headers.authorization).toBe('Bearer t0');
    expect(s.seen[0]!.headers['user-agent']).toBe('ua-test');
    expect(joinUrl('http://h/a/b', '/v2/x')).toBe('http://h/a/b/v2/x');
    expect(c.stats).toEqual({ reference: 1, product: 0 });
  });

  it('parses text/plain and text/json answers as JSON and encodes path segments', async () => {
    const s = await serve((req, res) => {
      res.writeHead(200, {
        'content-type': req.url!.includes('countries') ? 'text/plain; charset=utf-8' : 'text/json',
      });
      res.end(JSON.stringify({ id: ID, code: 'FR', name: 'France', languageCode: 'en-US' }));
    });
    const c = clients(s.url);
    expect((await c.reference.lookup('countries', ID)).name).toBe('France');
    expect(
      (await c.reference.lookup('harmonized-codes', '0401/10', { includeParents: true, languageCode: 'fr-FR' })).code,
    ).toBe('FR');
    expect(s.seen[1]!.url).toBe('/ref/v2/harmonized-codes/0401%2F10?languageCode=fr-FR&includeParents=true');
  });

  it('turns a problem-details answer into an HttpError with method, url, status and the API words', async () => {
    const problem = {
      type: 'https://tools.ietf.org/html/rfc7231#section-6.5.1',
      title: 'Bad Request',
      status: 400,
      errors: [{ code: 'INVALID_REQUEST', property: 'gtin', message: 'bad gtin', detail: null }],
    };
    const s = await serve((_, res) => json(res, 400, problem));
    const c = clients(s.url);
    const e = await failure(c.product.patchTradeItem(ID, { gtin: 'x' }));
    expect(e).toMatchObject({
      code: 'PS_ERR_HTTP_STATUS',
      method: 'PATCH',
      status: 400,
      body: problem,
      outcomeUnknown: false,
    });
    expect(e.url).toBe(`${s.url}/api/tradeItems/${ID}`);
    expect(e.apiMessage).toBe('gtin: bad gtin');
    expect(s.seen).toHaveLength(1);
  });

  it('retries reads on 503 and 429, honouring Retry-After, and counts every attempt', async () => {
    let n = 0;
    const s = await serve((_, res) => {
      n += 1;
      if (n === 1) return json(res, 503, { title: 'Service Unavailable' });
      if (n === 2) return json(res, 429, { title: 'Too Many Requests' }, { 'retry-after': '0.3' });
      json(res, 200, { tradeItems: [], skipAndTakeQueryStats: { totalCount: 0, currentCount: 0 } });
    });
    const retries: number[] = [];
    const c = clients(s.url, { onRetry: (i) => retries.push(i.delayMs) });
    const started = Date.now();
    await c.product.searchTradeItems({ OwnerCompanyId: OWNER, GTIN: '03017620422003' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(290);
    expect(retries[1]).toBe(300);
    expect(c.stats.product).toBe(3);
  });

  it('gives up after the retry budget with the last error', async () => {
    const s = await serve((_, res) => json(res, 502, { title: 'Bad Gateway' }));
    const c = clients(s.url);
    const e = await failure(c.product.listBrands(OWNER));
    expect(e).toMatchObject({ code: 'PS_ERR_HTTP_UNAVAILABLE', status: 502, retryable: true });
    expect(s.seen).toHaveLength(4);
  });

  it('never re-sends a create after a 5xx: the error says the outcome is unknown', async () => {
    const s = await serve((_, res) => json(res, 500, { title: 'Internal Server Error' }));
    const c = clients(s.url);
    const e = await failure(c.product.createTradeItem({ tradeItemName: 'A', ownerCompanyId: OWNER }));
    expect(e).toMatchObject({ code: 'PS_ERR_HTTP_UNAVAILABLE', outcomeUnknown: true });
    expect(s.seen).toHaveLength(1);
    await failure(c.product.createBrand({ companyId: OWNER, name: 'B' }));
    expect(s.seen).toHaveLength(2);
  });

  it('re-sends a create after a 429, which certainly did nothing', async () => {
    let n = 0;
    const s = await serve((_, res) =>
      ++n === 1 ? json(res, 429, {}, { 'retry-after': '0' }) : json(res, 200, { tradeItemId: ID }),
    );
    const c = clients(s.url);
    expect(await c.product.createTradeItem({ tradeItemName: 'A', ownerCompanyId: OWNER })).toEqual({ tradeItemId: ID });
    expect(s.seen).toHaveLength(2);
  });

  it('re-sends a create when the connection was refused, and reports a certain non-outcome at the end', async () => {
    const s = await serve(() => undefined);
    const url = s.url;
    await cleanup.pop()!(); // close the server: the port now refuses
    const retries: string[] = [];
    const c = clients(url, { onRetry: (i) => retries.push(i.error.code) });
    const e = await failure(c.product.createTradeItem({ tradeItemName: 'A', ownerCompanyId: OWNER }));
    expect(e).toMatchObject({ code: 'PS_ERR_HTTP_CONNECTION', status: null, outcomeUnknown: false });
    expect(retries).toEqual(['PS_ERR_HTTP_CONNECTION', 'PS_ERR_HTTP_CONNECTION', 'PS_ERR_HTTP_CONNECTION']);
  });

  it('times out waiting for headers: a create is not re-sent, a read is', async () => {
    let puts = 0;
    const s = await serve((req, res) => {
      if (req.method === 'PUT' && ++puts === 2) json(res, 200, { tradeItemId: ID });
    }); // otherwise never answers
    const c = clients(s.url, { timeouts: { headersMs: 100 }, retry: { retries: 1, baseMs: 1, maxMs: 1 } });
    const e = await failure(c.product.createTradeItem({ tradeItemName: 'A', ownerCompanyId: OWNER }));
    expect(e).toMatchObject({ code: 'PS_ERR_HTTP_TIMEOUT', outcomeUnknown: true });
    expect(s.seen).toHaveLength(1);
    expect(await c.product.putTradeItem(ID, { tradeItemName: 'A' })).toEqual({ tradeItemId: ID });
    expect(s.seen).toHaveLength(3);
  });

  it('treats a connection reset after the request as unknown: PATCH retried, route B create not', async () => {
    let n = 0;
    const s = await serve((req, res) => {
      n += 1;
      if (req.method === 'PATCH' && n > 2) return json(res, 200, { manufacturedItemId: ID });
      res.socket!.destroy();
    });
    const c = clients(s.url);
    const e = await failure(
      c.product.createManufacturedItemWithTradeItem({
        tradeItemName: 'A',
        ownerCompanyId: OWNER,
        supplierCompanyId: OWNER,
      }),
    );
    expect(e).toMatchObject({ code: 'PS_ERR_HTTP_CONNECTION', outcomeUnknown: true });
    expect(s.seen).toHaveLength(1);
    expect(await c.product.patchManufacturedItem(ID, { manufacturedItemName: 'x' })).toEqual({
      manufacturedItemId: ID,
    });
    expect(s.seen).toHaveLength(3);
  });

  it('refuses to send a body the operation forbids, naming the property', async () => {
    const s = await serve((_, res) => json(res, 200, {}));
    const c = clients(s.url);
    const e = await failure(c.product.patchTradeItem(ID, { harmonizedCode: '0401' }));
    expect(e).toMatchObject({ code: 'PS_ERR_HTTP_REQUEST_INVALID', outcomeUnknown: false });
    expect(e.apiMessage).toContain('harmonizedCode');
    const e2 = await failure(c.product.createManufacturedItem(ID, { supplierCompanyId: OWNER, gtin: '1' }));
    expect(e2.apiMessage).toContain('gtin');
    const e3 = await failure(c.product.searchTradeItems({ OwnerCompanyId: OWNER, Gtin: 'x' }));
    expect(e3.apiMessage).toContain('Gtin');
    expect(s.seen).toHaveLength(0);
  });

  it('keeps connections alive and never opens more than the pool size', async () => {
    const s = await serve((_, res) => setTimeout(() => json(res, 200, []), 20));
    const c = clients(s.url, { connections: 4 });
    await Promise.all(Array.from({ length: 24 }, () => c.product.listBrands(OWNER)));
    await Promise.all(Array.from({ length: 8 }, () => c.product.listBrands(OWNER)));
    expect(s.sockets()).toBe(4);
  });

  it('iterates pages with Skip/Take until totalCount, even when the server caps Take', async () => {
    const all = Array.from({ length: 7 }, (_, i) => ({
      tradeItemId: String(i),
      ownerCompanyId: OWNER,
      archived: false,
    }));
    const s = await serve((req, res) => {
      const q = new URL(req.url!, 'http://x').searchParams;
      const skip = Number(q.get('Skip'));
      const take = Math.min(Number(q.get('Take')), 2); // the server caps pages at 2
      const page = all.slice(skip, skip + take);
      json(res, 200, {
        tradeItems: page,
        skipAndTakeQueryStats: { totalCount: all.length, currentCount: page.length },
      });
    });
    const c = clients(s.url);
    const got: string[] = [];
    for await (const t of c.product.iterateTradeItems({ OwnerCompanyId: OWNER }, { pageSize: 3 }))
      got.push(t.tradeItemId);
    expect(got).toEqual(['0', '1', '2', '3', '4', '5', '6']);
    expect(s.seen.map((r) => new URL(r.url, 'http://x').searchParams.get('Skip'))).toEqual(['0', '2', '4', '6']);
  });

  it('fails 401 with a static token without retrying', async () => {
    const s = await serve((_, res) => json(res, 401, { title: 'Unauthorized', status: 401, errors: [] }));
    const c = clients(s.url);
    const e = await failure(c.reference.getListItem('languages', ID));
    expect(e).toMatchObject({ code: 'PS_ERR_HTTP_UNAUTHORIZED', status: 401 });
    expect(s.seen).toHaveLength(1);
  });
});

describe('clients from the configuration', () => {
  it('uses the URLs, the token and the concurrency of the environment', async () => {
    const s = await serve((_, res) => json(res, 200, []));
    const c = apiClientsFromConfig(
      loadConfig({
        PRODUCT_API_URL: s.url,
        REFERENCE_API_URL: `${s.url}/ref`,
        API_TOKEN: 'env-token',
        API_CONCURRENCY: '2',
      }),
    );
    cleanup.push(() => c.close());
    await Promise.all([c.product.listBrands(OWNER), c.reference.getList('languages'), c.product.listBrands(OWNER)]);
    expect(s.seen.map((r) => r.headers.authorization)).toEqual([
      'Bearer env-token',
      'Bearer env-token',
      'Bearer env-token',
    ]);
    expect(s.seen.some((r) => r.url === '/ref/v2/lists/languages')).toBe(true);
    expect(s.sockets()).toBeLessThanOrEqual(2);
  });

  it('fails with PS_ERR_CONFIG_INVALID naming what is missing', () => {
    expect(() => apiClientsFromConfig(loadConfig({ PRODUCT_API_URL: 'http://x' }))).toThrow(
      /REFERENCE_API_URL[\s\S]*API_TOKEN/,
    );
  });
});

describe('OAuth2 client credentials', () => {
  async function oauthServer(opts: { expiresIn?: number; acceptOnly?: () => string | undefined } = {}) {
    let issued = 0;
    const s = await serve((req, res) => {
      if (req.url === '/oauth2/token') {
        const form = new URLSearchParams(req.body);
        if (form.get('client_secret') !== 'sec' || form.get('grant_type') !== 'client_credentials')
          return json(res, 401, { error: 'invalid_client' });
        issued += 1;
        return setTimeout(
          () =>
            json(res, 200, { access_token: `tok${issued}`, token_type: 'Bearer', expires_in: opts.expiresIn ?? 3600 }),
          20,
        );
      }
      const want = opts.acceptOnly?.() ?? `tok${issued}`;
      if (req.headers.authorization !== `Bearer ${want}`)
        return json(res, 401, { title: 'Unauthorized', status: 401, errors: [] });
      json(res, 200, []);
    });
    return s;
  }

  const oauth = (url: string, secret = 'sec') => ({
    tokenUrl: `${url}/oauth2/token`,
    clientId: 'cid',
    clientSecret: secret,
    scope: 'products',
  });

  it('fetches the token lazily, once for many concurrent requests, and reuses it', async () => {
    const s = await oauthServer();
    const c = clients(s.url, { credentials: oauth(s.url) });
    expect(s.seen).toHaveLength(0);
    await Promise.all(Array.from({ length: 10 }, () => c.product.listBrands(OWNER)));
    await c.product.listBrands(OWNER);
    expect(s.seen.filter((r) => r.url === '/oauth2/token')).toHaveLength(1);
    expect(new URLSearchParams(s.seen[0]!.body).get('scope')).toBe('products');
    expect(s.seen[0]!.headers['content-type']).toBe('application/x-www-form-urlencoded');
    expect((c.credential as OAuthClientCredentials).fetches).toBe(1);
  });

  it('refreshes shortly before expiry', async () => {
    const s = await oauthServer({ expiresIn: 1 });
    const c = clients(s.url, { credentials: oauth(s.url) });
    await c.product.listBrands(OWNER);
    await new Promise((r) => setTimeout(r, 950)); // past 90 % of the 1 s lifetime: refreshed before it expires
    await c.product.listBrands(OWNER);
    expect(s.seen.filter((r) => r.url === '/oauth2/token')).toHaveLength(2);
    expect(s.seen.at(-1)!.headers.authorization).toBe('Bearer tok2');
  });

  it('refreshes once on a 401 and re-sends once; a second 401 is final', async () => {
    let stale = true;
    const s = await oauthServer({ acceptOnly: () => (stale ? 'tok2' : 'never') });
    const c = clients(s.url, { credentials: oauth(s.url) });
    await c.product.listBrands(OWNER); // tok1 rejected → tok2 accepted
    expect(s.seen.map((r) => r.url.split('?')[0])).toEqual([
      '/oauth2/token',
      '/api/brands',
      '/oauth2/token',
      '/api/brands',
    ]);
    stale = false;
    const e = await failure(c.product.createBrand({ companyId: OWNER, name: 'x' }));
    expect(e.code).toBe('PS_ERR_HTTP_UNAUTHORIZED');
    expect(s.seen.filter((r) => r.url === '/oauth2/token')).toHaveLength(3);
  });

  it('reports a refused client as PS_ERR_AUTH_TOKEN without calling the API', async () => {
    const s = await oauthServer();
    const c = clients(s.url, { credentials: oauth(s.url, 'wrong') });
    const e = await failure(c.product.listBrands(OWNER));
    expect(e).toMatchObject({ code: 'PS_ERR_AUTH_TOKEN', status: 401 });
    expect(s.seen.every((r) => r.url === '/oauth2/token')).toBe(true);
  });
});

describe('retry policy', () => {
  const err = (status: number, retryAfterMs: number | null = null) =>
    new HttpError(status === 429 ? 'PS_ERR_HTTP_RATE_LIMITED' : 'PS_ERR_HTTP_UNAVAILABLE', {
      method: 'GET',
      url: 'u',
      status,
      retryAfterMs,
    });

  it('reads Retry-After as seconds or an HTTP date', () => {
    expect(parseRetryAfter('2')).toBe(2000);
    expect(parseRetryAfter(new Date(1_000_000 + 3000).toUTCString(), 1_000_000)).toBe(3000);
    expect(parseRetryAfter('soon')).toBeNull();
    expect(parseRetryAfter(undefined)).toBeNull();
  });

  it('draws full jitter under a capped exponential ceiling, and caps Retry-After', () => {
    const o = { retries: 5, baseMs: 100, maxMs: 1000, maxRetryAfterMs: 5000 };
    expect(retryDelayMs(1, err(503), o, () => 0.999)).toBe(99);
    expect(retryDelayMs(3, err(503), o, () => 0.999)).toBe(399);
    expect(retryDelayMs(9, err(503), o, () => 0.999)).toBe(999);
    expect(retryDelayMs(2, err(503), o, () => 0)).toBe(0);
    expect(retryDelayMs(1, err(429, 120_000), o)).toBe(5000);
  });

  it('retries creates only when they certainly did not arrive', () => {
    expect(mayRetry('create', err(429))).toBe(true);
    expect(mayRetry('create', err(503))).toBe(false);
    expect(mayRetry('retry', err(503))).toBe(true);
    expect(mayRetry('retry', new HttpError('PS_ERR_HTTP_STATUS', { method: 'GET', url: 'u', status: 404 }))).toBe(
      false,
    );
  });
});
