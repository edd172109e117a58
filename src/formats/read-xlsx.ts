import { ProductSyncError } from '../errors.ts';
import { columnLetters } from './column-letters.ts';
import type { ReadLimits } from './limits.ts';
import { issue, type Issue } from '../issue-codes.ts';
import type { Cell, Sheet, SheetRow } from './sheet.ts';
import type { RawValue, WorksheetRows, XlsxRow } from './worksheet-xml.ts';
import { openWorksheet } from './xlsx-worksheet.ts';
import { inspectWorkbook, type MergedRange, type WorkbookInspection } from './zip-guard.ts';

// OOXML escapes characters XML cannot hold as `_xHHHH_` (`_x000D_` is a carriage return, `_x005F_` a literal `_`).
const OOXML_ESCAPE = /_x([0-9A-Fa-f]{4})_/g;
const unescapeOoxml = (s: string): string =>
  s.includes('_x') ? s.replace(OOXML_ESCAPE, (_, h: string) => String.fromCharCode(parseInt(h, 16))) : s;

/** A cell as the pipeline wants it: blank text empty, OOXML escapes decoded, error values null (with the error). */
function normalize(v: RawValue): { cell: Cell; error?: string } {
  if (v === null || v === undefined) return { cell: null };
  if (typeof v === 'string')
    return { cell: v.length === 0 || (v.charCodeAt(0) <= 32 && v.trim() === '') ? null : unescapeOoxml(v) };
  if (typeof v === 'number') return Number.isFinite(v) ? { cell: v } : { cell: null, error: '#NUM!' };
  if (typeof v === 'boolean') return { cell: v };
  if (v instanceof Date) return Number.isNaN(v.getTime()) ? { cell: null, error: '#VALUE!' } : { cell: v };
  return { cell: null, error: v.error };
}

/** Header text of a header cell: strings raw, numbers and booleans as text, dates as ISO days, empty as ''. */
function headerText(v: RawValue): string {
  const c = normalize(v).cell;
  return c === null ? '' : c instanceof Date ? c.toISOString().slice(0, 10) : String(c);
}

/**
 * Opens a worksheet of an XLSX, streamed by its own reader (xlsx-worksheet.ts: shared strings and date formats read
 * first, the 1904 date system honoured), after inspectWorkbook has checked the zip (bombs, entities, damage).
 *
 * Values: strings raw (OOXML `_xHHHH_` escapes decoded), numbers as numbers — parsed once from the XML text, so an
 * identifier up to 2^53 (every GTIN) keeps its exact digits — booleans, dates as Date (numbers in a date or time
 * format); rich text joined; a hyperlink gives its text; a formula gives its cached result, typed as a value would be
 * (text, number, date, boolean); error cells (#N/A, #REF!…), error results and formulas without a cached result are
 * null with a CELL_ERROR issue. Policies:
 * - worksheet: the one named (case and surrounding spaces ignored), else the first visible one in the workbook's order.
 * - merged cells: the value stays in the top-left cell, the other cells read empty; each data row holding such a
 *   cell gets a MERGED_CELL warning naming the range, and a header cell inside a merge gets a MERGED_HEADER warning
 *   (on the first data row, `row` = the header row) — the mapping then sees an empty header there.
 * - hidden rows are read like the others, with a ROW_HIDDEN warning; hidden columns likewise, one HIDDEN_COLUMN
 *   warning each (on the first data row, `column` = its header) — mapRow keeps only those of mapped columns.
 * - rows wholly empty are skipped; cells right of the last header are ignored (ROW_RAGGED warning when not empty).
 */
export async function readXlsx(
  file: string,
  options: { sheet?: string; headerRow: number; limits: ReadLimits },
): Promise<Sheet> {
  const book = await inspectWorkbook(file, options.limits, options.sheet);
  let source: WorksheetRows;
  try {
    source = await openWorksheet(file, book);
  } catch (err) {
    throw unreadable(file, err);
  }
  return sheetFromRows(file, book, source, options);
}

/** A failure to read the worksheet as the file-level error naming the file; ProductSyncErrors as they are. */
function unreadable(file: string, err: unknown): ProductSyncError {
  return err instanceof ProductSyncError
    ? err
    : new ProductSyncError(
        'PS_ERR_FILE_UNREADABLE',
        `${file}: the workbook cannot be read (${(err as Error)?.message ?? String(err)}); open it in Excel and save it again as .xlsx`,
        { cause: err },
      );
}

