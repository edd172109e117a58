/**
 * A report writer running in a worker thread: the run's thread turns each row into its neutralised fields (rowFields),
 * each rejected row into its fields (rejectedLine: the issues redacted there, once) and hands them over packed into
 * one string per batch (one copy, where cloning row objects costs about a microsecond
 * a row) instead of building every CSV line and XLSX row itself, so on two cores the report is written while the next
 * rows are read and checked. Same files, same calls as createReportWriter (report.ts).
 *
 * Memory stays bounded: past WINDOW_CHARS of packed lines in flight, addRow waits for the thread to catch up. The
 * window is wide (tens of thousands of lines) so the run's thread goes on while the report thread starts (loading its
 * modules) or is slowed by a burst, instead of waiting for each batch.
 */
import {
  putRowFields,
  rejectedLine,
  ROW_FIELDS,
  type ReportWriter,
  type ReportWriterOptions,
  type RowOutcome,
  type RunSummary,
} from './report.ts';
import { errorFrom, type FromReportThread, type ReportOp, type ToReportThread } from './report-thread-messages.ts';
import { startReportThread } from './report-thread-start.ts';
import type { Cell, Issue } from '../types.ts';

// Lines per message, and characters of packed lines sent and not yet written by the thread before addRow waits.
const BATCH = 500;
const WINDOW_CHARS = 8 * 1024 * 1024;

/**
 * The first `n` fields of `list`, each followed by a NUL (ReportOp), as one flat string: the join of those fields and
 * an empty one, `list[n]` (set to '' here, a slot the next batch fills again). A NUL appended to the join instead makes
 * a rope of the two, which posting copies flat again, a second copy of the batch.
 */
function packed(list: string[], n: number): string {
  list[n] = '';
  return (n + 1 === list.length ? list : list.slice(0, n + 1)).join('\0');
}

/** The arguments of an addRejected call. */
type RejectedCall = [number, readonly Cell[] | readonly unknown[], Issue[]];

/** A reply being waited for: an acknowledged batch, or the answer to finish / abort. */
interface Waiter {
  resolve: (m: FromReportThread) => void;
  reject: (err: Error) => void;
}

/**
 * Opens a run's report writer in a worker thread (see the module comment); reconcile reports are not written this way.
 * Fails as createReportWriter does (the report directory cannot be made or written) on the first call after it.
 */
