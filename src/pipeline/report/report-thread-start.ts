/**
 * Starting the report thread (report-thread.ts), apart from the rest of it so the CLI can start one early: the thread
 * takes a while to start and load its modules, and a validate of a large sheet that starts it while its own modules
 * load has it ready for the first rows instead of waiting for it at the end. Imports nothing of the pipeline.
 */
import { statSync } from 'node:fs';
import type { Worker } from 'node:worker_threads';
import { startWorkerThread } from '../../worker-thread.ts';

/**
 * Sheets of at least this many bytes get a report thread when their row count is not known before the report opens
 * (validate).
 */
export const REPORT_THREAD_BYTES = 4 * 1024 * 1024;

let warm: Worker | null = null;

/**
 * A report thread, waiting for the `open` message that names its report: the one started early if any, else a new one.
 */
export function startReportThread(): Worker {
  const w = warm ?? startWorkerThread('pipeline/report/report-worker');
  warm = null;
  w.ref();
  return w;
}

/**
 * True for a sheet of REPORT_THREAD_BYTES or more (the rule of a run that does not know its rows before its report
 * opens); false for one that cannot be read.
 */
export function sheetWantsReportThread(file: string): boolean {
  try {
    return statSync(file).size >= REPORT_THREAD_BYTES;
  } catch {
    return false;
  }
}

/**
 * Starts a report thread now for a run of `file` that will want one ({@link sheetWantsReportThread}), to be taken by
 * the next {@link startReportThread}. It holds the process open only once taken.
 */
export function warmReportThread(file: string): void {
  if (warm || !sheetWantsReportThread(file)) return;
  warm = startReportThread();
  warm.unref();
  // Until taken nobody listens: a thread that fails to start is dropped (the run then starts another and sees why).
  const w = warm;
  w.once('error', () => {
    if (warm === w) warm = null;
  });
}
