/** What the run's thread and the report thread (report-thread.ts, report-worker.ts) send each other, as data. */
import { ProductSyncError, type ErrorCode } from '../../errors.ts';
import type { Cell, Issue } from '../types.ts';
import type { RowOutcome, RunSummary } from './report.ts';

/** One call of the writer: a line of rows.*, or a line of rejected.* (row, source cells, issues). */
export type ReportOp = { row: RowOutcome } | { rejected: [number, readonly Cell[] | readonly unknown[], Issue[]] };

/** To the report thread: a batch of lines (acknowledged once written), then finish, or abort. */
export type ToReportThread = { ops: ReportOp[] } | { finish: RunSummary } | { abort: true };

/** An error as it crosses the thread boundary. */
export interface ErrorMessage {
  message: string;
  code?: string;
  productSync?: boolean;
}

/** From the report thread: a batch written, the report finished (its files, summary.json's notes), aborted, or the first failure. */
export type FromReportThread = { ack: true } | { done: { files: string[]; notes?: string[] } } | { aborted: true } | { error: ErrorMessage };

/** An error as a message (structured clone keeps neither its class nor its code). */
export function errorMessage(err: unknown): ErrorMessage {
  const e = err as { message?: unknown; code?: unknown } | null;
  return {
    message: typeof e?.message === 'string' ? e.message : String(err),
    ...(typeof e?.code === 'string' ? { code: e.code } : {}),
    ...(err instanceof ProductSyncError ? { productSync: true } : {}),
  };
}

/** The error a message stands for: a ProductSyncError with its code again, or an Error carrying the code (ENOENT…). */
export function errorFrom(m: ErrorMessage): Error {
  if (m.productSync && m.code) return new ProductSyncError(m.code as ErrorCode, m.message);
  return Object.assign(new Error(m.message), m.code ? { code: m.code } : {});
}
