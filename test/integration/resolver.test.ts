import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiClients, type ApiClients } from '../../src/api/clients.ts';
import { createReferenceCache } from '../../src/api/reference-cache.ts';
import { createReferenceResolver, languageChain } from '../../src/api/reference-resolver.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { seedId } from '../../src/sandbox/seed/index.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';

let sandbox: RunningSandbox;
let clients: ApiClients;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  clients = createApiClients({ productApiUrl: sandbox.url, referenceApiUrl: sandbox.url, credentials: { token: 'sandbox-token' } });
});
afterAll(async () => {
  await clients?.close();
  await sandbox?.close();
});

function resolver(dryRun = false) {
  const cache = createReferenceCache({ redis: null, prefix: 'test', ttlMs: 60_000, negativeTtlMs: 5_000, lruMax: 1000 });
  return createReferenceResolver({ reference: clients.reference, brands: clients.product, cache, ownerCompanyId: DEMO_COMPANY_ID, language: 'fr-FR', fallbackLanguages: ['fr'], dryRun });
}

describe('reference resolver against the sandbox', () => {
  it('builds the fallback chain fr-FR → fr → en-US', () => {
    expect(languageChain('fr-FR', ['fr'])).toEqual(['fr-FR', 'fr', 'en-US']);
  });

  it('resolves labels and codes in the sheet language, case and accents ignored', async () => {
    const r = resolver();
    expect(await r.resolveListLabel('trade-item-status', 'actif')).toMatchObject({ id: seedId('trade-item-status', 'ACTIVE'), fallback: false });
    expect(await r.resolveListLabel('trade-item-status', 'ARRETE')).toMatchObject({ id: seedId('trade-item-status', 'DISCONTINUED') });
    expect(await r.resolveListLabel('trade-item-status', 'DRAFT')).toMatchObject({ id: seedId('trade-item-status', 'DRAFT') });
  });

  it('falls back to en-US and says why: another name, or no translation at all', async () => {
    const r = resolver();
    expect(await r.resolveListLabel('storage-condition-temperature', 'Ambient temperature')).toMatchObject({ id: seedId('storage-condition-temperature', 'AMBIENT'), fallback: true, warning: { code: 'REF_FALLBACK_LANGUAGE' } });
    const evoh = await r.resolveListLabel('packaging-materials', 'POLYMER_EVOH');
    expect(evoh).toMatchObject({ id: seedId('packaging-materials', 'POLYMER_EVOH'), warning: { code: 'REF_NO_TRANSLATION' } });
  });

  it('reports unknown labels and unknown ids', async () => {
    const r = resolver();
    expect(await r.resolveListLabel('trade-item-status', 'Peut-être')).toMatchObject({ issue: 'REF_UNKNOWN' });
    expect(await r.resolveListLabel('trade-item-status', '00000000-0000-4000-8000-000000000000')).toMatchObject({ issue: 'REF_ID_UNKNOWN' });
    expect(await r.verifyHarmonizedCode('04.06')).toEqual({ code: '0406' });
    expect(await r.verifyHarmonizedCode('406')).toEqual({ code: '0406' });
    expect(await r.verifyHarmonizedCode('9999')).toMatchObject({ issue: 'HS_CODE_UNKNOWN' });
  });

  it('creates a missing brand once however many rows name it, and never in a dry run', async () => {
    sandbox.handle.reset();
    const dry = await resolver(true).resolveBrand('Biscuiterie de Lorient', { create: true });
    expect(dry).toEqual({ brandId: null, created: false });
    const r = resolver();
    const all = await Promise.all(Array.from({ length: 50 }, () => r.resolveBrand('Biscuiterie de Lorient', { create: true })));
    expect(new Set(all.map((b) => ('brandId' in b ? b.brandId : null))).size).toBe(1);
    expect(sandbox.handle.store.dump().brands.filter((b) => b.name === 'Biscuiterie de Lorient')).toHaveLength(1);
    expect(await r.resolveBrand('Inconnue', { create: false })).toMatchObject({ issue: 'BRAND_UNKNOWN' });
  });

  it('asks for each (list, language) once over 100 000 resolutions', async () => {
    const r = resolver();
    const before = clients.stats.reference;
    const labels = ['Température ambiante', 'Surgelé (-18 °C ou moins)', 'Ambient temperature', 'Frozen (-18 °C or colder)'];
    for (let i = 0; i < 100_000; i++) await r.resolveListLabel('storage-condition-temperature', labels[i % labels.length]!);
    // fr-FR, fr and en-US lists, once each.
    expect(clients.stats.reference - before).toBe(3);
  });
});
