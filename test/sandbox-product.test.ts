import { describe, expect, it, beforeEach } from 'vitest';
import { NOT_FOUND_BODY } from './helpers/errors.ts';
import type { FastifyInstance } from 'fastify';
import { buildSandbox, sandboxHandle } from '../src/sandbox/app.ts';
import { DEMO_COMPANY_ID, DEMO_SUPPLIER_ID, OTHER_COMPANY_ID } from '../src/sandbox/defaults.ts';
import { WEIGHT_UNITS } from '../src/api/units.ts';

const AUTH = { authorization: 'Bearer sandbox-token' };
const INTERNAL = { authorization: 'Bearer sandbox-internal-token' };
const OTHER = { authorization: 'Bearer sandbox-other-token' };
const ID1 = '0b7c2f0e-6a7d-4b8e-9f10-111111111111';
const ID2 = '0b7c2f0e-6a7d-4b8e-9f10-222222222222';

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by expect()
type Json = any;

let app: FastifyInstance;
beforeEach(() => {
  app = buildSandbox();
});

async function call(
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE',
  url: string,
  body?: unknown,
  headers: Record<string, string> = AUTH,
) {
  const res = await app.inject({ method, url, headers, ...(body !== undefined ? { payload: body as object } : {}) });
  return { status: res.statusCode, body: (res.body ? res.json() : undefined) as Json, res };
}

const createItem = (extra: Record<string, unknown> = {}, headers = AUTH) =>
  call(
    'POST',
    '/api/tradeItem',
    { tradeItemName: 'Camembert', ownerCompanyId: DEMO_COMPANY_ID, gtin: '03012345678901', ...extra },
    headers,
  );

