/**
 * The issue breakdown of a run (summary.json `issues`, issues.csv): one entry per issue code × column, tallied as the
 * rows stream by, in bounded memory whatever the sheet's size — at most {@link MAX_ENTRIES} entries, each with a few
 * row numbers and {@link VALUE_COUNTERS} value counters (Space-Saving: exact while an entry meets fewer distinct values
 * than it has counters, else each count over-estimates by at most its entry's `valueError`).
 */
import { redactPart } from '../../redact.ts';
import type { Issue, Severity } from '../types.ts';
import { issueMessage, type ReportLanguage } from '../report-language.ts';

/** Code × column pairs broken down; issues of further pairs are only counted (summary.json `notes` says how many). */
export const MAX_ENTRIES = 1000;
/** Value counters per entry. */
export const VALUE_COUNTERS = 64;
/** Values shown per entry, most frequent first. */
export const TOP_VALUES = 10;
/** Row numbers shown per entry, first rows first. */
export const FIRST_ROWS = 5;
/** Characters of a value kept: longer values are counted by their start (so two values may share a counter). */
export const VALUE_CHARS = 200;

/** One line of the breakdown (summary.json `issues[]`, issues.csv). */
export interface IssueBreakdownEntry {
  code: string;
  /** `error` when any of its issues is an error (a code whose severity varies), else `warning`. */
  severity: Severity;
  /** The sheet's column, null for issues of a whole row (a duplicate key, the API's answer…). */
  column: string | null;
  /** The mapped field, the first one named by its issues. */
  field: string | null;
  /** Distinct rows with this code on this column (exact). */
  rows: number;
  /** The first rows with it, in sheet order. */
  firstRows: number[];
  /** The most frequent values (rows having each), most frequent first; issues without a value are not counted. */
  values: { value: string; rows: number }[];
  /**
   * More distinct values than counters: each `rows` of `values` may be over by at most `valueError` (a value may also
   * be missing from the list); absent when the counts are exact.
   */
  approximate?: true;
  valueError?: number;
}

class Entry {
  severity: Severity;
  field: string | null;
  rows = 0;
  readonly firstRows: number[] = [];
  /**
   * The value counters as parallel lists (a min scan over a typed array, where iterating a Map of objects allocated an
   * entry per counter per row of a sheet whose values are all distinct), and each value's counter.
   */
  readonly #index = new Map<string, number>();
  readonly #values: string[] = [];
  readonly #counts = new Float64Array(VALUE_COUNTERS);
  evicted = false;
  constructor(
    readonly code: string,
    readonly column: string | null,
    first: Issue,
  ) {
    this.severity = first.severity;
    this.field = first.field;
  }

  add(row: number, i: Issue): void {
    this.rows++;
    if (this.firstRows.length < FIRST_ROWS) this.firstRows.push(row);
    if (i.severity === 'error') this.severity = 'error';
    this.field ??= i.field;
    if (i.value === null) return;
    const v = i.value.length > VALUE_CHARS ? i.value.slice(0, VALUE_CHARS) : i.value;
    const at = this.#index.get(v);
    const counts = this.#counts;
    if (at !== undefined) {
      counts[at]!++;
      return;
    }
    const used = this.#values.length;
    if (used < VALUE_COUNTERS) {
      this.#index.set(v, used);
      this.#values.push(v);
      counts[used] = 1;
      return;
    }
    // Space-Saving: the least counted value gives its counter to the new one, which takes over its count (the most it
    // can over-count by, since the smallest count only grows).
    let min = 0;
    for (let k = 1; k < VALUE_COUNTERS; k++) if (counts[k]! < counts[min]!) min = k;
    this.#index.delete(this.#values[min]!);
    this.#index.set(v, min);
    this.#values[min] = v;
    counts[min]!++;
    this.evicted = true;
  }

  result(): IssueBreakdownEntry {
    const values = this.#values;
    const counts = this.#counts;
    const order = values.map((_, k) => k);
    order.sort((a, b) => counts[b]! - counts[a]! || (values[a]! < values[b]! ? -1 : values[a]! > values[b]! ? 1 : 0));
    const out: IssueBreakdownEntry = {
      code: this.code,
      severity: this.severity,
      // Redacted as formatIssues redacts them in rows.* (a credential could sit in any text of the sheet).
      column: this.column === null ? null : redactPart(this.column),
      field: this.field,
      rows: this.rows,
      firstRows: [...this.firstRows],
      values: order.slice(0, TOP_VALUES).map((k) => ({ value: redactPart(values[k]!), rows: counts[k]! })),
    };
    if (this.evicted) {
      out.approximate = true;
      // Every counter's over-count is at most the smallest count, itself at most rows / VALUE_COUNTERS.
      out.valueError = Math.min(...counts);
    }
    return out;
  }
}

