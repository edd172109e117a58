import { describe, expect, it } from 'vitest';
import { WEIGHT_UNITS } from '../src/api/units.ts';
import {
  applyValueMap, cellText, excelSerialToIso, isEmptyCell, splitCell, toBoolean, toCountry, toDate, toDecimal, toGtin,
  toInteger, toUnit, toUuid, toWeightUnit, type TransformContext, type TransformResult,
} from '../src/pipeline/map/transforms.ts';

const comma: TransformContext = { decimalSeparator: ',', language: 'fr-FR' };
const dot: TransformContext = { decimalSeparator: '.', language: 'en-US' };
const value = (r: TransformResult) => ('value' in r ? r.value : `!${r.issue.code}`);

describe('cells', () => {
  it('treats null, empty and blank (non-breaking spaces too) cells as empty', () => {
    expect([null, '', '  ', '\u00a0', 'x', 0, false].map(isEmptyCell)).toEqual([true, true, true, true, false, false, false]);
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
    const map = new Map([['actif', 'Active'], ['non actif', 'Inactive']]);
    expect(applyValueMap('  ACTIF ', map)).toBe('Active');
    expect(applyValueMap('Non\u00a0  actif', map)).toBe('Inactive');
    expect(applyValueMap('Arrêté', map)).toBe('Arrêté');
  });
});

describe('decimal', () => {
  it.each([
    ['1 234,56', '1234.56'], ['1\u202f234,5', '1234.5'], ['0,5', '0.5'], ['12', '12'], ['-3,20', '-3.2'], ['1.234.567,8', '1234567.8'],
    ['1.234,5', '1234.5'], ['007,50', '7.5'], ['-0', '0'],
  ])('reads %s with a decimal comma as %s', (input, out) => expect(value(toDecimal(input, comma))).toBe(out));

  it.each([['1,234.5', '1234.5'], ['1 234.5', '1234.5'], ['0.25', '0.25'], ['1,234,567', '1234567']])(
    'reads %s with a decimal point as %s', (input, out) => expect(value(toDecimal(input, dot))).toBe(out));

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
    expect(['Oui', 'yes', 'X', '1', 'VRAI', true, 1].map((c) => value(toBoolean(c, dot)))).toEqual(Array(7).fill('true'));
    expect(['Non', 'no', '0', 'faux', false, 0].map((c) => value(toBoolean(c, dot)))).toEqual(Array(6).fill('false'));
    expect(value(toBoolean('peut-être', dot))).toBe('!BOOLEAN_INVALID');
  });
  it('lower-cases uuids and rejects what is not one', () => {
    expect(value(toUuid('{C3D4E5F6-A7B8-4C9D-8E0F-1A2B3C4D5E6F}', dot))).toBe('c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f');
    expect(value(toUuid('c3d4e5f6-a7b8', dot))).toBe('!UUID_INVALID');
  });
  it('reads alpha-2, alpha-3 and names in the mapping language, without case or accents', () => {
    const r = (c: string) => value(toCountry(c, comma));
    expect(['France', 'Italie', 'Espagne', 'ES', 'DEU', 'allemagne', 'ÉTATS-UNIS', 'Etats-Unis', 'Royaume-Uni', 'Germany'].map(r))
      .toEqual(['FR', 'IT', 'ES', 'ES', 'DE', 'DE', 'US', 'US', 'GB', 'DE']);
    expect(value(toCountry('Deutschland', { ...dot, language: 'de-DE' }))).toBe('DE');
    expect(r('Atlantide')).toBe('!COUNTRY_UNKNOWN');
    expect(r('XX')).toBe('!COUNTRY_UNKNOWN');
  });
});

describe('units', () => {
  it('canonicalises unit words and symbols', () => {
    expect(['g', 'gr', 'grammes', 'Kg', 'KGM', 'LITRE', 'cl', 'ml'].map((c) => value(toUnit(c, dot))))
      .toEqual(['GRM', 'GRM', 'GRM', 'KGM', 'KGM', 'LTR', 'CLT', 'MLT']);
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

describe('gtin transform', () => {
  it('normalises to 14 digits and carries the leading-zero warning', () => {
    expect(toGtin('3017620422003', dot)).toEqual({ value: '03017620422003' });
    expect(toGtin(36000291452, dot)).toMatchObject({ value: '00036000291452', warning: { code: 'GTIN_LEADING_ZEROS_RESTORED', severity: 'warning' } });
    expect(value(toGtin('5,58199E+12', dot))).toBe('!GTIN_SCIENTIFIC_NOTATION');
  });
});

describe('identifier', () => {
  it('keeps every digit and refuses what Excel turned into scientific notation', async () => {
    const { toIdentifier } = await import('../src/pipeline/map/transforms.ts');
    expect(toIdentifier('0012345')).toEqual({ value: '0012345' });
    expect(toIdentifier(1767012345678901)).toEqual({ value: '1767012345678901' });
    expect(toIdentifier('1,76701E+15')).toMatchObject({ issue: { code: 'IDENTIFIER_SCIENTIFIC_NOTATION', severity: 'error' } });
    expect(toIdentifier(1.5)).toMatchObject({ issue: { code: 'IDENTIFIER_NOT_EXACT' } });
  });
});
