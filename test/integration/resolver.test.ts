import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { createReferenceCache } from '../../src/api/reference-cache.ts';
import {
  createReferenceResolver,
  languageChain,
  normalizeHarmonizedCode,
  type ReferenceSource,
  type ResolverOptions,
} from '../../src/pipeline/resolve/reference-resolver.ts';
import { HttpError } from '../../src/errors.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { loadReferenceSeed, seedId, type ReferenceSeed, type SeedRecord } from '../../src/sandbox/seed/index.ts';
import { useSandboxClients } from '../helpers/sandbox.ts';

// The real seed, plus trade-item-status items that exercise the language chain: a name only in `fr`, a second item
// named "Inactif", one named only in fr-FR, one only in de-DE.
const base = loadReferenceSeed();
const extraStatus: SeedRecord[] = [
  {
    id: seedId('trade-item-status', 'ON_HOLD'),
    code: 'ON_HOLD',
    names: { fr: 'En attente', 'en-US': 'Waiting for approval' },
  },
  {
    id: seedId('trade-item-status', 'SUSPENDED'),
    code: 'SUSPENDED',
    names: { 'fr-FR': 'Inactif', 'en-US': 'Suspended' },
  },
  { id: seedId('trade-item-status', 'FR_ONLY'), code: 'FR_ONLY', names: { 'fr-FR': 'Seulement en français' } },
  { id: seedId('trade-item-status', 'DE_ONLY'), code: 'DE_ONLY', names: { 'de-DE': 'Nur auf Deutsch' } },
];
const seed: ReferenceSeed = {
  lists: { ...base.lists, 'trade-item-status': [...base.lists['trade-item-status'], ...extraStatus] },
  lookups: base.lookups,
};

const { sandbox, clients } = useSandboxClients({ referenceSeed: seed });
const redis = new Redis(inject('redisUrl'));
const connections: Redis[] = [];
const prefix = `ps-test-resolver:${process.pid}:${Date.now()}`;
afterAll(async () => {
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  for (const c of connections) c.disconnect();
  redis.disconnect();
});

let runs = 0;
/**
 * A resolver as one run of one worker has it; `shared` gives it its own connection to the Redis every worker shares.
 */
function resolver(more: Partial<ResolverOptions> & { shared?: string } = {}) {
  const { shared, ...rest } = more;
  let r: Redis | null = null;
  if (shared) {
    r = redis.duplicate();
    connections.push(r);
  }
  const cache = createReferenceCache({
    redis: r,
    prefix: `${prefix}:${shared ?? ++runs}`,
    ttlMs: 60_000,
    negativeTtlMs: 5_000,
    lruMax: 1000,
  });
  return createReferenceResolver({
    reference: clients.reference,
    brands: clients.product,
    cache,
    ownerCompanyId: DEMO_COMPANY_ID,
    languageChain: languageChain('fr-FR'),
    ...rest,
  });
}
const listRequests = () => sandbox.handle.counts().byRoute['GET /v2/lists/:listName'] ?? 0;
const id = (code: string) => seedId('trade-item-status', code);

describe('language chain', () => {
  it('goes from the mapping language to its primary subtag to the default', () => {
    expect(languageChain('fr-FR')).toEqual(['fr-FR', 'fr', 'en-US']);
    expect(languageChain('en-US')).toEqual(['en-US', 'en']);
    expect(languageChain('de-DE', 'fr-FR')).toEqual(['de-DE', 'de', 'fr-FR']);
    expect(languageChain('nl-BE', 'en-US', ['fr-BE', 'fr'])).toEqual(['nl-BE', 'fr-BE', 'fr', 'en-US']);
    // The older options (a language and its fallbacks) build the same chain.
    expect(resolver({ languageChain: undefined, language: 'fr-FR', fallbackLanguages: [] }).languages).toEqual([
      'fr-FR',
      'fr',
      'en-US',
    ]);
  });
});

