import type { RunApiFigures } from './api-figures.ts';
import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ProductSyncError } from '../../errors.ts';
import { fileWriteError, writingTo } from '../../fs-errors.ts';
import { makeDir } from '../../make-dir.ts';
import { redactPart } from '../../redact.ts';
import type { ScopeSummary } from '../scope.ts';
import type { WithheldSummary } from '../withheld.ts';
import { commitTemp, discardTemp, tempPathFor, writeFileAtomic } from './atomic.ts';
import { ascii, ByteBatch, plainAscii, STREAM_BUFFER_BYTES } from '../../formats/byte-batch.ts';
import {
  csvField,
  csvQuote,
  isRejectedHeader,
  neutralize,
  REJECTED_ISSUES_COLUMN,
  REJECTED_ROW_COLUMN,
} from './neutralize.ts';
import { XlsxWriter, type XlsxWriterOptions } from '../../formats/xlsx-writer.ts';
import { ruleIdOf } from '../../rule-catalogue.ts';
import { ISSUES_CSV_COLUMNS, issueCsvFields, type IssueBreakdownEntry } from './issue-breakdown.ts';
import type { Cell, Issue } from '../types.ts';
import { formatIssuesIn, type ReportLanguage } from '../report-language.ts';
import type { Scorecard } from './scorecard.ts';
import { isRejectedOutcome, OUTCOMES, type Outcome } from '../outcomes.ts';

/** One line of rows.csv / rows.xlsx. */
export interface RowOutcome {
  row: number | null;
  key: string | null;
  outcome: Outcome;
  tradeItemId?: string | null;
  manufacturedItemId?: string | null;
  changedFields?: string[];
  issues: Issue[];
}

/** summary.json, as docs/reports.md lists it (with `aborted`, the reason, when the run was aborted). */
export interface RunSummary {
  runId: string;
  source: { file: string; sha256: string; rows: number };
  mapping: string;
  mode: string;
  dryRun: boolean;
  startedAt: string;
  finishedAt: string;
  counts: {
    rows: number;
    created: number;
    updated: number;
    unchanged: number;
    archived: number;
    unarchived: number;
    invalid: number;
    failed: number;
    skipped: number;
    notAttempted: number;
    valid: number;
    /** Second items for a key, created by a run after its lease ran out, archived (docs/concurrency.md). */
    duplicateRemoved?: number;
  };
  /** The scope the run kept to (docs/scopes.md): as written, in words, the items it held and the active ones. */
  scope?: ScopeSummary;
  /** Full mode: archives withheld because rows had keys that could not be read (docs/scopes.md). */
  withheld?: WithheldSummary;
  /**
   * The quality gate held the run (src/pipeline/run/quality-gate.ts): the gate, the rows counted, the invalid share
   * and the gate's rules that failed; nothing was written.
   */
  held?: {
    gate: { maxInvalidShare?: number; rules?: readonly string[] };
    rows: number;
    invalidRows: number;
    invalidShare: number;
    ruleRows: Record<string, number>;
    message: string;
  };
  /** Reconcile runs: how the sheet compares with the API. */
  reconcile?: { inSync: number; differs: number; missingInApi: number; missingInSheet: number };
  requests: { reference: number; product: number };
  exitCode: number;
  /** Why the run was aborted, in words; `abortCode` is its error code (PS_ERR_LEASE_LOST, PS_ERR_CIRCUIT_OPEN…). */
  aborted?: string;
  abortCode?: string;
  /** What the reader of the report should know, e.g. that an XLSX holds only the first rows (Excel's row limit). */
  notes?: string[];
  /** The issues by code × column, errors first then most rows (issue-order.ts); issues.csv holds the same lines. */
  issues?: IssueBreakdownEntry[];
  /** What the run saw of the product API's limits (inline runs: api-figures.ts). */
  api?: RunApiFigures;
  /** The supplier scorecard of the run (scorecard.ts, docs/scorecard.md): score, grade and what they were made of. */
  scorecard?: Scorecard;
  /**
   * Inline runs with webhook endpoints: each event with its delivery state per endpoint (src/events/inline.ts), written
   * once they are delivered or out of retries.
   */
  events?: {
    id: string;
    type: string;
    endpoint: string;
    state: 'delivered' | 'failed';
    attempts: number;
    error?: string;
  }[];
}

/** One line of reconcile.json / reconcile.csv. */
export interface ReconcileEntry {
  key: string;
  status: 'missing_in_api' | 'missing_in_sheet' | 'differs' | 'in_sync';
  field: string;
  sheetValue: string;
  apiValue: string;
}

