/**
 * readXlsx (read-xlsx.ts) with the worksheet's parse in a worker thread: the thread inflates and parses the worksheet
 * and hands its rows over in batches (structured clone, ~2 µs a row each side); this thread reads the head of the
 * workbook (while the thread starts), tells the thread to start, scans the rest of the zip while the thread parses,
 * then shapes the rows (sheetFromRows), and its caller maps and validates them while the next ones are parsed — two
 * cores busy instead of one. Same sheet, same rows, same errors (code and message): no row is taken before the scan
 * passed, and a scan that fails ends the thread and is thrown as readXlsx throws it.
 *
 * Memory stays bounded: the thread posts at most a few batches ahead of the one being read here (xlsx-worker.ts;
 * XLSX_THREAD_EARLY_WINDOW of them while the scan runs).
 * Ending the rows (read to the end, a failure, a `break` or `return()`) stops the thread, which closes the file it
 * opened. The thread is unreferenced except while this thread waits for it, so a sheet opened and never read to its
 * end does not keep the process alive (on the calling thread a paused file stream does not either).
 */
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../../worker-thread.ts';
import type { ReadLimits } from './limits.ts';
import { sheetFromRows, type XlsxRow } from './read-xlsx.ts';
import type { Sheet } from '../types.ts';
import { errorFrom, XLSX_THREAD_EARLY_WINDOW, XLSX_THREAD_WINDOW, type FromXlsxThread, type ToXlsxThread, type XlsxThreadData } from './xlsx-thread-messages.ts';
import { startInspection, type InspectionStarted, type WorkbookInspection } from './zip-guard.ts';

const ACK: ToXlsxThread = { ack: true };

/** Opens a worksheet of an XLSX as readXlsx does, parsed in a worker thread (see the module comment). */
export async function openXlsxThread(file: string, options: { sheet?: string; headerRow: number; limits: ReadLimits }): Promise<Sheet> {
  const worker = startWorkerThread('pipeline/read/xlsx-worker', { workerData: { file } satisfies XlsxThreadData });
  worker.unref();
  const inbox: FromXlsxThread[] = [];
  // The thread failed outside the read (it could not start, or exited): every later wait throws it.
  let gone: Error | null = null;
  let wake: (() => void) | null = null;
  const wakeUp = () => {
    wake?.();
    wake = null;
  };
  worker.on('message', (m: FromXlsxThread) => {
    inbox.push(m);
    wakeUp();
  });
  worker.on('error', (err) => {
    gone ??= err;
    wakeUp();
  });
  worker.on('exit', (code) => {
    gone ??= new Error(`the XLSX reader thread exited (code ${code})`);
    wakeUp();
  });
  const receive = async (): Promise<FromXlsxThread> => {
    while (inbox.length === 0) {
      if (gone) throw gone;
      // Referenced only while waiting: the process stays up for the message it waits for, and only then.
      worker.ref();
      try {
        await new Promise<void>((resolve) => (wake = resolve));
      } finally {
        worker.unref();
      }
    }
    return inbox.shift()!;
  };

  let stopped = false;
  // Ends the thread (it closes its file and exits, see xlsx-worker.ts).
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    inbox.length = 0;
    await stopThread(worker, () => gone !== null);
  };

  // The rows as the thread read them, one batch at a time; a failure there is thrown here, as readXlsx would throw it.
  // The thread starts with the early window (the scan runs meanwhile): the acks of the first batches taken are kept
  // back until it is down to the normal one.
  let surplus = XLSX_THREAD_EARLY_WINDOW - XLSX_THREAD_WINDOW;
  let batch: XlsxRow[] = [];
  let at = 0;
  const done: IteratorReturnResult<undefined> = { done: true, value: undefined };
  const rows: AsyncIterator<XlsxRow> = {
    async next(): Promise<IteratorResult<XlsxRow>> {
      while (at >= batch.length) {
        batch = [];
        at = 0;
        if (stopped) return done;
        const m = await receive().catch(async (err: unknown) => {
          await stop();
          throw err;
        });
        if ('rows' in m) {
          batch = m.rows;
          // Taken: the thread may send one more (unless it was ahead by more than the normal window).
          if (surplus > 0) surplus--;
          else worker.postMessage(ACK);
        } else {
          await stop();
          if ('error' in m) throw errorFrom(m.error);
        }
      }
      return { done: false, value: batch[at++]! };
    },
    async return(): Promise<IteratorResult<XlsxRow>> {
      await stop();
      return done;
    },
  };

  // The head of the workbook is read here (the zip's directory and declared sizes, workbook.xml: the worksheet to read,
  // its parts) while the thread starts; then the thread parses, and the zip is scanned here meanwhile (every entry
  // inflated: bombs, entities, damage; merged cells, hidden rows), as readXlsx does before it parses.
  // Security: the thread may so read a zip that then fails the scan (a lying size header, an entity declaration, a
  // damaged part), but only in this worker thread, which is stopped as soon as the scan fails, and none of its rows
  // reaches the caller: sheetFromRows takes the first ones only once the scan passed. The thread inflates no part past
  // the size its zip entry declares (zip-entries.ts), and the head checked those sizes against the read limits.
  let inspection: InspectionStarted;
  try {
    inspection = await startInspection(file, options.limits, options.sheet);
  } catch (err) {
    await stop();
    throw err;
  }
  const { target, date1904, parts } = inspection.head;
  worker.postMessage({ start: { target, date1904, parts }, window: XLSX_THREAD_EARLY_WINDOW } satisfies ToXlsxThread);
  let book: WorkbookInspection;
  try {
    book = await inspection.scan();
  } catch (err) {
    await stop();
    throw err;
  }
  return sheetFromRows(file, book, { rows, close: stop }, options);
}

// How long a thread asked to stop gets to exit before it is terminated all the same.
const STOP_GRACE_MS = 5000;

/**
 * Asks the reader thread to stop and waits for it to exit (see xlsx-worker.ts for why it is not simply terminated);
 * one that does not within STOP_GRACE_MS (stuck in a long parse step) is terminated.
 */
async function stopThread(worker: Worker, exited: () => boolean): Promise<void> {
  if (exited()) return;
  worker.ref();
  const gone = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.postMessage({ stop: true } satisfies ToXlsxThread);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), STOP_GRACE_MS)));
  try {
    if ((await Promise.race([gone, late])) === 'late') await worker.terminate();
  } finally {
    clearTimeout(timer);
  }
}
