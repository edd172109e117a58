import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { WEIGHT_UNITS } from '../src/api/units.ts';
import { gtinCheckDigit, parseGtin } from '../src/pipeline/gtin.ts';
import {
  applyValueMap,
  cellText,
  columnTransform,
  excelSerialToIso,
  isEmptyCell,
  splitCell,
  toBoolean,
  toCountry,
  toDate,
  toDecimal,
  toGtin,
  toInteger,
  toQuantity,
  toUnit,
  toUuid,
  toWeightQuantity,
  toWeightUnit,
  TRANSFORMS,
  type TransformContext,
  type TransformResult,
} from '../src/pipeline/map/transforms.ts';

const comma: TransformContext = { decimalSeparator: ',', language: 'fr-FR' };
const dot: TransformContext = { decimalSeparator: '.', language: 'en-US' };
const value = (r: TransformResult) => ('value' in r ? r.value : `!${r.issue.code}`);

describe('cells', () => {
  it('treats null, empty and blank (non-breaking spaces too) cells as empty', () => {
    expect([null, '', '  ', '\u00a0', 'x', 0, false].map(isEmptyCell)).toEqual([
      true,
      true,
      true,
      true,
      false,
      false,
      false,
    ]);
  });
  it('writes XLSX numbers as plain digits, never in exponent form', () => {
    expect(cellText(3017620422003)).toBe('3017620422003');
    expect(cellText(1e21)).toBe('1000000000000000000000');
    expect(cellText(new Date(Date.UTC(2025, 3, 3)))).toBe('2025-04-03');
  });
  it('splits lists, trims parts and drops empty ones', () => {
    expect(splitCell(' France ; Italie;; ES ;', ';')).toEqual(['France', 'Italie', 'ES']);
    expect(splitCell('', ';')).toEqual([]);
    expect(splitCell(42, ';')).toEqual([42]);
  });
  it('maps values without regard to case or spaces and leaves others alone', () => {
    const map = new Map([
      ['actif', 'Active'],
      ['non actif', 'Inactive'],
    ]);
    expect(applyValueMap('  ACTIF ', map)).toBe('Active');
    expect(applyValueMap('Non\u00a0  actif', map)).toBe('Inactive');
    expect(applyValueMap('Arrêté', map)).toBe('Arrêté');
  });
});

describe('decimal', () => {
  it.each([
    ['1 234,56', '1234.56'],
    ['1\u202f234,5', '1234.5'],
    ['0,5', '0.5'],
    ['12', '12'],
    ['-3,20', '-3.2'],
    ['1.234.567,8', '1234567.8'],
    ['1.234,5', '1234.5'],
    ['007,50', '7.5'],
    ['-0', '0'],
  ])('reads %s with a decimal comma as %s', (input, out) => expect(value(toDecimal(input, comma))).toBe(out));

  it.each([
    ['1,234.5', '1234.5'],
    ['1 234.5', '1234.5'],
    ['0.25', '0.25'],
    ['1,234,567', '1234567'],
  ])('reads %s with a decimal point as %s', (input, out) => expect(value(toDecimal(input, dot))).toBe(out));

  it('reports a decimal comma where a point is expected, and the reverse', () => {
    expect(value(toDecimal('0,5', dot))).toBe('!DECIMAL_SEPARATOR');
    expect(value(toDecimal('1,234', dot))).toBe('!DECIMAL_SEPARATOR');
    expect(value(toDecimal('0.5', comma))).toBe('!DECIMAL_SEPARATOR');
    expect(value(toDecimal('1.500', comma))).toBe('!DECIMAL_SEPARATOR'); // 1.5 or 1500: never guessed
  });
  it('passes XLSX numbers whatever the separator', () => {
    expect(value(toDecimal(0.5, comma))).toBe('0.5');
    expect(value(toDecimal(1234, dot))).toBe('1234');
  });
  it('rejects text that is not a number', () => {
    expect(value(toDecimal('12 kg', comma))).toBe('!DECIMAL_INVALID');
    expect(value(toDecimal('abc', dot))).toBe('!DECIMAL_INVALID');
    expect(value(toDecimal(true, dot))).toBe('!DECIMAL_INVALID');
  });
  it('reads integers and rejects fractions', () => {
    expect(value(toInteger('1 000', comma))).toBe('1000');
    expect(value(toInteger(12, comma))).toBe('12');
    expect(value(toInteger('1,5', comma))).toBe('!INTEGER_INVALID');
  });
});

