import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { gtinCheckDigit, hasValidCheckDigit, isGtin14, parseGtin } from '../src/pipeline/gtin.ts';

/** A digit string of `n` digits followed by its correct check digit. */
const validGtin = (len: number) =>
  fc
    .array(fc.integer({ min: 0, max: 9 }), { minLength: len - 1, maxLength: len - 1 })
    .map((ds) => ds.join(''))
    .filter((body) => !/^0+$/.test(body))
    .map((body) => body + String(gtinCheckDigit(body)));

describe('GTIN check digit', () => {
  // Published examples (GS1 check digit calculator / GS1 General Specifications), each re-computed here.
  it.each([
    ['4006381333931', 'GTIN-13'],
    ['036000291452', 'GTIN-12 (UPC-A)'],
    ['96385074', 'GTIN-8'],
    ['10614141000415', 'GTIN-14'],
    ['00614141000418', 'GTIN-14 with indicator 0'],
    ['3017620422003', 'GTIN-13'],
  ])('accepts %s (%s) and normalises it to 14 digits', (gtin) => {
    const r = parseGtin(gtin);
    expect(r).toEqual({ ok: true, gtin14: gtin.padStart(14, '0') });
  });

  it('rejects a wrong check digit and names the expected one', () => {
    const r = parseGtin('4006381333932');
    expect(r).toMatchObject({ ok: false, code: 'GTIN_CHECK_DIGIT' });
    expect(!r.ok && r.message).toContain('expected 1');
    // The value gives the GTIN: the message does not repeat it (rejected.* would carry it twice a row).
    expect(!r.ok && r.message).toBe('wrong check digit (last digit 2, expected 1)');
  });

  it('accepts every generated GTIN of each length and keeps its digits', () => {
    for (const len of [8, 12, 13, 14]) {
      fc.assert(
        fc.property(validGtin(len), (g) => {
          const r = parseGtin(g);
          return r.ok && r.gtin14 === g.padStart(14, '0') && r.warning === undefined && isGtin14(r.gtin14);
        }),
      );
    }
  });

  it('rejects every single-digit substitution (mod 10 detects all of them)', () => {
    fc.assert(
      fc.property(validGtin(13), fc.integer({ min: 0, max: 12 }), fc.integer({ min: 1, max: 9 }), (g, pos, delta) => {
        const d = (Number(g[pos]) + delta) % 10;
        const bad = g.slice(0, pos) + String(d) + g.slice(pos + 1);
        return /^0+$/.test(bad) || !parseGtin(bad).ok;
      }),
    );
  });

  it('gives the same result for numbers from XLSX cells as for their digits', () => {
    fc.assert(
      fc.property(validGtin(13), (g) => {
        const fromNumber = parseGtin(Number(g));
        const fromText = parseGtin(g.replace(/^0+/, ''));
        return (
          JSON.stringify(fromNumber) === JSON.stringify(fromText) &&
          fromNumber.ok &&
          fromNumber.gtin14 === g.padStart(14, '0')
        );
      }),
    );
  });

  it('restores lost leading zeros with a warning only when the check digit passes', () => {
    const r = parseGtin('36000291452'); // UPC-A 036000291452 read as a number
    expect(r).toMatchObject({ ok: true, gtin14: '00036000291452', warning: { code: 'GTIN_LEADING_ZEROS_RESTORED' } });
    expect(parseGtin(6381333931)).toMatchObject({ ok: false, code: 'GTIN_CHECK_DIGIT' });
    expect(parseGtin('1234567')).toMatchObject({ ok: false, code: 'GTIN_CHECK_DIGIT' });
    fc.assert(
      fc.property(
        validGtin(13).filter((g) => g.startsWith('00')),
        (g) => {
          const stripped = g.replace(/^0+/, '');
          const r = parseGtin(stripped);
          if (stripped.length < 7) return !r.ok;
          const restoredOrValid = r.ok && r.gtin14 === g.padStart(14, '0');
          const warned = r.ok && r.warning?.code === 'GTIN_LEADING_ZEROS_RESTORED';
          return restoredOrValid && warned === ![8, 12].includes(stripped.length);
        },
      ),
    );
  });

  it('rejects scientific notation and tells the supplier to format the column as text', () => {
    for (const v of ['5,58199E+12', '5.58199e12', '5.58199E+012', '3E+12']) {
      const r = parseGtin(v);
      expect(r).toMatchObject({ ok: false, code: 'GTIN_SCIENTIFIC_NOTATION' });
      expect(!r.ok && r.message).toMatch(/as Text/);
    }
  });

  it('rejects all-zero, non-digit, fractional, too short and too long values', () => {
    expect(parseGtin('00000000000000')).toMatchObject({ ok: false, code: 'GTIN_ALL_ZEROS' });
    expect(parseGtin('0000000')).toMatchObject({ ok: false, code: 'GTIN_ALL_ZEROS' });
    expect(parseGtin('40063813339A1')).toMatchObject({ ok: false, code: 'GTIN_NOT_DIGITS' });
    expect(parseGtin('4006381333931.5')).toMatchObject({ ok: false, code: 'GTIN_NOT_DIGITS' });
    expect(parseGtin(4006381333931.5)).toMatchObject({ ok: false, code: 'GTIN_NOT_DIGITS' });
    expect(parseGtin(-4006381333931)).toMatchObject({ ok: false, code: 'GTIN_NOT_DIGITS' });
    expect(parseGtin(true)).toMatchObject({ ok: false, code: 'GTIN_NOT_DIGITS' });
    expect(parseGtin('17')).toMatchObject({ ok: false, code: 'GTIN_LENGTH' });
    expect(parseGtin('400638133393100')).toMatchObject({ ok: false, code: 'GTIN_LENGTH' });
    expect(parseGtin('')).toMatchObject({ ok: false, code: 'GTIN_EMPTY' });
    expect(parseGtin(null)).toMatchObject({ ok: false, code: 'GTIN_EMPTY' });
  });

  it('ignores spaces inside the digits, including non-breaking ones', () => {
    expect(parseGtin(' 4 006381 333931\u00a0')).toEqual({ ok: true, gtin14: '04006381333931' });
  });

  it('never accepts a string that is not all digits', () => {
    fc.assert(fc.property(fc.string(), (s) => (!/^[\d\s]*$/.test(s) ? !parseGtin(s).ok : true)));
    expect(hasValidCheckDigit('x')).toBe(false);
  });
});