export function openReportThread(dir: string, options: ReportWriterOptions): ReportWriter {
  if (options.reconcile) throw new Error('openReportThread: reconcile reports are written in the run thread');
  const worker = startReportThread();
  // Replies come in the order of the messages that ask for one (every message does but `open`, answered only by a
  // failure).
  const waiting: Waiter[] = [];
  let error: Error | null = null;
  let ops: ReportOp[] = [];
  // The fields of the lines of rows.* since the last op was pushed (the first `used` of `fields`), packed into one
  // string when it is (see ReportOp: joined once, a flat string, where appending to a string makes a rope that posting
  // flattens), and how many lines the batch holds. One list for every batch, filled from the start each time: a list
  // grown by push anew for each batch was most of what the run's thread allocated for its report. The list holds one
  // slot more, left '' (see packed).
  const fields: string[] = new Array<string>(BATCH * ROW_FIELDS + 1).fill('');
  let used = 0;
  let lines = 0;
  // The lines of rejected.* the same way, made here (their issues redacted once, in this thread) and packed apart: the
  // two files' lines need no order between them.
  const rejected = rejectedLine(options);
  const rejectedFields: string[] = [];
  let rejectedUsed = 0;
  const pack = (): void => {
    if (used > 0) ops.push({ rows: packed(fields, used) });
    if (rejectedUsed > 0) ops.push({ rejected: packed(rejectedFields, rejectedUsed) });
    used = 0;
    rejectedUsed = 0;
  };
  // Batches sent and not known to be written, oldest first, and their characters.
  const inFlight: { acked: Promise<unknown>; chars: number }[] = [];
  let inFlightChars = 0;
  let ended = false;
  const failWith = (err: Error) => {
    error ??= err;
    for (const w of waiting.splice(0)) w.reject(error);
  };
  worker.on('message', (m: FromReportThread) => {
    if ('error' in m) failWith(errorFrom(m.error));
    else waiting.shift()?.resolve(m);
  });
  worker.on('error', (err) => failWith(err));
  worker.on('exit', (code) => failWith(new Error(`the report thread of ${dir} exited (code ${code})`)));
  worker.postMessage({ open: { dir, options } } satisfies ToReportThread);

  const send = (m: ToReportThread): Promise<FromReportThread> => {
    if (error) return Promise.reject(error);
    const reply = new Promise<FromReportThread>((resolve, reject) => waiting.push({ resolve, reject }));
    worker.postMessage(m);
    return reply;
  };
  const flush = (): void => {
    pack();
    lines = 0;
    if (ops.length === 0) return;
    let chars = 0;
    for (const op of ops) chars += 'rows' in op ? op.rows.length : op.rejected.length;
    const acked = send({ ops });
    ops = [];
    // A failure is reported by the next call (the thread's error is kept), not as an unhandled rejection here.
    acked.catch(() => undefined);
    inFlight.push({ acked, chars });
    inFlightChars += chars;
  };
  // Waits for the oldest batches until the ones in flight fit the window again.
  const drain = async (): Promise<void> => {
    while (inFlightChars > WINDOW_CHARS) {
      const oldest = inFlight.shift()!;
      inFlightChars -= oldest.chars;
      await oldest.acked;
    }
  };
  const add = (op: RejectedCall | RowOutcome): Promise<void> | undefined => {
    if (ended) return Promise.reject(new Error(`report writer of ${dir}: a row after finish or abort`));
    if (error) return Promise.reject(error);
    if (Array.isArray(op)) {
      rejected.put(rejectedFields, rejectedUsed, op[0], op[1], op[2]);
      rejectedUsed += rejected.width;
    } else {
      putRowFields(fields, used, op);
      used += ROW_FIELDS;
    }
    if (++lines >= BATCH) flush();
    // Past the window the caller waits for the oldest batches.
    return inFlightChars > WINDOW_CHARS ? drain() : undefined;
  };
  const end = async (): Promise<void> => {
    ended = true;
    await worker.terminate();
  };

  // Stops the thread's writer, then the thread. Even after a failure the thread removes its temp files; a thread that
  // is gone has nothing left to remove.
  const abortThread = async (): Promise<void> => {
    if (ended) return;
    try {
      ops = [];
      used = 0;
      rejectedUsed = 0;
      if (!error) await send({ abort: true });
      else {
        worker.postMessage({ abort: true } satisfies ToReportThread);
        // Its answer, not the failure repeated for a batch sent before (terminated then, the thread would leave its
        // temp files).
        await new Promise<void>((resolve) => {
          const answered = (m: FromReportThread) => {
            if ('aborted' in m) done();
          };
          const done = () => {
            worker.off('message', answered);
            worker.off('exit', done);
            resolve();
          };
          worker.on('message', answered);
          worker.once('exit', done);
        });
      }
    } catch {
      // Aborting: the run's own error is the one to report.
    } finally {
      await end();
    }
  };

  return {
    addRow: (o) => add(o),
    addRowFields: () => Promise.reject(new Error('openReportThread: addRow makes the fields')),
    addRejected: async (row, cells, issues) => add([row, cells, issues]),
    addRejectedFields: () => Promise.reject(new Error('openReportThread: addRejected makes the fields')),
    addReconcile: () => Promise.reject(new Error('openReportThread: no reconcile report')),
    async finish(summary: RunSummary) {
      if (ended) throw new Error(`report writer of ${dir}: finish after finish or abort`);
      let reply: FromReportThread;
      try {
        flush();
        reply = await send({ finish: summary });
      } catch (err) {
        // A failed finish (a full disk) leaves no half report behind: the thread is told to abort first.
        await abortThread();
        throw err;
      }
      await end();
      if (!('done' in reply)) throw new Error(`report thread of ${dir}: unexpected answer to finish`);
      if (reply.done.notes) summary.notes = reply.done.notes;
      return { dir, files: reply.done.files };
    },
    abort: abortThread,
  };
}
