/**
 * The thread side of {@link openXlsxThread} (xlsx-thread.ts): the thread starts while the calling thread reads the head
 * of the workbook (startInspection); once told the worksheet to read, it streams it (openWorksheet) — while the
 * calling thread still scans the zip — and posts its rows as they are read, in batches, then the end — or the error,
 * after the rows read before it. The calling thread shapes the rows (sheetFromRows): the thread inflates and parses
 * the worksheet and nothing else, the part that keeps a core busy.
 *
 * At most `window` batches are posted and not yet taken by the calling thread (each take is acknowledged, see
 * XLSX_THREAD_WINDOW): a consumer slower than the parse holds the thread back instead of letting rows pile up in its
 * inbox. When the calling thread has the last message, wants no more rows, or the scan of the zip failed, it asks this
 * one to stop: the thread closes the worksheet (its file) and exits between two of its turns. (Not Worker.terminate():
 * Node 20 aborts the whole process when a thread is terminated between the creation and the initialisation of a zlib
 * stream — "close before init" — and the thread creates one for each part it inflates.)
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { WorksheetRows, XlsxRow } from './read-xlsx.ts';
import { errorMessage, type FromXlsxThread, type ToXlsxThread, type WorkbookHeadForThread, type XlsxThreadData } from './xlsx-thread-messages.ts';
import { openWorksheet } from './xlsx-worksheet.ts';

// Rows per message: posting costs ~2 µs a row of 25 cells and a fixed cost per message (a wake-up on each side), so
// 1 000 rows (~600 KB) make the fixed part negligible; the window bounds how many wait for the calling thread.
const BATCH = 1000;

const port = parentPort!;
const { file } = workerData as XlsxThreadData;

let credits = 0;
let wake: (() => void) | null = null;
let start!: (book: WorkbookHeadForThread) => void;
const started = new Promise<WorkbookHeadForThread>((resolve) => (start = resolve));
// The worksheet once told which (openWorksheet opens the file at once: a stop while it reads the shared strings waits
// for it, to close the file).
let opening: Promise<WorksheetRows> | null = null;
port.on('message', (m: ToXlsxThread) => {
  if ('stop' in m) {
    void (opening ?? Promise.resolve(null))
      .then((source) => source?.close())
      .catch(() => undefined)
      .then(() => process.exit(0));
  } else if ('start' in m) {
    credits += m.window;
    start(m.start);
  } else {
    credits++;
    wake?.();
    wake = null;
  }
});

const post = (m: FromXlsxThread) => port.postMessage(m);
const send = async (rows: XlsxRow[]): Promise<void> => {
  while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
  credits--;
  post({ rows });
};

let batch: XlsxRow[] = [];
let failure: unknown = null;
try {
  opening = started.then((book) => openWorksheet(file, book));
  const source = await opening;
  for (;;) {
    const next = await source.rows.next();
    if (next.done) break;
    batch.push(next.value);
    if (batch.length >= BATCH) {
      const full = batch;
      batch = [];
      await send(full);
    }
  }
} catch (err) {
  failure = err;
}
// The rows read before a failure come first, as they would on the calling thread.
if (batch.length > 0) await send(batch).catch((err: unknown) => (failure ??= err));
post(failure === null ? { end: true } : { error: errorMessage(failure) });
