import { beforeAll, describe, expect, it } from 'vitest';
import { NOT_FOUND_BODY } from './helpers/errors.ts';
import type { FastifyInstance } from 'fastify';
import { buildSandbox } from '../src/sandbox/app.ts';
import type { ReferenceSeed, SeedRecord } from '../src/sandbox/seed/index.ts';
import { LIST_NAMES, LOOKUPS } from '../src/api/fields.ts';

// A tiny seed of our own, so these tests pin the server's behaviour independently of the real reference data.
const rec = (
  id: string,
  code: string,
  names: Record<string, string>,
  parentId?: string | null,
  extra?: Record<string, unknown>,
): SeedRecord => ({
  id,
  code,
  names,
  ...(parentId !== undefined ? { parentId } : {}),
  ...(extra ? { extra } : {}),
});
const U = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const empty = <K extends string>(keys: readonly K[]) =>
  Object.fromEntries(keys.map((k) => [k, [] as SeedRecord[]])) as Record<K, SeedRecord[]>;
const seed: ReferenceSeed = {
  lists: {
    ...empty(LIST_NAMES),
    languages: [
      rec(U(1), 'fr', { 'en-US': 'French', 'fr-FR': 'français' }),
      rec(U(2), 'gsw', { 'en-US': 'Swiss German' }),
    ],
  },
  lookups: {
    ...empty(LOOKUPS.map((l) => l.kind)),
    allergens: [
      rec(U(10), 'GLUTEN', { 'en-US': 'Cereals containing gluten', 'fr-FR': 'Céréales contenant du gluten' }, null),
      rec(U(11), 'WHEAT', { 'en-US': 'Wheat', 'fr-FR': 'Blé' }, U(10)),
      rec(U(12), 'SPELT', { 'en-US': 'Spelt' }, U(11)),
    ],
    countries: [rec(U(20), 'FR', { 'en-US': 'France', 'fr-FR': 'France' }, undefined, { alpha3: 'FRA' })],
    'harmonized-codes': [
      rec(U(30), '04', { 'en-US': 'Dairy produce' }, null),
      rec(U(31), '0406', { 'en-US': 'Cheese and curd' }, U(30)),
      rec(U(32), '040690', { 'en-US': 'Other cheese' }, U(31)),
    ],
    nutrients: [rec(U(40), 'FAT', { 'en-US': 'Fat' }, undefined, { unit: 'GRM' })],
  },
};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- response bodies are checked by expect()
type Json = any;

let app: FastifyInstance;
beforeAll(() => {
  app = buildSandbox({ referenceSeed: seed });
});
const get = async (url: string, headers: Record<string, string> = {}) => {
  const res = await app.inject({
    method: 'GET',
    url,
    headers: { authorization: 'Bearer sandbox-token', accept: 'application/json', ...headers },
  });
  return { status: res.statusCode, type: String(res.headers['content-type']), body: JSON.parse(res.body) as Json };
};

describe('sandbox reference API: lists', () => {
  it('answers the items having a translation in LanguageCode (default en-US, case-insensitive)', async () => {
    expect((await get('/v2/lists/languages')).body).toEqual([
      { id: U(1), code: 'fr', name: 'French' },
      { id: U(2), code: 'gsw', name: 'Swiss German' },
    ]);
    expect((await get('/v2/lists/languages?LanguageCode=FR-fr')).body).toEqual([
      { id: U(1), code: 'fr', name: 'français' },
    ]);
    expect((await get(`/v2/lists/languages?LanguageCode=fr-FR&CompanyId=${U(99)}`)).status).toBe(200);
  });
  it('answers 400 naming listName for an unknown list, CompanyId when not a uuid', async () => {
    const r = await get('/v2/lists/colours');
    expect(r.status).toBe(400);
    expect(r.body).toEqual({
      type: 'https://tools.ietf.org/html/rfc7231#section-6.5.1',
      title: 'Bad Request',
      status: 400,
      errors: [{ code: 'INVALID_REQUEST', property: 'listName', message: expect.any(String), detail: null }],
    });
    expect((await get('/v2/lists/languages?CompanyId=x')).body.errors[0]).toMatchObject({ property: 'CompanyId' });
  });
  it('answers a list item in the language, and the special 404 when missing or untranslated', async () => {
    expect((await get(`/v2/lists/languages/${U(1)}?LanguageCode=fr-FR`)).body).toEqual({
      id: U(1),
      code: 'fr',
      name: 'français',
      languageCode: 'fr-FR',
    });
    const notFound = {
      ...NOT_FOUND_BODY,
      detail: null,
      instance: null,
      extensions: {},
    };
    const untranslated = await get(`/v2/lists/languages/${U(2)}?LanguageCode=fr-FR`);
    expect(untranslated.status).toBe(404);
    expect(untranslated.body).toEqual(notFound);
    expect((await get(`/v2/lists/languages/${U(3)}`)).body).toEqual(notFound);
    expect((await get('/v2/lists/languages/abc')).body.errors[0]).toMatchObject({ property: 'itemId' });
  });
});