/**
 * The sheet of an inspected workbook from its worksheet's rows as they are read (`source`, from openWorksheet):
 * header, preamble, the policies of readXlsx, rows as SheetRows. Rows are read
 * up to the header before it returns; `source` is closed when the rows end, fail or are left, and on a failure before.
 */
async function sheetFromRows(
  file: string,
  book: WorkbookInspection,
  source: WorksheetRows,
  options: { headerRow: number; limits: ReadLimits },
): Promise<Sheet> {
  const { limits, headerRow } = options;
  const target = book.target;
  const rowsIt = source.rows;
  const close = source.close;
  const fail = async (err: unknown): Promise<never> => {
    await close();
    throw unreadable(file, err);
  };

  let top: Awaited<ReturnType<typeof readUpToHeader>>;
  try {
    top = await readUpToHeader(rowsIt, headerRow);
  } catch (err) {
    return fail(err);
  }
  const { headers, preamble } = top;
  let pending = top.pending;
  if (!headers || headers.length === 0)
    return fail(
      new ProductSyncError(
        'PS_ERR_FILE_HEADER',
        `${file}: worksheet "${target.name}" has no header on row ${headerRow}`,
      ),
    );
  if (headers.length > limits.columns)
    return fail(
      new ProductSyncError(
        'PS_ERR_FILE_TOO_LARGE',
        `${file}: ${headers.length} columns, more than the limit of ${limits.columns}`,
      ),
    );
  const hdr = headers;
  const width = hdr.length;
  const columnName = (c: number) => (c <= width && hdr[c - 1] ? hdr[c - 1]! : columnLetters(c));

  // Warnings about the sheet as a whole ride on the first data row.
  const sheetIssues = sheetWideIssues(book, headerRow, width, columnName);
  const mergeIssues = mergedCellSweep(book, headerRow, width, columnName);
  const toSheetRow = sheetRowReader(book, headerRow, hdr, limits, mergeIssues);

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
        if (++n > limits.rows)
          throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: more than ${limits.rows} data rows`);
        yield emit(s);
      }
    } catch (err) {
      throw unreadable(file, err);
    } finally {
      await close();
    }
  }

  const gen = rows();
  const stream: AsyncIterableIterator<SheetRow> = {
    [Symbol.asyncIterator]() {
      return this;
    },
    next: () => gen.next(),
    // return() on a generator not started yet skips its `finally`: the worksheet is closed here as well.
    async return() {
      const r = await gen.return(undefined);
      await close();
      return r;
    },
  };

  const info: Record<string, string | number | boolean> = {
    sheet: target.name,
    dateSystem: book.date1904 ? '1904' : '1900',
  };
  if (book.hiddenRows.size > 0) info.hiddenRows = book.hiddenRows.size;
  if (book.merges.length > 0) info.mergedRanges = book.merges.length;
  return { file, format: 'xlsx', sheetName: target.name, headerRow, headers, preamble, rows: stream, info };
}

/**
 * The worksheet's rows up to its header: the rows before it (the preamble), the header's titles, and the first data row
 * when it came with the header's read (`pending`).
 */
async function readUpToHeader(
  rowsIt: WorksheetRows['rows'],
  headerRow: number,
): Promise<{ headers: string[] | null; preamble: string[][]; pending: XlsxRow | null }> {
  // Rows before the header are skipped; the first row after it is kept for the data.
  let headers: string[] | null = null;
  const preamble: string[][] = [];
  let pending: XlsxRow | null = null;
  for (;;) {
    const next = await rowsIt.next();
    if (next.done) break;
    const row = next.value;
    if (row.number < headerRow) {
      while (preamble.length < row.number - 1) preamble.push([]);
      const line = Array.from(row.values.slice(1), (v) => headerText(v));
      while (line.length > 0 && line.at(-1) === '') line.pop();
      preamble.push(line);
      continue;
    }
    if (row.number === headerRow) {
      // Empty cells are undefined in row.values: headerText makes every header a string.
      headers = Array.from(row.values.slice(1), (v) => headerText(v));
      while (headers.length > 0 && headers.at(-1)!.trim() === '') headers.pop();
    } else pending = row;
    break;
  }
  return { headers, preamble, pending };
}

/** Warnings about the sheet as a whole: merged header cells, hidden columns. */
function sheetWideIssues(
  book: WorkbookInspection,
  headerRow: number,
  width: number,
  columnName: (c: number) => string,
): Issue[] {
  const sheetIssues: Issue[] = [];
  for (const m of book.merges) {
    if (m.top <= headerRow && m.bottom >= headerRow && m.right > m.left && m.left <= width) {
      sheetIssues.push(
        issue('MERGED_HEADER', {
          row: headerRow,
          column: columnName(m.left),
          value: m.ref,
          message: `header cells ${m.ref} are merged: the title is read in column ${columnLetters(m.left)} only, the other columns have an empty header`,
        }),
      );
    }
  }
  for (const h of book.hiddenColumns) {
    for (let c = h.min; c <= Math.min(h.max, width); c++) {
      sheetIssues.push(
        issue('HIDDEN_COLUMN', {
          row: headerRow,
          column: columnName(c),
          message: `column ${columnLetters(c)} is hidden in Excel; it is imported like the others`,
        }),
      );
    }
  }

  return sheetIssues;
}

/** The MERGED_CELL issues of each data row, asked in row order: the merged ranges reaching data rows, swept. */
function mergedCellSweep(
  book: WorkbookInspection,
  headerRow: number,
  width: number,
  columnName: (c: number) => string,
): (row: number) => Issue[] {
  const merges = book.merges.filter((m) => m.bottom > headerRow && (m.bottom > m.top || m.right > m.left));
  let nextMerge = 0;
  let active: MergedRange[] = [];
  return (row: number): Issue[] => {
    while (nextMerge < merges.length && merges[nextMerge]!.top <= row) active.push(merges[nextMerge++]!);
    if (active.length === 0) return [];
    active = active.filter((m) => m.bottom >= row);
    const out: Issue[] = [];
    for (const m of active) {
      if (m.left > width) continue;
      const firstCol = row === m.top ? m.left + 1 : m.left;
      if (firstCol > Math.min(m.right, width)) continue;
      out.push(
        issue('MERGED_CELL', {
          row,
          column: columnName(firstCol),
          value: m.ref,
          message: `cells ${m.ref} are merged: the value is only in ${columnLetters(m.left)}${m.top}, this row reads ${firstCol === m.right ? 'this cell' : `columns ${columnLetters(firstCol)}–${columnLetters(Math.min(m.right, width))}`} as empty`,
        }),
      );
    }
    return out;
  };
}

/** A worksheet row as a SheetRow (cells normalized, cell issues, merged / hidden warnings); null for an empty row. */
function sheetRowReader(
  book: WorkbookInspection,
  headerRow: number,
  hdr: string[],
  limits: ReadLimits,
  mergeIssues: (row: number) => Issue[],
): (r: XlsxRow) => SheetRow | null {
  const width = hdr.length;
  let lastRow = headerRow;
  return (r: XlsxRow): SheetRow | null => {
    // A row without its `r` attribute follows the previous one.
    const row = Number.isInteger(r.number) && r.number > lastRow ? r.number : lastRow + 1;
    lastRow = row;
    const values = r.values;
    const issues: Issue[] = [];
    const cells: Cell[] = new Array<Cell>(width).fill(null);
    let any = false;
    for (let i = 0; i < width; i++) {
      const v = values[i + 1];
      if (v === undefined || v === null) continue;
      const { cell, error } = normalize(v);
      if (error) {
        any = true;
        issues.push(
          issue('CELL_ERROR', {
            row,
            column: hdr[i] || columnLetters(i + 1),
            value: error,
            message: `the cell holds ${error.startsWith('#') ? `the Excel error ${error}` : error}: fix the formula or type the value`,
          }),
        );
        continue;
      }
      if (typeof cell === 'string' && cell.length > limits.cellChars) {
        any = true;
        issues.push(
          issue('CELL_TOO_LONG', {
            row,
            column: hdr[i] || columnLetters(i + 1),
            value: `${cell.slice(0, 40)}…`,
            message: `cell has ${cell.length} characters, more than ${limits.cellChars}`,
          }),
        );
        continue;
      }
      if (cell !== null) any = true;
      cells[i] = cell;
    }
    for (let i = width + 1; i < values.length; i++) {
      if (normalize(values[i]).cell !== null) {
        issues.push(
          issue(
            'ROW_RAGGED',
            { row, message: `cells right of the last header (column ${columnLetters(width)}) are ignored` },
            'warning',
          ),
        );
        break;
      }
    }
    const merged = mergeIssues(row);
    if (!any) return null;
    if (merged.length > 0) issues.push(...merged);
    if (book.hiddenRows.has(row))
      issues.push(issue('ROW_HIDDEN', { row, message: 'the row is hidden in Excel; it is imported like the others' }));
    return { row, cells, issues };
  };
}
