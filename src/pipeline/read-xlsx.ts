import ExcelJS from 'exceljs';
import { ProductSyncError } from '../errors.ts';
import type { ReadLimits } from './limits.ts';
import type { Cell, Issue, Sheet, SheetRow } from './types.ts';
import { guardWorkbookZip } from './zip-guard.ts';

type RawValue = ExcelJS.CellValue | undefined;

/** A cell as the pipeline wants it: rich text joined, hyperlink text, formula results, error cells null (with an issue). */
function normalize(v: RawValue): { cell: Cell; error?: string } {
  if (v === null || v === undefined) return { cell: null };
  if (typeof v === 'string') return { cell: v.trim() === '' ? null : v };
  if (typeof v === 'number' || typeof v === 'boolean' || v instanceof Date) return { cell: v };
  if (typeof v === 'object') {
    if ('error' in v) return { cell: null, error: String(v.error) };
    if ('richText' in v) return normalize(v.richText.map((r) => r.text).join(''));
    if ('formula' in v || 'sharedFormula' in v) {
      const result = (v as { result?: unknown }).result;
      if (result && typeof result === 'object' && 'error' in result) return { cell: null, error: String((result as { error: unknown }).error) };
      return normalize(result as RawValue);
    }
    if ('text' in v) return normalize((v as { text: RawValue }).text);
  }
  return { cell: String(v) };
}

/**
 * Opens a worksheet of an XLSX with exceljs's streaming reader (styles cached so dates are recognised, 1904 system
 * honoured), after the zip guard. Policies: the named sheet, else the first visible one; merged cells keep their value in
 * the top-left cell only (the others read empty); hidden rows are read like the others, with a warning on the row.
 */
export async function readXlsx(file: string, options: { sheet?: string; headerRow: number; limits: ReadLimits }): Promise<Sheet> {
  await guardWorkbookZip(file, options.limits);
  const { limits } = options;
  const unreadable = (err: unknown): ProductSyncError =>
    err instanceof ProductSyncError ? err : new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: the workbook cannot be read (${(err as Error)?.message ?? err}); open it in Excel and save it again as .xlsx`, { cause: err });

  const reader = new ExcelJS.stream.xlsx.WorkbookReader(file, { worksheets: 'emit', sharedStrings: 'cache', styles: 'cache', hyperlinks: 'ignore', entries: 'ignore' });
  const iterator = reader[Symbol.asyncIterator]();
  const seen: string[] = [];
  let ws: ExcelJS.Worksheet | undefined;
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      const sheet = next.value as unknown as ExcelJS.Worksheet & { state?: string; name: string };
      seen.push(sheet.name);
      // Worksheets arrive in the zip's order; "first visible" means the workbook's tab order (xl/workbook.xml).
      const tabs = ((reader as unknown as { model?: { sheets?: { name: string; state?: string }[] } }).model?.sheets ?? []);
      const firstVisible = tabs.find((t) => t.state !== 'hidden' && t.state !== 'veryHidden')?.name;
      const match = options.sheet
        ? sheet.name.trim().toLowerCase() === options.sheet.trim().toLowerCase()
        : firstVisible !== undefined ? sheet.name === firstVisible : sheet.state !== 'hidden' && sheet.state !== 'veryHidden';
      if (match) {
        ws = sheet;
        break;
      }
      // Skip this sheet's rows to reach the next one.
      for await (const _row of sheet as unknown as AsyncIterable<unknown>) void _row;
    }
  } catch (err) {
    throw unreadable(err);
  }
  if (!ws) {
    throw new ProductSyncError('PS_ERR_FILE_HEADER', options.sheet ? `${file}: no worksheet named "${options.sheet}" (the workbook has: ${seen.join(', ') || 'none'})` : `${file}: the workbook has no visible worksheet`);
  }
  const sheetName = (ws as { name: string }).name;
  const rowsIt = (ws as unknown as AsyncIterable<ExcelJS.Row>)[Symbol.asyncIterator]();

  let headers: string[] | null = null;
  const early: ExcelJS.Row[] = [];
  try {
    for (;;) {
      const next = await rowsIt.next();
      if (next.done) break;
      const row = next.value;
      if (row.number < options.headerRow) continue;
      if (row.number === options.headerRow) {
        // row.values is sparse: Array.from fills the holes so every header is a string.
        const values = Array.from((row.values as RawValue[]).slice(1));
        headers = values.map((v) => {
          const c = normalize(v).cell;
          return c === null ? '' : c instanceof Date ? c.toISOString().slice(0, 10) : String(c);
        });
        while (headers.length > 0 && headers.at(-1) === '') headers.pop();
        break;
      }
      early.push(row);
      break;
    }
  } catch (err) {
    throw unreadable(err);
  }
  if (!headers || headers.length === 0) throw new ProductSyncError('PS_ERR_FILE_HEADER', `${file}: worksheet "${sheetName}" has no header on row ${options.headerRow}`);
  if (headers.length > limits.columns) throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: ${headers.length} columns, more than the limit of ${limits.columns}`);
  const hdr = headers;
  const width = hdr.length;

  const toSheetRow = (row: ExcelJS.Row): SheetRow | null => {
    const values = row.values as RawValue[];
    const issues: Issue[] = [];
    const cells: Cell[] = new Array(width).fill(null);
    let any = false;
    for (let i = 0; i < width; i++) {
      const { cell, error } = normalize(values[i + 1]);
      if (error) issues.push({ row: row.number, column: hdr[i] ?? null, field: null, value: error, code: 'CELL_ERROR', severity: 'error', message: `the cell holds the Excel error ${error}: fix the formula or type the value` });
      if (typeof cell === 'string' && cell.length > limits.cellChars) {
        issues.push({ row: row.number, column: hdr[i] ?? null, field: null, value: `${cell.slice(0, 40)}…`, code: 'CELL_TOO_LONG', severity: 'error', message: `cell has ${cell.length} characters, more than ${limits.cellChars}` });
        continue;
      }
      cells[i] = cell;
      if (cell !== null || error) any = true;
    }
    // exceljs's streaming reader does not expose hidden rows (it drops the attribute), so ROW_HIDDEN only fires where it can.
    const extra = values.slice(width + 1).some((v) => normalize(v).cell !== null);
    if (extra) issues.push({ row: row.number, column: null, field: null, value: null, code: 'ROW_RAGGED', severity: 'warning', message: `cells right of the last header (column ${width}) are ignored` });
    if (!any) return null;
    if ((row as { hidden?: boolean }).hidden) issues.push({ row: row.number, column: null, field: null, value: null, code: 'ROW_HIDDEN', severity: 'warning', message: 'the row is hidden in Excel; it is imported like the others' });
    return { row: row.number, cells, issues };
  };

  async function* rows(): AsyncGenerator<SheetRow> {
    let n = 0;
    try {
      for (const r of early) {
        const s = toSheetRow(r);
        if (s) yield s;
      }
      for (;;) {
        const next = await rowsIt.next();
        if (next.done) break;
        const s = toSheetRow(next.value);
        if (!s) continue;
        if (++n > limits.rows) throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: more than ${limits.rows} rows`);
        yield s;
      }
    } catch (err) {
      throw unreadable(err);
    }
  }

  const date1904 = Boolean((reader as unknown as { properties?: { date1904?: boolean } }).properties?.date1904);
  return { file, format: 'xlsx', sheetName, headerRow: options.headerRow, headers, rows: rows(), info: { sheet: sheetName, date1904 } };
}
