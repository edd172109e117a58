/** What the calling thread and the XLSX reader thread (xlsx-thread.ts, xlsx-worker.ts) send each other, as data. */
import type { ThreadErrorMessage } from '../../errors.ts';
export { errorFrom, errorMessage } from '../../errors.ts';
import type { XlsxRow } from './read-xlsx.ts';
import type { WorkbookInspection } from './zip-guard.ts';

/** The thread's workerData. */
export interface XlsxThreadData {
  file: string;
}

/**
 * Batches the reader thread may have posted and the calling thread not yet taken, normally: each take is acknowledged
 * (`ack`), and the thread waits while WINDOW batches wait for the calling thread (a consumer slower than the parse holds
 * the parse back instead of letting rows pile up).
 */
export const XLSX_THREAD_WINDOW = 4;

/**
 * The window while the calling thread still scans the zip (startInspection's `scan`) and takes no rows: the thread
 * parses ~90 000 rows a second of the 25-column bench sheet, 1 000-row batches, so the ~0.2 s of a large scan fill it.
 * The calling thread withholds the acks of the first EARLY − WINDOW batches it takes, back to the normal window.
 * Bounded: 16 batches of 1 000 rows of the bench sheet are ~19 MB on the calling thread's heap (4: ~5 MB).
 */
export const XLSX_THREAD_EARLY_WINDOW = 16;

/**
 * To the reader thread: the worksheet to read as soon as the head of the inspection is known, with the window to
 * start with (batches it may post before the first ack), then one `ack` for each batch taken; `stop` when the calling
 * thread wants no more rows (the thread closes what it opened and exits).
 */
export type ToXlsxThread = { start: WorkbookHeadForThread; window: number } | { ack: true } | { stop: true };

/** What the reader thread needs of the inspection. */
export type WorkbookHeadForThread = Pick<WorkbookInspection, 'target' | 'date1904' | 'parts'>;

/** From the reader thread: batches of the worksheet's rows as they are read, then the end or the error that stopped them. */
export type FromXlsxThread = { rows: XlsxRow[] } | { end: true } | { error: ThreadErrorMessage };