describe('date', () => {
  it('reads ISO dates and datetimes', () => {
    expect(value(toDate('2025-04-03', dot))).toBe('2025-04-03');
    expect(value(toDate('2025-04-03T10:20:30Z', dot))).toBe('2025-04-03');
    expect(value(toDate('2025/4/3', dot))).toBe('2025-04-03');
    expect(value(toDate('2025-02-30', dot))).toBe('!DATE_INVALID');
  });
  it('reads XLSX date cells and 1900-system serial numbers', () => {
    expect(value(toDate(new Date(Date.UTC(2024, 1, 29)), dot))).toBe('2024-02-29');
    expect(value(toDate(45750, dot))).toBe('2025-04-03');
    expect(value(toDate(45750.75, dot))).toBe('2025-04-03');
    expect(excelSerialToIso(1)).toBe('1900-01-01');
    expect(excelSerialToIso(59)).toBe('1900-02-28');
    expect(excelSerialToIso(60)).toBeUndefined(); // 1900-02-29 never existed
    expect(excelSerialToIso(61)).toBe('1900-03-01');
    expect(value(toDate(0, dot))).toBe('!DATE_INVALID');
  });
  it('reports 03/04/2025 as ambiguous without a format, reads it with one', () => {
    const r = toDate('03/04/2025', dot);
    expect(value(r)).toBe('!DATE_AMBIGUOUS');
    expect('issue' in r && r.issue.message).toContain('2025-04-03');
    expect(value(toDate('03/04/2025', { ...dot, dateFormat: 'dd/mm/yyyy' }))).toBe('2025-04-03');
    expect(value(toDate('03/04/2025', { ...dot, dateFormat: 'mm/dd/yyyy' }))).toBe('2025-03-04');
    expect(value(toDate('03.04.25', { ...dot, dateFormat: 'dd.mm.yy' }))).toBe('2025-04-03');
    expect(value(toDate('03/04/2025 00:00', { ...dot, dateFormat: 'dd/mm/yyyy' }))).toBe('2025-04-03');
    expect(value(toDate('2025-04-03', { ...dot, dateFormat: 'dd/mm/yyyy' }))).toBe('2025-04-03');
    expect(value(toDate('3 avril', { ...dot, dateFormat: 'dd/mm/yyyy' }))).toBe('!DATE_INVALID');
  });
  it('reads a day/month order that has only one valid reading, and same-day-and-month dates', () => {
    expect(value(toDate('25/04/2025', dot))).toBe('2025-04-25');
    expect(value(toDate('04/25/2025', dot))).toBe('2025-04-25');
    expect(value(toDate('05/05/2025', dot))).toBe('2025-05-05');
    expect(value(toDate('31/31/2025', dot))).toBe('!DATE_INVALID');
  });
});

describe('boolean, uuid, country', () => {
  it('reads yes/no words in several languages as "true"/"false" strings', () => {
    expect(['Oui', 'yes', 'X', '1', 'VRAI', true, 1].map((c) => value(toBoolean(c, dot)))).toEqual(
      Array(7).fill('true'),
    );
    expect(['Non', 'no', '0', 'faux', false, 0].map((c) => value(toBoolean(c, dot)))).toEqual(Array(6).fill('false'));
    expect(value(toBoolean('peut-être', dot))).toBe('!BOOLEAN_INVALID');
  });
  it('lower-cases uuids and rejects what is not one', () => {
    expect(value(toUuid('{C3D4E5F6-A7B8-4C9D-8E0F-1A2B3C4D5E6F}', dot))).toBe('c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f');
    expect(value(toUuid('c3d4e5f6-a7b8', dot))).toBe('!UUID_INVALID');
  });
  it('reads alpha-2, alpha-3 and names in the mapping language, without case or accents', () => {
    const r = (c: string) => value(toCountry(c, comma));
    expect(
      [
        'France',
        'Italie',
        'Espagne',
        'ES',
        'DEU',
        'allemagne',
        'ÉTATS-UNIS',
        'Etats-Unis',
        'Royaume-Uni',
        'Germany',
      ].map(r),
    ).toEqual(['FR', 'IT', 'ES', 'ES', 'DE', 'DE', 'US', 'US', 'GB', 'DE']);
    expect(value(toCountry('Deutschland', { ...dot, language: 'de-DE' }))).toBe('DE');
    expect(r('Atlantide')).toBe('!COUNTRY_UNKNOWN');
    expect(r('XX')).toBe('!COUNTRY_UNKNOWN');
  });
});

