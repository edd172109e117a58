/** Cell transforms of mapping columns: each is pure, `(cell, ctx) → {value} | {issue}` (docs/mapping.md). */
import { findUnit, weightUnitId, WEIGHT_UNIT_IDS, type Unit } from '../../api/units.ts';
import { findCountry } from './country.ts';
import { isValidGtin, parseGtin, SCIENTIFIC, toGtin14 } from '../gtin.ts';
import { severityOf, type FixedSeverityCode } from '../../issue-codes.ts';
import type { Cell, Severity } from '../types.ts';

/** The value types a mapping column may name. */
export const COLUMN_TYPES = [
  'string',
  'decimal',
  'integer',
  'number',
  'date',
  'boolean',
  'uuid',
  'country',
  'unit',
  'weightUnit',
  'quantity',
  'gtin',
  'identifier',
] as const;

/** One of the column types. */
export type ColumnType = (typeof COLUMN_TYPES)[number];

/** What a transform needs besides the cell: the sheet's conventions, from the mapping and the column. */
export interface TransformContext {
  decimalSeparator: ',' | '.';
  /** A date format such as `dd/mm/yyyy`; without one, only unambiguous dates are read. */
  dateFormat?: string | undefined;
  /** Language of the labels in the sheet (country names). */
  language: string;
}

/**
 * A problem a transform found in one cell (the caller adds row, column, field and value); its severity is its code's.
 */
export interface TransformIssue {
  code: FixedSeverityCode;
  severity: Severity;
  message: string;
}

/**
 * A transformed value (with an optional warning; a `quantity` also gives its unit), or the issue that kept the cell
 * from being read.
 */
export type TransformResult = { value: string; unit?: string; warning?: TransformIssue } | { issue: TransformIssue };

/** A pure cell transform. */
export type Transform = (cell: Cell, ctx: TransformContext) => TransformResult;

const err = (code: FixedSeverityCode, message: string): { issue: TransformIssue } => ({
  issue: { code, severity: severityOf(code), message },
});

// A character code of printable ASCII other than the space: never trimmed (most cells start and end with one, and
// these checks spare them trim()'s call).
const printable = (c: number): boolean => c > 32 && c < 127;

/** True for a cell that holds nothing: null, or a string of only spaces (non-breaking ones included). */
export function isEmptyCell(cell: Cell): boolean {
  if (cell === null) return true;
  if (typeof cell !== 'string') return false;
  return !printable(cell.charCodeAt(0)) && cell.trim() === '';
}

/** The string trimmed (trim() is only called when its first or last character may be a space). */
function trimmed(s: string): string {
  return printable(s.charCodeAt(0)) && printable(s.charCodeAt(s.length - 1)) ? s : s.trim();
}

/** The cell as trimmed text: numbers in plain decimal digits, booleans as true/false, dates as ISO. */
export function cellText(cell: Cell): string {
  if (cell === null) return '';
  if (typeof cell === 'string') return trimmed(cell);
  if (typeof cell === 'number') return numberText(cell);
  if (typeof cell === 'boolean') return cell ? 'true' : 'false';
  if (Number.isNaN(cell.getTime())) return '';
  const iso = cell.toISOString();
  return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
}

function numberText(n: number): string {
  const s = String(n);
  if (!/e/i.test(s)) return s;
  // 1e21 and 1e-7 print in exponent form; write plain digits instead.
  return Math.abs(n) >= 1 ? BigInt(Math.round(n)).toString() : n.toFixed(20).replace(/0+$/, '');
}

/** The parts of a list cell split on `separator`, each trimmed, empty parts dropped. Non-string cells are one part. */
export function splitCell(cell: Cell, separator: string): Cell[] {
  if (typeof cell !== 'string') return isEmptyCell(cell) ? [] : [cell];
  // One pass and one list (a mapping's separator is never empty: split('') would cut every character).
  if (separator === '')
    return cell
      .split(separator)
      .map((p) => p.trim())
      .filter((p) => p !== '');
  if (!cell.includes(separator)) {
    const part = trimmed(cell);
    return part === '' ? [] : [part];
  }
  const out: Cell[] = [];
  for (let start = 0; ;) {
    const end = cell.indexOf(separator, start);
    const part = trimmed(end < 0 ? (start === 0 ? cell : cell.slice(start)) : cell.slice(start, end));
    if (part !== '') out.push(part);
    if (end < 0) return out;
    start = end + separator.length;
  }
}