/** A streaming report writer: rows go to disk as they are added, final files appear at finish (summary.json last). */
export interface ReportWriter {
  /**
   * Adds a line of rows.*. Returns a promise only when the caller must wait for it (a file's buffer is full): most
   * lines cost no promise and no turn of the microtask queue. Rejects after finish or abort.
   */
  addRow(o: RowOutcome): Promise<void> | undefined;
  /**
   * {@link addRow} of a line already made into its fields by {@link rowFields} (the report thread's way); the writer
   * keeps no reference to `safe`.
   */
  addRowFields(safe: readonly string[]): Promise<void> | undefined;
  addRejected(row: number, cells: readonly Cell[] | readonly unknown[], issues: Issue[]): Promise<void>;
  /**
   * {@link addRejected} of a line already made into its fields by {@link rejectedLine} (the report thread's way); the
   * writer keeps no reference to `values`.
   */
  addRejectedFields(values: readonly string[]): Promise<void>;
  addReconcile(entry: ReconcileEntry): Promise<void>;
  finish(summary: RunSummary): Promise<{ dir: string; files: string[] }>;
  abort(): Promise<void>;
}

const ROW_COLUMNS = ['row', 'key', 'outcome', 'tradeItemId', 'manufacturedItemId', 'changedFields', 'issues'];
/** Columns of rows.* whose text never needs quoting or escaping: the row number and the outcome (rowFields). */
const PLAIN_ROW_COLUMNS = [0, 2];
/** rows.xlsx: the row column as number cells (row numbers are digits or empty, rowFields). */
const ROW_NUMBER_COLUMNS = [0];
/**
 * rows.xlsx: the outcome column as references to a shared strings table of the outcomes (fewer bytes a line than the
 * words inline).
 */
const ROW_SHARED_STRINGS = { columns: [2], values: OUTCOMES };
/**
 * How the report workbooks open: the header frozen, an autofilter over the table, widths fitted to the header and the
 * first rows, the issues column wide and wrapped (issues run long, and a wrapped cell shows them all).
 */
const READY_XLSX = { freezeHeader: true, autoFilter: true, widthsFromRows: 100 } as const;
/** rows.xlsx: the issues column (wrapped). */
const ROW_ISSUES_COLUMN = ROW_COLUMNS.indexOf('issues');
/** Fields of a line of rows.* ({@link rowFields}). */
export const ROW_FIELDS = ROW_COLUMNS.length;

/**
 * A line of rows.csv / rows.xlsx as its text fields, neutralised ({@link neutralize}: never a NUL) once for both files.
 */
export function rowFields(o: RowOutcome): string[] {
  const out: string[] = [];
  putRowFields(out, 0, o);
  return out;
}

/** {@link rowFields}, written into `out` from index `at` (the report thread packs many lines in one reused list). */
export function putRowFields(out: string[], at: number, o: RowOutcome): void {
  // Row numbers and outcomes are safe text.
  const changed = o.changedFields === undefined || o.changedFields.length === 0 ? '' : o.changedFields.join('; ');
  out[at] = o.row === null ? '' : String(o.row);
  out[at + 1] = neutralize(o.key ?? '');
  out[at + 2] = o.outcome;
  out[at + 3] = neutralize(o.tradeItemId ?? '');
  out[at + 4] = neutralize(o.manufacturedItemId ?? '');
  out[at + 5] = neutralize(changed);
  // A rejected row's issues are told in full in rejected.*, the file a person fixes: here they are named only (code and
  // column), or an all-invalid sheet's reports repeat each message in four files.
  out[at + 6] =
    o.issues.length === 0
      ? ''
      : neutralize(o.row !== null && isRejectedOutcome(o.outcome) ? issueRefs(o.issues) : formatIssues(o.issues));
}
const RECONCILE_COLUMNS = ['key', 'status', 'field', 'sheetValue', 'apiValue'];

/**
 * Issues as one readable cell: `ERROR GTIN_CHECK_DIGIT [Code-barres] "5601234567890": message (rule PS-GTIN-006);
 * WARNING …` (the rule id: src/rule-catalogue.ts, or the mapping's own rule). Credentials an API echoed (a `Bearer …`
 * token, URL userinfo) are redacted here too, whatever produced the issue.
 */
