import { describe, expect, it } from 'vitest';
import { matchHeaders } from '../src/pipeline/map/headers.ts';
import { ISSUE_CODES } from '../src/issue-codes.ts';
import { mapRow } from '../src/pipeline/map/map-row.ts';
import { parseMapping } from '../src/pipeline/map/mapping.ts';
import { validateDraft } from '../src/pipeline/map/validate.ts';
import { duplicateIssues } from './helpers/duplicates.ts';
import { SheetKeys } from '../src/pipeline/run/sheet-keys.ts';
import type { Cell, Draft } from '../src/pipeline/types.ts';

const trade = parseMapping(
  `target: tradeItem
columns:
  - { column: EAN, field: gtin }
  - { column: Nom, field: tradeItemName }
  - { column: Statut, field: tradeItemStatusId, lookup: { list: trade-item-status } }
  - { column: Catégorie, field: "productCategories[0].categoryId", type: string }
  - { column: Poids, field: "netContents[0].value" }
`,
  'trade.yaml',
);
const headers = ['EAN', 'Nom', 'Statut', 'Catégorie', 'Poids'];
const draftOf = (cells: Cell[]) => mapRow({ row: 4, cells, issues: [] }, headers, trade, matchHeaders(headers, trade));

describe('validateDraft', () => {
  it('accepts a complete trade item draft (ownerCompanyId comes from the run)', () => {
    expect(validateDraft(draftOf(['96385074', 'Biscuits', 'Actif', null, '200']))).toEqual([]);
  });

  it('maps schema problems back to the sheet column that fed the field', () => {
    const d = draftOf(['96385074', '   ', 'Actif', 'pas-un-uuid', '200']);
    d.fields.tradeItemName = '   '; // a blank name reaching validation (e.g. from a default)
    const issues = validateDraft(d);
    expect(issues.map((i) => [i.code, i.row, i.column, i.field])).toEqual([
      ['FIELD_EMPTY', 4, 'Nom', 'tradeItemName'],
      ['FIELD_FORMAT', 4, 'Catégorie', 'productCategories[0].categoryId'],
    ]);
    expect(issues[1]?.value).toBe('pas-un-uuid');
  });

  it('reports a missing required field, without a column when no column feeds it', () => {
    const d = draftOf(['96385074', null, null, null, null]);
    expect(validateDraft(d)).toMatchObject([{ code: 'FIELD_REQUIRED', field: 'tradeItemName', column: 'Nom', row: 4 }]);
    expect(validateDraft({ ...d, target: 'manufacturedItem', fields: { tradeItemName: 'x' } })).toMatchObject([
      {
        code: 'FIELD_REQUIRED',
        field: 'supplierCompanyId',
        column: null,
        message: expect.stringContaining('defaults'),
      },
    ]);
  });

  it('exempts fields still waiting for lookup resolution', () => {
    const d: Draft = {
      row: 9,
      key: '00000096385074',
      target: 'manufacturedItem',
      fields: { tradeItemName: 'x' },
      clear: [],
      issues: [],
      source: [],
      lookups: [
        {
          field: 'supplierCompanyId',
          segments: ['supplierCompanyId'],
          column: 'Fournisseur',
          values: ['Acme'],
          array: false,
          lookup: { kind: 'markets' },
        },
      ],
    };
    expect(validateDraft(d)).toEqual([]);
  });

  it('checks a manufactured item row field by field with the operation that will carry it, and rejects what no operation takes', () => {
    const base = { row: 3, key: null, target: 'manufacturedItem' as const, clear: [], issues: [], source: [] };
    const ok = {
      tradeItemName: 'x',
      supplierCompanyId: 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
      countriesOfOrigin: ['FR'],
      harmonizedCode: '0406',
      packagingFormat: 'box',
    };
    expect(validateDraft({ ...base, fields: ok })).toEqual([]);
    expect(
      validateDraft({ ...base, fields: { ...ok, countriesOfOrigin: 'FR', bogus: 1 } })
        .map((i) => i.code)
        .sort(),
    ).toEqual(['FIELD_NOT_ACCEPTED', 'FIELD_TYPE']);
    expect(validateDraft({ ...base, fields: { ...ok, drainedNetWeight: { unitOfMeasure: 'kg' } } })).toMatchObject([
      { code: 'FIELD_INVALID', field: 'drainedNetWeight.unitOfMeasure' },
    ]);
  });

  it('validates against another operation when asked (harmonizedCode is not accepted by PATCH)', () => {
    const d = draftOf(['96385074', 'Biscuits', null, null, null]);
    d.fields.harmonizedCode = '1905';
    expect(validateDraft(d, 'tradeItem.patch')).toMatchObject([
      { code: 'FIELD_NOT_ACCEPTED', field: 'harmonizedCode' },
    ]);
  });

  it('uses only documented issue codes', () => {
    const d = draftOf(['96385074', null, null, 'x', null]);
    for (const i of validateDraft(d)) expect(Object.keys(ISSUE_CODES)).toContain(i.code);
  });
});

describe('duplicate keys', () => {
  it('reports every row involved, each naming the others', () => {
    const issues = duplicateIssues(
      [
        [2, 'A'],
        [3, 'B'],
        [4, 'A'],
        [5, null],
        [6, 'A'],
        [7, null],
        [8, 'C'],
      ],
      { column: 'EAN', field: 'gtin' },
    );
    expect([...issues.keys()].sort()).toEqual([2, 4, 6]);
    expect(issues.get(2)).toMatchObject({
      code: 'DUPLICATE_KEY',
      severity: 'error',
      column: 'EAN',
      field: 'gtin',
      value: 'A',
      message: expect.stringContaining('rows 4, 6'),
    });
    expect(issues.get(6)?.message).toContain('rows 2, 4');
  });

  it('streams: keys are added one at a time and memory holds one entry per distinct key', () => {
    const f = new SheetKeys();
    for (let r = 2; r < 10_002; r++) f.add(r, `K${r % 5000}`);
    f.finish();
    expect(f.duplicated).toBe(5000);
    const issues = new Map(
      Array.from({ length: 10_000 }, (_, i) => [i + 2, f.duplicateIssue(i + 2, `K${(i + 2) % 5000}`, {})] as const),
    );
    expect(issues.size).toBe(10_000);
    expect(issues.get(2)?.message).toContain('row 5002');
  });

  it('says nothing when every key is unique', () => {
    expect(
      duplicateIssues([
        [2, 'A'],
        [3, 'B'],
      ]).size,
    ).toBe(0);
  });
});
