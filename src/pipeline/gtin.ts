/** GTIN rules (GS1 General Specifications §7.9): lengths 8/12/13/14, mod-10 check digit, normalised to GTIN-14. */
import type { Cell } from './types.ts';

/** The outcome of reading one GTIN cell: the 14-digit form (with an optional warning), or why it was rejected. */
export type GtinResult =
  | { ok: true; gtin14: string; warning?: { code: 'GTIN_LEADING_ZEROS_RESTORED'; message: string } }
  | { ok: false; code: GtinErrorCode; message: string };

/** Codes of a rejected GTIN. */
export type GtinErrorCode =
  'GTIN_EMPTY' | 'GTIN_NOT_DIGITS' | 'GTIN_SCIENTIFIC_NOTATION' | 'GTIN_ALL_ZEROS' | 'GTIN_LENGTH' | 'GTIN_CHECK_DIGIT';

/** Lengths a GTIN can have (GTIN-8, GTIN-12 / UPC-A, GTIN-13 / EAN-13, GTIN-14). */
export const GTIN_LENGTHS: readonly number[] = [8, 12, 13, 14];

// A GTIN that lost leading zeros (Excel turned it into a number) is at least this long: shorter digit strings are
// too likely to pass the check digit by chance (one in ten does) to be restored silently.
const MIN_RESTORABLE_LENGTH = 7;

/** The mod-10 check digit (weights 3,1,3… from the right) of the digits that precede it. */
export function gtinCheckDigit(body: string): number {
  let sum = 0;
  for (let i = body.length - 1, w = 3; i >= 0; i--, w = 4 - w) sum += (body.charCodeAt(i) - 48) * w;
  return (10 - (sum % 10)) % 10;
}

/** True when `digits` (any length ≥ 2) ends with its correct check digit. Leading zeros do not change the result. */
export function hasValidCheckDigit(digits: string): boolean {
  if (!/^\d{2,}$/.test(digits)) return false;
  return gtinCheckDigit(digits.slice(0, -1)) === digits.charCodeAt(digits.length - 1) - 48;
}

/**
 * True for what parseGtin accepts as it is, in one pass: 8, 12, 13 or 14 digits, not all zeros, ending with their
 * check digit (most cells of a GTIN column: the transform's fast path, and what `mapping init` takes for a GTIN).
 */
export function isValidGtin(s: string): boolean {
  const n = s.length;
  if (n !== 13 && n !== 14 && n !== 12 && n !== 8) return false;
  let sum = 0;
  let any = 0;
  for (let i = n - 2, w = 3; i >= 0; i--, w = 4 - w) {
    const d = s.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return false;
    sum += d * w;
    any |= d;
  }
  const check = s.charCodeAt(n - 1) - 48;
  return check >= 0 && check <= 9 && (any | check) !== 0 && (10 - (sum % 10)) % 10 === check;
}

/** A number as Excel writes it in scientific notation (`5,58199E+12`): the digits of an identifier are gone. */
export const SCIENTIFIC = /^[+-]?\d+(?:[.,]\d+)?\s*[eE]\s*[+-]?\d+$/;
const SPACES = /[\s\u00a0\u2007\u202f]/g;

/**
 * The GTIN-14 form of a GTIN's digits: leading zeros up to 14 (GTIN-8, -12 and -13 are GTIN-14s with leading zeros).
 */
export function toGtin14(digits: string): string {
  return digits.padStart(14, '0');
}

/**
 * Reads a GTIN from a cell (string digits, or a number from an XLSX cell) and returns its 14-digit form or the reason
 * it is not a GTIN. The reason does not repeat the GTIN: its issue's value gives it (`ERROR GTIN_CHECK_DIGIT [EAN]
 * "3500000000003": wrong check digit…`), and a sheet of a million wrong GTINs does not carry each one twice in
 * rejected.*.
 */
export function parseGtin(value: Cell): GtinResult {
  let text: string;
  if (value === null) return { ok: false, code: 'GTIN_EMPTY', message: 'GTIN is empty' };
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) {
      return {
        ok: false,
        code: 'GTIN_NOT_DIGITS',
        message: 'not a whole number of at most 14 digits',
      };
    }
    text = value.toFixed(0);
  } else if (typeof value === 'string') {
    text = value.replace(SPACES, '');
  } else {
    return { ok: false, code: 'GTIN_NOT_DIGITS', message: 'GTIN must be digits' };
  }
  if (text === '') return { ok: false, code: 'GTIN_EMPTY', message: 'GTIN is empty' };
  if (SCIENTIFIC.test(text)) {
    return {
      ok: false,
      code: 'GTIN_SCIENTIFIC_NOTATION',
      message:
        'in scientific notation: its digits are lost. Format the GTIN column as Text in the spreadsheet and export again',
    };
  }
  if (!/^\d+$/.test(text)) return { ok: false, code: 'GTIN_NOT_DIGITS', message: 'a GTIN holds digits only' };
  if (/^0+$/.test(text)) return { ok: false, code: 'GTIN_ALL_ZEROS', message: 'GTIN is all zeros' };
  if (text.length > 14 || text.length < MIN_RESTORABLE_LENGTH) {
    return {
      ok: false,
      code: 'GTIN_LENGTH',
      message: `${text.length} digits; a GTIN has 8, 12, 13 or 14`,
    };
  }
  if (!hasValidCheckDigit(text)) {
    const expected = gtinCheckDigit(text.slice(0, -1));
    return {
      ok: false,
      code: 'GTIN_CHECK_DIGIT',
      message: `wrong check digit (last digit ${text.slice(-1)}, expected ${expected})`,
    };
  }
  const gtin14 = toGtin14(text);
  if (GTIN_LENGTHS.includes(text.length)) return { ok: true, gtin14 };
  return {
    ok: true,
    gtin14,
    warning: {
      code: 'GTIN_LEADING_ZEROS_RESTORED',
      message: `${text.length} digits: its leading zeros were restored (${gtin14}); format the GTIN column as Text to keep them`,
    },
  };
}

/**
 * The match key of a GTIN stored in the API: its GTIN-14 form, as the sheet side's parseGtin gives it, so records
 * match keys whatever length they were written with; null when it is not 8 to 14 digits.
 */
export function gtinKey(gtin: unknown): string | null {
  if (typeof gtin !== 'string' || !/^\d{8,14}$/.test(gtin)) return null;
  return toGtin14(gtin);
}

/** True when the string is a normalised GTIN-14 (14 digits, valid check digit, not all zeros). */
export function isGtin14(s: string): boolean {
  return /^\d{14}$/.test(s) && !/^0+$/.test(s) && hasValidCheckDigit(s);
}