describe('list labels against the sandbox', () => {
  it('resolves labels and codes in the sheet language, case, accents and spacing ignored', async () => {
    const r = resolver();
    expect(await r.resolveListLabel('trade-item-status', 'actif')).toEqual({
      id: id('ACTIVE'),
      code: 'ACTIVE',
      name: 'Actif',
      language: 'fr-FR',
      fallback: false,
    });
    expect(await r.resolveListLabel('trade-item-status', '  ARRETE ')).toMatchObject({
      id: id('DISCONTINUED'),
      fallback: false,
    });
    expect(await r.resolveListLabel('trade-item-status', 'draft')).toMatchObject({ id: id('DRAFT'), fallback: false });
    expect(await r.resolveListLabel('storage-condition-temperature', 'surgele (-18  °c ou MOINS)')).toMatchObject({
      id: seedId('storage-condition-temperature', 'FROZEN'),
    });
    expect(await r.resolveListLabel('storage-condition-temperature', 'chilled 0 4')).toMatchObject({
      id: seedId('storage-condition-temperature', 'CHILLED_0_4'),
    });
  });

  it('falls back along fr-FR → fr → en-US and says why: another name in the sheet language, or none', async () => {
    const r = resolver();
    expect(await r.resolveListLabel('storage-condition-temperature', 'Ambient temperature')).toMatchObject({
      id: seedId('storage-condition-temperature', 'AMBIENT'),
      language: 'en-US',
      fallback: true,
      warning: { code: 'REF_FALLBACK_LANGUAGE', message: expect.stringContaining('"Température ambiante"') },
    });
    // An English label that is also the item's code is found by its code in the sheet language.
    expect(await r.resolveListLabel('trade-item-status', 'Active')).toMatchObject({
      id: id('ACTIVE'),
      language: 'fr-FR',
      fallback: false,
    });
    expect(await r.resolveListLabel('trade-item-status', 'en attente')).toMatchObject({
      id: id('ON_HOLD'),
      language: 'fr',
      fallback: true,
      warning: { code: 'REF_NO_TRANSLATION' },
    });
    expect(await r.resolveListLabel('trade-item-status', 'waiting for APPROVAL')).toMatchObject({
      id: id('ON_HOLD'),
      language: 'en-US',
      warning: { code: 'REF_NO_TRANSLATION' },
    });
    expect(await r.resolveListLabel('packaging-materials', 'polymer evoh')).toMatchObject({
      id: seedId('packaging-materials', 'POLYMER_EVOH'),
      warning: { code: 'REF_NO_TRANSLATION' },
    });
  });

  it('reports a label of two items as ambiguous, with both candidates, while their codes still resolve', async () => {
    const r = resolver();
    const amb = await r.resolveListLabel('trade-item-status', 'INACTIF');
    expect(amb).toMatchObject({ issue: 'REF_AMBIGUOUS' });
    expect('candidates' in amb && amb.candidates?.map((c) => c.code).sort()).toEqual(['INACTIVE', 'SUSPENDED']);
    expect(await r.resolveListLabel('trade-item-status', 'suspended')).toMatchObject({ id: id('SUSPENDED') });
  });

  it('reports labels found in no language of the chain as unknown', async () => {
    const r = resolver();
    expect(await r.resolveListLabel('trade-item-status', 'Peut-être')).toMatchObject({ issue: 'REF_UNKNOWN' });
    // Named in de-DE only: no list of the chain shows it.
    expect(await r.resolveListLabel('trade-item-status', 'Nur auf Deutsch')).toMatchObject({ issue: 'REF_UNKNOWN' });
    expect(
      await resolver({ languageChain: ['de-DE'] }).resolveListLabel('trade-item-status', 'nur auf deutsch'),
    ).toMatchObject({ id: id('DE_ONLY') });
  });
});

