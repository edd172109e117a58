/**
 * The issue breakdown of a run (summary.json `issues`, issues.csv): one entry per issue code × column, tallied as the
 * rows stream by, in bounded memory whatever the sheet's size — at most {@link MAX_ENTRIES} entries, each with a few
 * row numbers and {@link VALUE_COUNTERS} value counters (Space-Saving: exact while an entry meets fewer distinct values
 * than it has counters, else each count over-estimates by at most its entry's `valueError`).
 */
import { redactPart } from '../../redact.ts';
import { ruleIdOf } from '../../rule-catalogue.ts';
import type { Issue, Severity } from '../types.ts';
import { errorsFirst } from './issue-order.ts';
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
  /** The rule id (src/rule-catalogue.ts, or a mapping's own rule: its code has an entry per rule); null: none. */
  rule: string | null;
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
  readonly rule: string | null;
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
    this.rule = ruleIdOf(first);
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
      rule: this.rule,
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

/**
 * Codes that are no row's problem but a column's: a label found only in a fallback language because the reference list
 * has no label in the sheet's language (the reference API gives labels per language; a supplier cannot fix that). Said
 * once per column in summary.json `notes`, kept off the rows and the breakdown.
 */
export const COLUMN_NOTICE_CODES: ReadonlySet<string> = new Set(['REF_NO_TRANSLATION']);

/** A row's issues without the column notices; the same array when it holds none. */
export function rowIssues<T extends Pick<Issue, 'code'>>(issues: readonly T[]): readonly T[] {
  let any = false;
  for (let i = 0; i < issues.length && !any; i++) any = COLUMN_NOTICE_CODES.has(issues[i]!.code);
  return any ? issues.filter((i) => !COLUMN_NOTICE_CODES.has(i.code)) : issues;
}

/** A column notice as tallied: its rows, and the first issue's message and value as the example. */
interface ColumnNotice {
  code: string;
  column: string | null;
  field: string | null;
  rows: number;
  message: string;
  value: string | null;
}

/** Most columns a run's notes name (a column notice per column; past this they are counted). */
const MAX_NOTICES = 100;

/** Tallies the issues of a run's lines, each line once: feed it every line of rows.* (report order), then read it. */
export class IssueBreakdown {
  readonly #entries = new Map<string, Entry>();
  readonly #notices = new Map<string, ColumnNotice>();
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
      for (let p = 0; p < n && !again; p++)
        again = issues[p]!.code === i.code && issues[p]!.column === i.column && issues[p]!.rule === i.rule;
      if (again) continue;
      // An issue naming its own rule (a mapping's rule, a cross-field rule) has an entry per rule.
      const key = `${i.code}\0${i.column ?? ''}\0${i.column === null ? 'n' : 'c'}${i.rule === undefined ? '' : `\0${i.rule}`}`;
      if (COLUMN_NOTICE_CODES.has(i.code)) {
        const n = this.#notices.get(key);
        if (n) n.rows++;
        else if (this.#notices.size < MAX_NOTICES)
          this.#notices.set(key, {
            code: i.code,
            column: i.column,
            field: i.field,
            rows: 1,
            message: i.message,
            value: i.value,
          });
        continue;
      }
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

  /** The entries, errors first, each by rows (issue-order.ts: the one order of every issue list). */
  entries(): IssueBreakdownEntry[] {
    return [...this.#entries.values()].map((e) => e.result()).sort(errorsFirst);
  }

  /** A sentence for summary.json `notes` when code × column pairs went past the cap, else null. */
  note(): string | null {
    if (this.#overflowRows === 0) return null;
    const pairs = this.#overflowKeys.size >= MAX_ENTRIES ? `${MAX_ENTRIES} or more` : String(this.#overflowKeys.size);
    return `issues: ${pairs} further code × column pairs (${this.#overflowRows} row issues) are not broken down, past the first ${MAX_ENTRIES}`;
  }

  /** The column notices as sentences, one per column (most rows first). */
  noticeNotes(): string[] {
    return [...this.#notices.values()]
      .sort((a, b) => b.rows - a.rows)
      .map(
        (n) =>
          `${n.code} on ${n.column === null ? 'the rows' : `column "${redactPart(n.column)}"`}${n.field ? ` (${n.field})` : ''}: ${n.rows} row(s) resolved through a fallback language, the reference list having no label in the sheet's language — a gap of the reference data, not of the sheet, so not a warning on each row (first: ${n.value === null ? '' : `"${redactPart(n.value)}": `}${redactPart(n.message)})`,
      );
  }

  /** Puts the breakdown into a summary (its notes: the column notices, and the cap when it was reached). */
  fill(summary: { issues?: IssueBreakdownEntry[]; notes?: string[] }): void {
    summary.issues = this.entries();
    const notes = [...this.noticeNotes(), this.note()].filter((n): n is string => n !== null);
    if (notes.length > 0) summary.notes = [...(summary.notes ?? []), ...notes];
  }
}

/** Columns of issues.csv. */
export const ISSUES_CSV_COLUMNS = [
  'code',
  'severity',
  'column',
  'field',
  'rows',
  'firstRows',
  'values',
  'rule',
  'message',
];

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
    e.rule ?? '',
    issueMessage(lang, e.code, e),
  ];
}