/** The key a value map compares on: NFC, lower case, spaces (non-breaking too) collapsed and trimmed. */
export function valueMapKey(s: string): string {
  return s
    .normalize('NFC')
    .replace(/[\s\u00a0\u202f]+/g, ' ')
    .trim()
    .toLowerCase();
}

/**
 * The cell replaced by its value-map entry (compared without case or extra spaces); cells not in the map are returned
 * unchanged.
 */
export function applyValueMap(cell: Cell, map: ReadonlyMap<string, string> | undefined): Cell {
  if (!map || cell === null || cell instanceof Date) return cell;
  const hit = map.get(valueMapKey(cellText(cell)));
  return hit === undefined ? cell : hit;
}

/** `string`: the trimmed text of the cell. */
export const toStringValue: Transform = (cell) => ({ value: cellText(cell) });

/** The decimal and thousands separators a locale writes its numbers with (Latin digits). */
export interface LocaleNumberSeparators {
  decimal: ',' | '.';
  /** The locale's own group separator (`.` de-DE, U+202F fr-FR, `'` de-CH, `,` en-US); undefined when unknown. */
  group: string | undefined;
}

const localeSeparatorCache = new Map<string, LocaleNumberSeparators>();

/**
 * Decimal then group separator of the tags sheets mostly come in, as Intl gives them (test/decimal-locale.test.ts
 * checks that they agree): Intl's first use loads the platform's locale data, a cost every start would pay. Other tags
 * ask Intl.
 */
export const KNOWN_LOCALE_SEPARATORS: Readonly<Record<string, string>> = {
  en: '.,',
  'en-US': '.,',
  'en-GB': '.,',
  fr: ',\u202f',
  'fr-FR': ',\u202f',
  'fr-BE': ',\u202f',
  'fr-CH': ',\u202f',
  de: ',.',
  'de-DE': ',.',
  'de-AT': ',\u00a0',
  'de-CH': ".'",
  es: ',.',
  'es-ES': ',.',
  it: ',.',
  'it-IT': ',.',
  nl: ',.',
  'nl-NL': ',.',
  'nl-BE': ',.',
  pt: ',.',
  'pt-PT': ',\u00a0',
  'pt-BR': ',.',
  pl: ',\u00a0',
  'pl-PL': ',\u00a0',
  sv: ',\u00a0',
  'sv-SE': ',\u00a0',
  da: ',.',
  'da-DK': ',.',
  fi: ',\u00a0',
  'fi-FI': ',\u00a0',
  cs: ',\u00a0',
  'cs-CZ': ',\u00a0',
};

/**
 * The separators of a locale's numbers: KNOWN_LOCALE_SEPARATORS, else the platform's
 * `Intl.NumberFormat(locale).formatToParts(1234.5)` (grouping forced, since es-ES, it-IT, pt-PT… group only from 10 000
 * on): fr-FR, de-DE, es-ES, it-IT, nl-NL, pt-PT → `,`; en-US, en-GB, de-CH → `.`. A language the platform does not know
 * (or a tag it refuses) gives `.`, never the host's locale.
 */
export function localeNumberSeparators(language: string): LocaleNumberSeparators {
  const hit = localeSeparatorCache.get(language);
  if (hit) return hit;
  const tag = language.replace(/_/g, '-');
  const known = KNOWN_LOCALE_SEPARATORS[tag];
  const out = known ? { decimal: known[0] as ',' | '.', group: known[1] } : intlSeparators(tag);
  localeSeparatorCache.set(language, out);
  return out;
}

