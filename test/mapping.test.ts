import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { ProductSyncError } from '../src/errors.ts';
import { loadMapping, MappingError, parseMapping, resolveFieldPath } from '../src/pipeline/map/mapping.ts';

const GOOD = `name: acme-foods
target: manufacturedItem
ownerCompanyId: 5B0C6A8E-3F1D-4C2A-9E47-1D2B3C4D5E6F
language: fr-FR
headerRow: 1
key: gtin
empty: ignore
decimalSeparator: ","
columns:
  - { column: [EAN, GTIN, Code-barres], field: gtin }
  - { column: Désignation, field: tradeItemName, required: true }
  - { column: Marque, field: brandId, lookup: { brand: { create: true } } }
  - { column: Poids net, field: "netContents[0].value", type: decimal }
  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit }
  - { column: Pays d'origine, field: countriesOfOrigin, split: ";", type: country }
  - { column: Statut, field: tradeItemStatusId, lookup: { list: trade-item-status }, values: { Actif: Active } }
  - { column: Nomenclature douanière, field: harmonizedCode, lookup: harmonized-code }
  - { column: Fournisseur, field: supplierCompanyId, type: uuid }
  - { column: Remarque, field: "comments[0].value", empty: clear }
  - { column: Poids égoutté, field: drainedNetWeight.value }
  - { column: Unité égoutté, field: drainedNetWeight.unitOfMeasure }
defaults: { productLanguage: fr }
`;

