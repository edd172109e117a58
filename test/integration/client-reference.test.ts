import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { LOOKUPS, type LookupKind, type ListName } from '../../src/api/fields.ts';
import { HttpError } from '../../src/errors.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { loadReferenceSeed, type SeedRecord } from '../../src/sandbox/seed/index.ts';
import { rejection } from '../helpers/errors.ts';
import { useApiClients } from '../helpers/api-clients.ts';
import { useSandbox } from '../helpers/sandbox.ts';

const sandbox = useSandbox();
const api = useApiClients(sandbox);

const seed = loadReferenceSeed();
function rec(source: ListName | LookupKind, code: string): SeedRecord {
  const all =
    (seed.lists as Record<string, SeedRecord[]>)[source] ?? (seed.lookups as Record<string, SeedRecord[]>)[source]!;
  const r = all.find((x) => x.code === code);
  if (!r) throw new Error(`no ${source} ${code} in the seed`);
  return r;
}

const failure = (p: Promise<unknown>): Promise<HttpError> => rejection(p, HttpError);

describe('reference lists through the client', () => {
  it('reads a whole list in the language asked for', async () => {
    const { reference, stats } = api();
    const fr = await reference.getList('languages', { languageCode: 'fr-FR', companyId: DEMO_COMPANY_ID });
    expect(fr).toContainEqual({ id: rec('languages', 'fr').id, code: 'fr', name: 'français' });
    const en = await reference.getList('languages');
    expect(en.find((l) => l.code === 'de')?.name).toBe('German');
    expect(stats).toEqual({ reference: 2, product: 0 });
  });

  it('reads one list item, and answers 404 with the list-item body when it has no translation', async () => {
    const { reference } = api();
    const active = rec('trade-item-status', 'ACTIVE');
    expect(await reference.getListItem('trade-item-status', active.id, { languageCode: 'fr-FR' })).toMatchObject({
      id: active.id,
      code: 'ACTIVE',
      name: 'Actif',
      languageCode: 'fr-FR',
    });
    const evoh = rec('packaging-materials', 'POLYMER_EVOH');
    expect((await reference.getListItem('packaging-materials', evoh.id)).code).toBe('POLYMER_EVOH');
    const e = await failure(reference.getListItem('packaging-materials', evoh.id, { languageCode: 'fr-FR' }));
    expect(e).toMatchObject({ status: 404, code: 'PS_ERR_HTTP_STATUS' });
    expect(e.body).toMatchObject({
      title: 'Not Found',
      status: 404,
      errors: [],
      detail: null,
      instance: null,
      extensions: {},
    });
  });

  it('answers 400 with one INVALID_REQUEST entry per bad property', async () => {
    const e = await failure(api().reference.getListItem('languages', 'not-a-uuid', { companyId: 'nope' }));
    expect(e.status).toBe(400);
    const errors = (e.body as { errors: { code: string; property: string }[] }).errors;
    expect(errors.map((x) => x.property).sort()).toEqual(['CompanyId', 'itemId']);
    expect(errors.every((x) => x.code === 'INVALID_REQUEST')).toBe(true);
  });

  it('refuses an unknown list name before sending', async () => {
    const c = api();
    const e = await failure(c.reference.getList('colours' as ListName));
    expect(e.code).toBe('PS_ERR_HTTP_REQUEST_INVALID');
    expect(c.stats.reference).toBe(0);
  });
});

describe('reference lookups through the client', () => {
  it('looks up a record of each of the twelve kinds', async () => {
    const { reference, stats } = api();
    for (const { kind } of LOOKUPS) {
      const r = seed.lookups[kind][0]!;
      const got = await reference.lookup(kind, kind === 'harmonized-codes' ? r.code : r.id);
      expect(got, kind).toMatchObject({ id: r.id, code: r.code, name: r.names['en-US'], languageCode: 'en-US' });
    }
    expect(stats.reference).toBe(12);
  });

  it('returns the chain of parents with includeParents, in the language asked for', async () => {
    const { reference } = api();
    const zone = rec('fishing-zones', '27.4.a');
    const plain = await reference.lookup('fishing-zones', zone.id);
    expect(plain.parents).toBeUndefined();
    expect(plain.parentId).toBe(rec('fishing-zones', '27.4').id);
    const withParents = await reference.lookup('fishing-zones', zone.id, { includeParents: true });
    expect(withParents.parents!.map((p) => p.code)).toEqual(['27.4', '27']);

    const wheat = await reference.lookup('allergens', rec('allergens', 'UW').id, {
      includeParents: true,
      languageCode: 'fr-FR',
    });
    expect(wheat).toMatchObject({ name: 'Blé', languageCode: 'fr-FR' });
    expect(wheat.parents!.map((p) => p.name)).toEqual(['Céréales contenant du gluten']);
  });

  it('answers 404 for a record missing in the language asked for, and for an unknown id', async () => {
    const { reference } = api();
    expect((await reference.lookup('harmonized-codes', '0206')).code).toBe('0206');
    const e = await failure(reference.lookup('harmonized-codes', '0206', { languageCode: 'fr-FR' }));
    expect(e).toMatchObject({ status: 404 });
    expect(e.body).toMatchObject({ title: 'Not Found', errors: [] });
    expect((await failure(reference.lookup('countries', '00000000-0000-4000-8000-000000000000'))).status).toBe(404);
    expect((await failure(reference.lookup('countries', 'FR'))).status).toBe(400);
  });

  it('parses lookups the API sends as text/plain or text/json', async () => {
    const france = rec('countries', 'FR');
    const raw = await request(`${sandbox.url}/v2/countries/${france.id}`, {
      headers: { authorization: 'Bearer sandbox-token' },
    });
    await raw.body.dump();
    expect(raw.headers['content-type']).toMatch(/^text\/plain/);
    for (const accept of ['text/plain', 'text/json']) {
      const { reference } = api({ accept });
      expect((await reference.lookup('countries', france.id, { languageCode: 'fr-FR' })).name).toBe('France');
      const e = await failure(reference.lookup('harmonized-codes', '0206', { languageCode: 'fr-FR' }));
      expect(e.body).toMatchObject({ title: 'Not Found', status: 404 });
    }
  });

  it('fails with a typed 401 on an unknown token', async () => {
    const c = api({ credentials: { token: 'nope' } });
    const e = await failure(c.reference.lookup('countries', rec('countries', 'FR').id));
    expect(e).toMatchObject({ status: 401, code: 'PS_ERR_HTTP_UNAUTHORIZED' });
    expect(e.body).toMatchObject({ title: 'Unauthorized', errors: [] });
  });
});