function intlSeparators(tag: string): LocaleNumberSeparators {
  try {
    if (Intl.NumberFormat.supportedLocalesOf(tag, { localeMatcher: 'lookup' }).length > 0) {
      const parts = new Intl.NumberFormat(tag, { numberingSystem: 'latn', useGrouping: 'always' }).formatToParts(
        1234.5,
      );
      const decimal = parts.find((p) => p.type === 'decimal')?.value;
      if (decimal === ',' || decimal === '.') return { decimal, group: parts.find((p) => p.type === 'group')?.value };
    }
  } catch {
    // A tag Intl refuses: the default below.
  }
  return { decimal: '.', group: undefined };
}

// Thousands groups are read in groups of three after a first group of 1–3 digits. Spaces (no-break and narrow
// no-break ones too) always group; with a decimal point, `'` and `’` (de-CH) do too; the locale's own group
// separator is added when it is none of these. The other one of `,` / `.` groups only where it cannot be the decimal
// separator ("1.234.567", "1.234,5" with ","); a single group without decimals ("1.234" with ",", "1,234" with ".")
// reads two ways and is refused as ambiguous.
const GROUP_LEAD = '[1-9]\\d{0,2}';
const escapeRe = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

interface NumberShapes {
  /** Shapes read as numbers. */
  read: RegExp[];
  /** One group of the other separator and no decimals: ambiguous. */
  ambiguous: RegExp;
  /** A number with the other separator as decimal one. */
  otherDecimal: RegExp;
}

const shapeCache = new Map<string, NumberShapes>();

/**
 * The group separators read in text cells with decimal separator `sep` in `language`, besides the other of `,` / `.`.
 */
export function groupSeparators(sep: ',' | '.', language: string): string[] {
  const groups = sep === ',' ? [' '] : [' ', "'", '\u2019'];
  const local = localeNumberSeparators(language);
  const own = local.group?.replace(/[\u00a0\u202f\u2007]/g, ' ');
  if (local.decimal === sep && own && own.length === 1 && !/[\d,.+-]/.test(own) && !groups.includes(own))
    groups.push(own);
  return groups;
}

function numberShapes(sep: ',' | '.', language: string): NumberShapes {
  const groups = groupSeparators(sep, language);
  const key = `${sep}${groups.join('')}`;
  const hit = shapeCache.get(key);
  if (hit) return hit;
  const d = escapeRe(sep);
  const o = escapeRe(sep === ',' ? '.' : ',');
  const frac = `(?:${d}\\d+)?`;
  const shapes: NumberShapes = {
    read: [
      new RegExp(`^\\d+${frac}$`),
      ...groups.map((g) => new RegExp(`^${GROUP_LEAD}(?:${escapeRe(g)}\\d{3})+${frac}$`)),
      new RegExp(`^${GROUP_LEAD}(?:${o}\\d{3}){2,}${frac}$`),
      new RegExp(`^${GROUP_LEAD}(?:${o}\\d{3})+${d}\\d+$`),
    ],
    ambiguous: new RegExp(`^(${GROUP_LEAD})${o}(\\d{3})$`),
    otherDecimal: new RegExp(`^\\d[\\d ]*${o}\\d+$`),
  };
  shapeCache.set(key, shapes);
  return shapes;
}

const PLAIN_COMMA = /^(-?)(\d+)(?:,(\d+))?$/;
const PLAIN_DOT = /^(-?)(\d+)(?:\.(\d+))?$/;

function canonicalDecimal(sign: string, intPart: string, frac: string): string {
  const i = intPart.replace(/^0+(?=\d)/, '');
  const f = frac.replace(/0+$/, '');
  const body = f ? `${i}.${f}` : i;
  return /^0(?:\.0*)?$/.test(body) ? body : sign + body;
}

/**
 * `decimal`: a canonical decimal string (`1 234,50` → `1234.5`) read with the column's decimal separator (the mapping's
 * `decimal` / `decimalSeparator`, else its language's) and that separator's thousands groups; XLSX numbers pass as they
 * are.
 */