describe('units', () => {
  it('canonicalises unit words and symbols', () => {
    expect(['g', 'gr', 'grammes', 'Kg', 'KGM', 'LITRE', 'cl', 'ml'].map((c) => value(toUnit(c, dot)))).toEqual([
      'GRM',
      'GRM',
      'GRM',
      'KGM',
      'KGM',
      'LTR',
      'CLT',
      'MLT',
    ]);
  });
  it('reports a quantity in a unit column and unknown units', () => {
    expect(value(toUnit('0,5 kg', comma))).toBe('!UNIT_WITH_VALUE');
    expect(value(toUnit('boîte', comma))).toBe('!UNIT_UNKNOWN');
    expect(value(toUnit(12, comma))).toBe('!UNIT_UNKNOWN');
  });
  it('maps weight units to their uuids and never crosses families', () => {
    const kg = WEIGHT_UNITS.find((u) => u.symbol === 'kg')!.id;
    expect(value(toWeightUnit('Kilogrammes', dot))).toBe(kg);
    expect(value(toWeightUnit(kg.toUpperCase(), dot))).toBe(kg);
    expect(value(toWeightUnit('cl', dot))).toBe('!UNIT_WRONG_FAMILY');
    expect(value(toWeightUnit('pièces', dot))).toBe('!UNIT_WRONG_FAMILY');
    expect(value(toWeightUnit('mm', dot))).toBe('!UNIT_WRONG_FAMILY');
    expect(value(toWeightUnit('stone', dot))).toBe('!UNIT_UNKNOWN');
  });
});

describe('country names in every language of the country data', () => {
  const lang = (language: string): TransformContext => ({ ...dot, language });
  it("reads names in languages other than the mapping's and English (Dutch, Polish, Russian, Japanese, Finnish)", () => {
    expect(
      ['Duitsland', 'Niemcy', 'Германия', 'ドイツ', 'Espanja', 'Nederland', 'Włochy'].map((c) =>
        value(toCountry(c, comma)),
      ),
    ).toEqual(['DE', 'DE', 'DE', 'DE', 'ES', 'NL', 'IT']);
    // Accents are optional in Latin script, as in the mapping's own language (Czech Německo).
    expect(value(toCountry('nemecko', comma))).toBe('DE');
    expect(value(toCountry('Atlantide', comma))).toBe('!COUNTRY_UNKNOWN');
  });
  it("refuses a name that means different countries in the languages that know it, unless the mapping's language decides", () => {
    const r = toCountry('Kongo', comma);
    expect(value(r)).toBe('!COUNTRY_AMBIGUOUS');
    expect('issue' in r && r.issue.message).toMatch(/CG in .*pl.*; CD in de/);
    expect(value(toCountry('Kongo', lang('pl-PL')))).toBe('CG');
    expect(value(toCountry('Kongo', lang('de-DE')))).toBe('CD');
    // English itself gives "Congo" to both Congos; French has no plain "Congo", so English decides there too.
    expect(value(toCountry('Congo', dot))).toBe('!COUNTRY_AMBIGUOUS');
    expect(value(toCountry('Congo', comma))).toBe('!COUNTRY_AMBIGUOUS');
    expect(value(toCountry('Republic of the Congo', dot))).toBe('CG');
  });
});

