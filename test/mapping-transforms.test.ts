import { describe, expect, it } from 'vitest';
import { WEIGHT_UNITS } from '../src/api/units.ts';
import { matchHeaders } from '../src/pipeline/map/headers.ts';
import { dropRefusedFields, mapRow, rowKeyReader } from '../src/pipeline/map/map-row.ts';
import { MappingError, parseMapping, type Mapping } from '../src/pipeline/map/mapping.ts';
import { validateDraft } from '../src/pipeline/map/validate.ts';
import type { Cell, Draft } from '../src/pipeline/types.ts';

// The mapping language's transforms real sheets need: quantity, fallback, addressed headers, onInvalid, country names.

const kg = WEIGHT_UNITS.find((u) => u.symbol === 'kg')!.id;
const g = WEIGHT_UNITS.find((u) => u.symbol === 'g')!.id;
const SUPPLIER = 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f';

function problemsOf(text: string): { line: number | null; path: string; message: string }[] {
  try {
    parseMapping(text, 'mappings/x.yaml');
  } catch (e) {
    expect(e).toBeInstanceOf(MappingError);
    return [...(e as MappingError).problems];
  }
  throw new Error('expected the mapping to be rejected');
}

const trade = (cols: string, top = '') =>
  `target: tradeItem\nlanguage: fr-FR\n${top}columns:\n  - { column: EAN, field: gtin }\n${cols}`;
const manufactured = (cols: string, top = '') =>
  `target: manufacturedItem\nlanguage: fr-FR\n${top}columns:\n  - { column: EAN, field: gtin }\n${cols}`;

/** Maps rows of a sheet (headers, then rows of cells) with a mapping, matching headers as a run does. */
function mapper(mapping: Mapping, headers: string[], groupRow?: string[]): (cells: Cell[]) => Draft {
  const index = matchHeaders(headers, mapping, groupRow);
  return (cells) => mapRow({ row: 5, cells, issues: [] }, headers, mapping, index);
}

