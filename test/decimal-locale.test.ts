// Numbers as the sheet's locale writes them (issue 12): the decimal separator of a mapping follows its language unless
// the mapping or the column names one; the locale's thousands separators are read in text cells; ambiguous values are
// issues.
import { describe, expect, it } from 'vitest';
import { matchHeaders } from '../src/pipeline/map/headers.ts';
import { mapRow } from '../src/pipeline/map/map-row.ts';
import { parseMapping, type Mapping } from '../src/pipeline/map/mapping.ts';
import {
  groupSeparators,
  KNOWN_LOCALE_SEPARATORS,
  localeNumberSeparators,
  toDecimal,
  toInteger,
  type TransformContext,
  type TransformResult,
} from '../src/pipeline/map/transforms.ts';
import type { Cell } from '../src/pipeline/types.ts';

const value = (r: TransformResult) => ('value' in r ? r.value : `!${r.issue.code}`);
const message = (r: TransformResult) => ('issue' in r ? r.issue.message : '');

const NBSP = '\u00a0';
const NNBSP = '\u202f';

/** A one-column mapping with `head` as its top-level keys; the column of netContents[0].value gets `column` keys. */
const mappingOf = (head: string, column = ''): Mapping =>
  parseMapping(
    `target: tradeItem
${head}
columns:
  - { column: GTIN, field: gtin }
  - { column: Poids net, field: "netContents[0].value", type: decimal${column} }
`,
    'locale.yaml',
  );

/** The context mapRow gives the decimal column of `m`. */
const ctxOf = (m: Mapping): TransformContext => ({ decimalSeparator: m.columns[1]!.decimal, language: m.language });

describe('the decimal separator of a locale comes from the platform', () => {
  it.each([
    ['fr-FR', ','],
    ['de-DE', ','],
    ['es-ES', ','],
    ['it-IT', ','],
    ['nl-NL', ','],
    ['pt-PT', ','],
    ['fr', ','],
    ['fr_FR', ','],
    ['en-US', '.'],
    ['en-GB', '.'],
    ['de-CH', '.'],
    ['en', '.'],
  ])('%s writes decimals with "%s"', (language, sep) => {
    expect(localeNumberSeparators(language).decimal).toBe(sep);
  });

  it('agrees with Intl.NumberFormat(locale).formatToParts(1234.5)', () => {
    for (const language of ['fr-FR', 'de-DE', 'nl-NL', 'en-US', 'en-GB', 'de-CH', 'sv-SE', 'pt-BR']) {
      const parts = new Intl.NumberFormat(language).formatToParts(1234.5);
      expect(localeNumberSeparators(language)).toMatchObject({
        decimal: parts.find((p) => p.type === 'decimal')?.value,
        group: parts.find((p) => p.type === 'group')?.value,
      });
    }
  });

  it('holds for each tag it knows without asking Intl what Intl would give', () => {
    for (const [language, seps] of Object.entries(KNOWN_LOCALE_SEPARATORS)) {
      const parts = new Intl.NumberFormat(language, { numberingSystem: 'latn', useGrouping: 'always' }).formatToParts(
        1234.5,
      );
      expect([language, seps]).toEqual([
        language,
        `${parts.find((p) => p.type === 'decimal')?.value}${parts.find((p) => p.type === 'group')?.value}`,
      ]);
    }
  });

  it('gives "." for a language the platform does not know, never the host locale', () => {
    expect(localeNumberSeparators('xx').decimal).toBe('.');
    expect(localeNumberSeparators('qq-ZZ').decimal).toBe('.');
  });

  it('reads only the group separators that fit the decimal separator', () => {
    expect(groupSeparators(',', 'fr-FR')).toEqual([' ']);
    expect(groupSeparators(',', 'de-DE')).toEqual([' ']);
    expect(groupSeparators('.', 'en-US')).toEqual([' ', "'", '\u2019']);
    expect(groupSeparators('.', 'de-CH')).toEqual([' ', "'", '\u2019']);
  });
});

describe('a mapping takes its decimal separator from its language unless it names one', () => {
  it('fr-FR and de-DE without decimalSeparator read ","; en-US and no language read "."', () => {
    for (const [head, sep] of [
      ['language: fr-FR', ','],
      ['language: de-DE', ','],
      ['language: en-US', '.'],
      ['', '.'],
      ['language: de-CH', '.'],
    ] as const) {
      const m = mappingOf(head);
      expect([head, m.decimalSeparator, m.columns[1]!.decimal]).toEqual([head, sep, sep]);
    }
  });

  it('an explicit decimalSeparator, then a column decimal, override the language', () => {
    expect(mappingOf('language: fr-FR\ndecimalSeparator: "."').columns[1]!.decimal).toBe('.');
    expect(mappingOf('language: en-US\ndecimalSeparator: ","').columns[1]!.decimal).toBe(',');
    expect(mappingOf('language: de-DE', ', decimal: "."').columns[1]!.decimal).toBe('.');
    expect(mappingOf('language: en-US\ndecimalSeparator: "."', ', decimal: ","').columns[1]!.decimal).toBe(',');
    expect(mappingOf('language: de-DE', ', decimal: "."').decimalSeparator).toBe(',');
  });
});

