import { describe, expect, it } from 'vitest';
import { LIST_NAMES, LOOKUPS } from '../src/api/fields.ts';
import { uuidv5 } from '../src/api/uuid.ts';
import { loadReferenceSeed, MISSING_FRENCH_EXAMPLES, seedId, type SeedRecord } from '../src/sandbox/seed/index.ts';

const seed = loadReferenceSeed();
const all: [string, SeedRecord[]][] = [...Object.entries(seed.lists), ...Object.entries(seed.lookups)];

function byCode(records: SeedRecord[], code: string): SeedRecord {
  const found = records.find((r) => r.code === code);
  if (!found) throw new Error(`no record ${code}`);
  return found;
}

function chain(records: SeedRecord[], code: string): string[] {
  const byId = new Map(records.map((r) => [r.id, r]));
  const out: string[] = [];
  let r: SeedRecord | undefined = byCode(records, code);
  while (r) {
    out.push(r.code);
    r = r.parentId ? byId.get(r.parentId) : undefined;
  }
  return out;
}

describe('reference seed', () => {
  it('gives stable UUIDv5 ids of `${kind}:${code}`', () => {
    expect(seedId('countries', 'FR')).toBe(uuidv5('countries:FR'));
    // A literal, so a change of namespace or name scheme breaks the samples' ids loudly.
    expect(seedId('countries', 'FR')).toBe('0e27c779-39e9-5c84-861a-8cf9431f4eae');
    expect(byCode(seed.lookups.countries, 'FR').id).toBe(seedId('countries', 'FR'));
    expect(byCode(seed.lists['trade-item-status'], 'ACTIVE').id).toBe(seedId('trade-item-status', 'ACTIVE'));
  });

  it('is memoized', () => {
    expect(loadReferenceSeed()).toBe(seed);
  });

  it('has every list name and lookup kind, none empty', () => {
    expect(Object.keys(seed.lists).sort()).toEqual([...LIST_NAMES].sort());
    expect(Object.keys(seed.lookups).sort()).toEqual(LOOKUPS.map((l) => l.kind).sort());
    for (const [name, records] of all) expect(records.length, name).toBeGreaterThan(0);
  });

  it('has no duplicate id or code within a list or kind, and an en-US name everywhere', () => {
    for (const [name, records] of all) {
      expect(new Set(records.map((r) => r.id)).size, name).toBe(records.length);
      expect(new Set(records.map((r) => r.code)).size, name).toBe(records.length);
      for (const r of records) {
        expect(r.id, `${name} ${r.code}`).toBe(seedId(name, r.code));
        expect(r.names['en-US'], `${name} ${r.code}`).toMatch(/\S/);
      }
    }
  });

  it('has consistent hierarchies: every parentId exists in the same kind', () => {
    for (const [name, records] of all) {
      const ids = new Set(records.map((r) => r.id));
      for (const r of records) if (r.parentId) expect(ids.has(r.parentId), `${name} ${r.code}`).toBe(true);
    }
  });

  it('derives fishing-zone parents from the dotted code', () => {
    expect(chain(seed.lookups['fishing-zones'], '27.4.a')).toEqual(['27.4.a', '27.4', '27']);
    expect(chain(seed.lookups['fishing-zones'], '37.1.2')).toEqual(['37.1.2', '37.1', '37']);
    expect(byCode(seed.lookups['fishing-zones'], '27').names).toMatchObject({
      'en-US': 'Atlantic, Northeast',
      'fr-FR': 'Atlantique, Nord-Est',
    });
    const marine = [
      '18',
      '21',
      '27',
      '31',
      '34',
      '37',
      '41',
      '47',
      '48',
      '51',
      '57',
      '58',
      '61',
      '67',
      '71',
      '77',
      '81',
      '87',
      '88',
    ];
    for (const code of marine) expect(byCode(seed.lookups['fishing-zones'], code).parentId).toBeNull();
  });

  it('puts the Annex II sub-items under their allergen', () => {
    const allergens = seed.lookups.allergens;
    expect(allergens.filter((a) => a.parentId === null)).toHaveLength(14);
    const cereals = byCode(allergens, 'AW');
    const gluten = allergens.filter((a) => a.parentId === cereals.id).map((a) => a.names['en-US']);
    expect(gluten).toEqual(expect.arrayContaining(['Wheat', 'Rye', 'Barley', 'Oats', 'Spelt']));
    expect(gluten).toHaveLength(6);
    const nuts = byCode(allergens, 'AN');
    expect(allergens.filter((a) => a.parentId === nuts.id)).toHaveLength(8);
    expect(byCode(allergens, 'AM').names['fr-FR']).toBe('Lait');
  });

  it('nests ISO 3166-2 divisions: French departments under regions, regions at the top', () => {
    const divisions = seed.lookups['country-divisions'];
    expect(chain(divisions, 'FR-29')).toEqual(['FR-29', 'FR-BRE']);
    expect(byCode(divisions, 'FR-BRE').parentId).toBeNull();
    expect(byCode(divisions, 'FR-BRE').extra).toMatchObject({ countryCode: 'FR' });
    expect(byCode(divisions, 'DE-BY').names['en-US']).toBe('Bayern');
    expect(chain(divisions, 'IT-RM')).toEqual(['IT-RM', 'IT-62']);
    expect(byCode(divisions, 'US-CA').names['en-US']).toBe('California');
    expect(chain(divisions, 'ES-M')).toEqual(['ES-M', 'ES-MD']);
    // The iso-3166 package gives GB subdivisions no parent nation: they sit at the top, beside GB-ENG.
    expect(byCode(divisions, 'GB-ENG').parentId).toBeNull();
  });

  it('names countries in French and German, with alpha-3 and numeric codes', () => {
    expect(byCode(seed.lookups.countries, 'FR').names).toMatchObject({ 'en-US': 'France', 'fr-FR': 'France' });
    expect(byCode(seed.lookups.countries, 'DE').names).toMatchObject({ 'fr-FR': 'Allemagne', 'de-DE': 'Deutschland' });
    expect(byCode(seed.lookups.countries, 'DE').extra).toEqual({ alpha3: 'DEU', numeric: '276' });
    expect(seed.lookups.countries.length).toBeGreaterThanOrEqual(249);
  });

  it('has HS chapters 01–24, headings under their chapter and subheadings under their heading', () => {
    const hs = seed.lookups['harmonized-codes'];
    for (let c = 1; c <= 24; c++) expect(byCode(hs, String(c).padStart(2, '0')).parentId).toBeNull();
    for (const code of ['0401', '0402', '0403', '0404', '0405', '0406', '0901', '1905', '2202', '2204']) {
      expect(chain(hs, code)).toEqual([code, code.slice(0, 2)]);
    }
    expect(chain(hs, '040690')).toEqual(['040690', '0406', '04']);
    expect(chain(hs, '220421')).toEqual(['220421', '2204', '22']);
    expect(byCode(hs, '0406').names['fr-FR']).toBe('Fromages et caillebotte');
  });

  it('lists nutrients with a unit and an existing family', () => {
    const families = new Set(seed.lookups['nutrient-families'].map((f) => f.id));
    for (const n of seed.lookups.nutrients) {
      expect(families.has(n.extra?.familyId as string), n.code).toBe(true);
      expect(n.extra?.unit, n.code).toMatch(/^(KJO|E14|GRM|MGM|MC)$/);
    }
    expect(byCode(seed.lookups.nutrients, 'SALTEQ').names).toEqual({ 'en-US': 'Salt', 'fr-FR': 'Sel' });
  });

  it('reads GS1 packaging materials and preservation techniques from @vocabulary/gs1', () => {
    expect(byCode(seed.lists['packaging-materials'], 'GLASS').names).toEqual({ 'en-US': 'Glass', 'fr-FR': 'Verre' });
    expect(seed.lists['packaging-materials'].length).toBeGreaterThan(80);
    expect(byCode(seed.lists['preservation-method'], 'FREEZE_DRYING').names['en-US']).toBe('Freeze Drying');
  });

  it('names languages in French (BCP 47 codes, regional tags included)', () => {
    expect(byCode(seed.lists.languages, 'de').names['fr-FR']).toBe('allemand');
    expect(byCode(seed.lists.languages, 'fr-FR').names['en-US']).toBe('French (France)');
  });

  it('has records deliberately lacking fr-FR, and says which', () => {
    expect(MISSING_FRENCH_EXAMPLES.length).toBeGreaterThan(0);
    for (const { source, code } of MISSING_FRENCH_EXAMPLES) {
      const records =
        (seed.lists as Record<string, SeedRecord[]>)[source] ?? (seed.lookups as Record<string, SeedRecord[]>)[source];
      const r = byCode(records ?? [], code);
      expect(r.names['en-US'], `${source} ${code}`).toBeTruthy();
      expect(r.names['fr-FR'], `${source} ${code}`).toBeUndefined();
    }
  });
});