export const toDecimal: Transform = (cell, ctx) => {
  if (typeof cell === 'number') {
    return Number.isFinite(cell) ? { value: numberText(cell) } : err('DECIMAL_INVALID', 'not a finite number');
  }
  if (typeof cell !== 'string') return err('DECIMAL_INVALID', `expected a number, got ${cellText(cell)}`);
  const sep = ctx.decimalSeparator;
  const other = sep === ',' ? '.' : ',';
  const text = cell.trim();
  // Digits with at most a decimal part (most cells): the first shape below, read without building the others.
  const plain = (sep === ',' ? PLAIN_COMMA : PLAIN_DOT).exec(text);
  if (plain) return { value: canonicalDecimal(plain[1] ?? '', plain[2] ?? '', plain[3] ?? '') };
  const raw = text.replace(/[\u00a0\u202f\u2007]/g, ' ').replace(/ +/g, ' ');
  const sign = raw.startsWith('-') ? '-' : '';
  const body = raw.replace(/^[+-]\s*/, '');
  const shapes = numberShapes(sep, ctx.language);
  if (shapes.read.some((re) => re.test(body))) {
    // The shape allows one kind of group separator: every character that is neither a digit nor `sep` is one.
    const [intPart = '', frac = ''] = [...body]
      .filter((c) => c === sep || (c >= '0' && c <= '9'))
      .join('')
      .split(sep);
    return { value: canonicalDecimal(sign, intPart, frac) };
  }
  const amb = shapes.ambiguous.exec(body);
  if (amb) {
    const [, lead = '', group = ''] = amb;
    return err(
      'DECIMAL_SEPARATOR',
      `"${text}" is ambiguous in a sheet whose decimal separator is "${sep}": it reads as ${sign}${lead} ${group} with "${other}" grouping thousands, or as ${sign}${lead}${sep}${group} with "${other}" as decimal separator; write ${sign}${lead}${group} (or ${sign}${lead} ${group}) for the first, ${sign}${lead}${sep}${group} for the second, or set decimal: "${other}" on the column if the sheet really uses "${other}" as decimal separator`,
    );
  }
  if (shapes.otherDecimal.test(body)) {
    return err(
      'DECIMAL_SEPARATOR',
      `"${text}" uses "${other}" as decimal separator where the mapping expects "${sep}" (set decimal: "${other}" on the column if the sheet really uses it)`,
    );
  }
  return err('DECIMAL_INVALID', `"${text}" is not a number`);
};

/** `integer`: a whole number as a decimal string (`1 000` → `1000`); fractions are an issue. */
export const toInteger: Transform = (cell, ctx) => {
  const r = toDecimal(cell, ctx);
  if ('issue' in r)
    return r.issue.code === 'DECIMAL_SEPARATOR'
      ? r
      : err('INTEGER_INVALID', `"${cellText(cell)}" is not a whole number`);
  if (!/^-?\d+$/.test(r.value)) return err('INTEGER_INVALID', `"${cellText(cell)}" is not a whole number`);
  return r;
};

const pad2 = (n: number): string => String(n).padStart(2, '0');

/** Days in month `m` (1–12) of year `y` in the proleptic Gregorian calendar (as Date counts them). */
function monthDays(y: number, m: number): number {
  if (m === 2) return y % 4 === 0 && (y % 100 !== 0 || y % 400 === 0) ? 29 : 28;
  return m === 4 || m === 6 || m === 9 || m === 11 ? 30 : 31;
}

function isoDate(y: number, m: number, d: number): string | undefined {
  if (y < 1 || y > 9999 || m < 1 || m > 12 || d < 1 || d > monthDays(y, m)) return undefined;
  return `${String(y).padStart(4, '0')}-${pad2(m)}-${pad2(d)}`;
}

// Excel's 1900 date system: serial 1 is 1900-01-01 and serial 60 the 1900-02-29 that never was (Lotus 1-2-3 bug).
const EXCEL_MAX_SERIAL = 2958465; // 9999-12-31

/**
 * The ISO date of an Excel serial number in the 1900 date system (the reader turns 1904-system date cells into Dates).
 */
export function excelSerialToIso(serial: number): string | undefined {
  if (!Number.isFinite(serial) || serial < 1 || serial >= EXCEL_MAX_SERIAL + 1) return undefined;
  const days = Math.floor(serial);
  if (days === 60) return undefined;
  const epoch = days < 60 ? Date.UTC(1899, 11, 31) : Date.UTC(1899, 11, 30);
  return new Date(epoch + days * 86_400_000).toISOString().slice(0, 10);
}