describe('a fr-FR sheet (decimal separator from the language)', () => {
  const fr = ctxOf(mappingOf('language: fr-FR'));

  it.each([
    ['0,125', '0.125'],
    ['1 234,5', '1234.5'],
    [`1${NBSP}234,5`, '1234.5'],
    [`1${NNBSP}234,5`, '1234.5'],
    ['1.234,5', '1234.5'],
    ['1.234.567,8', '1234567.8'],
    ['1.234.567', '1234567'],
    [`12${NNBSP}345${NNBSP}678`, '12345678'],
    ['-1 234,50', '-1234.5'],
    ['  42 ', '42'],
    ['1234,5', '1234.5'],
  ])('reads %j as %s', (cell, out) => expect(value(toDecimal(cell, fr))).toBe(out));

  it('refuses "1.234" as ambiguous (1234 or a misplaced 1.234), naming both readings', () => {
    const r = toDecimal('1.234', fr);
    expect(value(r)).toBe('!DECIMAL_SEPARATOR');
    expect(message(r)).toBe(
      '"1.234" is ambiguous in a sheet whose decimal separator is ",": it reads as 1 234 with "." grouping thousands, or as 1,234 with "." as decimal separator; write 1234 (or 1 234) for the first, 1,234 for the second, or set decimal: "." on the column if the sheet really uses "." as decimal separator',
    );
    expect(value(toDecimal('-12.500', fr))).toBe('!DECIMAL_SEPARATOR');
    expect(value(toInteger('1.234', fr))).toBe('!DECIMAL_SEPARATOR');
  });

  it('keeps the existing codes and messages for what is still refused', () => {
    expect(toDecimal('0.5', fr)).toEqual({
      issue: {
        code: 'DECIMAL_SEPARATOR',
        severity: 'error',
        message:
          '"0.5" uses "." as decimal separator where the mapping expects "," (set decimal: "." on the column if the sheet really uses it)',
      },
    });
    expect(value(toDecimal('0.125', fr))).toBe('!DECIMAL_SEPARATOR'); // a group never starts with 0: a decimal point
    expect(value(toDecimal('1 234.5', fr))).toBe('!DECIMAL_SEPARATOR');
    expect(toDecimal('12 kg', fr)).toEqual({
      issue: { code: 'DECIMAL_INVALID', severity: 'error', message: '"12 kg" is not a number' },
    });
    expect(toInteger('1,5', fr)).toEqual({
      issue: { code: 'INTEGER_INVALID', severity: 'error', message: '"1,5" is not a whole number' },
    });
  });

  it('wants groups of three, of one kind, and no separator of a decimal-point locale', () => {
    for (const cell of ['12 34,5', '1 2345,5', '12.34,5', '1.2345,5', '1.234 567,8', "1'234,5", '0 123,5', '1,234,5']) {
      expect([cell, value(toDecimal(cell, fr))]).toEqual([cell, '!DECIMAL_INVALID']);
    }
  });

  it('reads XLSX numeric cells as numbers, with no separator applied', () => {
    expect(value(toDecimal(0.125, fr))).toBe('0.125');
    expect(value(toDecimal(1234.5, fr))).toBe('1234.5');
    expect(value(toInteger(1234, fr))).toBe('1234');
  });
});

describe('with an explicit override', () => {
  it('fr-FR with decimalSeparator "." reads decimal points and refuses commas', () => {
    const c = ctxOf(mappingOf('language: fr-FR\ndecimalSeparator: "."'));
    expect(value(toDecimal('0.125', c))).toBe('0.125');
    expect(value(toDecimal('1,234.5', c))).toBe('1234.5');
    expect(value(toDecimal(`1${NNBSP}234.5`, c))).toBe('1234.5');
    expect(value(toDecimal('0,125', c))).toBe('!DECIMAL_SEPARATOR');
    expect(value(toDecimal('1,234', c))).toBe('!DECIMAL_SEPARATOR');
  });

  it('de-DE with a column decimal "." reads that column with a point', () => {
    const c = ctxOf(mappingOf('language: de-DE', ', decimal: "."'));
    expect(value(toDecimal('2.5', c))).toBe('2.5');
    expect(value(toDecimal('2,5', c))).toBe('!DECIMAL_SEPARATOR');
  });
});