describe('sandbox reference API: lookups', () => {
  it('answers a record with id, code, name, languageCode, parentId and extras', async () => {
    expect((await get(`/v2/allergens/${U(11)}?languageCode=fr-FR`)).body).toEqual({
      id: U(11),
      code: 'WHEAT',
      name: 'Blé',
      languageCode: 'fr-FR',
      parentId: U(10),
    });
    expect((await get(`/v2/allergens/${U(10)}`)).body).toMatchObject({ parentId: null });
    expect((await get(`/v2/countries/${U(20)}`)).body).toEqual({
      id: U(20),
      code: 'FR',
      name: 'France',
      languageCode: 'en-US',
      alpha3: 'FRA',
    });
    expect((await get(`/v2/nutrients/${U(40)}`)).body).toMatchObject({ code: 'FAT', unit: 'GRM' });
  });
  it('adds the chain of parents, nearest first, with includeParents=true', async () => {
    const r = await get(`/v2/allergens/${U(12)}?includeParents=true`);
    expect((r.body.parents as { code: string }[]).map((p) => p.code)).toEqual(['WHEAT', 'GLUTEN']);
    expect((await get(`/v2/allergens/${U(12)}?includeParents=false`)).body.parents).toBeUndefined();
    expect((await get(`/v2/allergens/${U(12)}?includeParents=maybe`)).body.errors[0]).toMatchObject({
      property: 'includeParents',
    });
  });
  it('answers 404 with empty errors when the record is missing or has no translation', async () => {
    const r = await get(`/v2/allergens/${U(12)}?languageCode=fr-FR`);
    expect(r.status).toBe(404);
    expect(r.body).toEqual(NOT_FOUND_BODY);
    expect((await get(`/v2/substances/${U(12)}`)).status).toBe(404);
  });
  it('answers 400 naming the path parameter when an id is not a uuid', async () => {
    expect((await get('/v2/countries/FR')).body.errors[0]).toMatchObject({
      property: 'countryId',
      code: 'INVALID_REQUEST',
    });
    expect((await get('/v2/harmonized-codes/cheese')).body.errors[0]).toMatchObject({ property: 'hsCode' });
  });
  it('looks harmonized codes up by code (with or without dots), parents included on request', async () => {
    expect((await get('/v2/harmonized-codes/0406')).body).toMatchObject({
      id: U(31),
      code: '0406',
      name: 'Cheese and curd',
      parentId: U(30),
    });
    expect((await get('/v2/harmonized-codes/04')).body).toMatchObject({ code: '04' });
    const r = await get('/v2/harmonized-codes/0406.90?includeParents=true');
    expect((r.body.parents as { code: string }[]).map((p) => p.code)).toEqual(['0406', '04']);
  });
  it('negotiates text/plain, application/json or text/json on the five language-aware lookups', async () => {
    const url = `/v2/countries/${U(20)}`;
    expect((await get(url, { accept: 'application/json' })).type).toMatch(/^application\/json/);
    expect((await get(url, { accept: 'text/json' })).type).toMatch(/^text\/json/);
    expect((await get(url, { accept: 'text/plain' })).type).toMatch(/^text\/plain/);
    expect((await get(url, { accept: '*/*' })).type).toMatch(/^text\/plain/);
    expect((await get(url, { accept: 'text/plain;q=0.5, application/json' })).type).toMatch(/^application\/json/);
    const missing = await get(`/v2/countries/${U(21)}`, { accept: 'text/json' });
    expect(missing.type).toMatch(/^text\/json/);
    expect(missing.body.status).toBe(404);
    // the list endpoints and the other lookups always answer application/json
    expect((await get('/v2/lists/languages', { accept: '*/*' })).type).toMatch(/^application\/json/);
    expect((await get(`/v2/nutrients/${U(40)}`, { accept: '*/*' })).type).toMatch(/^application\/json/);
  });
  it('answers 401 without a credential', async () => {
    const res = await app.inject({ method: 'GET', url: '/v2/lists/languages' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({
      type: 'https://tools.ietf.org/html/rfc7235#section-3.1',
      title: 'Unauthorized',
      status: 401,
      errors: [],
    });
  });
});
