/**
 * What a column's first cells say about it (`mapping init`): whether they look like GTINs, numbers, units, countries,
 * dates…, which decimal separator, list separator and date format they use. Each check reuses the transform that will
 * read the column, so a column the draft maps this way reads.
 */
import { findUnit } from '../api/units.ts';
import { normalizeHarmonizedCode } from '../pipeline/resolve/reference-resolver.ts';
import { toAlpha2 } from '../pipeline/map/country.ts';
import { isValidGtin, SCIENTIFIC } from '../pipeline/gtin.ts';
import type { ValueKind } from './header-aliases.ts';
import {
  cellText,
  localeNumberSeparators,
  toBoolean,
  toDate,
  toDecimal,
  toUnit,
  toUuid,
  toWeightUnit,
} from '../pipeline/map/transforms.ts';
import type { Cell } from '../pipeline/types.ts';

const LANGUAGE_CODE = /^[a-z]{2,3}(?:[-_][a-z]{2,4})?$/i;
const LIST_SEPARATORS = [';', '|', ','] as const;
const DAY_MONTH = /^(\d{1,2})([/.-])(\d{1,2})\2(\d{4}|\d{2})(?:[ T]\d{1,2}:\d{2}.*)?$/;

/** The other decimal separator. */
const otherSeparator = (sep: ',' | '.'): ',' | '.' => (sep === ',' ? '.' : ',');

/**
 * True when the cell is a GTIN as a sheet holds one: 8, 12, 13 or 14 digits (text or a whole number) with a valid check
 * digit.
 */
export function isStrictGtin(cell: Cell): boolean {
  const text =
    typeof cell === 'number'
      ? Number.isSafeInteger(cell) && cell > 0
        ? cell.toFixed(0)
        : ''
      : typeof cell === 'string'
        ? cell.replace(/\s/g, '')
        : '';
  // A number lost its leading zeros: a 13-digit GTIN starting with 0 comes as 12 digits, still a GTIN length.
  return isValidGtin(text);
}

/** True when a text cell is a quantity with its unit (`500 g`, `0,5 kg`, `75cl`): a value and a unit in one cell. */
export function isQuantity(cell: Cell): boolean {
  if (typeof cell !== 'string') return false;
  const m = /^\s*\d+(?:[.,]\d+)?\s*([\p{L}µ]+\.?)\s*$/u.exec(cell);
  return m !== null && findUnit(m[1]!) !== undefined;
}

/** A quantity cell without its unit (`1,5 L` → `1,5`), to find its decimal separator; other cells as is. */
export const quantityNumber = (cell: Cell): Cell =>
  typeof cell === 'string' ? cell.replace(/\s*[\p{L}µ]+\.?\s*$/u, '') : cell;

/** The list parts of a cell, split on the first separator of `;`, `|`, `,` it holds. */
function parts(text: string): string[] {
  const sep = LIST_SEPARATORS.find((s) => text.includes(s));
  return (sep ? text.split(sep) : [text]).map((p) => p.trim()).filter(Boolean);
}