describe('quantity', () => {
  const kg = WEIGHT_UNITS.find((u) => u.symbol === 'kg')!.id;
  const g = WEIGHT_UNITS.find((u) => u.symbol === 'g')!.id;
  const q = (c: string | number, ctx: TransformContext) => {
    const r = toQuantity(c, ctx);
    return 'value' in r ? `${r.value} ${r.unit}` : `!${r.issue.code}`;
  };
  it('splits a number and its unit, with or without space, into the value and the UN/ECE code', () => {
    expect(
      ['500 g', '0,5 kg', '75 cl', '1 234,5 g', '500g', '2 m3', '12 pièces', '500 g.', '0,75\u00a0L'].map((c) =>
        q(c, comma),
      ),
    ).toEqual(['500 GRM', '0.5 KGM', '75 CLT', '1234.5 GRM', '500 GRM', '2 MTQ', '12 H87', '500 GRM', '0.75 LTR']);
    expect(['1.5L', '1,234.5 g', '33 cl'].map((c) => q(c, dot))).toEqual(['1.5 LTR', '1234.5 GRM', '33 CLT']);
  });
  it("reads the number exactly as decimal does, with the column's decimal separator", () => {
    expect(q('1.5L', comma)).toBe('!DECIMAL_SEPARATOR');
    expect(q('1.500 g', comma)).toBe('!DECIMAL_SEPARATOR');
    expect(q('0,5 kg', dot)).toBe('!DECIMAL_SEPARATOR');
    const r = toQuantity('1.5L', comma);
    expect('issue' in r && r.issue.message).toContain('(in "1.5L")');
  });
  it('refuses a number without unit, a unit without number, unknown units and packs of several quantities', () => {
    expect(q('500', comma)).toBe('!QUANTITY_NO_UNIT');
    expect(q('1 234,5', comma)).toBe('!QUANTITY_NO_UNIT');
    expect(q(500, comma)).toBe('!QUANTITY_NO_UNIT');
    expect(q('kg', comma)).toBe('!QUANTITY_NO_VALUE');
    expect(q('500 zz', comma)).toBe('!UNIT_UNKNOWN');
    expect(['6 x 33 cl', '33cl x 6', '6×33 cl', '500 g / 1 kg'].map((c) => q(c, comma))).toEqual(
      Array(4).fill('!QUANTITY_INVALID'),
    );
    expect(['environ 500 g', 'kg 500', 'n/a'].map((c) => q(c, comma))).toEqual(Array(3).fill('!QUANTITY_INVALID'));
  });
  it('gives a weight field the weight-unit uuid and refuses other families, never converting', () => {
    const w = (c: string) => {
      const r = toWeightQuantity(c, comma);
      return 'value' in r ? `${r.value} ${r.unit}` : `!${r.issue.code}`;
    };
    expect(w('0,4 kg')).toBe(`0.4 ${kg}`);
    expect(w('400 grammes')).toBe(`400 ${g}`);
    expect(w('75 cl')).toBe('!UNIT_WRONG_FAMILY');
    expect(w('12 pièces')).toBe('!UNIT_WRONG_FAMILY');
    expect(w('400')).toBe('!QUANTITY_NO_UNIT');
  });
});

describe('gtin transform', () => {
  it('normalises to 14 digits and carries the leading-zero warning', () => {
    expect(toGtin('3017620422003', dot)).toEqual({ value: '03017620422003' });
    expect(toGtin(36000291452, dot)).toMatchObject({
      value: '00036000291452',
      warning: { code: 'GTIN_LEADING_ZEROS_RESTORED', severity: 'warning' },
    });
    expect(value(toGtin('5,58199E+12', dot))).toBe('!GTIN_SCIENTIFIC_NOTATION');
  });
});

describe('identifier', () => {
  it('keeps every digit and refuses what Excel turned into scientific notation', async () => {
    const { toIdentifier } = await import('../src/pipeline/map/transforms.ts');
    expect(toIdentifier('0012345')).toEqual({ value: '0012345' });
    expect(toIdentifier(1767012345678901)).toEqual({ value: '1767012345678901' });
    expect(toIdentifier('1,76701E+15')).toMatchObject({
      issue: { code: 'IDENTIFIER_SCIENTIFIC_NOTATION', severity: 'error' },
    });
    expect(toIdentifier(1.5)).toMatchObject({ issue: { code: 'IDENTIFIER_NOT_EXACT' } });
  });
});