function problemsOf(text: string): { line: number | null; path: string; message: string }[] {
  try {
    parseMapping(text, 'mappings/x.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(MappingError);
    expect((e as ProductSyncError).code).toBe('PS_ERR_MAPPING_INVALID');
    return [...(e as MappingError).problems];
  }
  throw new Error('expected the mapping to be rejected');
}

describe('mapping files', () => {
  it('reads a mapping like the example of docs/mapping.md, with defaults filled in', () => {
    const m = parseMapping(GOOD, 'mappings/acme-foods.yaml');
    expect(m).toMatchObject({
      name: 'acme-foods',
      target: 'manufacturedItem',
      language: 'fr-FR',
      key: 'gtin',
      decimalSeparator: ',',
      headerRow: 1,
    });
    expect(m.ownerCompanyId).toBe('5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f');
    expect(m.fallbackLanguages).toEqual(['fr', 'en-US']);
    const byField = Object.fromEntries(m.columns.map((c) => [c.field.path, c]));
    expect(byField.gtin).toMatchObject({ columns: ['EAN', 'GTIN', 'Code-barres'], type: 'gtin', line: 10 });
    expect(byField['netContents[0].value']?.field).toMatchObject({
      segments: ['netContents', 0, 'value'],
      top: 'netContents',
      leaf: 'string',
    });
    expect(byField.countriesOfOrigin?.field.array).toBe(true);
    expect(byField.brandId?.lookup).toEqual({ brand: { create: true } });
    expect(byField.harmonizedCode?.lookup).toBe('harmonized-code');
    expect(byField.tradeItemStatusId?.values?.get('actif')).toBe('Active');
    expect(byField['comments[0].value']?.empty).toBe('clear');
    expect(byField['drainedNetWeight.value']?.type).toBe('decimal');
    expect(byField['drainedNetWeight.unitOfMeasure']?.type).toBe('weightUnit');
    expect(m.defaults).toEqual([{ field: expect.objectContaining({ path: 'productLanguage' }), value: 'fr' }]);
    expect(m.hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('names the line of an unknown field and suggests the right spelling', () => {
    const p = problemsOf(GOOD.replace('field: tradeItemName', 'field: TradeItemName'));
    expect(p).toEqual([
      { line: 11, path: 'columns[1].field', message: expect.stringContaining('did you mean tradeItemName') },
    ]);
  });

  it('names the line of every problem, and the message lists file:line', () => {
    const text = GOOD.replace('type: decimal }', 'type: decimals }')
      .replace('lookup: harmonized-code', 'lookup: hs-code')
      .replace('headerRow: 1', 'headerRow: 0')
      .replace('empty: clear }', 'empty: clear, colour: red }');
    let err: MappingError | undefined;
    try {
      parseMapping(text, 'mappings/x.yaml');
    } catch (e) {
      err = e as MappingError;
    }
    expect(err?.problems.map((p) => [p.line, p.path])).toEqual(
      expect.arrayContaining([
        [5, 'headerRow'],
        [13, 'columns[3].type'],
        [17, 'columns[7].lookup'],
        [19, 'columns[9].colour'],
      ]),
    );
    expect(err?.message).toContain('mappings/x.yaml:13: columns[3].type');
  });

  it('rejects fields that the target does not take, wrong shapes of paths and types', () => {
    const trade = (cols: string) => `target: tradeItem\ncolumns:\n  - { column: EAN, field: gtin }\n${cols}`;
    expect(problemsOf(trade('  - { column: F, field: supplierCompanyId }\n'))).toMatchObject([
      { line: 4, message: expect.stringContaining('unknown field "supplierCompanyId" for target tradeItem') },
    ]);
    expect(problemsOf(trade('  - { column: P, field: netContents.value }\n'))[0]?.message).toContain(
      'netContents[0].value',
    );
    expect(problemsOf(trade('  - { column: P, field: "netContents[0].weight" }\n'))[0]?.message).toContain(
      'value, unitOfMeasure',
    );
    expect(problemsOf(trade('  - { column: C, field: "comments[0].id" }\n'))[0]?.message).toContain('updates only');
    expect(problemsOf(trade('  - { column: N, field: tradeItemName, split: ";" }\n'))[0]).toMatchObject({
      line: 4,
      path: 'columns[1].split',
    });
    expect(
      problemsOf(trade('  - { column: D, field: drainedNetWeight.unitOfMeasure, type: unit }\n'))[0]?.message,
    ).toContain('weightUnit');
    expect(
      problemsOf(trade('  - { column: B, field: tradeItemStatusId, lookup: { brand: {} } }\n'))[0]?.message,
    ).toContain('brandId');
    expect(
      problemsOf(trade('  - { column: L, field: tradeItemStatusId, lookup: { list: no-such-list } }\n'))[0]?.line,
    ).toBe(4);
    expect(problemsOf(trade('  - { column: G2, field: gtin }\n'))[0]?.message).toContain('already fed by columns[0]');
    expect(problemsOf(trade('defaults: { nope: 1 }\n'))[0]).toMatchObject({ line: 4, path: 'defaults.nope' });
  });

  it('reports every problem at once: schema problems and field problems together, not in rounds', () => {
    const text = `target: tradeItem
headerRow: 0
columns:
  - { column: EAN, field: gtin }
  - { column: Poids, field: "netContent[0].value", type: decimals }
  - { column: Statut, field: tradeItemStatusId, lookup: { list: trade-item-statuses } }
  - { column: Nom, field: tradeItemNme }
  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit, colour: red }
defaults: { productLanguge: fr }
`;
    const p = problemsOf(text);
    // In file order (within a line, in any order).
    expect(p.map((x) => x.line)).toEqual([...p.map((x) => x.line)].sort((a, b) => (a ?? 0) - (b ?? 0)));
    expect(p.map((x) => [x.line, x.path]).sort()).toEqual(
      [
        [2, 'headerRow'],
        [5, 'columns[1].field'],
        [5, 'columns[1].type'],
        [6, 'columns[2].lookup'],
        [7, 'columns[3].field'],
        [8, 'columns[4].colour'],
        [9, 'defaults.productLanguge'],
      ].sort(),
    );
    const by = Object.fromEntries(p.map((x) => [x.path, x.message]));
    expect(by['columns[1].field']).toContain('did you mean netContents?');
    expect(by['columns[3].field']).toContain('did you mean tradeItemName?');
    expect(by['defaults.productLanguge']).toContain('did you mean productLanguage?');
    expect(by['columns[1].type']).toContain('did you mean decimal?');
  });

  it('names the valid lists, lookup kinds and nested fields, with a suggestion', () => {
    const trade = (cols: string) => `target: tradeItem\ncolumns:\n  - { column: EAN, field: gtin }\n${cols}`;
    const list = problemsOf(
      trade('  - { column: L, field: tradeItemStatusId, lookup: { list: trade-item-statuses } }\n'),
    )[0]!;
    expect(list).toMatchObject({ line: 4, path: 'columns[1].lookup' });
    expect(list.message).toContain('unknown list "trade-item-statuses" (did you mean trade-item-status?)');
    expect(list.message).toMatch(/the lists are: .*trade-item-status.*/);
    const kind = problemsOf(trade('  - { column: A, field: tradeItemStatusId, lookup: { kind: allergen } }\n')).find(
      (x) => x.path === 'columns[1].lookup',
    )!;
    expect(kind.message).toContain('unknown lookup kind "allergen" (did you mean allergens?)');
    expect(kind.message).toContain('countries');
    expect(problemsOf(trade('  - { column: P, field: "netContents[0].valeu" }\n'))[0]?.message).toContain(
      'did you mean value?',
    );
  });

  it('requires a column for the key and names the line of the key', () => {
    expect(problemsOf('target: tradeItem\nkey: tradeItemId\ncolumns:\n  - { column: EAN, field: gtin }\n')).toEqual([
      { line: 2, path: 'key', message: 'key tradeItemId needs a column with field tradeItemId' },
    ]);
  });

  it('reports a missing required key at the line of its object, and YAML syntax errors with their line', () => {
    expect(problemsOf('target: tradeItem\ncolumns:\n  - { field: gtin }\n')).toEqual([
      { line: 3, path: 'columns[0].column', message: 'is required' },
    ]);
    expect(
      problemsOf('target: tradeItem\ncolumns:\n  - { column: EAN, field: gtin\nname: x\n')[0]?.line,
    ).toBeGreaterThan(0);
    expect(problemsOf('target: tradeItem\ntarget: manufacturedItem\ncolumns: []\n')[0]?.line).toBe(2);
  });

  it('reads JSON mappings too', () => {
    const m = parseMapping(
      JSON.stringify({ target: 'tradeItem', columns: [{ column: 'EAN', field: 'gtin' }] }, null, 2),
      'm.json',
    );
    expect(m.name).toBe('m');
    expect(m.columns[0]?.type).toBe('gtin');
  });

  it('loads by name from the mappings directory, or by path', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ps-mapping-'));
    await writeFile(join(dir, 'shop.yaml'), 'target: tradeItem\ncolumns:\n  - { column: EAN, field: gtin }\n');
    expect((await loadMapping('shop', { mappingsDir: dir })).name).toBe('shop');
    expect((await loadMapping(join(dir, 'shop.yaml'))).name).toBe('shop');
    await expect(loadMapping('missing', { mappingsDir: dir })).rejects.toMatchObject({
      code: 'PS_ERR_MAPPING_INVALID',
    });
  });

  it('resolves field paths only to fields of the target', () => {
    expect(resolveFieldPath('tradeItem', 'retailerIdentifiers[1]')).toMatchObject({
      segments: ['retailerIdentifiers', 1],
      array: false,
    });
    expect(resolveFieldPath('manufacturedItem', 'targetMarketsList[0].countryCodes')).toMatchObject({
      array: true,
      leaf: 'string',
    });
    expect(resolveFieldPath('tradeItem', '__proto__')).toEqual(expect.stringContaining('not a field path'));
    expect(resolveFieldPath('tradeItem', 'constructor')).toEqual(expect.stringContaining('unknown field'));
  });
});