describe('sandbox product API: trade items', () => {
  it('creates with a generated id and returns it in search results with archived=false', async () => {
    const c = await createItem({ brandId: 'b1' });
    expect(c.status).toBe(200);
    const id = c.body!.tradeItemId as string;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    const s = await call('GET', `/api/tradeitems?OwnerCompanyId=${DEMO_COMPANY_ID}`);
    expect(s.status).toBe(200);
    expect(s.body!.tradeItems).toEqual([
      {
        tradeItemId: id,
        ownerCompanyId: DEMO_COMPANY_ID,
        archived: false,
        tradeItemName: 'Camembert',
        gtin: '03012345678901',
        brandId: 'b1',
      },
    ]);
    expect(s.body!.skipAndTakeQueryStats).toEqual({ totalCount: 1, currentCount: 1 });
  });

  it('honours a client-chosen tradeItemId and answers 409 when it exists', async () => {
    expect((await createItem({ tradeItemId: ID1 })).body).toEqual({ tradeItemId: ID1 });
    const again = await createItem({ tradeItemId: ID1 });
    expect(again.status).toBe(409);
    expect(again.body).toMatchObject({
      type: 'https://tools.ietf.org/html/rfc7231#section-6.5.8',
      title: 'Conflict',
      status: 409,
    });
    expect(again.body!.errors[0]).toMatchObject({ property: 'tradeItemId' });
  });

  it('rejects a tradeItemId that is not a uuid', async () => {
    const r = await createItem({ tradeItemId: 'abc' });
    expect(r.status).toBe(400);
    expect(r.body!.errors).toEqual([
      { code: 'INVALID_REQUEST', property: 'tradeItemId', message: expect.any(String), detail: null },
    ]);
  });

  it('does not enforce GTIN uniqueness', async () => {
    await createItem();
    await createItem();
    const s = await call('GET', `/api/tradeitems?OwnerCompanyId=${DEMO_COMPANY_ID}&GTIN=03012345678901`);
    expect(s.body!.skipAndTakeQueryStats).toEqual({ totalCount: 2, currentCount: 2 });
  });

  it('answers 400 with one INVALID_REQUEST entry per property', async () => {
    const r = await call('POST', '/api/tradeItem', {
      ownerCompanyId: 'nope',
      bogus: 1,
      comments: [{ id: 'x', value: 'v' }],
    });
    expect(r.status).toBe(400);
    expect(r.body).toMatchObject({
      type: 'https://tools.ietf.org/html/rfc7231#section-6.5.1',
      title: 'Bad Request',
      status: 400,
    });
    const props = (r.body!.errors as { property: string; code: string }[]).map((e) => e.property).sort();
    expect(props).toEqual(['bogus', 'comments[0].id', 'ownerCompanyId', 'tradeItemName']);
    expect((r.body!.errors as { code: string }[]).every((e) => e.code === 'INVALID_REQUEST')).toBe(true);
  });

  it('rejects harmonizedCode in PATCH but takes it in PUT', async () => {
    await createItem({ tradeItemId: ID1 });
    const p = await call('PATCH', `/api/tradeItems/${ID1}`, { harmonizedCode: '0406' });
    expect(p.status).toBe(400);
    expect(p.body!.errors).toEqual([expect.objectContaining({ property: 'harmonizedCode' })]);
    const u = await call('PUT', `/api/tradeItems/${ID1}`, { tradeItemName: 'Brie', harmonizedCode: '0406' });
    expect(u.status).toBe(200);
    expect(u.body).toEqual({ tradeItemId: ID1 });
  });

  it('PATCH merges (null clears), PUT replaces the updatable fields and keeps create-only ones', async () => {
    await createItem({ tradeItemId: ID1, brandId: 'b1', variant: 'v', productLanguage: 'fr' });
    await call('PATCH', `/api/tradeItems/${ID1}`, { variant: null, functionalName: 'cheese' });
    let rec = (await call('GET', `/api/tradeitems?OwnerCompanyId=${DEMO_COMPANY_ID}`)).body!.tradeItems[0];
    expect(rec).toMatchObject({
      tradeItemName: 'Camembert',
      brandId: 'b1',
      variant: null,
      functionalName: 'cheese',
      productLanguage: 'fr',
    });
    await call('PUT', `/api/tradeItems/${ID1}`, { tradeItemName: 'Brie' });
    rec = (await call('GET', `/api/tradeitems?OwnerCompanyId=${DEMO_COMPANY_ID}`)).body!.tradeItems[0];
    expect(rec).toEqual({
      tradeItemId: ID1,
      ownerCompanyId: DEMO_COMPANY_ID,
      archived: false,
      tradeItemName: 'Brie',
      productLanguage: 'fr',
    });
  });

  it('PATCH / PUT of a missing item answer 404 with empty errors; a non-uuid path id 400', async () => {
    const r = await call('PATCH', `/api/tradeItems/${ID2}`, { variant: 'x' });
    expect(r.status).toBe(404);
    expect(r.body).toEqual(NOT_FOUND_BODY);
    const b = await call('PUT', '/api/tradeItems/not-a-uuid', { tradeItemName: 'x' });
    expect(b.status).toBe(400);
    expect(b.body!.errors[0]).toMatchObject({ property: 'id' });
  });

  it('accepts createdBy only from an internal credential', async () => {
    const r = await createItem({ createdBy: 'u1' });
    expect(r.status).toBe(400);
    expect(r.body!.errors).toEqual([expect.objectContaining({ property: 'createdBy', code: 'INVALID_REQUEST' })]);
    expect((await createItem({ createdBy: 'u1' }, INTERNAL)).status).toBe(200);
  });

  it('validates weight units against the seven shared uuids', async () => {
    const ok = await createItem({ drainedNetWeight: { value: 100, unitOfMeasure: WEIGHT_UNITS[0]!.id } });
    expect(ok.status).toBe(200);
    const bad = await createItem({
      drainedNetWeight: { value: 100, unitOfMeasure: '7e5e4c3b-0000-4000-8000-000000000000' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body!.errors[0]).toMatchObject({ property: 'drainedNetWeight.unitOfMeasure' });
  });

  it('archives a collection for the current company and unarchives; archived items stay in search', async () => {
    await createItem({ tradeItemId: ID1 });
    await createItem({ tradeItemId: ID2 });
    const a = await call('DELETE', '/api/tradeitems/enable/collections', { idCollection: [ID1, ID2] });
    expect(a.status).toBe(200);
    expect(a.res.body).toBe('');
    let s = await call('GET', `/api/tradeitems?OwnerCompanyId=${DEMO_COMPANY_ID}`);
    expect((s.body!.tradeItems as { archived: boolean }[]).map((t) => t.archived)).toEqual([true, true]);
    const u = await call('POST', `/api/tradeitems/${ID1}/enable`);
    expect(u.body).toEqual({ tradeItemId: ID1 });
    s = await call('GET', `/api/tradeitems?OwnerCompanyId=${DEMO_COMPANY_ID}`);
    expect((s.body!.tradeItems as { archived: boolean }[]).map((t) => t.archived)).toEqual([false, true]);
  });

  it("refuses to archive or unarchive another company's items (404, nothing changed)", async () => {
    await createItem({ tradeItemId: ID1 });
    await createItem({ tradeItemId: ID2, ownerCompanyId: OTHER_COMPANY_ID });
    const a = await call('DELETE', '/api/tradeitems/enable/collections', { idCollection: [ID1, ID2] });
    expect(a.status).toBe(404);
    expect(sandboxHandle(app).store.tradeItems.get(ID1)!.archived).toBe(false);
    expect((await call('POST', `/api/tradeitems/${ID1}/enable`, undefined, OTHER)).status).toBe(404);
    expect((await call('DELETE', '/api/tradeitems/enable/collections', { idCollection: [ID2] }, OTHER)).status).toBe(
      200,
    );
  });

  it('validates idCollection', async () => {
    const r = await call('DELETE', '/api/tradeitems/enable/collections', { idCollection: ['x'] });
    expect(r.status).toBe(400);
    expect(r.body!.errors[0]).toMatchObject({ property: 'idCollection[0]' });
    expect((await call('DELETE', '/api/tradeitems/enable/collections', {})).body!.errors[0]).toMatchObject({
      property: 'idCollection',
    });
  });
});

describe('sandbox product API: paging and search', () => {
  beforeEach(async () => {
    for (let i = 0; i < 7; i++) {
      await createItem({
        gtin: `0000000000000${i}`,
        tradeItemName: i % 2 ? `Brie ${i}` : `Comté ${i}`,
        netContents: [{ value: '250', unitOfMeasure: 'GRM' }],
      });
    }
    await createItem({ ownerCompanyId: OTHER_COMPANY_ID });
  });
  const search = (qs: string) => call('GET', `/api/tradeitems?OwnerCompanyId=${DEMO_COMPANY_ID}${qs}`);

  it('defaults Skip 0 Take 50 and keeps insertion order', async () => {
    const r = await search('');
    expect(r.body!.skipAndTakeQueryStats).toEqual({ totalCount: 7, currentCount: 7 });
    expect((r.body!.tradeItems as { gtin: string }[]).map((t) => t.gtin.at(-1))).toEqual([
      '0',
      '1',
      '2',
      '3',
      '4',
      '5',
      '6',
    ]);
  });
  it('pages with Skip/Take, Take 0 and past the end', async () => {
    const r = await search('&Skip=2&Take=3');
    expect((r.body!.tradeItems as { gtin: string }[]).map((t) => t.gtin.at(-1))).toEqual(['2', '3', '4']);
    expect(r.body!.skipAndTakeQueryStats).toEqual({ totalCount: 7, currentCount: 3 });
    expect((await search('&Take=0')).body).toEqual({
      tradeItems: [],
      skipAndTakeQueryStats: { totalCount: 7, currentCount: 0 },
    });
    expect((await search('&Skip=100')).body).toEqual({
      tradeItems: [],
      skipAndTakeQueryStats: { totalCount: 7, currentCount: 0 },
    });
    expect((await search('&Take=500')).status).toBe(200);
  });
  it('rejects Take above 500, negative Skip and a missing or bad OwnerCompanyId', async () => {
    const r = await search('&Take=501');
    expect(r.status).toBe(400);
    expect(r.body!.errors).toEqual([expect.objectContaining({ property: 'Take', code: 'INVALID_REQUEST' })]);
    expect((await search('&Skip=-1')).body!.errors[0]).toMatchObject({ property: 'Skip' });
    expect((await call('GET', '/api/tradeitems')).body!.errors[0]).toMatchObject({
      property: 'OwnerCompanyId',
      message: 'OwnerCompanyId is required',
    });
    expect((await call('GET', '/api/tradeitems?OwnerCompanyId=x')).body!.errors[0]).toMatchObject({
      property: 'OwnerCompanyId',
    });
  });
  it('filters: GTIN exact, ItemName substring case-insensitively, NetContentUnit through netContents; names case-insensitive', async () => {
    expect((await search('&GTIN=00000000000003')).body!.skipAndTakeQueryStats).toEqual({
      totalCount: 1,
      currentCount: 1,
    });
    expect((await search('&GTIN=0000000000003')).body!.skipAndTakeQueryStats).toEqual({
      totalCount: 0,
      currentCount: 0,
    });
    expect((await search('&ItemName=brie')).body!.skipAndTakeQueryStats).toEqual({ totalCount: 3, currentCount: 3 });
    expect((await search('&netcontentunit=grm&NetContentValue=250.0')).body!.skipAndTakeQueryStats).toMatchObject({
      totalCount: 7,
    });
    expect(
      (await call('GET', `/api/tradeitems?ownercompanyid=${OTHER_COMPANY_ID}`)).body!.skipAndTakeQueryStats,
    ).toMatchObject({ totalCount: 1 });
  });
});

describe('sandbox product API: manufactured items', () => {
  it('route A creates under an existing trade item (404 if missing, 409 on an existing id)', async () => {
    await createItem({ tradeItemId: ID1 });
    const body = { supplierCompanyId: DEMO_SUPPLIER_ID, manufacturedItemId: ID2, countriesOfOrigin: ['FR'] };
    expect((await call('POST', `/api/tradeItem/${ID1}/manufacturedItem`, body)).body).toEqual({
      manufacturedItemId: ID2,
    });
    expect((await call('POST', `/api/tradeItem/${ID1}/manufacturedItem`, body)).status).toBe(409);
    const missing = await call('POST', `/api/tradeItem/${ID2}/manufacturedItem`, {
      supplierCompanyId: DEMO_SUPPLIER_ID,
    });
    expect(missing.status).toBe(404);
    const s = await call('GET', `/api/manufactureditems?OwnerCompanyId=${DEMO_COMPANY_ID}&CountryOfOrigin=fr`);
    expect(s.body!.manufacturedItems).toEqual([
      {
        manufacturedItemId: ID2,
        tradeItemId: ID1,
        ownerCompanyId: DEMO_COMPANY_ID,
        supplierCompanyId: DEMO_SUPPLIER_ID,
        archived: false,
        countriesOfOrigin: ['FR'],
      },
    ]);
  });

  it('route A rejects a route-B-only field (tradeItemName) naming it', async () => {
    await createItem({ tradeItemId: ID1 });
    const r = await call('POST', `/api/tradeItem/${ID1}/manufacturedItem`, {
      supplierCompanyId: DEMO_SUPPLIER_ID,
      tradeItemName: 'x',
    });
    expect(r.status).toBe(400);
    expect(r.body!.errors).toEqual([expect.objectContaining({ property: 'tradeItemName', code: 'INVALID_REQUEST' })]);
  });

  it('route B creates both, honouring tradeItemId; rejects manufactured-only A fields', async () => {
    const body = {
      tradeItemName: 'Brie',
      ownerCompanyId: DEMO_COMPANY_ID,
      tradeItemId: ID1,
      gtin: '1',
      supplierCompanyId: DEMO_SUPPLIER_ID,
      manufacturedItemName: 'Brie de Meaux',
    };
    const r = await call('POST', '/api/manufacturedItem', body);
    expect(r.status).toBe(200);
    expect(r.body!.tradeItemId).toBe(ID1);
    const mid = r.body!.manufacturedItemId as string;
    const t = (await call('GET', `/api/tradeitems?OwnerCompanyId=${DEMO_COMPANY_ID}`)).body!.tradeItems;
    expect(t).toEqual([
      { tradeItemId: ID1, ownerCompanyId: DEMO_COMPANY_ID, archived: false, tradeItemName: 'Brie', gtin: '1' },
    ]);
    const m = await call('GET', `/api/manufactureditems?OwnerCompanyId=${DEMO_COMPANY_ID}&GTIN=1&TradeItemName=bri`);
    expect(m.body!.manufacturedItems).toEqual([
      {
        manufacturedItemId: mid,
        tradeItemId: ID1,
        ownerCompanyId: DEMO_COMPANY_ID,
        supplierCompanyId: DEMO_SUPPLIER_ID,
        archived: false,
        manufacturedItemName: 'Brie de Meaux',
      },
    ]);
    expect((await call('POST', '/api/manufacturedItem', body)).status).toBe(409);
    const bad = await call('POST', '/api/manufacturedItem', {
      ...body,
      tradeItemId: ID2,
      countriesOfOrigin: ['FR'],
      harmonizedCode: '04',
    });
    expect(bad.status).toBe(400);
    expect((bad.body!.errors as { property: string }[]).map((e) => e.property).sort()).toEqual([
      'countriesOfOrigin',
      'harmonizedCode',
    ]);
  });

  it('PATCH and PUT manufactured items; supplierCompanyId not updatable', async () => {
    await createItem({ tradeItemId: ID1 });
    await call('POST', `/api/tradeItem/${ID1}/manufacturedItem`, {
      supplierCompanyId: DEMO_SUPPLIER_ID,
      manufacturedItemId: ID2,
      packerCompanyId: 'p',
    });
    expect((await call('PATCH', `/api/manufacturedItems/${ID2}`, { manufacturedItemName: 'n' })).body).toEqual({
      manufacturedItemId: ID2,
    });
    expect((await call('PATCH', `/api/manufacturedItems/${ID2}`, { supplierCompanyId: DEMO_SUPPLIER_ID })).status).toBe(
      400,
    );
    await call('PUT', `/api/manufacturedItems/${ID2}`, { countriesOfOrigin: ['DE'] });
    const m = (await call('GET', `/api/manufactureditems?OwnerCompanyId=${DEMO_COMPANY_ID}`)).body!
      .manufacturedItems[0];
    expect(m).toEqual({
      manufacturedItemId: ID2,
      tradeItemId: ID1,
      ownerCompanyId: DEMO_COMPANY_ID,
      supplierCompanyId: DEMO_SUPPLIER_ID,
      archived: false,
      countriesOfOrigin: ['DE'],
    });
    expect((await call('PUT', `/api/manufacturedItems/${ID1}`, {})).status).toBe(404);
  });
});

describe('sandbox product API: brands', () => {
  it('creates, lists (archived included), renames, archives and unarchives for the current company', async () => {
    const c = await call('POST', '/api/brands', { companyId: DEMO_COMPANY_ID, name: 'Président' });
    const brandId = c.body!.brandId as string;
    expect((await call('PUT', `/api/brands/${brandId}`, { name: 'Lactalis' })).body).toEqual({ brandId });
    expect((await call('DELETE', `/api/brands/${brandId}/enable`)).status).toBe(200);
    expect((await call('GET', `/api/brands?companyId=${DEMO_COMPANY_ID}`)).body).toEqual([
      { brandId, name: 'Lactalis', companyId: DEMO_COMPANY_ID, archived: true },
    ]);
    expect((await call('POST', `/api/brands/${brandId}/enable`)).body).toEqual({ brandId });
    expect((await call('GET', '/api/brands')).body).toEqual([
      { brandId, name: 'Lactalis', companyId: DEMO_COMPANY_ID, archived: false },
    ]);
    expect((await call('DELETE', `/api/brands/${brandId}/enable`, undefined, OTHER)).status).toBe(404);
    expect((await call('PUT', `/api/brands/${brandId}`, { name: 'x' }, OTHER)).status).toBe(404);
  });
  it('validates brand bodies', async () => {
    const r = await call('POST', '/api/brands', { companyId: 'x', name: '', color: 'red' });
    expect((r.body!.errors as { property: string }[]).map((e) => e.property).sort()).toEqual([
      'color',
      'companyId',
      'name',
    ]);
  });
});

describe('sandbox: auth, media types, routing', () => {
  it('answers 401 with the problem body when the token is missing or unknown', async () => {
    for (const headers of [{}, { authorization: 'Bearer nope' }, { authorization: 'Basic abc' }] as Record<
      string,
      string
    >[]) {
      const r = await call('GET', `/api/tradeitems?OwnerCompanyId=${DEMO_COMPANY_ID}`, undefined, headers);
      expect(r.status).toBe(401);
      expect(r.body).toEqual({
        type: 'https://tools.ietf.org/html/rfc7235#section-3.1',
        title: 'Unauthorized',
        status: 401,
        errors: [],
      });
    }
  });
  it('accepts tokens given at start, with their company and internal flag', async () => {
    app = buildSandbox({ tokens: [{ token: 'demo', companyId: OTHER_COMPANY_ID, internal: true }] });
    const r = await createItem(
      { createdBy: 'u', tradeItemId: ID1, ownerCompanyId: OTHER_COMPANY_ID },
      { authorization: 'Bearer demo' },
    );
    expect(r.status).toBe(200);
    expect(
      (await call('POST', `/api/tradeitems/${ID1}/enable`, undefined, { authorization: 'Bearer demo' })).status,
    ).toBe(200);
  });
  it('accepts the three JSON media types and answers 415 otherwise', async () => {
    const payload = JSON.stringify({ tradeItemName: 'x', ownerCompanyId: DEMO_COMPANY_ID });
    const post = (type: string) =>
      app.inject({ method: 'POST', url: '/api/tradeItem', headers: { ...AUTH, 'content-type': type }, payload });
    for (const type of [
      'application/json',
      'application/json-patch+json',
      'application/vnd.acme+json',
      'application/json; charset=utf-8',
    ])
      expect((await post(type)).statusCode, type).toBe(200);
    for (const type of ['text/plain', 'application/xml', 'application/x-www-form-urlencoded']) {
      const r = await post(type);
      expect(r.statusCode, type).toBe(415);
      expect(r.json()).toMatchObject({
        type: 'https://tools.ietf.org/html/rfc7231#section-6.5.13',
        status: 415,
        errors: [],
      });
    }
  });
  it('answers 400 naming body for malformed JSON or a non-object body', async () => {
    const r = await app.inject({
      method: 'POST',
      url: '/api/tradeItem',
      headers: { ...AUTH, 'content-type': 'application/json' },
      payload: '{"a":',
    });
    expect(r.statusCode).toBe(400);
    expect(r.json().errors[0]).toMatchObject({ code: 'INVALID_REQUEST', property: 'body' });
    expect((await call('POST', '/api/tradeItem', [1, 2])).body!.errors[0]).toMatchObject({ property: 'body' });
  });
  it('routes case-insensitively and answers 404 problem bodies for unknown routes; admin off by default', async () => {
    await createItem({ tradeItemId: ID1 });
    expect((await call('PATCH', `/api/tradeitems/${ID1}`, { variant: 'x' })).status).toBe(200);
    const r = await call('GET', '/__admin/state');
    expect(r.status).toBe(404);
    expect(r.body).toMatchObject({ status: 404, title: 'Not Found', errors: [] });
  });
});