describe('ids and codes given in the sheet', () => {
  it('verifies list item ids by id, in any language of the chain', async () => {
    const r = resolver();
    expect(await r.verifyListItemId('trade-item-status', id('ACTIVE').toUpperCase())).toMatchObject({
      id: id('ACTIVE'),
      code: 'ACTIVE',
    });
    // No en-US name: the by-id lookup in en-US answers 404, in fr-FR it answers.
    expect(await r.verifyListItemId('trade-item-status', id('FR_ONLY'))).toMatchObject({
      id: id('FR_ONLY'),
      language: 'fr-FR',
    });
    expect(await r.resolveListLabel('trade-item-status', id('DRAFT'))).toMatchObject({
      id: id('DRAFT'),
      code: 'DRAFT',
    });
    expect(await r.verifyListItemId('trade-item-status', id('DE_ONLY'))).toMatchObject({ issue: 'REF_ID_UNKNOWN' });
    expect(await r.verifyListItemId('trade-item-status', '00000000-0000-4000-8000-000000000000')).toMatchObject({
      issue: 'REF_ID_UNKNOWN',
    });
    expect(await r.verifyListItemId('trade-item-status', 'ACTIVE')).toMatchObject({ issue: 'REF_ID_UNKNOWN' });
  });

  it('verifies lookup ids, remembering unknown ones for a while', async () => {
    const r = resolver();
    const france = seedId('countries', 'FR');
    expect(await r.verifyLookupId('countries', france)).toMatchObject({ id: france, code: 'FR' });
    const market = base.lookups.markets[0]!;
    expect(await r.verifyLookupId('markets', market.id)).toMatchObject({ id: market.id });
    expect(await r.verifyLookupId('countries', 'France')).toMatchObject({ issue: 'REF_ID_UNKNOWN' });
    const before = sandbox.handle.counts().total;
    for (let i = 0; i < 5; i++)
      expect(await r.verifyLookupId('allergens', '00000000-0000-4000-8000-000000000001')).toMatchObject({
        issue: 'REF_ID_UNKNOWN',
      });
    // One 404 per language of the chain, then remembered.
    expect(sandbox.handle.counts().total - before).toBe(3);
    expect(await r.verifyLookupId('harmonized-codes', '0406.90')).toEqual({ id: '040690', code: '040690' });
  });

  it('verifies harmonized codes written with dots, spaces or a lost leading zero', async () => {
    expect(['04.06', '0406 90', '406', '40690', '4', '1234567', '0406x', '04069'].map(normalizeHarmonizedCode)).toEqual(
      ['0406', '040690', '0406', '040690', '04', '01234567', null, null],
    );
    const r = resolver();
    expect(await r.verifyHarmonizedCode('04.06')).toEqual({ code: '0406' });
    expect(await r.verifyHarmonizedCode('0406 90')).toEqual({ code: '040690' });
    expect(await r.verifyHarmonizedCode('406')).toEqual({ code: '0406' });
    // 0206 has no fr-FR name: found all the same.
    expect(await r.verifyHarmonizedCode('0206')).toEqual({ code: '0206' });
    expect(await r.verifyHarmonizedCode('9999')).toMatchObject({ issue: 'HS_CODE_UNKNOWN' });
    expect(await r.verifyHarmonizedCode('n/a')).toMatchObject({ issue: 'HS_CODE_FORMAT' });
  });
});

