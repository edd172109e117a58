/**
 * The one module that streams a workbook with exceljs: the rows of the worksheet to read, as exceljs gives them.
 * readXlsx (read-xlsx.ts) shapes them into SheetRows on the same thread; the XLSX reader thread (xlsx-worker.ts) runs
 * this alone and sends the rows to the calling thread, which shapes them there.
 */
import { ReadStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type ExcelJS from 'exceljs';
import { ProductSyncError } from '../../errors.ts';
import type { WorksheetRows, XlsxRow } from './read-xlsx.ts';
import type { WorkbookInspection } from './zip-guard.ts';

// exceljs's streaming reader alone (exceljs 4.4.0 is pinned, its package has no `exports` map): the package's entry
// loads the whole library (the in-memory workbook, the writers, CSV) — ~200 ms here against ~110 ms for the reader,
// time the XLSX reader thread spends before it can start parsing, and every inline read its first time.
const WorkbookReader = createRequire(import.meta.url)('exceljs/lib/stream/xlsx/workbook-reader.js') as typeof ExcelJS.stream.xlsx.WorkbookReader;

/**
 * Opens the worksheet `book.target` of an inspected workbook with exceljs's streaming WorkbookReader (shared strings
 * and styles cached so dates are recognised; the 1904 date system honoured). Run it only after inspectWorkbook has
 * checked the zip (bombs, entities, damage). Errors are exceljs's own, except a worksheet that exceljs does not emit
 * (PS_ERR_FILE_UNREADABLE): the caller words them (readXlsx's `unreadable`).
 */
export async function openWorksheet(file: string, book: Pick<WorkbookInspection, 'target' | 'date1904'>): Promise<WorksheetRows> {
  const target = book.target;
  const targetNo = /sheet(\d+)\.xml$/.exec(target.path ?? '')?.[1];
  const reader = new WorkbookReader(file, { worksheets: 'emit', sharedStrings: 'cache', styles: 'cache', hyperlinks: 'ignore', entries: 'ignore' });
  // exceljs parses a worksheet as soon as it meets it; when the zip stores a worksheet before xl/workbook.xml it reads
  // `model.sheets` and `properties.model.date1904` before they exist and throws. Start it with what the inspection knows;
  // its own parse of workbook.xml replaces both when it comes.
  const early = reader as unknown as { model?: unknown; properties?: unknown };
  early.model ??= { sheets: [] };
  early.properties ??= { model: { date1904: book.date1904 } };
  const sheets = reader[Symbol.asyncIterator]();
  let ws: (ExcelJS.Worksheet & { id?: unknown }) | undefined;
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
  if (!ws) throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: worksheet "${target.name}" could not be read from the workbook; open it in Excel and save it again as .xlsx`);
  // exceljs's Row has `number` and a `values` getter (1-based, sparse): an XlsxRow as it is.
  const rowsIt = (ws as unknown as AsyncIterable<ExcelJS.Row>)[Symbol.asyncIterator]() as unknown as AsyncIterator<XlsxRow>;
  const copy = copyOf(ws);
  let closed = false;
  return {
    rows: rowsIt,
    // A consumer that stops early must not leave the zip stream (and its file descriptor) open, nor exceljs's copy.
    close: async () => {
      if (closed) return;
      closed = true;
      (reader as unknown as { stream?: { destroy(): void } }).stream?.destroy();
      await Promise.allSettled([rowsIt.return?.(undefined)]);
      if (copy) {
        // The zip is read by then and exceljs waits to be asked for the worksheet after this one: asked, it removes
        // this one's copy (closing the descriptor `tmp` keeps open), then opens the next copied worksheet, if any, which
        // is left unread and removed in turn.
        discard(copy);
        const copies = [copy.path];
        try {
          for (;;) {
            const next = await sheets.next();
            if (next.done) break;
            const later = copyOf(next.value);
            if (later) {
              discard(later);
              copies.push(later.path);
            }
          }
        } catch {
          // exceljs failing here has nothing left to read: the copies are removed below all the same.
        }
        // exceljs's removal is asynchronous (close, then unlink): the files are gone before close() resolves, even if
        // the process exits at once (exceljs no longer lists them for its exit handler).
        await Promise.allSettled(copies.map((path) => rm(path, { force: true })));
      }
      await Promise.allSettled([sheets.return?.(undefined)]);
    },
  };
}

/**
 * exceljs's copy of a worksheet, when it made one: exceljs copies each worksheet it meets in the zip before the shared
 * strings (or the workbook's relationships) — Excel and LibreOffice store every worksheet so — to a temp file of the
 * `tmp` package, as large as the worksheet unzipped, holding a descriptor to it open, and parses the copy once the zip
 * is read; it removes the copy only when asked for the next worksheet. Such a worksheet reads from a file stream of
 * its copy.
 */
function copyOf(ws: unknown): (ReadStream & { path: string }) | null {
  const it = (ws as { iterator?: unknown }).iterator;
  return it instanceof ReadStream && typeof it.path === 'string' ? (it as ReadStream & { path: string }) : null;
}

/**
 * Drops a copy's stream unread. Its file may be opened after exceljs has already removed it (the open of a stream is
 * asynchronous, exceljs removes the copy when asked for the next worksheet): the ENOENT then comes as an `error` event
 * that nobody listens to any more, an uncaught exception, unless listened to here.
 */
function discard(stream: ReadStream): void {
  stream.on('error', () => undefined);
  stream.destroy();
}
