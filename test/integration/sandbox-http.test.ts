import { afterEach, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { DEMO_COMPANY_ID, DEFAULT_OAUTH_CLIENT } from '../../src/sandbox/defaults.ts';
import type { SandboxOptions } from '../../src/sandbox/app.ts';

const AUTH = { authorization: 'Bearer sandbox-token', 'content-type': 'application/json' };
const running: RunningSandbox[] = [];
afterEach(async () => {
  await Promise.all(running.splice(0).map((s) => s.close()));
});
async function start(options: SandboxOptions = {}) {
  const s = await startSandbox({ port: 0, ...options });
  running.push(s);
  return s;
}
const create = (url: string, extra: Record<string, unknown> = {}) =>
  fetch(`${url}/api/tradeItem`, {
    method: 'POST',
    headers: AUTH,
    body: JSON.stringify({ tradeItemName: 'x', ownerCompanyId: DEMO_COMPANY_ID, ...extra }),
  });
const search = async (url: string) =>
  (await (await fetch(`${url}/api/tradeitems?OwnerCompanyId=${DEMO_COMPANY_ID}`, { headers: AUTH })).json()) as {
    tradeItems: { tradeItemId: string }[];
  };

describe('sandbox over HTTP: OAuth2 client credentials', () => {
  const form = (fields: Record<string, string>) => new URLSearchParams(fields).toString();
  const tokenRequest = (url: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
      body,
    });

  it('issues bearer tokens (form body or Basic auth) that expire', async () => {
    const s = await start({ tokenTtlSeconds: 1 });
    const r = await tokenRequest(
      s.url,
      form({
        grant_type: 'client_credentials',
        client_id: DEFAULT_OAUTH_CLIENT.clientId,
        client_secret: DEFAULT_OAUTH_CLIENT.clientSecret,
      }),
    );
    expect(r.status).toBe(200);
    const t = (await r.json()) as { access_token: string; token_type: string; expires_in: number };
    expect(t).toMatchObject({ token_type: 'Bearer', expires_in: 1 });
    const basic = Buffer.from(`${DEFAULT_OAUTH_CLIENT.clientId}:${DEFAULT_OAUTH_CLIENT.clientSecret}`).toString(
      'base64',
    );
    expect(
      (await tokenRequest(s.url, form({ grant_type: 'client_credentials' }), { authorization: `Basic ${basic}` }))
        .status,
    ).toBe(200);
    const use = () =>
      fetch(`${s.url}/v2/lists/trade-item-status`, { headers: { authorization: `Bearer ${t.access_token}` } });
    expect((await use()).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1100));
    const expired = await use();
    expect(expired.status).toBe(401);
    expect(await expired.json()).toMatchObject({ status: 401, title: 'Unauthorized', errors: [] });
  });

  it('rejects a wrong secret, a missing client and another grant type with RFC 6749 errors', async () => {
    const s = await start();
    const wrong = await tokenRequest(
      s.url,
      form({ grant_type: 'client_credentials', client_id: DEFAULT_OAUTH_CLIENT.clientId, client_secret: 'nope' }),
    );
    expect(wrong.status).toBe(401);
    expect(await wrong.json()).toMatchObject({ error: 'invalid_client' });
    expect((await tokenRequest(s.url, form({ grant_type: 'client_credentials' }))).status).toBe(401);
    const grant = await tokenRequest(s.url, form({ grant_type: 'password' }));
    expect(grant.status).toBe(400);
    expect(await grant.json()).toMatchObject({ error: 'unsupported_grant_type' });
  });
});