/** True when the cell looks like a value of `kind` in a sheet of `language`. */
export function fitsKind(kind: ValueKind, cell: Cell, language: string): boolean {
  const text = cellText(cell);
  const sep = localeNumberSeparators(language).decimal;
  switch (kind) {
    case 'gtin': {
      // GTIN-shaped: a wrong check digit, lost leading zeros or Excel's scientific notation are the rows' problems
      // (the run reports them); the column still holds GTINs.
      const digits = text.replace(/\s/g, '');
      return /^\d{7,14}$/.test(digits) || SCIENTIFIC.test(digits);
    }
    case 'number':
      return [sep, otherSeparator(sep)].some((s) => 'value' in toDecimal(cell, { decimalSeparator: s, language }));
    case 'unit':
      return 'value' in toUnit(cell, { decimalSeparator: sep, language });
    case 'weightUnit':
      return 'value' in toWeightUnit(cell, { decimalSeparator: sep, language });
    case 'country': {
      if (typeof cell !== 'string') return false;
      const ps = parts(text);
      return ps.length > 0 && ps.every((p) => toAlpha2(p, language) !== undefined);
    }
    case 'uuid':
      return 'value' in toUuid(cell, { decimalSeparator: sep, language });
    case 'boolean':
      return 'value' in toBoolean(cell, { decimalSeparator: sep, language });
    case 'date':
      return (
        cell instanceof Date || 'value' in toDate(cell, { decimalSeparator: sep, language }) || DAY_MONTH.test(text)
      );
    case 'hsCode': {
      const code = normalizeHarmonizedCode(text);
      return code !== null && code.length >= 4;
    }
    case 'languageCode':
      return LANGUAGE_CODE.test(text);
    case 'words':
      return /\p{L}/u.test(text);
    case 'text':
      return true;
  }
}

/** The share (0–1) of `cells` that fit `kind`; 1 when there are none (no sample contradicts anything). */
export function shareFitting(kind: ValueKind, cells: readonly Cell[], language: string): number {
  if (cells.length === 0) return 1;
  let n = 0;
  for (const c of cells) if (fitsKind(kind, c, language)) n++;
  return n / cells.length;
}

/**
 * The decimal separator a column's text numbers need when it is not the language's (`0.125` in a fr-FR sheet), else
 * undefined. Values that read either way (`500`) say nothing; `1.500`, which reads two ways, is not taken as a sign
 * (`0.125` is: a group of thousands never follows a 0).
 */
export function decimalSeparatorOf(cells: readonly Cell[], language: string): ',' | '.' | undefined {
  const sep = localeNumberSeparators(language).decimal;
  const other = otherSeparator(sep);
  let onlyOther = 0;
  let onlyOwn = 0;
  for (const c of cells) {
    if (typeof c !== 'string' || /^\s*[1-9]\d{0,2}[.,]\d{3}\s*$/.test(c)) continue;
    const own = 'value' in toDecimal(c, { decimalSeparator: sep, language });
    const alt = 'value' in toDecimal(c, { decimalSeparator: other, language });
    if (own && !alt) onlyOwn++;
    if (alt && !own) onlyOther++;
  }
  return onlyOther > 0 && onlyOwn === 0 ? other : undefined;
}

/** The separator of a list column (`FR;ES`), when its cells hold several values; undefined when each holds one. */
export function listSeparatorOf(cells: readonly Cell[]): string | undefined {
  for (const sep of LIST_SEPARATORS) {
    if (cells.some((c) => typeof c === 'string' && c.includes(sep))) return sep;
  }
  return undefined;
}

/**
 * The date format of a column's day-month dates (`25/04/2025` → `dd/mm/yyyy`): the order a day above 12 shows, else
 * the language's habit (month first in en-US only); undefined when no cell needs a format (ISO dates, date cells).
 */
export function dateFormatOf(cells: readonly Cell[], language: string): string | undefined {
  let dayFirst = false;
  let monthFirst = false;
  let shape: { sep: string; year: string } | undefined;
  for (const c of cells) {
    if (typeof c !== 'string') continue;
    const m = DAY_MONTH.exec(c.trim());
    if (!m) continue;
    shape ??= { sep: m[2]!, year: m[4]!.length === 4 ? 'yyyy' : 'yy' };
    if (Number(m[1]) > 12) dayFirst = true;
    if (Number(m[3]) > 12) monthFirst = true;
  }
  if (!shape || (dayFirst && monthFirst)) return undefined;
  const first = dayFirst ? 'dd' : monthFirst ? 'mm' : /^en-US$/i.test(language) ? 'mm' : 'dd';
  const second = first === 'dd' ? 'mm' : 'dd';
  return [first, second, shape.year].join(shape.sep);
}
