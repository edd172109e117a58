import { beforeEach, describe, expect, it } from 'vitest';
import { tradeItemIdFor, manufacturedItemIdFor } from '../../src/api/uuid.ts';
import { HttpError } from '../../src/errors.ts';
import {
  DEMO_COMPANY_ID as OWNER,
  DEMO_SUPPLIER_ID as SUPPLIER,
  OTHER_COMPANY_ID,
} from '../../src/sandbox/defaults.ts';
import type { FaultSpec } from '../../src/sandbox/faults.ts';
import { rejection } from '../helpers/errors.ts';
import { useApiClients } from '../helpers/api-clients.ts';
import { useSandbox } from '../helpers/sandbox.ts';

const sandbox = useSandbox({ tokenTtlSeconds: 1 });
beforeEach(() => sandbox.handle.reset());
const api = useApiClients(sandbox, { retry: { retries: 3, baseMs: 5, maxMs: 50 }, connections: 8 });

function faults(spec: FaultSpec): void {
  sandbox.handle.setFaults(spec);
}

const failure = (p: Promise<unknown>): Promise<HttpError> => rejection(p, HttpError);

const gtin = (n: number) => `0300000000${String(n).padStart(4, '0')}`;
const tradeItem = (n: number, extra: Record<string, unknown> = {}) => ({
  tradeItemId: tradeItemIdFor(OWNER, gtin(n)),
  ownerCompanyId: OWNER,
  gtin: gtin(n),
  tradeItemName: `Item ${n}`,
  ...extra,
});
const routes = () => sandbox.handle.counts().byRoute;
const properties = (e: HttpError) =>
  ((e.body as { errors: { property: string; code: string }[] }).errors ?? []).map((x) => x.property);