// The hot path's shortcuts (first and last characters looked at before trim(), calendar arithmetic, one-pass GTINs,
// a split without intermediate lists, kept results) give exactly what the plain definitions give.
describe('shortcuts of the row hot path', () => {
  const edges = [
    '',
    ' ',
    '\t',
    '\n',
    '\u00a0',
    '\u2007',
    '\u202f',
    '\u3000',
    '\u2028',
    '\ufeff',
    'x',
    'é',
    '!',
    '~',
    '\u007f',
    '\u0000',
  ];
  const texts = fc
    .array(fc.constantFrom(...edges, 'ab', ' a b ', ';', 'x;y', ' ; '), { maxLength: 6 })
    .map((parts) => parts.join(''));

  it('isEmptyCell and cellText agree with trim() whatever characters start and end the cell', () => {
    fc.assert(
      fc.property(texts, (t) => {
        expect(isEmptyCell(t)).toBe(t.trim() === '');
        expect(cellText(t)).toBe(t.trim());
      }),
      { numRuns: 2000 },
    );
  });

  it('splitCell gives what split, trim and dropping empty parts give, for one- and several-character separators', () => {
    fc.assert(
      fc.property(texts, fc.constantFrom(';', ',', '|', ' ; ', '\u00a0', 'ab'), (t, sep) => {
        expect(splitCell(t, sep)).toEqual(
          t
            .split(sep)
            .map((p) => p.trim())
            .filter((p) => p !== ''),
        );
      }),
      { numRuns: 2000 },
    );
  });

  it('checks month lengths as the proleptic Gregorian calendar does (leap years every 4, not every 100, every 400)', () => {
    const isCalendarDate = (y: number, m: number, d: number) => {
      const t = new Date(Date.UTC(2000, m - 1, d));
      t.setUTCFullYear(y, m - 1, d);
      return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
    };
    const pad = (n: number, w: number) => String(n).padStart(w, '0');
    for (const y of [1, 4, 100, 400, 1600, 1700, 1900, 2000, 2023, 2024, 2100, 9996, 9999]) {
      for (let m = 1; m <= 12; m++) {
        for (let d = 1; d <= 31; d++) {
          const r = toDate(`${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}`, dot);
          expect(value(r), `${y}-${m}-${d}`).toBe(
            isCalendarDate(y, m, d) ? `${pad(y, 4)}-${pad(m, 2)}-${pad(d, 2)}` : '!DATE_INVALID',
          );
        }
      }
    }
    expect(value(toDate('29/02/1900', { ...dot, dateFormat: 'dd/mm/yyyy' }))).toBe('!DATE_INVALID');
    expect(value(toDate('29/02/2000', { ...dot, dateFormat: 'dd/mm/yyyy' }))).toBe('2000-02-29');
  });

  it('reads a GTIN cell exactly as parseGtin does (lengths, zeros, check digits, spaces)', () => {
    const digits = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 1, maxLength: 16 }).map((ds) => ds.join(''));
    const withCheck = digits.map((body) => body + String(gtinCheckDigit(body)));
    const cells = fc.oneof(
      digits,
      withCheck,
      withCheck.map((g) => ` ${g}`),
      fc
        .tuple(withCheck, fc.constantFrom('x', ':', '/', '.', ' ', '\u0660'))
        .map(([g, c]) => `${g.slice(0, 3)}${c}${g.slice(4)}`),
      fc.constantFrom('00000000', '0000000000000', '000000000000000'),
    );
    const expected = (cell: string): TransformResult => {
      const r = parseGtin(cell);
      if (!r.ok) return { issue: { code: r.code, severity: 'error', message: r.message } };
      return r.warning ? { value: r.gtin14, warning: { ...r.warning, severity: 'warning' } } : { value: r.gtin14 };
    };
    fc.assert(
      fc.property(cells, (cell) => {
        expect(toGtin(cell, dot)).toEqual(expected(cell));
      }),
      { numRuns: 3000 },
    );
  });

  it("keeps a column's results per distinct cell: the same results as the transform, frozen, and right past the cap", () => {
    const cells = ['2025-01-01', '03/04/2025', 'demain', '2024-02-29', ' 2025-01-01 ', 45000, null, '2025-01-01'];
    const read = columnTransform('date', TRANSFORMS.date, { ...dot, dateFormat: 'dd/mm/yyyy' });
    for (const cell of [...cells, ...cells])
      expect(read(cell)).toEqual(toDate(cell, { ...dot, dateFormat: 'dd/mm/yyyy' }));
    const first = read('demain');
    expect(read('demain')).toBe(first);
    expect(Object.isFrozen(first) && 'issue' in first && Object.isFrozen(first.issue)).toBe(true);
    // More distinct cells than a column keeps: those past the cap are read each time, with the same results.
    const units = columnTransform('decimal', TRANSFORMS.decimal, comma);
    for (let i = 0; i < 5000; i++) expect(units(`${i},5`)).toEqual({ value: `${i}.5` });
    expect(units('4999,5')).toEqual({ value: '4999.5' });
    // A string column is not kept: its results are fresh objects.
    const text = columnTransform('string', TRANSFORMS.string, dot);
    expect(text('a')).not.toBe(text('a'));
  });
});
