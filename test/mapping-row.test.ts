import { describe, expect, it } from 'vitest';
import { WEIGHT_UNITS } from '../src/api/units.ts';
import { matchHeaders } from '../src/pipeline/map/headers.ts';
import { mapRow } from '../src/pipeline/map/map-row.ts';
import { parseMapping } from '../src/pipeline/map/mapping.ts';
import type { Cell, Issue } from '../src/pipeline/types.ts';

const mapping = parseMapping(
  `target: manufacturedItem
language: fr-FR
decimalSeparator: ","
empty: ignore
columns:
  - { column: [EAN, Code-barres], field: gtin }
  - { column: Désignation, field: tradeItemName, required: true }
  - { column: Marque, field: brandId, lookup: { brand: { create: true } } }
  - { column: Poids net, field: "netContents[0].value", type: decimal }
  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit }
  - { column: Pays d'origine, field: countriesOfOrigin, split: ";", type: country }
  - { column: Statut, field: tradeItemStatusId, lookup: { list: trade-item-status }, values: { Actif: Active, Inactif: Inactive } }
  - { column: Remarque, field: "comments[0].value", empty: clear }
  - { column: Poids égoutté, field: drainedNetWeight.value }
  - { column: Unité égoutté, field: drainedNetWeight.unitOfMeasure }
  - { column: Saisonnier, field: isTradeItemSeasonal, type: boolean }
  - { column: Début saison, field: seasonalAvailabilityStartDate, type: date, format: dd/mm/yyyy }
defaults:
  productLanguage: fr
  supplierCompanyId: C3D4E5F6-A7B8-4C9D-8E0F-1A2B3C4D5E6F
`,
  'test.yaml',
);

const headers = [
  'Code-barres',
  'Désignation',
  'Marque',
  'Poids net',
  'Unité',
  "Pays d'origine",
  'Statut',
  'Remarque',
  'Poids égoutté',
  'Unité égoutté',
  'Saisonnier',
  'Début saison',
  'Ignorée',
];
const index = matchHeaders(headers, mapping);
const row = (cells: Cell[], issues: Issue[] = []) => mapRow({ row: 7, cells, issues }, headers, mapping, index);