describe('trade items through the client', () => {
  it('creates, finds, patches, puts, archives and unarchives a trade item', async () => {
    const { product, stats } = api();
    const body = tradeItem(1, { netContents: [{ value: '500', unitOfMeasure: 'GRM' }] });
    expect(await product.createTradeItem(body)).toEqual({ tradeItemId: body.tradeItemId });

    const found = await product.searchTradeItems({ OwnerCompanyId: OWNER, GTIN: gtin(1) });
    expect(found.skipAndTakeQueryStats).toEqual({ totalCount: 1, currentCount: 1 });
    expect(found.tradeItems![0]).toMatchObject({
      tradeItemId: body.tradeItemId,
      archived: false,
      tradeItemName: 'Item 1',
    });

    await product.patchTradeItem(body.tradeItemId, { tradeItemName: 'Renamed' });
    await product.putTradeItem(body.tradeItemId, { tradeItemName: 'Put', gtin: gtin(1), harmonizedCode: '0401' });
    const [after] = (await product.searchTradeItems({ OwnerCompanyId: OWNER, GTIN: gtin(1) })).tradeItems!;
    expect(after).toMatchObject({ tradeItemName: 'Put', harmonizedCode: '0401' });

    await product.archiveTradeItems([body.tradeItemId]);
    expect((await product.searchTradeItems({ OwnerCompanyId: OWNER })).tradeItems![0]!.archived).toBe(true);
    expect(await product.unarchiveTradeItem(body.tradeItemId)).toEqual({ tradeItemId: body.tradeItemId });
    expect((await product.searchTradeItems({ OwnerCompanyId: OWNER })).tradeItems![0]!.archived).toBe(false);
    expect(stats).toEqual({ product: 9, reference: 0 });
  });

  it('answers 409 when a create names an existing id, and the conflict is a certain outcome', async () => {
    const { product } = api();
    await product.createTradeItem(tradeItem(2));
    const e = await failure(product.createTradeItem(tradeItem(2)));
    expect(e).toMatchObject({ status: 409, code: 'PS_ERR_HTTP_STATUS', outcomeUnknown: false, method: 'POST' });
    expect(properties(e)).toEqual(['tradeItemId']);
  });

  it('answers 404 for unknown ids, on update, unarchive and archive', async () => {
    const { product } = api();
    const missing = tradeItemIdFor(OWNER, gtin(999));
    for (const p of [
      product.patchTradeItem(missing, { tradeItemName: 'x' }),
      product.unarchiveTradeItem(missing),
      product.archiveTradeItems([missing]),
    ]) {
      const e = await failure(p);
      expect(e).toMatchObject({ status: 404, code: 'PS_ERR_HTTP_STATUS' });
      expect((e.body as { title: string; errors: unknown[] }).title).toBe('Not Found');
      expect((e.body as { errors: unknown[] }).errors).toEqual([]);
    }
  });

  it('gets a 400 naming the property for fields an operation forbids, which the validating client would not send', async () => {
    await api().product.createTradeItem(tradeItem(3));
    const id = tradeItemIdFor(OWNER, gtin(3));
    const raw = api({ validate: false }).product;
    const checked = api().product;

    const patch = await failure(raw.patchTradeItem(id, { harmonizedCode: '0401' }));
    expect(patch).toMatchObject({ status: 400, code: 'PS_ERR_HTTP_STATUS' });
    expect((patch.body as { title: string }).title).toBe('Bad Request');
    expect((patch.body as { errors: { code: string }[] }).errors[0]!.code).toBe('INVALID_REQUEST');
    expect(properties(patch)).toEqual(['harmonizedCode']);
    expect(patch.apiMessage).toContain('harmonizedCode');

    const routeA = await failure(raw.createManufacturedItem(id, { supplierCompanyId: SUPPLIER, gtin: gtin(3) }));
    expect(routeA.status).toBe(400);
    expect(properties(routeA)).toEqual(['gtin']);

    const createdBy = await failure(raw.createTradeItem(tradeItem(4, { createdBy: 'user-1' })));
    expect(createdBy.status).toBe(400);
    expect(properties(createdBy)).toEqual(['createdBy']);
    const internal = api({ credentials: { token: 'sandbox-internal-token' } }).product;
    await expect(internal.createTradeItem(tradeItem(4, { createdBy: 'user-1' }))).resolves.toEqual({
      tradeItemId: tradeItemIdFor(OWNER, gtin(4)),
    });

    const before = sandbox.handle.counts().total;
    for (const p of [
      checked.patchTradeItem(id, { harmonizedCode: '0401' }),
      checked.createManufacturedItem(id, { supplierCompanyId: SUPPLIER, gtin: gtin(3) }),
    ]) {
      expect((await failure(p)).code).toBe('PS_ERR_HTTP_REQUEST_INVALID');
    }
    expect(sandbox.handle.counts().total).toBe(before);
  });

  it('pages with Skip and Take: Take 0, past the end, and an iterator across pages', async () => {
    const { product, stats } = api();
    await Promise.all(Array.from({ length: 7 }, (_, i) => product.createTradeItem(tradeItem(100 + i))));
    const zero = await product.searchTradeItems({ OwnerCompanyId: OWNER, Take: 0 });
    expect(zero).toEqual({ tradeItems: [], skipAndTakeQueryStats: { totalCount: 7, currentCount: 0 } });
    const past = await product.searchTradeItems({ OwnerCompanyId: OWNER, Skip: 50, Take: 10 });
    expect(past).toEqual({ tradeItems: [], skipAndTakeQueryStats: { totalCount: 7, currentCount: 0 } });
    const before = stats.product;
    const seen: string[] = [];
    for await (const t of product.iterateTradeItems({ OwnerCompanyId: OWNER }, { pageSize: 3 })) seen.push(t.gtin!);
    expect(seen.sort()).toEqual(Array.from({ length: 7 }, (_, i) => gtin(100 + i)));
    expect(stats.product - before).toBe(3);
    const none: unknown[] = [];
    for await (const t of product.iterateTradeItems({ OwnerCompanyId: OTHER_COMPANY_ID })) none.push(t);
    expect(none).toEqual([]);
  });
});