export function formatIssues(issues: readonly Issue[]): string {
  if (issues.length === 0) return '';
  // Each part redacted on its own (a credential lies within one): the parts repeat, the whole line much less.
  let out = '';
  for (const i of issues) {
    if (out !== '') out += '; ';
    out += `${issueRef(i)}${i.value !== null && i.value !== '' ? ` "${redactPart(i.value)}"` : ''}: ${redactPart(i.message)}${ruleText(i)}`;
  }
  return out;
}

/**
 * Issues named, not told: `ERROR GTIN_CHECK_DIGIT [Code-barres] (rule PS-GTIN-006); WARNING ROW_HIDDEN (rule
 * PS-SHT-007)` (rows.* of a rejected row, whose
 * rejected.* line gives them in full, {@link formatIssues}).
 */
export function issueRefs(issues: readonly Issue[]): string {
  let out = '';
  for (const i of issues) {
    if (out !== '') out += '; ';
    out += `${issueRef(i)}${ruleText(i)}`;
  }
  return out;
}

/** ` (rule PS-GTIN-006)`: the rule an issue follows, empty for a code of no rule. */
function ruleText(i: Issue): string {
  const id = ruleIdOf(i);
  return id === null ? '' : ` (rule ${redactPart(id)})`;
}

function issueRef(i: Issue): string {
  return `${SEVERITY_TEXT[i.severity]} ${i.code}${i.column ? ` [${redactPart(i.column)}]` : ''}`;
}

const SEVERITY_TEXT: Record<Issue['severity'], string> = { error: 'ERROR', warning: 'WARNING' };

/**
 * A cell as report text; numbers with `decimal` as decimal separator (so the mapping reads them again as they were).
 */
function cellText(c: unknown, decimal: ',' | '.' = '.'): string {
  if (c === null || c === undefined) return '';
  if (c instanceof Date) return c.toISOString().slice(0, 10);
  if (typeof c === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(c)) return c.slice(0, 10);
  if (typeof c === 'number' && decimal === ',') return String(c).replace('.', ',');
  return String(c);
}

// A CSV line's delimiter and end, as bytes.
const COMMA = ascii(',');
const CRLF = ascii('\r\n');
/** ASCII a CSV field holds unquoted (csvQuote would leave it): anything but the delimiter, a quote, CR and LF. */
const CSV_PLAIN = plainAscii('",\r\n', String.fromCharCode(...Array.from({ length: 32 }, (_, c) => c)));