const TIME_SUFFIX = '(?:[ T]\\d{1,2}:\\d{2}(?::\\d{2}(?:\\.\\d+)?)?(?:Z|[+-]\\d{2}:?\\d{2})?)?';
const ISO = new RegExp(`^(\\d{4})-(\\d{2})-(\\d{2})${TIME_SUFFIX}$`);
const YMD_SLASH = new RegExp(`^(\\d{4})[/.](\\d{1,2})[/.](\\d{1,2})${TIME_SUFFIX}$`);
const DMY_OR_MDY = new RegExp(`^(\\d{1,2})([/.-])(\\d{1,2})\\2(\\d{4})${TIME_SUFFIX}$`);

const formatCache = new Map<string, { re: RegExp; order: ('y' | 'yy' | 'm' | 'd')[] } | null>();

/**
 * A parser of one date format made of `yyyy`, `yy`, `mm`, `dd` and literal separators; null when the format is not one.
 */
export function compileDateFormat(format: string): { re: RegExp; order: ('y' | 'yy' | 'm' | 'd')[] } | null {
  const hit = formatCache.get(format);
  if (hit !== undefined) return hit;
  const order: ('y' | 'yy' | 'm' | 'd')[] = [];
  let src = '';
  const tokens = format.match(/yyyy|yy|mm|dd|m|d|[^ymd]/gi) ?? [];
  for (const t of tokens) {
    const l = t.toLowerCase();
    if (l === 'yyyy') {
      order.push('y');
      src += '(\\d{4})';
    } else if (l === 'yy') {
      order.push('yy');
      src += '(\\d{2})';
    } else if (l === 'mm' || l === 'm') {
      order.push('m');
      src += '(\\d{1,2})';
    } else if (l === 'dd' || l === 'd') {
      order.push('d');
      src += '(\\d{1,2})';
    } else src += t.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
  }
  const ok =
    order.filter((o) => o === 'y' || o === 'yy').length === 1 &&
    order.includes('m') &&
    order.includes('d') &&
    order.length === 3;
  const compiled = ok ? { re: new RegExp(`^${src}${TIME_SUFFIX}$`, 'i'), order } : null;
  formatCache.set(format, compiled);
  return compiled;
}

/**
 * `date`: an ISO `yyyy-mm-dd` string from an ISO date or datetime, an XLSX date cell, an Excel serial number, or a date
 * in the column's format.
 */
export const toDate: Transform = (cell, ctx) => {
  if (cell instanceof Date) {
    if (Number.isNaN(cell.getTime())) return err('DATE_INVALID', 'invalid date cell');
    return { value: cell.toISOString().slice(0, 10) };
  }
  if (typeof cell === 'number') {
    const iso = excelSerialToIso(cell);
    return iso ? { value: iso } : err('DATE_INVALID', `${cell} is not an Excel date serial number (1900 date system)`);
  }
  if (typeof cell !== 'string') return err('DATE_INVALID', `expected a date, got ${cellText(cell)}`);
  const text = cell.trim();
  let m = ISO.exec(text) ?? YMD_SLASH.exec(text);
  if (m) {
    const iso = isoDate(Number(m[1]), Number(m[2]), Number(m[3]));
    return iso ? { value: iso } : err('DATE_INVALID', `"${text}" is not a calendar date`);
  }
  if (ctx.dateFormat) {
    const f = compileDateFormat(ctx.dateFormat);
    m = f ? f.re.exec(text) : null;
    if (f && m) {
      const parts: Record<string, number> = {};
      f.order.forEach((o, i) => {
        parts[o] = Number(m![i + 1]);
      });
      const y = parts.y ?? 2000 + (parts.yy ?? 0);
      const iso = isoDate(y, parts.m ?? 0, parts.d ?? 0);
      return iso ? { value: iso } : err('DATE_INVALID', `"${text}" is not a calendar date (format ${ctx.dateFormat})`);
    }
    return err('DATE_INVALID', `"${text}" does not match the date format ${ctx.dateFormat}`);
  }
  m = DMY_OR_MDY.exec(text);
  if (m) {
    const a = Number(m[1]);
    const b = Number(m[3]);
    const y = Number(m[4]);
    const dmy = isoDate(y, b, a);
    const mdy = isoDate(y, a, b);
    if (dmy && mdy && dmy !== mdy) {
      return err(
        'DATE_AMBIGUOUS',
        `"${text}" could be ${dmy} (dd/mm/yyyy) or ${mdy} (mm/dd/yyyy): name the format in the mapping (format: dd/mm/yyyy)`,
      );
    }
    const only = dmy ?? mdy;
    return only ? { value: only } : err('DATE_INVALID', `"${text}" is not a calendar date`);
  }
  return err('DATE_INVALID', `"${text}" is not a date (expected yyyy-mm-dd, or name the format in the mapping)`);
};