describe('manufactured items through the client', () => {
  it('creates by route B and route A, finds, patches, puts and iterates them', async () => {
    const { product } = api();
    const tId = tradeItemIdFor(OWNER, gtin(10));
    const mId = manufacturedItemIdFor(OWNER, gtin(10), SUPPLIER);
    const b = await product.createManufacturedItemWithTradeItem({
      tradeItemId: tId,
      ownerCompanyId: OWNER,
      tradeItemName: 'Route B',
      gtin: gtin(10),
      manufacturedItemName: 'Made by supplier',
      supplierCompanyId: SUPPLIER,
    });
    expect(b).toEqual({ tradeItemId: tId, manufacturedItemId: expect.any(String) });
    const a = await product.createManufacturedItem(tId, {
      manufacturedItemId: mId,
      supplierCompanyId: OTHER_COMPANY_ID,
      countriesOfOrigin: ['FR'],
    });
    expect(a).toEqual({ manufacturedItemId: mId });

    const page = await product.searchManufacturedItems({ OwnerCompanyId: OWNER, TradeItemId: tId });
    expect(page.skipAndTakeQueryStats!.totalCount).toBe(2);
    expect(
      (await product.searchTradeItems({ OwnerCompanyId: OWNER, GTIN: gtin(10) })).tradeItems![0]!.tradeItemName,
    ).toBe('Route B');

    await product.patchManufacturedItem(mId, { manufacturedItemName: 'Patched' });
    await product.putManufacturedItem(mId, { manufacturedItemName: 'Put', countriesOfOrigin: ['DE'] });
    const all = [];
    for await (const m of product.iterateManufacturedItems({ OwnerCompanyId: OWNER }, { pageSize: 1 })) all.push(m);
    expect(all).toHaveLength(2);
    expect(all.find((m) => m.manufacturedItemId === mId)).toMatchObject({
      manufacturedItemName: 'Put',
      countriesOfOrigin: ['DE'],
      supplierCompanyId: OTHER_COMPANY_ID,
    });

    const e = await failure(
      product.createManufacturedItem(tradeItemIdFor(OWNER, gtin(11)), { supplierCompanyId: SUPPLIER }),
    );
    expect(e.status).toBe(404);
    expect(
      (
        await failure(
          product.patchManufacturedItem(manufacturedItemIdFor(OWNER, gtin(11), SUPPLIER), {
            manufacturedItemName: 'x',
          }),
        )
      ).status,
    ).toBe(404);
  });
});

describe('brands through the client', () => {
  it('creates, lists, renames, archives and unarchives a brand of the current company', async () => {
    const { product } = api();
    const { brandId } = await product.createBrand({ companyId: OWNER, name: 'Acme' });
    await product.renameBrand(brandId, 'Acme Foods');
    await product.archiveBrand(brandId);
    expect(await product.listBrands(OWNER)).toEqual([
      { brandId, name: 'Acme Foods', companyId: OWNER, archived: true },
    ]);
    await product.unarchiveBrand(brandId);
    expect((await product.listBrands(OWNER))[0]!.archived).toBe(false);
    expect(await product.listBrands(OTHER_COMPANY_ID)).toEqual([]);

    const other = api({ credentials: { token: 'sandbox-other-token' } }).product;
    expect((await failure(other.renameBrand(brandId, 'Stolen'))).status).toBe(404);
    expect((await failure(other.archiveBrand(brandId))).status).toBe(404);
    const empty = await failure(api({ validate: false }).product.createBrand({ companyId: OWNER, name: '' }));
    expect(properties(empty)).toEqual(['name']);
  });
});

describe('credentials', () => {
  it('fails with a typed 401 on an unknown static token, without retrying', async () => {
    const c = api({ credentials: { token: 'nope' } });
    const e = await failure(c.product.searchTradeItems({ OwnerCompanyId: OWNER }));
    expect(e).toMatchObject({ status: 401, code: 'PS_ERR_HTTP_UNAUTHORIZED', outcomeUnknown: false });
    expect(e.body as { title: string; errors: unknown[] }).toMatchObject({ title: 'Unauthorized', errors: [] });
    expect(c.stats.product).toBe(1);
  });

  const oauth = { tokenUrl: '', clientId: 'sandbox-client', clientSecret: 'sandbox-secret' };

  it('gets an OAuth2 token from the sandbox and refreshes it before it expires', async () => {
    const c = api({ credentials: { ...oauth, tokenUrl: `${sandbox.url}/oauth2/token` } });
    await c.product.listBrands(OWNER);
    await c.product.listBrands(OWNER);
    expect((c.credential as unknown as { fetches: number }).fetches).toBe(1);
    await new Promise((r) => setTimeout(r, 950)); // the 1 s token is refreshed at 90 % of its life
    await c.product.listBrands(OWNER);
    expect((c.credential as unknown as { fetches: number }).fetches).toBe(2);
    expect(c.stats.product).toBe(3);
  });

  it('refreshes once on a 401 from an expired token and re-sends the request', async () => {
    const frozen = Date.now(); // the client's clock stands still, so only the sandbox sees the token expire
    const c = api({ credentials: { ...oauth, tokenUrl: `${sandbox.url}/oauth2/token` }, now: () => frozen });
    await c.product.listBrands(OWNER);
    await new Promise((r) => setTimeout(r, 1100));
    await expect(c.product.createBrand({ companyId: OWNER, name: 'After expiry' })).resolves.toEqual({
      brandId: expect.any(String),
    });
    expect((c.credential as unknown as { fetches: number }).fetches).toBe(2);
    expect(c.stats.product).toBe(3);
    expect(await c.product.listBrands(OWNER)).toHaveLength(1);
  });

  it('reports a refused OAuth client as PS_ERR_AUTH_TOKEN', async () => {
    const c = api({ credentials: { ...oauth, clientSecret: 'wrong', tokenUrl: `${sandbox.url}/oauth2/token` } });
    const e = await failure(c.product.listBrands(OWNER));
    expect(e).toMatchObject({ code: 'PS_ERR_AUTH_TOKEN', status: 401 });
    expect(c.stats.product).toBe(0);
  });
});