describe('sandbox over HTTP: fault injection', () => {
  async function statuses(seed: number, n: number) {
    const s = await start({ faults: { rate429: 0.2, rate503: 0.2, seed } });
    const out: number[] = [];
    for (let i = 0; i < n; i++) out.push((await fetch(`${s.url}/v2/lists/languages`, { headers: AUTH })).status);
    return out;
  }

  it('reproduces the same sequence of faults for the same seed', async () => {
    const a = await statuses(42, 40);
    const b = await statuses(42, 40);
    expect(a).toEqual(b);
    expect(new Set(a)).toEqual(new Set([200, 429, 503]));
    expect(await statuses(7, 40)).not.toEqual(a);
  });

  it('answers 429 with Retry-After and a problem body, before doing the work', async () => {
    const s = await start({ faults: { sequence: ['429', '503'], retryAfterSeconds: 3 } });
    const r = await create(s.url);
    expect(r.status).toBe(429);
    expect(r.headers.get('retry-after')).toBe('3');
    expect(await r.json()).toMatchObject({ status: 429, title: 'Too Many Requests', errors: [] });
    expect((await create(s.url)).status).toBe(503);
    expect(s.handle.store.tradeItems.size).toBe(0);
    expect((await create(s.url)).status).toBe(200);
  });

  it('commits the write before answering 500', async () => {
    const s = await start({ faults: 'sequence=500after' });
    const id = '0b7c2f0e-6a7d-4b8e-9f10-333333333333';
    const r = await create(s.url, { tradeItemId: id });
    expect(r.status).toBe(500);
    expect(await r.json()).toMatchObject({ status: 500, title: 'Internal Server Error' });
    expect((await search(s.url)).tradeItems.map((t) => t.tradeItemId)).toEqual([id]);
    expect((await create(s.url, { tradeItemId: id })).status).toBe(409);
  });

  it('destroys the connection after committing the write', async () => {
    const s = await start({ faults: { sequence: ['reset'] } });
    await expect(create(s.url, { gtin: '1' })).rejects.toThrow();
    expect((await search(s.url)).tradeItems).toHaveLength(1);
  });

  it('never applies 500-after-commit or reset to reads, nor any fault to /oauth2/token and /__admin', async () => {
    const s = await start({ admin: true, faults: { rate503: 1 } });
    const tok = await fetch(`${s.url}/oauth2/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `grant_type=client_credentials&client_id=${DEFAULT_OAUTH_CLIENT.clientId}&client_secret=${DEFAULT_OAUTH_CLIENT.clientSecret}`,
    });
    expect(tok.status).toBe(200);
    expect((await fetch(`${s.url}/__admin/state`)).status).toBe(200);
    expect((await fetch(`${s.url}/v2/lists/languages`, { headers: AUTH })).status).toBe(503);
    s.handle.setFaults({ rate500After: 0.5, rateReset: 0.5 });
    for (let i = 0; i < 5; i++)
      expect((await fetch(`${s.url}/v2/lists/languages`, { headers: AUTH })).status).toBe(200);
  });

  it('delays answers by the configured latency', async () => {
    const s = await start({ latencyMs: 60 });
    const t0 = performance.now();
    await fetch(`${s.url}/v2/lists/languages`, { headers: AUTH });
    expect(performance.now() - t0).toBeGreaterThanOrEqual(55);
  });
});

describe('sandbox over HTTP: admin routes', () => {
  it('counts requests by route, dumps and resets state, changes faults at run time', async () => {
    const s = await start({ admin: true });
    await create(s.url);
    await create(s.url);
    await search(s.url);
    const counts = (await (await fetch(`${s.url}/__admin/requests`)).json()) as {
      total: number;
      writes: number;
      byRoute: Record<string, number>;
    };
    expect(counts).toMatchObject({
      total: 3,
      writes: 2,
      byRoute: { 'POST /api/tradeItem': 2, 'GET /api/tradeitems': 1 },
    });
    const state = (await (await fetch(`${s.url}/__admin/state`)).json()) as { tradeItems: unknown[] };
    expect(state.tradeItems).toHaveLength(2);
    const f = await fetch(`${s.url}/__admin/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ spec: 'sequence=503' }),
    });
    expect(f.status).toBe(200);
    expect((await create(s.url)).status).toBe(503);
    const bad = await fetch(`${s.url}/__admin/faults`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ rate429: 2 }),
    });
    expect(bad.status).toBe(400);
    expect((await fetch(`${s.url}/__admin/reset`, { method: 'POST' })).status).toBe(200);
    expect(s.handle.store.tradeItems.size).toBe(0);
    expect(s.handle.counts().total).toBe(0);
  });
});

describe('sandbox over HTTP: the real reference seed', () => {
  it('answers real languages named in French, and real lookups with parents', async () => {
    const s = await start({ tokens: [{ token: 'demo', companyId: DEMO_COMPANY_ID, internal: false }] });
    const r = await fetch(`${s.url}/v2/lists/languages?LanguageCode=fr-FR`, {
      headers: { authorization: 'Bearer demo' },
    });
    expect(r.status).toBe(200);
    const langs = (await r.json()) as { id: string; code: string; name: string }[];
    expect(langs.find((l) => l.code === 'de')?.name).toBe('allemand');
    const item = await fetch(`${s.url}/v2/lists/languages/${langs[0]!.id}?LanguageCode=fr-FR`, { headers: AUTH });
    expect(await item.json()).toMatchObject({ id: langs[0]!.id, languageCode: 'fr-FR' });
    const hs = await fetch(`${s.url}/v2/harmonized-codes/040690?includeParents=true`, {
      headers: { ...AUTH, accept: 'application/json' },
    });
    expect(hs.status).toBe(200);
    const rec = (await hs.json()) as { code: string; parents?: { code: string }[] };
    expect(rec.code).toBe('040690');
    expect(rec.parents?.map((p) => p.code)).toEqual(['0406', '04']);
  });
});