const TRUE_WORDS = new Set(['true', 'yes', 'y', 'oui', 'o', 'vrai', 'x', '1', 'ja', 'si', 'sí', 'sì']);
const FALSE_WORDS = new Set(['false', 'no', 'n', 'non', 'faux', '0', 'nein']);

/** `boolean`: the string `"true"` or `"false"` (the API's flags are strings) from yes/no/oui/non/true/false/1/0/x… */
export const toBoolean: Transform = (cell) => {
  if (typeof cell === 'boolean') return { value: cell ? 'true' : 'false' };
  const w = valueMapKey(cellText(cell));
  if (TRUE_WORDS.has(w)) return { value: 'true' };
  if (FALSE_WORDS.has(w)) return { value: 'false' };
  return err(
    'BOOLEAN_INVALID',
    `"${cellText(cell)}" is not yes/no (accepted: yes, no, oui, non, true, false, 1, 0, x)`,
  );
};

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

/** `uuid`: a lower-case uuid (braces as .NET writes them are removed). */
export const toUuid: Transform = (cell) => {
  const t = cellText(cell)
    .replace(/^\{(.*)\}$/, '$1')
    .toLowerCase();
  return UUID_RE.test(t) ? { value: t } : err('UUID_INVALID', `"${cellText(cell)}" is not a uuid`);
};

/**
 * `country`: the ISO 3166-1 alpha-2 code of an alpha-2, alpha-3 or a country name (the mapping's language, English,
 * then any other).
 */
export const toCountry: Transform = (cell, ctx) => {
  const t = cellText(cell);
  const r = typeof cell === 'string' ? findCountry(t, ctx.language) : undefined;
  if (r === undefined)
    return err(
      'COUNTRY_UNKNOWN',
      `"${t}" is not a known country (an ISO 3166-1 code, or a country name in a language of the country data)`,
    );
  if ('ambiguous' in r) {
    const meanings = r.ambiguous.map((a) => `${a.code} in ${a.languages.join(', ')}`).join('; ');
    return err(
      'COUNTRY_AMBIGUOUS',
      `"${t}" names different countries in different languages (${meanings}): write the ISO code`,
    );
  }
  return { value: r.code };
};

const QUANTITY = /^[+-]?\d/;

/** `unit`: the canonical unit code (`g`, `gr`, `grammes` → `GRM`); a quantity with its unit (`0,5 kg`) is an issue. */
export const toUnit: Transform = (cell) => {
  const t = cellText(cell);
  if (typeof cell !== 'string') return err('UNIT_UNKNOWN', `"${t}" is not a unit`);
  if (QUANTITY.test(t)) {
    return err(
      'UNIT_WITH_VALUE',
      `"${t}" is a quantity, not a unit: put the number in the value column and only the unit here`,
    );
  }
  const unit = findUnit(t);
  return unit ? { value: unit.code } : err('UNIT_UNKNOWN', `"${t}" is not a known unit`);
};

/**
 * `weightUnit`: the uuid of one of the seven weight units (g, kg, mg, cg, dg, mcg, ton); a unit of another family is an
 * issue.
 */