/** Tallies the issues of a run's lines, each line once: feed it every line of rows.* (report order), then read it. */
export class IssueBreakdown {
  readonly #entries = new Map<string, Entry>();
  /** Issues (of distinct rows) of code × column pairs past {@link MAX_ENTRIES}, and how many such pairs. */
  #overflowRows = 0;
  readonly #overflowKeys = new Set<string>();

  /**
   * The issues of one line. Lines without a row (archives) are left out: the breakdown is about the sheet's rows. A
   * code met twice on one column of a row counts the row once (the first issue's value).
   */
  add(row: number | null, issues: readonly Issue[]): void {
    if (row === null || issues.length === 0) return;
    for (let n = 0; n < issues.length; n++) {
      const i = issues[n]!;
      let again = false;
      for (let p = 0; p < n && !again; p++) again = issues[p]!.code === i.code && issues[p]!.column === i.column;
      if (again) continue;
      const key = `${i.code}\0${i.column ?? ''}\0${i.column === null ? 'n' : 'c'}`;
      let e = this.#entries.get(key);
      if (!e) {
        if (this.#entries.size >= MAX_ENTRIES) {
          this.#overflowRows++;
          // The keys past the cap are counted up to a bound too: only how many there are is reported.
          if (this.#overflowKeys.size < MAX_ENTRIES) this.#overflowKeys.add(key);
          continue;
        }
        e = new Entry(i.code, i.column, i);
        this.#entries.set(key, e);
      }
      e.add(row, i);
    }
  }

  /** The entries, most rows first (then by code and column, so equal counts keep one order). */
  entries(): IssueBreakdownEntry[] {
    return [...this.#entries.values()]
      .map((e) => e.result())
      .sort(
        (a, b) =>
          b.rows - a.rows ||
          (a.code < b.code ? -1 : a.code > b.code ? 1 : 0) ||
          ((a.column ?? '') < (b.column ?? '') ? -1 : (a.column ?? '') > (b.column ?? '') ? 1 : 0),
      );
  }

  /** A sentence for summary.json `notes` when code × column pairs went past the cap, else null. */
  note(): string | null {
    if (this.#overflowRows === 0) return null;
    const pairs = this.#overflowKeys.size >= MAX_ENTRIES ? `${MAX_ENTRIES} or more` : String(this.#overflowKeys.size);
    return `issues: ${pairs} further code × column pairs (${this.#overflowRows} row issues) are not broken down, past the first ${MAX_ENTRIES}`;
  }

  /** Puts the breakdown into a summary (and its note, when the cap was reached). */
  fill(summary: { issues?: IssueBreakdownEntry[]; notes?: string[] }): void {
    summary.issues = this.entries();
    const note = this.note();
    if (note) summary.notes = [...(summary.notes ?? []), note];
  }
}

/** Columns of issues.csv. */
export const ISSUES_CSV_COLUMNS = ['code', 'severity', 'column', 'field', 'rows', 'firstRows', 'values', 'message'];

/** Values as one readable cell: `"abc" (12); "x" (3)`, with `(approximate, ±n)` after them when the counts are. */
export function formatValues(e: IssueBreakdownEntry): string {
  const list = e.values.map((v) => `"${v.value}" (${v.rows})`).join('; ');
  return e.approximate ? `${list}${list ? ' ' : ''}(approximate, ±${e.valueError ?? 0})` : list;
}

/** A line of issues.csv, not yet neutralised; `message`: the code's message in the report's language. */
export function issueCsvFields(e: IssueBreakdownEntry, lang: ReportLanguage = 'en'): string[] {
  return [
    e.code,
    e.severity,
    e.column ?? '',
    e.field ?? '',
    String(e.rows),
    e.firstRows.join('; '),
    formatValues(e),
    issueMessage(lang, e.code, e),
  ];
}