describe('type quantity in a mapping', () => {
  it('feeds the value and the unit of netContents[i], drainedNetWeight and variableWeight', () => {
    const m = parseMapping(
      manufactured(`  - { column: Contenance, field: "netContents[0]", type: quantity }
  - { column: Net 2, field: "netContents[1].value", type: quantity }
  - { column: Égoutté, field: drainedNetWeight, type: quantity }
  - { column: Mini, field: variableWeight.minimumValue, type: quantity }
  - { column: Maxi, field: variableWeight.maximumValue, type: quantity }
defaults: { tradeItemName: Biscuits, supplierCompanyId: ${SUPPLIER} }
`),
      'q.yaml',
    );
    expect(m.columns[1]!.field).toMatchObject({
      path: 'netContents[0]',
      segments: ['netContents', 0, 'value'],
      leaf: 'string',
      unit: { path: 'netContents[0].unitOfMeasure', leaf: 'string' },
    });
    expect(m.columns[3]!.field).toMatchObject({
      segments: ['drainedNetWeight', 'value'],
      leaf: 'number',
      unit: { path: 'drainedNetWeight.unitOfMeasure', leaf: 'weightUnit' },
    });
    const row = mapper(m, ['EAN', 'Contenance', 'Net 2', 'Égoutté', 'Mini', 'Maxi']);
    const d = row(['3017620422003', '75 cl', '1,5 L', '0,4 kg', '1 kg', '1,2 kg']);
    expect(d.issues).toEqual([]);
    expect(d.fields).toEqual({
      gtin: '03017620422003',
      tradeItemName: 'Biscuits',
      supplierCompanyId: SUPPLIER,
      netContents: [
        { value: '75', unitOfMeasure: 'CLT' },
        { value: '1.5', unitOfMeasure: 'LTR' },
      ],
      drainedNetWeight: { value: 0.4, unitOfMeasure: kg },
      variableWeight: { minimumValue: 1, maximumValue: 1.2, unitOfMeasure: kg },
    });
    // Validation finds the unit of a quantity column (it names the column).
    expect(validateDraft(d)).toEqual([]);
  });

  it('reports each unreadable quantity on its row and column, and two units for one object', () => {
    const m = parseMapping(
      manufactured(`  - { column: Contenance, field: "netContents[0]", type: quantity }
  - { column: Égoutté, field: drainedNetWeight, type: quantity }
  - { column: Mini, field: variableWeight.minimumValue, type: quantity }
  - { column: Maxi, field: variableWeight.maximumValue, type: quantity }
`),
      'q.yaml',
    );
    const row = mapper(m, ['EAN', 'Contenance', 'Égoutté', 'Mini', 'Maxi']);
    const d = row(['3017620422003', '6 x 33 cl', '75 cl', '1 kg', '1200 g']);
    expect(d.issues.map((i) => [i.code, i.column, i.field, i.value])).toEqual([
      ['QUANTITY_INVALID', 'Contenance', 'netContents[0]', '6 x 33 cl'],
      ['UNIT_WRONG_FAMILY', 'Égoutté', 'drainedNetWeight', '75 cl'],
      ['QUANTITY_UNIT_MISMATCH', 'Maxi', 'variableWeight.maximumValue', '1200 g'],
    ]);
    expect(d.fields).toEqual({ gtin: '03017620422003', variableWeight: { minimumValue: 1, unitOfMeasure: kg } });
    expect(row(['3017620422003', '500', 'kg', null, null]).issues.map((i) => i.code)).toEqual([
      'QUANTITY_NO_UNIT',
      'QUANTITY_NO_VALUE',
    ]);
    expect(row(['3017620422003', null, '400 g', '400 g', '0,5 kg']).fields.drainedNetWeight).toEqual({
      value: 400,
      unitOfMeasure: g,
    });
  });

  it('refuses at load a quantity on a field without unit, and a unit fed twice', () => {
    expect(problemsOf(trade('  - { column: Nom, field: tradeItemName, type: quantity }\n'))).toMatchObject([
      {
        line: 5,
        path: 'columns[1].field',
        message: expect.stringContaining('type quantity feeds an object with a number and a unit'),
      },
    ]);
    expect(problemsOf(trade('  - { column: C, field: "comments[0]", type: quantity }\n'))[0]?.message).toContain(
      'comments has no unit',
    );
    expect(
      problemsOf(
        trade(
          '  - { column: P, field: "netContents[0]", type: quantity }\n  - { column: U, field: "netContents[0].unitOfMeasure", type: unit }\n',
        ),
      ),
    ).toMatchObject([
      { line: 6, path: 'columns[2].field', message: 'netContents[0].unitOfMeasure is already fed by columns[1]' },
    ]);
    expect(
      problemsOf(
        trade(
          '  - { column: P, field: "netContents[0].value" }\n  - { column: Q, field: "netContents[0]", type: quantity }\n',
        ),
      )[0],
    ).toMatchObject({ line: 6, message: 'netContents[0].value is already fed by columns[1]' });
    // The object without type says that type quantity reads it.
    expect(problemsOf(trade('  - { column: P, field: "netContents[0]" }\n'))[0]?.message).toContain(
      'type: quantity reads a cell such as "500 g"',
    );
  });
});

