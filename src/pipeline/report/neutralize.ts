/**
 * Formula-injection neutralisation (OWASP "CSV injection") for text written to CSV and XLSX reports, and its undoing on
 * re-import.
 */
import type { Sheet, SheetRow } from '../types.ts';

const DANGEROUS_START = /^[=+\-@\t\r]/;
// Only a plain negative decimal is let through: a spreadsheet shows it unchanged. `+1` is quoted like any `+` text,
// since a spreadsheet would drop its sign (phone numbers such as +33123456789 would lose it too).
const PLAIN_NEGATIVE_NUMBER = /^-(\d+([.,]\d+)?|[.,]\d+)$/;

// The first characters of text neutralize may quote (`= + - @`, tab, CR, and `'` of text that looks quoted already).
const RISKY_FIRST: ReadonlySet<number> = new Set([..."=+-@\t\r'"].map((c) => c.charCodeAt(0)));

/** Text a spreadsheet would evaluate: starts with `= + - @`, tab or CR, and is not a plain negative number. */
function dangerous(text: string): boolean {
  return DANGEROUS_START.test(text) && !PLAIN_NEGATIVE_NUMBER.test(text);
}

/** Text that looks neutralised already: one or more `'` before dangerous text (`'=1+2`, `''=1+2`). */
function looksQuoted(text: string): boolean {
  if (!text.startsWith("'")) return false;
  let i = 0;
  while (text[i] === "'") i++;
  return dangerous(text.slice(i));
}

/**
 * Text safe to open in a spreadsheet: NUL removed; a value starting with `= + - @`, tab or CR gets a leading `'` so it
 * is shown, never evaluated — except a plain negative number such as `-12.5` or `-3,75`, which stays readable as it is.
 * A value that already reads as neutralised (`'=1+2`) gets one more `'`, so that {@link unneutralize} gives back
 * exactly the original value.
 */
export function neutralize(text: string): string {
  if (text === '') return text;
  const clean = text.includes('\0') ? text.replace(/\0/g, '') : text;
  if (!RISKY_FIRST.has(clean.charCodeAt(0))) return clean;
  return dangerous(clean) || looksQuoted(clean) ? `'${clean}` : clean;
}

/**
 * The inverse of {@link neutralize} for a cell read back from one of our CSV reports: a leading `'` before text
 * neutralize would have quoted (`'=1+2`, `'+33 6 12`, `''=x`) is removed; any other value is returned as it is
 * (`'abc`, `'-5`, `-5`). Apply it only to files we wrote ({@link isRejectedHeader}): in a supplier's own sheet a
 * leading `'` is data.
 */
export function unneutralize(cell: string): string {
  return looksQuoted(cell) ? cell.slice(1) : cell;
}

/**
 * The column of `rejected.csv` / `rejected.xlsx` that holds the row's number in the imported sheet (a mapping never
 * reads it).
 */
export const REJECTED_ROW_COLUMN = 'product-sync:row';
/** The last column of `rejected.*`: the row's issues. */
export const REJECTED_ISSUES_COLUMN = 'issues';

const sameHeader = (a: string | undefined, b: string): boolean => (a ?? '').trim().toLowerCase() === b;

/**
 * True when a sheet's headers end with `product-sync:row`, `issues`: the marker of a `rejected.*` file product-sync
 * wrote (docs/reports.md). Its CSV cells were neutralised by us, so they are read back through {@link unneutralize}.
 */
export function isRejectedHeader(headers: readonly string[]): boolean {
  const n = headers.length;
  return (
    n >= 2 && sameHeader(headers[n - 2], REJECTED_ROW_COLUMN) && sameHeader(headers[n - 1], REJECTED_ISSUES_COLUMN)
  );
}

/**
 * The sheet as re-imported: a `rejected.csv` we wrote ({@link isRejectedHeader}) has the `'` we put before formula-like
 * values removed from its cells; any other sheet (a supplier's, or a `rejected.xlsx`, whose cells are text and were
 * written without prefix) is returned as it is. Call it on the sheet openSheet returns, before any row is read.
 */
export function restoreRejectedSheet(sheet: Sheet): Sheet {
  if (sheet.format !== 'csv' || !isRejectedHeader(sheet.headers)) return sheet;
  const source = sheet.rows;
  async function* rows(): AsyncGenerator<SheetRow> {
    for await (const r of source) {
      for (let i = 0; i < r.cells.length; i++) {
        const c = r.cells[i];
        if (typeof c === 'string' && c.startsWith("'")) r.cells[i] = unneutralize(c);
      }
      yield r;
    }
  }
  return { ...sheet, rows: rows(), info: { ...sheet.info, rejectedFile: true } };
}

/** One CSV field per RFC 4180 (after neutralize): quoted when it holds the delimiter, a quote, CR or LF. */
export function csvField(text: string): string {
  return csvQuote(neutralize(text));
}

/** Text already neutralised as one CSV field: quoted when it holds the delimiter, a quote, CR or LF. */
export function csvQuote(text: string): string {
  return text !== '' && CSV_SPECIAL.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

const CSV_SPECIAL = /[",\r\n]/;