describe('a de-DE sheet', () => {
  const de = ctxOf(mappingOf('language: de-DE'));

  it.each([
    ['0,125', '0.125'],
    ['1.234,5', '1234.5'],
    ['1.234.567,89', '1234567.89'],
    ['1 234,5', '1234.5'],
    [`1${NBSP}234,5`, '1234.5'],
    ['12,00', '12'],
  ])('reads %j as %s', (cell, out) => expect(value(toDecimal(cell, de))).toBe(out));

  it('refuses 1.500 (1500 or 1.5) and a decimal point', () => {
    expect(value(toDecimal('1.500', de))).toBe('!DECIMAL_SEPARATOR');
    expect(value(toDecimal('2.5', de))).toBe('!DECIMAL_SEPARATOR');
  });
});

describe('decimal-point locales', () => {
  it("de-CH reads ' and ’ as thousands separators", () => {
    const ch = ctxOf(mappingOf('language: de-CH'));
    expect(value(toDecimal("1'234.5", ch))).toBe('1234.5');
    expect(value(toDecimal('1\u2019234\u2019567', ch))).toBe('1234567');
    expect(value(toDecimal("12'34.5", ch))).toBe('!DECIMAL_INVALID');
  });

  it('en-US reads commas and spaces as thousands separators and refuses 1,234 as ambiguous', () => {
    const us = ctxOf(mappingOf('language: en-US'));
    expect(value(toDecimal('1,234.5', us))).toBe('1234.5');
    expect(value(toDecimal('1,234,567', us))).toBe('1234567');
    expect(value(toDecimal(`1${NBSP}234.5`, us))).toBe('1234.5');
    const r = toDecimal('1,234', us);
    expect(value(r)).toBe('!DECIMAL_SEPARATOR');
    expect(message(r)).toMatch(
      /^"1,234" is ambiguous in a sheet whose decimal separator is "\.": it reads as 1 234 .* or as 1\.234 /,
    );
    expect(message(toDecimal('0,5', us))).toBe(
      '"0,5" uses "," as decimal separator where the mapping expects "." (set decimal: "," on the column if the sheet really uses it)',
    );
  });
});

describe('mapRow with language fr-FR and a decimal column that names no separator', () => {
  // A mapping like the example of docs/mapping.md: no decimalSeparator, no decimal on the column.
  const mapping = parseMapping(
    `target: manufacturedItem
language: fr-FR
columns:
  - { column: [EAN, GTIN, Code-barres], field: gtin }
  - { column: Désignation, field: tradeItemName, required: true }
  - { column: Poids net, field: "netContents[0].value", type: decimal }
  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit }
  - { column: Poids égoutté, field: drainedNetWeight.value }
`,
    'acme-foods.yaml',
  );
  const headers = ['EAN', 'Désignation', 'Poids net', 'Unité', 'Poids égoutté'];
  const index = matchHeaders(headers, mapping);
  const row = (cells: Cell[]) => mapRow({ row: 4, cells, issues: [] }, headers, mapping, index);

  it('reads French numbers in text cells, and XLSX numbers as they are', () => {
    const d = row(['3017620422003', 'Galettes', '0,125', 'kg', `1${NNBSP}234,5`]);
    expect(d.issues).toEqual([]);
    expect(d.fields.netContents).toEqual([{ value: '0.125', unitOfMeasure: 'KGM' }]);
    expect(d.fields.drainedNetWeight).toEqual({ value: 1234.5 });
    expect(row(['3017620422003', 'Galettes', 0.125, 'kg', 1234.5]).fields).toMatchObject({
      netContents: [{ value: '0.125' }],
      drainedNetWeight: { value: 1234.5 },
    });
    expect(row(['3017620422003', 'Galettes', '1.234,5', 'kg', `2${NBSP}500`]).fields).toMatchObject({
      netContents: [{ value: '1234.5' }],
      drainedNetWeight: { value: 2500 },
    });
  });

  it('reports an ambiguous or decimal-point value on its cell and leaves the field out', () => {
    const d = row(['3017620422003', 'Galettes', '1.234', 'kg', '0.5']);
    expect(d.issues.map((i) => [i.row, i.code, i.severity, i.column, i.field, i.value])).toEqual([
      [4, 'DECIMAL_SEPARATOR', 'error', 'Poids net', 'netContents[0].value', '1.234'],
      [4, 'DECIMAL_SEPARATOR', 'error', 'Poids égoutté', 'drainedNetWeight.value', '0.5'],
    ]);
    expect(d.issues[0]!.message).toMatch(/^"1\.234" is ambiguous/);
    expect(d.fields.netContents).toEqual([{ unitOfMeasure: 'KGM' }]);
    expect(d.fields.drainedNetWeight).toBeUndefined();
  });
});