describe('fallback columns', () => {
  const m = parseMapping(
    trade(`  - { column: Nom FR, fallback: [Name EN, Naam], field: tradeItemName, required: true }
  - { column: Origine, fallback: Origin, field: "comments[0].value", empty: clear }
`),
    'f.yaml',
  );
  const headers = ['EAN', 'Nom FR', 'Name EN', 'Naam', 'Origine', 'Origin'];
  const row = mapper(m, headers);

  it('uses, per row, the first non-empty cell of the column and its fallbacks, naming the column read', () => {
    expect(row(['3017620422003', 'Biscuits', 'Cookies', 'Koekjes', null, null]).fields.tradeItemName).toBe('Biscuits');
    const en = row(['3017620422003', ' ', 'Cookies', 'Koekjes', null, null]);
    expect(en.fields.tradeItemName).toBe('Cookies');
    expect(en.origins?.tradeItemName).toEqual({ column: 'Name EN', value: 'Cookies' });
    expect(row(['3017620422003', null, null, 'Koekjes', null, 'Italy']).fields).toEqual({
      gtin: '03017620422003',
      tradeItemName: 'Koekjes',
      comments: [{ value: 'Italy' }],
    });
  });

  it('counts a column empty only when every one of its cells is, and keeps the meaning of column: [A, B]', () => {
    const d = row(['3017620422003', null, null, null, null, null]);
    expect(d.issues).toMatchObject([
      {
        code: 'REQUIRED_EMPTY',
        column: 'Nom FR',
        message: 'Nom FR is required and empty (and so are its fallbacks Name EN, Naam)',
      },
    ]);
    expect(d.clear).toEqual(['comments']);
    // column: [A, B] still picks one header for the whole sheet (the first present), even where its cell is empty.
    const alt = parseMapping(trade('  - { column: [Nom FR, Name EN], field: tradeItemName }\n'), 'a.yaml');
    expect(
      mapper(alt, headers)(['3017620422003', null, 'Cookies', null, null, null]).fields.tradeItemName,
    ).toBeUndefined();
  });

  it('names the fallback that was read in its issues, and reads a key from a fallback in the first pass too', () => {
    const km = parseMapping(
      `target: tradeItem\ncolumns:\n  - { column: GTIN, fallback: EAN, field: gtin }\n  - { column: Date, field: seasonalAvailabilityStartDate, type: date, fallback: Datum }\n`,
      'k.yaml',
    );
    const h = ['GTIN', 'EAN', 'Date', 'Datum'];
    const index = matchHeaders(h, km);
    const d = mapRow({ row: 3, cells: [null, '3017620422003', null, '31/02/2025'], issues: [] }, h, km, index);
    expect(d.key).toBe('03017620422003');
    expect(d.issues).toMatchObject([{ code: 'DATE_INVALID', column: 'Datum', value: '31/02/2025' }]);
    const keyOf = rowKeyReader(h, km, index);
    expect(
      [
        [null, '3017620422003'],
        ['3017620422010', '3017620422003'],
        [null, null],
      ].map((cells) => keyOf({ row: 2, cells, issues: [] })),
    ).toEqual(['03017620422003', '03017620422010', null]);
  });

  it('checks fallback entries like columns: unknown keys and missing headers are named', () => {
    expect(
      problemsOf(trade('  - { column: Nom, fallback: [{ header: Name, grup: EN }], field: tradeItemName }\n'))[0],
    ).toMatchObject({
      line: 5,
      path: 'columns[1].fallback[0].grup',
      message: expect.stringContaining('{header: <name>, group: <title above it>, occurrence: <n>}'),
    });
    expect(() => matchHeaders(['EAN', 'Nom FR'], m)).toThrow(
      expect.objectContaining({ code: 'PS_ERR_FILE_HEADER', message: expect.stringContaining('"Name EN"') }),
    );
  });
});

