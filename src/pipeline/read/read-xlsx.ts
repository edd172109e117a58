import ExcelJS from 'exceljs';
import { ProductSyncError } from '../../errors.ts';
import type { ReadLimits } from './limits.ts';
import { issue } from '../issue-codes.ts';
import type { Cell, Issue, Sheet, SheetRow } from '../types.ts';
import { inspectWorkbook, type MergedRange } from './zip-guard.ts';

type RawValue = ExcelJS.CellValue | undefined;

// OOXML escapes characters XML cannot hold as `_xHHHH_` (`_x000D_` is a carriage return, `_x005F_` a literal `_`).
const OOXML_ESCAPE = /_x([0-9A-Fa-f]{4})_/g;
const unescapeOoxml = (s: string): string => (s.includes('_x') ? s.replace(OOXML_ESCAPE, (_, h: string) => String.fromCharCode(parseInt(h, 16))) : s);

/**
 * A cell as the pipeline wants it: rich text joined, hyperlink text, formula results, error cells null (with the error).
 * `strings`: the shared strings the inspection read, for cells exceljs left as `{sharedString: n}` (see readXlsx).
 */
function normalize(v: RawValue, strings: readonly string[] | null = null): { cell: Cell; error?: string } {
  if (v === null || v === undefined) return { cell: null };
  if (typeof v === 'string') return { cell: v.length === 0 || (v.charCodeAt(0) <= 32 && v.trim() === '') ? null : unescapeOoxml(v) };
  if (typeof v === 'number') return Number.isFinite(v) ? { cell: v } : { cell: null, error: '#NUM!' };
  if (typeof v === 'boolean') return { cell: v };
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? { cell: null, error: '#VALUE!' } : { cell: v };
  if (typeof v === 'object') {
    if ('error' in v) return { cell: null, error: String(v.error) };
    if ('richText' in v) return normalize(v.richText.map((r) => r.text ?? '').join(''));
    if ('formula' in v || 'sharedFormula' in v) {
      const result = (v as { result?: unknown }).result;
      if (result && typeof result === 'object' && 'error' in result) return { cell: null, error: String((result as { error: unknown }).error) };
      // exceljs's streaming reader parses an error result (`t="e"`) as a number, NaN, which it then drops: an error
      // result and a formula never calculated both come without a result, and the value is unknown either way.
      if (result === undefined || (typeof result === 'number' && Number.isNaN(result))) return { cell: null, error: 'a formula without a usable result (an error, or never calculated)' };
      return normalize(result as RawValue);
    }
    if ('text' in v) return normalize((v as { text: RawValue }).text);
    if ('sharedString' in v) {
      const text = strings?.[(v as { sharedString: number }).sharedString];
      return text === undefined ? { cell: null, error: 'a missing shared string' } : normalize(text);
    }
  }
  return { cell: String(v) };
}

/** Header text of a header cell: strings raw, numbers and booleans as text, dates as ISO days, empty as ''. */
function headerText(v: RawValue, strings: readonly string[] | null): string {
  const c = normalize(v, strings).cell;
  return c === null ? '' : c instanceof Date ? c.toISOString().slice(0, 10) : String(c);
}

/** Column letters of a 1-based column number. */
function columnLetters(n: number): string {
  let s = '';
  for (; n > 0; n = Math.floor((n - 1) / 26)) s = String.fromCharCode(65 + ((n - 1) % 26)) + s;
  return s;
}

/**
 * Opens a worksheet of an XLSX with exceljs's streaming WorkbookReader (shared strings and styles cached so dates are
 * recognised; the 1904 date system honoured), after inspectWorkbook has checked the zip (bombs, entities, damage).
 *
 * Values: strings raw (OOXML `_xHHHH_` escapes decoded), numbers as numbers — parsed once from the XML text, so an
 * identifier up to 2^53 (every GTIN) keeps its exact digits — booleans, dates as Date; rich text joined; a hyperlink
 * gives its text; a formula gives its cached result (a boolean result comes as 1/0: exceljs's streaming reader reads
 * it as a number); error cells (#N/A, #REF!…) and error results are null with a CELL_ERROR issue.
 * Policies:
 * - worksheet: the one named (case and surrounding spaces ignored), else the first visible one in the workbook's order.
 * - merged cells: the value stays in the top-left cell, the other cells read empty; each data row holding such a
 *   cell gets a MERGED_CELL warning naming the range, and a header cell inside a merge gets a MERGED_HEADER warning
 *   (on the first data row, `row` = the header row) — the mapping then sees an empty header there.
 * - hidden rows are read like the others, with a ROW_HIDDEN warning; hidden columns likewise, one HIDDEN_COLUMN
 *   warning each (on the first data row, `column` = its header) — mapRow keeps only those of mapped columns.
 * - rows wholly empty are skipped; cells right of the last header are ignored (ROW_RAGGED warning when not empty).
 */
