/**
 * The one order of every issue list a person reads (the CLI's table, summary.json `issues`, issues.csv, the console's
 * top issues, `run.finished`): errors before warnings, each by rows (most first), then by code and column so equal
 * counts keep one order. Warnings touching many rows never push out the errors that made rows invalid.
 */
import type { Severity } from '../types.ts';

/** What the order reads of an issue line. */
export interface OrderedIssue {
  code: string;
  severity: Severity;
  column: string | null;
  rows: number;
}

const rank = (s: Severity): number => (s === 'error' ? 0 : 1);
const text = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Compare function of the order: errors first, then most rows, then code, then column. */
export function errorsFirst(a: OrderedIssue, b: OrderedIssue): number {
  return (
    rank(a.severity) - rank(b.severity) ||
    b.rows - a.rows ||
    text(a.code, b.code) ||
    text(a.column ?? '', b.column ?? '')
  );
}

/** A copy of `issues` in that order (summaries written before it, read back, are put in it too). */
export function inIssueOrder<T extends OrderedIssue>(issues: readonly T[]): T[] {
  return [...issues].sort(errorsFirst);
}