/** A CSV file written through a temp name, UTF-8 with BOM (Excel then reads accents right), CRLF line ends. */
class CsvFile {
  readonly #stream: WriteStream;
  // Lines are written in batches (BATCH_BYTES): one stream write per line costs more than building the line.
  readonly #batch = new ByteBatch();
  readonly #plain: boolean[] = [];
  // The first error of the file (a full disk): the next add or close throws it, instead of an unhandled 'error' event.
  #error: Error | null = null;
  /** `plain`: columns whose text never needs quoting (numbers, fixed words). */
  constructor(
    readonly final: string,
    header: readonly string[],
    preamble: readonly (readonly string[])[] = [],
    plain: readonly number[] = [],
  ) {
    for (const c of plain) this.#plain[c] = true;
    this.#stream = createWriteStream(tempPathFor(final), { highWaterMark: STREAM_BUFFER_BYTES });
    this.#stream.on('error', (err) => (this.#error ??= err));
    // Rows above the header: one line each (line breaks inside a cell become spaces, so line n is record n); an empty
    // row is written `""`, a line no reader skips, so the header stays on its row.
    const above = preamble.map((r) =>
      r.some((v) => v !== '') ? r.map((v) => csvField(v.replace(/\r\n?|\n/g, ' '))).join(',') : '""',
    );
    this.#stream.write(`\uFEFF${[...above, header.map(csvField).join(',')].join('\r\n')}\r\n`);
  }
  /**
   * Adds a line of text already neutralised ({@link neutralize}); returns a promise only when the file must drain
   * first.
   */
  add(safe: readonly string[]): Promise<void> | undefined {
    if (this.#error) throw this.#error;
    const b = this.#batch;
    for (let i = 0; i < safe.length; i++) {
      if (i > 0) b.bytes(COMMA);
      const v = safe[i]!;
      if (this.#plain[i] === true) b.text(v);
      else if (!b.plain(v, CSV_PLAIN)) b.text(csvQuote(v));
    }
    b.bytes(CRLF);
    if (!b.full || this.#stream.write(b.take())) return undefined;
    return once(this.#stream, 'drain').then(() => undefined);
  }
  async close(): Promise<void> {
    if (this.#error) throw this.#error;
    if (this.#batch.length > 0) this.#stream.write(this.#batch.take());
    this.#stream.end();
    await once(this.#stream, 'finish');
  }
  /** Stops writing (what is buffered is dropped); the temp file is the caller's to remove. */
  async abort(): Promise<void> {
    if (this.#stream.closed) return;
    const closed = once(this.#stream, 'close').catch(() => undefined);
    this.#stream.destroy();
    await closed;
  }
}

/**
 * An XLSX file written through a temp name by our streaming writer (flat memory at any row count); every value is a
 * text cell, so identifiers keep their zeros. Rows past Excel's limit are dropped (counted; the CSV holds them all).
 */
class XlsxFile {
  readonly #writer: XlsxWriter;
  readonly #neutralize: boolean;
  /**
   * `neutralize: false` writes values as they are (rejected.xlsx: text cells are never evaluated, and re-import reads
   * them back unchanged).
   */
  constructor(
    readonly final: string,
    sheetName: string,
    header: readonly string[],
    o: XlsxWriterOptions & { neutralize?: boolean } = {},
  ) {
    const { neutralize: _, ...options } = o;
    this.#writer = new XlsxWriter(tempPathFor(final), sheetName, header, options);
    this.#neutralize = o.neutralize ?? true;
  }
  /**
   * Adds a line (neutralised unless the file was opened with `neutralize: false`); a promise only when the writer must
   * be waited for.
   */
  add(values: readonly string[]): Promise<void> | undefined {
    return this.#writer.add(
      this.#neutralize ? values.map(neutralize) : values.map((v) => (v.includes('\0') ? v.replace(/\0/g, '') : v)),
    );
  }
  /** Adds a line of text already neutralised (rows.csv and rows.xlsx share one neutralisation). */
  addNeutralized(safe: readonly string[]): Promise<void> | undefined {
    return this.#writer.add(safe);
  }
  /** A sentence for summary.json when rows were dropped, else null. */
  note(csvName: string): string | null {
    const { rowsWritten, rowsDropped } = this.#writer;
    if (rowsDropped === 0) return null;
    const n = (x: number) => String(x).replace(/\B(?=(\d{3})+(?!\d))/g, ' ');
    return `${basename(this.final)} holds the first ${n(rowsWritten)} rows of ${n(rowsWritten + rowsDropped)}; ${csvName} holds them all`;
  }
  async close(): Promise<void> {
    await this.#writer.close();
  }
  async abort(): Promise<void> {
    await this.#writer.abort();
  }
}

/**
 * Every file a report can hold; at finish the ones this run did not write are removed, so the directory holds exactly
 * this run's report.
 */
export const REPORT_FILES = [
  'rows.csv',
  'rows.xlsx',
  'rejected.csv',
  'rejected.xlsx',
  'reconcile.csv',
  'reconcile.json',
  'issues.csv',
  'summary.json',
];

/** Options of {@link createReportWriter}. */
export interface ReportWriterOptions {
  /** The sheet's headers (rejected.* repeat them, then `product-sync:row` and `issues`). */
  sourceHeaders: readonly string[];
  /**
   * The sheet's rows above its header (mapping `headerRow` > 1), as read: rejected.* start with them, so the file
   * re-imports with the same mapping. Default none (header on row 1).
   */
  preamble?: readonly (readonly unknown[])[];
  /**
   * Decimal separator numbers of the sheet (XLSX number cells) are written with in rejected.* (the mapping's); default
   * `.`.
   */
  decimalSeparator?: ',' | '.';
  reconcile?: boolean;
  /** Lowers the data rows an XLSX holds (default: Excel's limit, 1 048 575) — for tests. */
  xlsxMaxRows?: number;
  /**
   * The language of the messages of rejected.* and issues.csv (report-language.ts); default English, whose rejected.*
   * keep the run's own detailed messages.
   */
  language?: ReportLanguage;
}

/**
 * How the lines of rejected.* are made for a report of `opts`: `width` fields a line, `put` writes a line's fields into
 * `out` from index `at` — the source cells as text, `product-sync:row` and the issues in full ({@link formatIssues}:
 * redacted here, once) — without NUL characters, which neither file keeps (the report thread packs lines split by
 * NULs).
 */
export function rejectedLine(opts: ReportWriterOptions): {
  width: number;
  header: string[];
  preamble: string[][];
  put(out: string[], at: number, row: number, cells: readonly Cell[] | readonly unknown[], issues: Issue[]): void;
} {
  // A rejected file re-imported: its own row and issues columns are replaced, not repeated.
  const again = isRejectedHeader(opts.sourceHeaders);
  const ownHeaders = again ? opts.sourceHeaders.slice(0, -2) : opts.sourceHeaders;
  const decimal = opts.decimalSeparator ?? '.';
  const header = [...ownHeaders, REJECTED_ROW_COLUMN, REJECTED_ISSUES_COLUMN];
  const own = ownHeaders.length;
  const noNul = (v: string) => (v.includes('\0') ? v.replace(/\0/g, '') : v);
  const lang = opts.language ?? 'en';
  const told = lang === 'en' ? formatIssues : (issues: readonly Issue[]) => formatIssuesIn(lang, issues, redactPart);
  return {
    width: header.length,
    header,
    preamble: (opts.preamble ?? []).map((r) => r.map((c) => cellText(c, decimal))),
    put(out, at, row, cells, issues) {
      for (let i = 0; i < own; i++) out[at + i] = noNul(cellText(cells[i], decimal));
      const sourceRow = again ? cellText(cells[own]) : '';
      out[at + own] = noNul(sourceRow || String(row));
      out[at + own + 1] = noNul(told(issues));
    },
  };
}

/**
 * Opens the report writer of a run directory. Files are written under temp names in that directory and renamed at
 * finish, `summary.json` last; rejected.* exist only when a row was rejected, reconcile.* only for reconcile runs.
 *
 * rejected.* re-import with the mapping of the run (docs/reports.md): the rows above the header (`preamble`), the
 * header, the rejected rows' cells as read, then `product-sync:row` (the row's number in the imported sheet; kept from
 * the source when it is itself a rejected file) and `issues`. rejected.csv neutralises formula-like cells with a `'`
 * that re-import removes (restoreRejectedSheet); rejected.xlsx holds text cells, written as they are.
 */
export async function createReportWriter(dir: string, opts: ReportWriterOptions): Promise<ReportWriter> {
  // Every refusal of the file system, whichever file it hit, names the report's directory (fs-errors.ts).
  const failed = (err: unknown): unknown => fileWriteError(err, 'cannot write the report to', dir);
  await writingTo('cannot write the report to', dir, () => makeDir(dir));
  const at = (name: string) => join(dir, name);
  const rowsCsv = new CsvFile(at('rows.csv'), ROW_COLUMNS, [], PLAIN_ROW_COLUMNS);
  const rowsXlsx = new XlsxFile(at('rows.xlsx'), 'rows', ROW_COLUMNS, {
    plainColumns: PLAIN_ROW_COLUMNS,
    numberColumns: ROW_NUMBER_COLUMNS,
    sharedStrings: ROW_SHARED_STRINGS,
    ...READY_XLSX,
    wrapColumns: [ROW_ISSUES_COLUMN],
    ...(opts.xlsxMaxRows === undefined ? {} : { maxRows: opts.xlsxMaxRows }),
  });
  const rejected = rejectedLine(opts);
  const { header: rejectedHeader, preamble } = rejected;
  let rejectedCsv: CsvFile | null = null;
  let rejectedXlsx: XlsxFile | null = null;
  const reconcileCsv = opts.reconcile ? new CsvFile(at('reconcile.csv'), RECONCILE_COLUMNS) : null;
  const reconcileJson = opts.reconcile ? createWriteStream(tempPathFor(at('reconcile.json'))) : null;
  let reconcileCount = 0;
  let reconcileError: Error | null = null;
  reconcileJson?.on('error', (err) => (reconcileError ??= err));
  reconcileJson?.write('[');
  let done = false;
  const files = (): (CsvFile | XlsxFile)[] => [
    rowsCsv,
    rowsXlsx,
    ...(rejectedCsv ? [rejectedCsv] : []),
    ...(rejectedXlsx ? [rejectedXlsx] : []),
    ...(reconcileCsv ? [reconcileCsv] : []),
  ];
  const open = (what: string) => {
    if (done) throw new ProductSyncError('PS_ERR_REPORT', `report writer of ${dir}: ${what} after finish or abort`);
  };

  const addRowFields = (safe: readonly string[]): Promise<void> | undefined => {
    if (done)
      return Promise.reject(
        new ProductSyncError('PS_ERR_REPORT', `report writer of ${dir}: addRow after finish or abort`),
      );
    // Both files take the line at once; a promise only when one of them must drain before the next.
    let csv: Promise<void> | undefined;
    let xlsx: Promise<void> | undefined;
    try {
      csv = rowsCsv.add(safe);
      xlsx = rowsXlsx.addNeutralized(safe);
    } catch (err) {
      return Promise.reject(failed(err));
    }
    return csv || xlsx
      ? Promise.all([csv, xlsx]).then(
          () => undefined,
          (err: unknown) => Promise.reject(failed(err)),
        )
      : undefined;
  };
  const addRejectedFields = (values: readonly string[]): Promise<void> =>
    writingTo('cannot write the report to', dir, async () => {
      open('addRejected');
      rejectedCsv ??= new CsvFile(at('rejected.csv'), rejectedHeader, preamble);
      rejectedXlsx ??= new XlsxFile(at('rejected.xlsx'), 'rejected', rejectedHeader, {
        ...(opts.xlsxMaxRows === undefined ? {} : { maxRows: opts.xlsxMaxRows }),
        preamble,
        ...READY_XLSX,
        wrapColumns: [rejectedHeader.length - 1],
        neutralize: false,
      });
      await rejectedCsv.add(values.map(neutralize));
      await rejectedXlsx.add(values);
    });
  // The files' writers stopped and their temp files removed: after abort, or a finish that failed (a full disk keeps no
  // half report).
  const discard = async (): Promise<void> => {
    for (const f of files()) await f.abort().catch(() => undefined);
    if (reconcileJson && !reconcileJson.closed) {
      const closed = once(reconcileJson, 'close').catch(() => undefined);
      reconcileJson.destroy();
      await closed;
    }
    for (const name of REPORT_FILES) await discardTemp(at(name)).catch(() => undefined);
  };

  return {
    addRow: (o) => addRowFields(rowFields(o)),
    addRowFields,
    addRejected: (row, cells, issues) => {
      const values = new Array<string>(rejected.width);
      rejected.put(values, 0, row, cells, issues);
      return addRejectedFields(values);
    },
    addRejectedFields,
    addReconcile: (e) =>
      writingTo('cannot write the report to', dir, async () => {
        open('addReconcile');
        if (!reconcileCsv || !reconcileJson)
          throw new ProductSyncError(
            'PS_ERR_REPORT',
            `report writer of ${dir}: addReconcile on a writer opened without reconcile`,
          );
        await reconcileCsv.add([e.key, e.status, e.field, e.sheetValue, e.apiValue].map(neutralize));
        if (reconcileError) throw reconcileError;
        if (!reconcileJson.write(`${reconcileCount++ === 0 ? '\n' : ',\n'}${JSON.stringify(e)}`))
          await once(reconcileJson, 'drain');
      }),
    async finish(summary) {
      open('finish');
      done = true;
      try {
        return await finishFiles(summary);
      } catch (err) {
        await discard();
        throw failed(err);
      }
    },
    async abort() {
      if (done) return;
      done = true;
      await discard();
    },
  };

  async function finishFiles(summary: RunSummary): Promise<{ dir: string; files: string[] }> {
    const written = files();
    // The breakdown is in hand by now (the run tallied it, issue-breakdown.ts): its file is written in one go.
    if (summary.issues) {
      const issuesCsv = new CsvFile(at('issues.csv'), ISSUES_CSV_COLUMNS, [], [1, 4]);
      for (const e of summary.issues) await issuesCsv.add(issueCsvFields(e, opts.language).map(neutralize));
      written.push(issuesCsv);
    }
    for (const f of written) await f.close();
    const finals = written.map((f) => f.final);
    if (reconcileJson) {
      if (reconcileError) throw reconcileError;
      reconcileJson.end('\n]\n');
      await once(reconcileJson, 'finish');
      finals.push(at('reconcile.json'));
    }
    // A summary.json already here (an earlier attempt) must not vouch for files while they are being replaced.
    await rm(at('summary.json'), { force: true });
    for (const f of finals) await commitTemp(f);
    for (const name of REPORT_FILES) {
      if (finals.includes(at(name)) || name === 'summary.json') continue;
      // Files of an earlier attempt that this run did not write (e.g. rejected.* when nothing was rejected this time).
      await rm(at(name), { force: true });
      await discardTemp(at(name));
    }
    const notes = [rowsXlsx.note('rows.csv'), rejectedXlsx?.note('rejected.csv')].filter((s): s is string => !!s);
    if (notes.length > 0) summary.notes = [...(summary.notes ?? []), ...notes];
    // summary.json last: its presence means the report is complete.
    await writeFileAtomic(at('summary.json'), `${JSON.stringify(summary, null, 2)}\n`);
    return { dir, files: [...finals, at('summary.json')] };
  }
}
