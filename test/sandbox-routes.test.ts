import { describe, expect, it } from 'vitest';
import { buildSandbox } from '../src/sandbox/app.ts';
import { LIST_NAMES, LOOKUPS } from '../src/api/fields.ts';
import { loadReferenceSeed, MISSING_FRENCH_EXAMPLES } from '../src/sandbox/seed/index.ts';

const ID = '0b7c2f0e-6a7d-4b8e-9f10-111111111111';
const ENDPOINTS: [string, string][] = [
  ['GET', '/api/tradeitems'],
  ['POST', '/api/tradeItem'],
  ['DELETE', '/api/tradeitems/enable/collections'],
  ['POST', `/api/tradeitems/${ID}/enable`],
  ['PATCH', `/api/tradeItems/${ID}`],
  ['PUT', `/api/tradeItems/${ID}`],
  ['GET', '/api/manufactureditems'],
  ['POST', `/api/tradeItem/${ID}/manufacturedItem`],
  ['POST', '/api/manufacturedItem'],
  ['PATCH', `/api/manufacturedItems/${ID}`],
  ['PUT', `/api/manufacturedItems/${ID}`],
  ['GET', '/api/brands'],
  ['POST', '/api/brands'],
  ['DELETE', `/api/brands/${ID}/enable`],
  ['POST', `/api/brands/${ID}/enable`],
  ['PUT', `/api/brands/${ID}`],
  ['GET', '/v2/lists/languages'],
  ['GET', `/v2/lists/languages/${ID}`],
  ...LOOKUPS.map((l): [string, string] => ['GET', `/v2/${l.kind}/${l.idFormat === 'code' ? '0406' : ID}`]),
];

/** GET of `app`'s `url` with the sandbox's token, in JSON. */
const getter = (app: ReturnType<typeof buildSandbox>) => (url: string) =>
  app.inject({ method: 'GET', url, headers: { authorization: 'Bearer sandbox-token', accept: 'application/json' } });

describe('sandbox routes', () => {
  it('serves every endpoint of both specs, each behind the bearer credential', async () => {
    const app = buildSandbox();
    expect(ENDPOINTS).toHaveLength(30);
    for (const [method, url] of ENDPOINTS) {
      const res = await app.inject({ method: method as 'GET', url });
      expect(res.statusCode, `${method} ${url}`).toBe(401);
      expect(res.json(), `${method} ${url}`).toMatchObject({ status: 401, title: 'Unauthorized', errors: [] });
    }
  });

  it('answers every list and a record of every lookup kind from the real seed', async () => {
    const app = buildSandbox();
    const seed = loadReferenceSeed();
    const get = getter(app);
    for (const list of LIST_NAMES) {
      const res = await get(`/v2/lists/${list}`);
      expect(res.statusCode, list).toBe(200);
      expect((res.json() as unknown[]).length, list).toBeGreaterThan(0);
    }
    for (const { kind, idFormat } of LOOKUPS) {
      const r = seed.lookups[kind].find((x) => x.names['en-US']);
      expect(r, kind).toBeDefined();
      const res = await get(`/v2/${kind}/${idFormat === 'code' ? r!.code : r!.id}`);
      expect(res.statusCode, kind).toBe(200);
      expect(res.json(), kind).toMatchObject({ id: r!.id, code: r!.code, languageCode: 'en-US' });
    }
  });

  it('answers 404 in fr-FR for real records that have no French name', async () => {
    const app = buildSandbox();
    const seed = loadReferenceSeed();
    const get = getter(app);
    for (const { source, code } of MISSING_FRENCH_EXAMPLES) {
      const isList = (LIST_NAMES as readonly string[]).includes(source);
      const records = isList
        ? seed.lists[source as (typeof LIST_NAMES)[number]]
        : seed.lookups[source as (typeof LOOKUPS)[number]['kind']];
      const r = records.find((x) => x.code === code)!;
      const path = isList
        ? `/v2/lists/${source}/${r.id}?LanguageCode=fr-FR`
        : `/v2/${source}/${source === 'harmonized-codes' ? code : r.id}?languageCode=fr-FR`;
      const res = await get(path);
      expect(res.statusCode, path).toBe(404);
      expect(res.json().errors, path).toEqual([]);
      expect((await get(path.replace('fr-FR', 'en-US'))).statusCode, path).toBe(200);
    }
  });
});