export async function readXlsx(file: string, options: { sheet?: string; headerRow: number; limits: ReadLimits }): Promise<Sheet> {
  const { limits, headerRow } = options;
  const book = await inspectWorkbook(file, limits, options.sheet);
  const target = book.target;
  const targetNo = /sheet(\d+)\.xml$/.exec(target.path ?? '')?.[1];
  // exceljs defers a worksheet met before xl/sharedStrings.xml and reads it once the zip is done, but when the strings
  // are the zip's last entry it never gets them and leaves `{sharedString: n}` in their cells: the inspection read them
  // (only when they come after the worksheet), normalize looks those cells up there.
  const strings = book.sharedStrings;
  const unreadable = (err: unknown): ProductSyncError =>
    err instanceof ProductSyncError ? err : new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: the workbook cannot be read (${(err as Error)?.message ?? String(err)}); open it in Excel and save it again as .xlsx`, { cause: err });

  const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, { worksheets: 'emit', sharedStrings: 'cache', styles: 'cache', hyperlinks: 'ignore', entries: 'ignore' });
  // exceljs parses a worksheet as soon as it meets it; when the zip stores a worksheet before xl/workbook.xml it reads
  // `model.sheets` and `properties.model.date1904` before they exist and throws. Start it with what the inspection knows;
  // its own parse of workbook.xml replaces both when it comes.
  const early = reader as unknown as { model?: unknown; properties?: unknown };
  early.model ??= { sheets: [] };
  early.properties ??= { model: { date1904: book.date1904 } };
  const sheets = reader[Symbol.asyncIterator]();
  let ws: (ExcelJS.Worksheet & { id?: unknown }) | undefined;
  try {
    for (;;) {
      const next = await sheets.next();
      if (next.done) break;
      const sheet = next.value as unknown as ExcelJS.Worksheet & { id?: unknown };
      // exceljs names a sheet from the relationships when it can match them, else `Sheet<n>` after its part.
      if (sheet.name === target.name || (targetNo !== undefined && String(sheet.id) === targetNo && sheet.name === `Sheet${targetNo}`)) {
        ws = sheet;
        break;
      }
      // Skip this sheet's rows to reach the next one (the zip is read in order).
      for await (const _row of sheet as unknown as AsyncIterable<unknown>) void _row;
    }
  } catch (err) {
    throw unreadable(err);
  }
  if (!ws) throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: worksheet "${target.name}" could not be read from the workbook; open it in Excel and save it again as .xlsx`);
  const rowsIt = (ws as unknown as AsyncIterable<ExcelJS.Row>)[Symbol.asyncIterator]();
  // A consumer that stops early must not leave the zip stream (and its file descriptor) open.
  const close = async () => {
    (reader as unknown as { stream?: { destroy(): void } }).stream?.destroy();
    await Promise.allSettled([rowsIt.return?.(undefined), sheets.return?.(undefined)]);
  };

  // Rows before the header are skipped; the first row after it is kept for the data.
  let headers: string[] | null = null;
  const preamble: string[][] = [];
  let pending: ExcelJS.Row | null = null;
  try {
    for (;;) {
      const next = await rowsIt.next();
      if (next.done) break;
      const row = next.value;
      if (row.number < headerRow) {
        while (preamble.length < row.number - 1) preamble.push([]);
        preamble.push(Array.from((row.values as RawValue[]).slice(1), (v) => headerText(v, strings)));
        continue;
      }
      if (row.number === headerRow) {
        // row.values is sparse: Array.from fills the holes so every header is a string.
        headers = Array.from((row.values as RawValue[]).slice(1), (v) => headerText(v, strings));
        while (headers.length > 0 && headers.at(-1)!.trim() === '') headers.pop();
      } else pending = row;
      break;
    }
  } catch (err) {
    throw unreadable(err);
  }
  if (!headers || headers.length === 0) throw new ProductSyncError('PS_ERR_FILE_HEADER', `${file}: worksheet "${target.name}" has no header on row ${headerRow}`);
  if (headers.length > limits.columns) throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: ${headers.length} columns, more than the limit of ${limits.columns}`);
  const hdr = headers;
  const width = hdr.length;
  const columnName = (c: number) => (c <= width && hdr[c - 1] ? hdr[c - 1]! : columnLetters(c));

  // Warnings about the sheet as a whole ride on the first data row.
  const sheetIssues: Issue[] = [];
  for (const m of book.merges) {
    if (m.top <= headerRow && m.bottom >= headerRow && m.right > m.left && m.left <= width) {
      sheetIssues.push(issue('MERGED_HEADER', { row: headerRow, column: columnName(m.left), value: m.ref, message: `header cells ${m.ref} are merged: the title is read in column ${columnLetters(m.left)} only, the other columns have an empty header` }));
    }
  }
  for (const h of book.hiddenColumns) {
    for (let c = h.min; c <= Math.min(h.max, width); c++) {
      sheetIssues.push(issue('HIDDEN_COLUMN', { row: headerRow, column: columnName(c), message: `column ${columnLetters(c)} is hidden in Excel; it is imported like the others` }));
    }
  }

  // Merged ranges reaching data rows, swept in row order.
  const merges = book.merges.filter((m) => m.bottom > headerRow && (m.bottom > m.top || m.right > m.left));
  let nextMerge = 0;
  let active: MergedRange[] = [];
  const mergeIssues = (row: number): Issue[] => {
    while (nextMerge < merges.length && merges[nextMerge]!.top <= row) active.push(merges[nextMerge++]!);
    if (active.length === 0) return [];
    active = active.filter((m) => m.bottom >= row);
    const out: Issue[] = [];
    for (const m of active) {
      if (m.left > width) continue;
      const firstCol = row === m.top ? m.left + 1 : m.left;
      if (firstCol > Math.min(m.right, width)) continue;
      out.push(issue('MERGED_CELL', { row, column: columnName(firstCol), value: m.ref, message: `cells ${m.ref} are merged: the value is only in ${columnLetters(m.left)}${m.top}, this row reads ${firstCol === m.right ? 'this cell' : `columns ${columnLetters(firstCol)}–${columnLetters(Math.min(m.right, width))}`} as empty` }));
    }
    return out;
  };

  let lastRow = headerRow;
  const toSheetRow = (r: ExcelJS.Row): SheetRow | null => {
    // A row without its `r` attribute follows the previous one.
    const row = Number.isInteger(r.number) && r.number > lastRow ? r.number : lastRow + 1;
    lastRow = row;
    const values = r.values as RawValue[];
    const issues: Issue[] = [];
    const cells: Cell[] = new Array<Cell>(width).fill(null);
    let any = false;
    for (let i = 0; i < width; i++) {
      const v = values[i + 1];
      if (v === undefined || v === null) continue;
      const { cell, error } = normalize(v, strings);
      if (error) {
        any = true;
        issues.push(issue('CELL_ERROR', { row, column: hdr[i] || columnLetters(i + 1), value: error, message: `the cell holds ${error.startsWith('#') ? `the Excel error ${error}` : error}: fix the formula or type the value` }));
        continue;
      }
      if (typeof cell === 'string' && cell.length > limits.cellChars) {
        any = true;
        issues.push(issue('CELL_TOO_LONG', { row, column: hdr[i] || columnLetters(i + 1), value: `${cell.slice(0, 40)}…`, message: `cell has ${cell.length} characters, more than ${limits.cellChars}` }));
        continue;
      }
      if (cell !== null) any = true;
      cells[i] = cell;
    }
    for (let i = width + 1; i < values.length; i++) {
      if (normalize(values[i], strings).cell !== null) {
        issues.push(issue('ROW_RAGGED', { row, message: `cells right of the last header (column ${columnLetters(width)}) are ignored` }, 'warning'));
        break;
      }
    }
    const merged = mergeIssues(row);
    if (!any) return null;
    if (merged.length > 0) issues.push(...merged);
    if (book.hiddenRows.has(row)) issues.push(issue('ROW_HIDDEN', { row, message: 'the row is hidden in Excel; it is imported like the others' }));
    return { row, cells, issues };
  };

  async function* rows(): AsyncGenerator<SheetRow> {
    let n = 0;
    let first = true;
    const emit = (s: SheetRow): SheetRow => {
      if (first && sheetIssues.length > 0) s.issues.unshift(...sheetIssues);
      first = false;
      return s;
    };
    try {
      if (pending) {
        const s = toSheetRow(pending);
        pending = null;
        if (s) {
          n++;
          yield emit(s);
        }
      }
      for (;;) {
        const next = await rowsIt.next();
        if (next.done) break;
        const s = toSheetRow(next.value);
        if (!s) continue;
        if (++n > limits.rows) throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: more than ${limits.rows} data rows`);
        yield emit(s);
      }
    } catch (err) {
      throw unreadable(err);
    } finally {
      await close();
    }
  }

  const info: Record<string, string | number | boolean> = { sheet: target.name, dateSystem: book.date1904 ? '1904' : '1900' };
  if (book.hiddenRows.size > 0) info.hiddenRows = book.hiddenRows.size;
  if (book.merges.length > 0) info.mergedRanges = book.merges.length;
  return { file, format: 'xlsx', sheetName: target.name, headerRow, headers, preamble, rows: rows(), info };
}
