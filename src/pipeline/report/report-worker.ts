/**
 * The thread side of {@link openReportThread} (report-thread.ts): a report writer (report.ts) fed by the run's thread
 * with batches of rows; each batch is acknowledged once written, finish and abort answer with their outcome. The first
 * failure is sent back and every later message is ignored.
 */
import { parentPort } from 'node:worker_threads';
import { fileWriteError } from '../../fs-errors.ts';
import { createReportWriter, rejectedLine, ROW_FIELDS, type ReportWriter } from './report.ts';
import { errorMessage, type FromReportThread, type ToReportThread } from './report-thread-messages.ts';

const port = parentPort!;

let failure: FromReportThread | null = null;
// The report's directory, once named: a refusal of the file system goes back worded as the writer words it
// (fs-errors.ts).
let dir = '';
const fail = (err: unknown) => {
  failure ??= { error: errorMessage(dir ? fileWriteError(err, 'cannot write the report to', dir) : err) };
  port.postMessage(failure);
};
// The writer, once the first message (`open`) has named the report: a thread may be started before its run knows it.
let chain: Promise<ReportWriter | null> = Promise.resolve(null);
const line: string[] = new Array<string>(ROW_FIELDS).fill('');
// Fields of a line of rejected.*, once the report is named (`open`).
let rejectedWidth = 0;
let rejectedValues: string[] = [];

async function handle(w: ReportWriter, m: ToReportThread): Promise<void> {
  if ('ops' in m) {
    for (const op of m.ops) {
      if ('rows' in op) {
        const fields = op.rows.split('\0');
        // The packed string ends with a NUL: split gives one empty string more than there are fields.
        // A promise only when a file must drain: an await per line would cost a turn of the microtask queue each.
        // One array for every line: the writer turns a line into text at once and keeps no reference to it.
        for (let i = 0; i + ROW_FIELDS < fields.length; i += ROW_FIELDS) {
          for (let k = 0; k < ROW_FIELDS; k++) line[k] = fields[i + k]!;
          const wait = w.addRowFields(line);
          if (wait) await wait;
        }
      } else {
        const fields = op.rejected.split('\0');
        for (let i = 0; i + rejectedWidth < fields.length; i += rejectedWidth) {
          for (let k = 0; k < rejectedWidth; k++) rejectedValues[k] = fields[i + k]!;
          await w.addRejectedFields(rejectedValues);
        }
      }
    }
    port.postMessage({ ack: true } satisfies FromReportThread);
  } else if ('finish' in m) {
    const { files } = await w.finish(m.finish);
    port.postMessage({
      done: { files, ...(m.finish.notes ? { notes: m.finish.notes } : {}) },
    } satisfies FromReportThread);
  } else {
    await w.abort();
    port.postMessage({ aborted: true } satisfies FromReportThread);
  }
}

// Messages are handled one after the other, in the order they were sent. After a failure only abort still works (it
// removes the temp files); anything else is answered with the failure again.
port.on('message', (m: ToReportThread) => {
  chain = chain.then(async (w) => {
    if ('open' in m) {
      dir = m.open.dir;
      rejectedWidth = rejectedLine(m.open.options).width;
      rejectedValues = new Array<string>(rejectedWidth).fill('');
      return createReportWriter(m.open.dir, m.open.options).catch((err: unknown) => {
        fail(err);
        return null;
      });
    }
    if (failure && 'abort' in m) {
      await w?.abort().catch(() => undefined);
      port.postMessage({ aborted: true } satisfies FromReportThread);
    } else if (failure || !w) {
      port.postMessage(failure ?? { error: { message: 'report writer not open' } });
    } else {
      await handle(w, m).catch(fail);
    }
    return w;
  });
});