describe('columns addressed by group, occurrence or position', () => {
  const m = parseMapping(
    trade(
      `  - { column: { header: Valeur, group: Poids net }, field: "netContents[0].value", type: decimal }
  - { column: { header: Unité, group: Poids net }, field: "netContents[0].unitOfMeasure", type: unit }
  - { column: { header: Valeur, occurrence: 2 }, field: drainedNetWeight.value }
  - { column: { letter: F }, field: drainedNetWeight.unitOfMeasure }
`,
      'headerRow: 2\n',
    ),
    'g.yaml',
  );

  it('reads them into their fields and names them in issues so a person finds the cell', () => {
    expect(m.columns[1]!.sources).toEqual([{ names: ['Valeur'], group: 'Poids net' }]);
    expect(m.columns[4]!.sources).toEqual([{ position: 6 }]);
    const headers = ['EAN', 'Valeur', 'Unité', 'Nom', 'Valeur', 'Unité'];
    const row = mapper(m, headers, ['', 'Poids net', '', '', 'Poids égoutté', '']);
    expect(row(['3017620422003', '0,5', 'kg', 'x', '400', 'g']).fields).toEqual({
      gtin: '03017620422003',
      netContents: [{ value: '0.5', unitOfMeasure: 'KGM' }],
      drainedNetWeight: { value: 400, unitOfMeasure: g },
    });
    expect(row(['3017620422003', 'abc', 'kg', 'x', '4.5', 'cl']).issues.map((i) => [i.code, i.column])).toEqual([
      ['DECIMAL_INVALID', 'Valeur (Poids net, column B)'],
      ['DECIMAL_SEPARATOR', 'Valeur #2 (column E)'],
      ['UNIT_WRONG_FAMILY', 'Unité (column F)'],
    ]);
  });

  it('refuses at load a group with the header on row 1, and malformed addresses, naming the line', () => {
    expect(
      problemsOf(trade('  - { column: { header: Valeur, group: Poids net }, field: tradeItemName }\n')),
    ).toMatchObject([{ line: 5, path: 'columns[1].column', message: expect.stringContaining('headerRow 2 or more') }]);
    expect(
      problemsOf(trade('  - { column: { header: Valeur, occurence: 2 }, field: tradeItemName }\n'))[0],
    ).toMatchObject({
      line: 5,
      path: 'columns[1].column.occurence',
      message: expect.stringContaining('{header: <name>, group: <title above it>, occurrence: <n>}'),
    });
    expect(
      problemsOf(trade('  - { column: { header: Valeur, occurrence: 0 }, field: tradeItemName }\n'))[0]?.message,
    ).toContain('occurrence must be a whole number from 1');
    expect(problemsOf(trade('  - { column: { position: 0 }, field: tradeItemName }\n'))[0]?.message).toContain(
      'position must be a column number',
    );
    expect(problemsOf(trade('  - { column: { letter: "G7" }, field: tradeItemName }\n'))[0]?.message).toContain(
      'letter must be a column letter',
    );
  });
});

