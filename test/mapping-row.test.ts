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

const headers = ['Code-barres', 'Désignation', 'Marque', 'Poids net', 'Unité', "Pays d'origine", 'Statut', 'Remarque', 'Poids égoutté', 'Unité égoutté', 'Saisonnier', 'Début saison', 'Ignorée'];
const index = matchHeaders(headers, mapping);
const row = (cells: Cell[], issues: Issue[] = []) => mapRow({ row: 7, cells, issues }, headers, mapping, index);

describe('mapRow', () => {
  it('builds the nested API body from a synthetic row', () => {
    const d = row(['3017620422003', ' Pâte à tartiner ', 'Noisetta', '0,75', 'kg', 'France; Italie ;', ' actif ', 'Nouvelle recette', '1 234,5', 'grammes', 'oui', '03/04/2025', 'x']);
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
      { field: 'brandId', segments: ['brandId'], column: 'Marque', values: ['Noisetta'], array: false, lookup: { brand: { create: true } } },
      { field: 'tradeItemStatusId', segments: ['tradeItemStatusId'], column: 'Statut', values: ['Active'], array: false, lookup: { list: 'trade-item-status' } },
    ]);
    expect(d.issues).toEqual([]);
    expect(d.clear).toEqual([]);
    expect(d.origins?.['netContents[0].value']).toEqual({ column: 'Poids net', value: '0,75' });
  });

  it('follows the empty-cell policy: ignore leaves the field out, clear lists it', () => {
    const d = row(['3017620422003', 'Pâte', null, '', null, '  ', null, '', null, null, null, null, null]);
    expect(d.fields).toEqual({ gtin: '03017620422003', tradeItemName: 'Pâte', productLanguage: 'fr', supplierCompanyId: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f' });
    expect(d.clear).toEqual(['comments']);
    expect(d.lookups).toBeUndefined();
  });

  it('names row, column, field and cell in every cell issue, keeps the reader issues, and leaves failed fields out', () => {
    const readerIssue: Issue = { row: 7, column: null, field: null, value: null, code: 'ROW_RAGGED', severity: 'warning', message: 'ragged' };
    const d = row(['5,58199E+12', '', 'M', '0.5', '0,5 kg', 'Atlantide', 'Actif', 'r', '1', 'cl', 'peut-être', '03/04/25'], [readerIssue]);
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
    expect(restored.issues).toMatchObject([{ code: 'GTIN_LEADING_ZEROS_RESTORED', severity: 'warning', column: 'Code-barres' }]);
  });

  it('never lets a header name become an object key', () => {
    const hostile = ['__proto__', 'constructor', 'Code-barres', 'Désignation', 'Marque', 'Poids net', 'Unité', "Pays d'origine", 'Statut', 'Remarque', 'Poids égoutté', 'Unité égoutté', 'Saisonnier', 'Début saison'];
    const d = mapRow({ row: 2, cells: ['{"polluted":true}', 'x', '96385074', 'N'], issues: [] }, hostile, mapping, matchHeaders(hostile, mapping));
    expect(Object.keys(d.fields).sort()).toEqual(['gtin', 'productLanguage', 'supplierCompanyId', 'tradeItemName']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(d.fields)).toBe(Object.prototype);
  });
});