describe('brands', () => {
  it('matches brand names without case or accents, never creates in a dry run, and creates a missing one once', async () => {
    sandbox.handle.reset();
    const { brandId: existing } = await clients.product.createBrand({
      companyId: DEMO_COMPANY_ID,
      name: 'Crème de Bretagne',
    });
    expect(await resolver().resolveBrand('CREME DE BRETAGNE', { create: false })).toEqual({
      brandId: existing,
      created: false,
    });
    expect(await resolver().resolveBrand('Inconnue', { create: false })).toMatchObject({ issue: 'BRAND_UNKNOWN' });

    expect(await resolver({ dryRun: true }).resolveBrand('Biscuiterie de Lorient', { create: true })).toEqual({
      brandId: null,
      created: false,
      wouldCreate: true,
    });
    expect(sandbox.handle.counts().writes).toBe(1);

    const r = resolver();
    const all = await Promise.all(
      Array.from({ length: 50 }, () => r.resolveBrand('Biscuiterie de Lorient', { create: true })),
    );
    const ids = new Set(all.map((b) => ('brandId' in b ? b.brandId : null)));
    expect(ids.size).toBe(1);
    expect(all.filter((b) => 'created' in b && b.created)).toHaveLength(1);
    expect(sandbox.handle.store.dump().brands.filter((b) => b.name === 'Biscuiterie de Lorient')).toHaveLength(1);
    expect(await r.resolveBrand('biscuiterie de lorient', { create: true })).toEqual({
      brandId: [...ids][0],
      created: false,
    });
  });

  it('creates a brand once when two workers sharing Redis both need it', async () => {
    sandbox.handle.reset();
    const shared = `brands-${Math.random()}`;
    const a = resolver({ shared });
    const b = resolver({ shared });
    const rows = Array.from({ length: 20 }, (_, i) =>
      (i % 2 ? a : b).resolveBrand('Conserverie du Port', { create: true }),
    );
    const all = await Promise.all(rows);
    expect(new Set(all.map((x) => ('brandId' in x ? x.brandId : null))).size).toBe(1);
    expect(sandbox.handle.store.dump().brands.filter((x) => x.name === 'Conserverie du Port')).toHaveLength(1);
  });

  it('links an archived brand as it is and says so, without unarchiving it', async () => {
    sandbox.handle.reset();
    const { brandId } = await clients.product.createBrand({ companyId: DEMO_COMPANY_ID, name: 'Ancienne Marque' });
    await clients.product.archiveBrand(brandId);
    const writes = sandbox.handle.counts().writes;
    expect(await resolver().resolveBrand('ancienne marque', { create: true })).toEqual({
      brandId,
      created: false,
      archived: true,
    });
    expect(sandbox.handle.counts().writes).toBe(writes);
    expect(sandbox.handle.store.dump().brands.find((x) => x.brandId === brandId)?.archived).toBe(true);
  });
});

describe('requests', () => {
  it('asks for each (list, language) once over 100 000 resolutions', async () => {
    const r = resolver();
    const before = clients.stats.reference;
    const beforeLists = listRequests();
    const labels = [
      'Température ambiante',
      'Surgelé (-18 °C ou moins)',
      'Ambient temperature',
      'Frozen (-18 °C or colder)',
      'AMBIENT',
      'Inconnu',
    ];
    for (let i = 0; i < 100_000; i++)
      await r.resolveListLabel('storage-condition-temperature', labels[i % labels.length]!);
    // fr-FR, fr and en-US lists, once each.
    expect(clients.stats.reference - before).toBe(3);
    expect(listRequests() - beforeLists).toBe(3);
    // The first label loads fr-FR; the third ("Ambient temperature") loads fr and en-US: two resolutions made requests.
    expect(r.stats).toEqual({ lookups: 100_000, requests: 3, cacheHits: 99_998 });
  });

  it('two workers sharing Redis ask for each (list, language) once between them', async () => {
    const shared = `lists-${Math.random()}`;
    const a = resolver({ shared });
    const b = resolver({ shared });
    const before = listRequests();
    const labels = ['Active', 'Actif', 'Brouillon', 'en attente', 'Peut-être'];
    await Promise.all(
      Array.from({ length: 200 }, (_, i) =>
        (i % 2 ? a : b).resolveListLabel('trade-item-status', labels[i % labels.length]!),
      ),
    );
    expect(listRequests() - before).toBe(3);
    expect(a.stats.requests + b.stats.requests).toBe(3);
  });

  it('does not remember a failed list load: the next resolution asks again', async () => {
    let failures = 1;
    const flaky: ReferenceSource = {
      getList: async (...args) => {
        if (failures-- > 0)
          throw new HttpError('PS_ERR_HTTP_UNAVAILABLE', {
            method: 'GET',
            url: `${sandbox.url}/v2/lists/${args[0]}`,
            status: 503,
          });
        return clients.reference.getList(...args);
      },
      getListItem: (...args) => clients.reference.getListItem(...args),
      lookup: (...args) => clients.reference.lookup(...args),
    };
    const r = resolver({ reference: flaky });
    await expect(r.resolveListLabel('trade-item-status', 'Actif')).rejects.toMatchObject({ status: 503 });
    expect(await r.resolveListLabel('trade-item-status', 'Actif')).toMatchObject({ id: id('ACTIVE') });
  });
});