describe('retries against injected faults', () => {
  it('waits the Retry-After of a 429 before retrying a read', async () => {
    faults({ sequence: ['429'], retryAfterSeconds: 1 });
    const delays: number[] = [];
    const c = api({ onRetry: (i) => delays.push(i.delayMs) });
    const started = Date.now();
    await c.product.searchTradeItems({ OwnerCompanyId: OWNER });
    expect(Date.now() - started).toBeGreaterThanOrEqual(950);
    expect(delays).toEqual([1000]);
    expect(c.stats.product).toBe(2);
  });

  it('retries PATCH, PUT, archive and unarchive through 503s', async () => {
    const c = api();
    await c.product.createTradeItem(tradeItem(20));
    const id = tradeItemIdFor(OWNER, gtin(20));
    faults({ sequence: ['503', '503', 'ok', '503', 'ok', '503', 'ok', '503', 'ok'], retryAfterSeconds: 0 });
    await c.product.patchTradeItem(id, { tradeItemName: 'x' });
    await c.product.putTradeItem(id, { tradeItemName: 'y' });
    await c.product.archiveTradeItems([id]);
    await c.product.unarchiveTradeItem(id);
    expect(sandbox.handle.counts().faults['503']).toBe(5);
  });

  it('never re-sends a create after a 500 that came after the commit: one item, outcome unknown', async () => {
    faults({ sequence: ['500after'] });
    const c = api();
    const e = await failure(c.product.createTradeItem(tradeItem(30)));
    expect(e).toMatchObject({ status: 500, code: 'PS_ERR_HTTP_UNAVAILABLE', outcomeUnknown: true });
    expect(routes()['POST /api/tradeItem']).toBe(1);
    const found = await c.product.searchTradeItems({ OwnerCompanyId: OWNER, GTIN: gtin(30) });
    expect(found.skipAndTakeQueryStats!.totalCount).toBe(1);
  });

  it('never re-sends a create whose connection was reset after the commit', async () => {
    faults({ sequence: ['reset'] });
    const c = api();
    const e = await failure(
      c.product.createManufacturedItemWithTradeItem({
        ownerCompanyId: OWNER,
        tradeItemName: 'R',
        gtin: gtin(31),
        supplierCompanyId: SUPPLIER,
      }),
    );
    expect(e).toMatchObject({ status: null, code: 'PS_ERR_HTTP_CONNECTION', outcomeUnknown: true });
    expect(routes()['POST /api/manufacturedItem']).toBe(1);
    expect(
      (await c.product.searchTradeItems({ OwnerCompanyId: OWNER, GTIN: gtin(31) })).skipAndTakeQueryStats!.totalCount,
    ).toBe(1);
  });

  it('re-sends a create refused with 429 (nothing was done) and ends with exactly one item', async () => {
    faults({ sequence: ['429', '429'], retryAfterSeconds: 0 });
    const c = api();
    await c.product.createTradeItem(tradeItem(32));
    expect(routes()['POST /api/tradeItem']).toBe(3);
    expect(
      (await c.product.searchTradeItems({ OwnerCompanyId: OWNER, GTIN: gtin(32) })).skipAndTakeQueryStats!.totalCount,
    ).toBe(1);
  });

  it('does not re-send a create after a 503 either: the API may have done it', async () => {
    faults({ sequence: ['503'], retryAfterSeconds: 0 });
    const c = api();
    const e = await failure(c.product.createBrand({ companyId: OWNER, name: 'B' }));
    expect(e).toMatchObject({ status: 503, outcomeUnknown: true });
    expect(routes()['POST /api/brands']).toBe(1);
  });
});