describe('onInvalid: drop-field', () => {
  const m = parseMapping(
    trade(`  - { column: Nom, field: tradeItemName }
  - { column: Début, field: seasonalAvailabilityStartDate, type: date, format: dd/mm/yyyy, onInvalid: drop-field }
  - { column: Pays, field: "targetMarketsList[0].countryCodes", split: ";", type: country, onInvalid: drop-field }
  - { column: Catégorie, field: "productCategories[0].categoryId", type: string, onInvalid: drop-field }
  - { column: Contenance, field: "netContents[0]", type: quantity, onInvalid: drop-field }
  - { column: Fin, field: seasonalAvailabilityEndDate, type: date, format: dd/mm/yyyy }
defaults: { supplierCompanyId: ${SUPPLIER} }
`).replace('target: tradeItem', 'target: manufacturedItem'),
    'd.yaml',
  );
  const headers = ['EAN', 'Nom', 'Début', 'Pays', 'Catégorie', 'Contenance', 'Fin'];
  const row = mapper(m, headers);

  it('leaves a cell that cannot be read out with a FIELD_DROPPED warning that says the original problem, and the row goes on', () => {
    const d = row(['3017620422003', 'Biscuits', '31/02/2025', 'FR; Atlantide', null, '6 x 33 cl', '30/04/2025']);
    expect(d.issues.map((i) => [i.code, i.severity, i.column, i.field, i.value])).toEqual([
      ['FIELD_DROPPED', 'warning', 'Début', 'seasonalAvailabilityStartDate', '31/02/2025'],
      ['FIELD_DROPPED', 'warning', 'Pays', 'targetMarketsList[0].countryCodes', 'Atlantide'],
      ['FIELD_DROPPED', 'warning', 'Contenance', 'netContents[0]', '6 x 33 cl'],
    ]);
    expect(d.issues[0]!.message).toMatch(
      /^DATE_INVALID: "31\/02\/2025" is not a calendar date.*seasonalAvailabilityStartDate is left out \(onInvalid: drop-field\)$/,
    );
    // The list goes whole; the other fields stay.
    expect(d.fields).toEqual({
      gtin: '03017620422003',
      tradeItemName: 'Biscuits',
      seasonalAvailabilityEndDate: '2025-04-30',
      supplierCompanyId: SUPPLIER,
    });
    // A reject-row column still rejects.
    expect(row(['3017620422003', 'Biscuits', null, null, null, null, '31/04/2025']).issues).toMatchObject([
      { code: 'DATE_INVALID', severity: 'error' },
    ]);
  });

  it('drops a value the API rules refuse for the field, and only on drop-field columns', () => {
    const d = row(['3017620422003', 'Biscuits', null, null, 'Gâteaux', '75 cl', null]);
    const issues = validateDraft(d);
    expect(issues).toMatchObject([
      { code: 'FIELD_FORMAT', field: 'productCategories[0].categoryId', column: 'Catégorie' },
    ]);
    const after = dropRefusedFields(d, issues, m);
    expect(after).toMatchObject([
      {
        code: 'FIELD_DROPPED',
        severity: 'warning',
        column: 'Catégorie',
        value: 'Gâteaux',
        message: expect.stringMatching(/^FIELD_FORMAT: productCategories\[0\]\.categoryId: .*left out/),
      },
    ]);
    expect(d.fields).toEqual({
      gtin: '03017620422003',
      tradeItemName: 'Biscuits',
      netContents: [{ value: '75', unitOfMeasure: 'CLT' }],
      supplierCompanyId: SUPPLIER,
    });
    expect(validateDraft(d)).toEqual([]);
    // Issues of other columns pass as they are.
    const other = {
      row: 5,
      column: 'Nom',
      field: 'tradeItemName',
      value: '',
      code: 'FIELD_EMPTY',
      severity: 'error' as const,
      message: 'x',
    };
    expect(dropRefusedFields(d, [other], m)).toEqual([other]);
  });

  it('is refused at load on the key, a required column, a field a create needs and a lookup column', () => {
    const p = problemsOf(
      manufactured(`  - { column: Nom, field: tradeItemName, onInvalid: drop-field }
  - { column: Remarque, field: "comments[0].value", required: true, onInvalid: drop-field }
  - { column: Fournisseur, field: supplierCompanyId, onInvalid: drop-field }
  - { column: Statut, field: tradeItemStatusId, lookup: { list: trade-item-status }, onInvalid: drop-field }
  - { column: Note, field: "comments[1].value", onInvalid: drop }
`).replace('{ column: EAN, field: gtin }', '{ column: EAN, field: gtin, onInvalid: drop-field }'),
    );
    expect(p.map((x) => [x.line, x.path])).toEqual([
      [4, 'columns[0].onInvalid'],
      [5, 'columns[1].onInvalid'],
      [6, 'columns[2].onInvalid'],
      [7, 'columns[3].onInvalid'],
      [8, 'columns[4].onInvalid'],
      [9, 'columns[5].onInvalid'],
    ]);
    expect(p.map((x) => x.message)).toEqual([
      expect.stringContaining('key column cannot drop'),
      expect.stringContaining('required by the API'),
      expect.stringContaining('required column cannot drop'),
      expect.stringContaining('supplierCompanyId is required by the API'),
      expect.stringContaining('a label not found stays an error'),
      'onInvalid must be reject-row or drop-field',
    ]);
  });
});
