/**
 * Starting the report thread (report-thread.ts), apart from the rest of it so the CLI can start one early: the thread
 * spends ~150 ms loading its modules, and a validate of a large sheet that starts it while its own modules load has it
 * ready for the first rows instead of waiting for it at the end. Imports nothing of the pipeline.
 */
import { statSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/** Sheets of at least this many bytes get a report thread when their row count is not known before the report opens (validate). */
export const REPORT_THREAD_BYTES = 4 * 1024 * 1024;

// The thread runs the same build as this module: dist/*.js, or src/*.ts through tsx (tests, benches), registered in
// the thread first (a thread does not inherit the loader hooks of the one that starts it).
const FROM_SOURCE = import.meta.url.endsWith('.ts');
const ENTRY = new URL(`./report-worker.${FROM_SOURCE ? 'ts' : 'js'}`, import.meta.url);

let warm: Worker | null = null;

/** A report thread, waiting for the `open` message that names its report: the one started early if any, else a new one. */
export function startReportThread(): Worker {
  const w = warm ?? (FROM_SOURCE
    ? new Worker(`import('tsx/esm/api').then((m) => m.register()).then(() => import(${JSON.stringify(ENTRY.href)}));`, { eval: true })
    : new Worker(ENTRY));
  warm = null;
  w.ref();
  return w;
}

/**
 * Starts a report thread now for a run of `file` that will want one (a sheet of REPORT_THREAD_BYTES or more), to be
 * taken by the next {@link startReportThread}. It holds the process open only once taken; an unreadable file starts none.
 */
export function warmReportThread(file: string): void {
  if (warm) return;
  let size: number;
  try {
    size = statSync(file).size;
  } catch {
    return;
  }
  if (size < REPORT_THREAD_BYTES) return;
  warm = startReportThread();
  warm.unref();
  // Until taken nobody listens: a thread that fails to start is dropped (the run then starts another and sees why).
  const w = warm;
  w.once('error', () => {
    if (warm === w) warm = null;
  });
}
