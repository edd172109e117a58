/** What the run's thread and the report thread (report-thread.ts, report-worker.ts) send each other, as data. */
import type { ThreadErrorMessage } from '../../errors.ts';
export { errorFrom, errorMessage } from '../../errors.ts';
import type { ReportWriterOptions, RunSummary } from './report.ts';

/**
 * Lines of rows.* or of rejected.* packed into one string: each line's fields (report.ts rowFields, rejectedLine),
 * every field followed by a NUL, which neither holds. One string crosses the thread boundary as one copy, where
 * objects are cloned field by field.
 */
export type ReportOp = { rows: string } | { rejected: string };

/**
 * To the report thread: the report to write (first, unanswered), batches of lines (acknowledged once written), then
 * finish, or abort.
 */
export type ToReportThread =
  | { open: { dir: string; options: ReportWriterOptions } }
  | { ops: ReportOp[] }
  | { finish: RunSummary }
  | { abort: true };

/**
 * From the report thread: a batch written, the report finished (its files, summary.json's notes), aborted, or the first
 * failure.
 */
export type FromReportThread =
  { ack: true } | { done: { files: string[]; notes?: string[] } } | { aborted: true } | { error: ThreadErrorMessage };