export const toWeightUnit: Transform = (cell) => {
  const t = cellText(cell);
  if (WEIGHT_UNIT_IDS.has(t.toLowerCase())) return { value: t.toLowerCase() };
  const r = toUnit(cell, { decimalSeparator: '.', language: 'en' });
  if ('issue' in r) return r;
  const id = weightUnitId(r.value);
  if (id) return { value: id };
  const family = findUnit(t)?.family;
  return family && family !== 'mass'
    ? err(
        'UNIT_WRONG_FAMILY',
        `"${t}" is a unit of ${family}; this field takes a weight unit (g, kg, mg, cg, dg, mcg, ton)`,
      )
    : err('UNIT_UNKNOWN', `"${t}" is not a weight unit (g, kg, mg, cg, dg, mcg, ton)`);
};

// A number (digits, with the separators and spaces numbers are written with) and then a unit starting with a letter
// (`500 g`, `0,5kg`, `1.5L`, `2 m3`); the number part is read by toDecimal, the unit part by findUnit.
const QUANTITY_SHAPE = /^([+-]?\d(?:[\d \u00a0\u202f\u2007.,'\u2019]*\d)?)\s*(\p{L}.*)$/su;
const NUMBER_ONLY = /^[+-]?[\d \u00a0\u202f\u2007.,'\u2019]*\d[\d \u00a0\u202f\u2007.,'\u2019]*$/;

/** The number and unit of a quantity cell (`500 g`, `0,5 kg`, `75 cl`), or the issue that says why it is not one. */
function readQuantity(cell: Cell, ctx: TransformContext): { value: string; unit: Unit } | { issue: TransformIssue } {
  if (typeof cell === 'number') {
    return err(
      'QUANTITY_NO_UNIT',
      `${numberText(cell)} has no unit: write the quantity with its unit (${numberText(cell)} g) or map the unit in a column of its own`,
    );
  }
  if (typeof cell !== 'string')
    return err('QUANTITY_INVALID', `"${cellText(cell)}" is not a quantity (a number and its unit, such as 500 g)`);
  const text = cell.trim();
  if (NUMBER_ONLY.test(text)) {
    return err(
      'QUANTITY_NO_UNIT',
      `"${text}" has no unit: write the quantity with its unit (${text} g) or map the unit in a column of its own`,
    );
  }
  const m = QUANTITY_SHAPE.exec(text);
  if (!m) {
    if (!/\d/.test(text) && findUnit(text))
      return err('QUANTITY_NO_VALUE', `"${text}" is a unit without a number: write the quantity (500 ${text})`);
    return err('QUANTITY_INVALID', `"${text}" is not a quantity (a number and its unit, such as 500 g)`);
  }
  const [, numberPart = '', unitPart = ''] = m;
  const unit = findUnit(unitPart);
  if (!unit) {
    // `6 x 33 cl`, `33 cl x 6`, `500 g / 1 kg`: a pack or two quantities, not one.
    if (/\d/.test(unitPart))
      return err(
        'QUANTITY_INVALID',
        `"${text}" is more than one quantity (a pack such as 6 x 33 cl?): give one quantity per cell`,
      );
    return err('UNIT_UNKNOWN', `"${unitPart.trim()}" in "${text}" is not a known unit`);
  }
  const n = toDecimal(numberPart, ctx);
  if ('issue' in n) return { issue: { ...n.issue, message: `${n.issue.message} (in "${text}")` } };
  return { value: n.value, unit };
}

/**
 * `quantity` (netContents): the number of a cell such as `0,5 kg`, read as `decimal` reads it, with its unit's UN/ECE
 * code (`KGM`) as `unit`.
 */
export const toQuantity: Transform = (cell, ctx) => {
  const q = readQuantity(cell, ctx);
  return 'issue' in q ? q : { value: q.value, unit: q.unit.code };
};

/**
 * `quantity` of a weight (drainedNetWeight, variableWeight): the number, with the uuid of its weight unit as `unit`; a
 * unit of another family is an issue.
 */
export const toWeightQuantity: Transform = (cell, ctx) => {
  const q = readQuantity(cell, ctx);
  if ('issue' in q) return q;
  const id = weightUnitId(q.unit.code);
  if (id) return { value: q.value, unit: id };
  return err(
    'UNIT_WRONG_FAMILY',
    `"${cellText(cell)}" is a quantity of ${q.unit.family}; this field takes a weight (g, kg, mg, cg, dg, mcg, ton)`,
  );
};

/** `gtin`: the GTIN normalised to 14 digits (warning when leading zeros were restored). */
export const toGtin: Transform = (cell) => {
  if (typeof cell === 'string' && isValidGtin(cell)) return { value: toGtin14(cell) };
  const r = parseGtin(cell);
  if (!r.ok) return err(r.code, r.message);
  return r.warning
    ? { value: r.gtin14, warning: { ...r.warning, severity: severityOf(r.warning.code) } }
    : { value: r.gtin14 };
};

/**
 * A code made of digits that must keep them all (retailer ids, category codes): leading zeros kept, Excel's scientific
 * notation refused.
 */
export function toIdentifier(cell: Cell): TransformResult {
  if (typeof cell === 'number') {
    if (!Number.isSafeInteger(cell) || cell < 0)
      return err(
        'IDENTIFIER_NOT_EXACT',
        `${String(cell)} is not a whole number: an identifier must keep all its digits (format the column as Text)`,
      );
    return { value: cell.toFixed(0) };
  }
  const text = cellText(cell).trim();
  if (SCIENTIFIC.test(text.replace(/\s/g, ''))) {
    return err(
      'IDENTIFIER_SCIENTIFIC_NOTATION',
      `"${text}" is in scientific notation: its digits are lost. Format the column as Text in the spreadsheet and export again`,
    );
  }
  return { value: text };
}

/**
 * Every column type's transform. `number` is read as `decimal`; the field's API type decides string or number in the
 * draft.
 */
export const TRANSFORMS: Readonly<Record<ColumnType, Transform>> = {
  string: toStringValue,
  decimal: toDecimal,
  number: toDecimal,
  integer: toInteger,
  date: toDate,
  boolean: toBoolean,
  uuid: toUuid,
  country: toCountry,
  unit: toUnit,
  weightUnit: toWeightUnit,
  quantity: toQuantity,
  gtin: toGtin,
  identifier: toIdentifier,
};

/**
 * The column types whose cells repeat (units, dates, flags, countries, amounts): their results are worth keeping per
 * column.
 */
const CACHED_TYPES: ReadonlySet<ColumnType> = new Set([
  'decimal',
  'number',
  'integer',
  'date',
  'boolean',
  'country',
  'unit',
  'weightUnit',
  'quantity',
]);

// Per column: at most this many distinct cells kept, each at most this long (a column of distinct values stops adding).
const CACHE_SIZE = 2048;
const CACHE_KEY_LENGTH = 64;

/**
 * One column's transform with its context bound; for the types of CACHED_TYPES, the results of text cells are kept
 * (results are frozen: every row that meets the cell shares one, and the caller adds row and column to its issues).
 */
export function columnTransform(
  type: ColumnType,
  transform: Transform,
  ctx: TransformContext,
): (cell: Cell) => TransformResult {
  if (!CACHED_TYPES.has(type)) return (cell) => transform(cell, ctx);
  const cache = new Map<string, TransformResult>();
  // Once the cache is full, lookups that keep missing (a column of distinct weights, say) cost a string hash each for
  // nothing: after CACHE_SIZE × 4 misses with fewer hits than misses, the column's cells go straight to the transform.
  let hits = 0;
  let missesWhenFull = 0;
  let bypass = false;
  return (cell) => {
    if (bypass || typeof cell !== 'string' || cell.length > CACHE_KEY_LENGTH) return transform(cell, ctx);
    let r = cache.get(cell);
    if (r === undefined) {
      r = deepFreeze(transform(cell, ctx));
      if (cache.size < CACHE_SIZE) cache.set(cell, r);
      else if (++missesWhenFull > CACHE_SIZE * 4 && hits < missesWhenFull) {
        bypass = true;
        cache.clear();
      }
    } else hits++;
    return r;
  };
}

function deepFreeze(r: TransformResult): TransformResult {
  if ('issue' in r) Object.freeze(r.issue);
  else if (r.warning) Object.freeze(r.warning);
  return Object.freeze(r);
}