describe('mapRow', () => {
  it('builds the nested API body from a synthetic row', () => {
    const d = row([
      '3017620422003',
      ' Pâte à tartiner ',
      'Noisetta',
      '0,75',
      'kg',
      'France; Italie ;',
      ' actif ',
      'Nouvelle recette',
      '1 234,5',
      'grammes',
      'oui',
      '03/04/2025',
      'x',
    ]);
    expect(d.row).toBe(7);
    expect(d.key).toBe('03017620422003');
    expect(d.target).toBe('manufacturedItem');
    expect(d.fields).toEqual({
      gtin: '03017620422003',
      tradeItemName: 'Pâte à tartiner',
      netContents: [{ value: '0.75', unitOfMeasure: 'KGM' }],
      countriesOfOrigin: ['FR', 'IT'],
      comments: [{ value: 'Nouvelle recette' }],
      drainedNetWeight: { value: 1234.5, unitOfMeasure: WEIGHT_UNITS.find((u) => u.symbol === 'g')!.id },
      isTradeItemSeasonal: 'true',
      seasonalAvailabilityStartDate: '2025-04-03',
      productLanguage: 'fr',
      supplierCompanyId: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
    });
    expect(d.lookups).toEqual([
      {
        field: 'brandId',
        segments: ['brandId'],
        column: 'Marque',
        values: ['Noisetta'],
        array: false,
        lookup: { brand: { create: true } },
      },
      {
        field: 'tradeItemStatusId',
        segments: ['tradeItemStatusId'],
        column: 'Statut',
        values: ['Active'],
        array: false,
        lookup: { list: 'trade-item-status' },
      },
    ]);
    expect(d.issues).toEqual([]);
    expect(d.clear).toEqual([]);
    expect(d.origins?.['netContents[0].value']).toEqual({ column: 'Poids net', value: '0,75' });
  });

  it('follows the empty-cell policy: ignore leaves the field out, clear lists it', () => {
    const d = row(['3017620422003', 'Pâte', null, '', null, '  ', null, '', null, null, null, null, null]);
    expect(d.fields).toEqual({
      gtin: '03017620422003',
      tradeItemName: 'Pâte',
      productLanguage: 'fr',
      supplierCompanyId: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
    });
    expect(d.clear).toEqual(['comments']);
    expect(d.lookups).toBeUndefined();
  });

  it('names row, column, field and cell in every cell issue, keeps the reader issues, and leaves failed fields out', () => {
    const readerIssue: Issue = {
      row: 7,
      column: null,
      field: null,
      value: null,
      code: 'ROW_RAGGED',
      severity: 'warning',
      message: 'ragged',
    };
    const d = row(
      ['5,58199E+12', '', 'M', '0.5', '0,5 kg', 'Atlantide', 'Actif', 'r', '1', 'cl', 'peut-être', '03/04/25'],
      [readerIssue],
    );
    expect(d.key).toBeNull();
    expect(d.issues.map((i) => [i.code, i.column, i.field, i.value])).toEqual([
      ['ROW_RAGGED', null, null, null],
      ['GTIN_SCIENTIFIC_NOTATION', 'Code-barres', 'gtin', '5,58199E+12'],
      ['REQUIRED_EMPTY', 'Désignation', 'tradeItemName', ''],
      ['DECIMAL_SEPARATOR', 'Poids net', 'netContents[0].value', '0.5'],
      ['UNIT_WITH_VALUE', 'Unité', 'netContents[0].unitOfMeasure', '0,5 kg'],
      ['COUNTRY_UNKNOWN', "Pays d'origine", 'countriesOfOrigin', 'Atlantide'],
      ['UNIT_WRONG_FAMILY', 'Unité égoutté', 'drainedNetWeight.unitOfMeasure', 'cl'],
      ['BOOLEAN_INVALID', 'Saisonnier', 'isTradeItemSeasonal', 'peut-être'],
      ['DATE_INVALID', 'Début saison', 'seasonalAvailabilityStartDate', '03/04/25'],
    ]);
    expect(d.issues.every((i) => i.row === 7)).toBe(true);
    expect(d.fields.gtin).toBeUndefined();
    expect(d.fields.netContents).toBeUndefined();
    expect(d.fields.drainedNetWeight).toEqual({ value: 1 });
  });

  it('reports a missing key once, and carries the leading-zero warning with the restored key', () => {
    const empty = row([null, 'Pâte']);
    expect(empty.issues.map((i) => i.code)).toEqual(['KEY_MISSING']);
    const restored = row([36000291452, 'Pâte']);
    expect(restored.key).toBe('00036000291452');
    expect(restored.issues).toMatchObject([
      { code: 'GTIN_LEADING_ZEROS_RESTORED', severity: 'warning', column: 'Code-barres' },
    ]);
  });

  it('never lets a header name become an object key', () => {
    const hostile = ['__proto__', 'constructor', ...headers.filter((h) => h !== 'Ignorée')];
    const d = mapRow(
      { row: 2, cells: ['{"polluted":true}', 'x', '96385074', 'N'], issues: [] },
      hostile,
      mapping,
      matchHeaders(hostile, mapping),
    );
    expect(Object.keys(d.fields).sort()).toEqual(['gtin', 'productLanguage', 'supplierCompanyId', 'tradeItemName']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(d.fields)).toBe(Object.prototype);
  });

  it("gives origins when asked, from the row's cells: the column that gave each cell (a fallback, a quantity's unit) and its text", () => {
    const m = parseMapping(
      `target: manufacturedItem
language: fr-FR
columns:
  - { column: EAN, field: gtin }
  - { column: Nom, field: tradeItemName, fallback: [Name EN] }
  - { column: Mini, field: variableWeight.minimumValue, type: quantity }
  - { column: Maxi, field: variableWeight.maximumValue, type: quantity }
`,
      'o.yaml',
    );
    const h = ['EAN', 'Nom', 'Name EN', 'Mini', 'Maxi'];
    const at = matchHeaders(h, m);
    const d = mapRow({ row: 3, cells: ['3017620422003', ' ', 'Cookies', '1 kg', '900 g'], issues: [] }, h, m, at);
    // The second quantity's unit differs: the row keeps the first one's, and the unit's origin is that column.
    expect(d.issues.map((i) => [i.code, i.column])).toEqual([['QUANTITY_UNIT_MISMATCH', 'Maxi']]);
    expect(d.origins).toEqual({
      gtin: { column: 'EAN', value: '3017620422003' },
      tradeItemName: { column: 'Name EN', value: 'Cookies' },
      'variableWeight.minimumValue': { column: 'Mini', value: '1 kg' },
      'variableWeight.unitOfMeasure': { column: 'Mini', value: '1 kg' },
      'variableWeight.maximumValue': { column: 'Maxi', value: '900 g' },
    });
    expect(Object.keys(d.origins!)).toEqual([
      'gtin',
      'tradeItemName',
      'variableWeight.minimumValue',
      'variableWeight.unitOfMeasure',
      'variableWeight.maximumValue',
    ]);
    expect(d.origins).toBe(d.origins);
    // Computed, not carried: a draft's own data is what it was before (no origins among its keys).
    expect(Object.keys(d)).not.toContain('origins');
    expect(JSON.parse(JSON.stringify(d))).not.toHaveProperty('origins');
  });

  it('gives each row its own issues for a cell the column has read before', () => {
    const bad = ['3017620422003', 'Pâte', null, null, null, null, null, null, null, null, 'peut-être', '31/02/2025'];
    const a = row(bad);
    const b = mapRow({ row: 8, cells: bad, issues: [] }, headers, mapping, index);
    expect(a.issues.map((i) => [i.row, i.code, i.value])).toEqual([
      [7, 'BOOLEAN_INVALID', 'peut-être'],
      [7, 'DATE_INVALID', '31/02/2025'],
    ]);
    expect(b.issues.map((i) => [i.row, i.code, i.value])).toEqual([
      [8, 'BOOLEAN_INVALID', 'peut-être'],
      [8, 'DATE_INVALID', '31/02/2025'],
    ]);
    a.issues[0]!.message = 'changed';
    expect(row(bad).issues[0]!.message).toBe(b.issues[0]!.message);
    expect(b.issues[0]!.message).not.toBe('changed');
  });

  it('closes the holes of lists filled past their first element, and clears only tops no column of the row fills', () => {
    const m = parseMapping(
      `target: tradeItem
language: en-US
columns:
  - { column: GTIN, field: gtin }
  - { column: Net 2, field: "netContents[1].value", type: decimal }
  - { column: Unit 2, field: "netContents[1].unitOfMeasure", type: unit }
  - { column: Note 1, field: "comments[0].value", empty: clear }
  - { column: Note 2, field: "comments[1].value", empty: clear }
  - { column: Status, field: tradeItemStatusId, lookup: { list: trade-item-status }, empty: clear }
  - { column: Category, field: "productCategories[0].categoryId", lookup: { kind: raw-material-classification-items } }
  - { column: Category item, field: "productCategories[0].categoryItemId", empty: clear }
`,
      'h.yaml',
    );
    const h = ['GTIN', 'Net 2', 'Unit 2', 'Note 1', 'Note 2', 'Status', 'Category', 'Category item'];
    const at = matchHeaders(h, m);
    const d = mapRow({ row: 2, cells: ['3017620422003', '1.5', 'kg', '', 'second', '', '', ''], issues: [] }, h, m, at);
    expect(d.fields).toEqual({
      gtin: '03017620422003',
      netContents: [{ value: '1.5', unitOfMeasure: 'KGM' }],
      comments: [{ value: 'second' }],
    });
    expect(d.clear).toEqual(['tradeItemStatusId', 'productCategories']);
    // A label waiting for its id fills its top as a value does.
    const e = mapRow(
      { row: 3, cells: ['3017620422003', '', '', '', '', 'Active', 'Biscuits', ''], issues: [] },
      h,
      m,
      at,
    );
    expect(e.clear).toEqual(['comments']);
    expect(e.lookups).toMatchObject([
      { field: 'tradeItemStatusId', values: ['Active'] },
      { field: 'productCategories[0].categoryId', values: ['Biscuits'] },
    ]);
  });
});

describe('mapRow lookups', () => {
  const m = parseMapping(
    `target: manufacturedItem
language: en-US
columns:
  - { column: GTIN, field: gtin }
  - { column: Brand, field: brandId, lookup: { brand: { create: true } }, values: { None: " " } }
  - { column: Countries, field: countriesOfOrigin, split: ";", lookup: { kind: countries } }
`,
    'lookups.yaml',
  );
  const h = ['GTIN', 'Brand', 'Countries'];
  const at = matchHeaders(h, m);
  const labels = (cells: Cell[]) =>
    mapRow({ row: 2, cells, issues: [] }, h, m, at).lookups?.map((l) => [l.field, l.values]);

  it('takes a cell’s label trimmed, one label per part of a split list, none where the value map blanks it', () => {
    expect(labels(['3017620422003', ' Noisetta ', 'France; ; Italy;'])).toEqual([
      ['brandId', ['Noisetta']],
      ['countriesOfOrigin', ['France', 'Italy']],
    ]);
    expect(labels(['3017620422003', 'None', 'Spain'])).toEqual([
      ['brandId', []],
      ['countriesOfOrigin', ['Spain']],
    ]);
  });
});
