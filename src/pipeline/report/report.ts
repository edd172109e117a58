import { once } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { basename, join } from 'node:path';
import { ProductSyncError } from '../../errors.ts';
import { commitTemp, discardTemp, tempPathFor, writeFileAtomic } from './atomic.ts';
import { csvField, neutralize } from './neutralize.ts';
import { XlsxWriter } from './xlsx-writer.ts';
import type { Cell, Issue } from '../types.ts';

/** The outcome of one input row (or of one archive without a row) — DESIGN §5.5. */
export type Outcome = 'created' | 'updated' | 'unchanged' | 'archived' | 'unarchived' | 'invalid' | 'failed' | 'skipped' | 'not_attempted';

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

/** summary.json, exactly DESIGN §5.5 (plus `aborted`, the reason, when the run was aborted). */
export interface RunSummary {
  runId: string;
  source: { file: string; sha256: string; rows: number };
  mapping: string;
  mode: string;
  dryRun: boolean;
  startedAt: string;
  finishedAt: string;
  counts: { rows: number; created: number; updated: number; unchanged: number; archived: number; unarchived: number; invalid: number; failed: number; skipped: number; notAttempted: number };
  requests: { reference: number; product: number };
  exitCode: number;
  aborted?: string;
  /** What the reader of the report should know, e.g. that an XLSX holds only the first rows (Excel's row limit). */
  notes?: string[];
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
  addRow(o: RowOutcome): Promise<void>;
  addRejected(row: number, cells: readonly Cell[] | readonly unknown[], issues: Issue[]): Promise<void>;
  addReconcile(entry: ReconcileEntry): Promise<void>;
  finish(summary: RunSummary): Promise<{ dir: string; files: string[] }>;
  abort(): Promise<void>;
}

const ROW_COLUMNS = ['row', 'key', 'outcome', 'tradeItemId', 'manufacturedItemId', 'changedFields', 'issues'];
const RECONCILE_COLUMNS = ['key', 'status', 'field', 'sheetValue', 'apiValue'];

/** Issues as one readable cell: `ERROR GTIN_CHECK_DIGIT [Code-barres] "5601234567890": message; WARNING …`. */
export function formatIssues(issues: readonly Issue[]): string {
  return issues
    .map((i) => `${i.severity.toUpperCase()} ${i.code}${i.column ? ` [${i.column}]` : ''}${i.value !== null && i.value !== '' ? ` "${i.value}"` : ''}: ${i.message}`)
    .join('; ');
}

function cellText(c: unknown): string {
  if (c === null || c === undefined) return '';
  if (c instanceof Date) return c.toISOString().slice(0, 10);
  if (typeof c === 'string' && /^\d{4}-\d{2}-\d{2}T/.test(c)) return c.slice(0, 10);
  return String(c);
}

/** A CSV file written through a temp name, UTF-8 with BOM (Excel then reads accents right), CRLF line ends. */
class CsvFile {
  readonly #stream: WriteStream;
  constructor(readonly final: string, header: readonly string[]) {
    this.#stream = createWriteStream(tempPathFor(final));
    this.#stream.write(`\uFEFF${header.map(csvField).join(',')}\r\n`);
  }
  async line(values: readonly string[]): Promise<void> {
    if (!this.#stream.write(`${values.map(csvField).join(',')}\r\n`)) await once(this.#stream, 'drain');
  }
  async close(): Promise<void> {
    this.#stream.end();
    await once(this.#stream, 'finish');
  }
}

/**
 * An XLSX file written through a temp name by our streaming writer (flat memory at any row count); every value is a
 * text cell, so identifiers keep their zeros. Rows past Excel's limit are dropped (counted; the CSV holds them all).
 */
class XlsxFile {
  readonly #writer: XlsxWriter;
  constructor(readonly final: string, sheetName: string, header: readonly string[], maxRows?: number) {
    this.#writer = new XlsxWriter(tempPathFor(final), sheetName, header, maxRows === undefined ? {} : { maxRows });
  }
  async line(values: readonly string[]): Promise<void> {
    await this.#writer.line(values.map(neutralize));
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

/** Every file a report can hold; at finish the ones this run did not write are removed, so the directory holds exactly this run's report. */
const REPORT_FILES = ['rows.csv', 'rows.xlsx', 'rejected.csv', 'rejected.xlsx', 'reconcile.csv', 'reconcile.json', 'summary.json'];

/**
 * Opens the report writer of a run directory. Files are written under temp names in that directory and renamed at finish,
 * `summary.json` last; rejected.* exist only when a row was rejected, reconcile.* only for reconcile runs.
 * `xlsxMaxRows` lowers the data rows an XLSX holds (default: Excel's limit, 1 048 575) — for tests.
 */
export async function createReportWriter(dir: string, opts: { sourceHeaders: readonly string[]; reconcile?: boolean; xlsxMaxRows?: number }): Promise<ReportWriter> {
  await mkdir(dir, { recursive: true });
  const at = (name: string) => join(dir, name);
  const rowsCsv = new CsvFile(at('rows.csv'), ROW_COLUMNS);
  const rowsXlsx = new XlsxFile(at('rows.xlsx'), 'rows', ROW_COLUMNS, opts.xlsxMaxRows);
  const rejectedHeader = [...opts.sourceHeaders, 'issues'];
  let rejectedCsv: CsvFile | null = null;
  let rejectedXlsx: XlsxFile | null = null;
  const reconcileCsv = opts.reconcile ? new CsvFile(at('reconcile.csv'), RECONCILE_COLUMNS) : null;
  const reconcileJson = opts.reconcile ? createWriteStream(tempPathFor(at('reconcile.json'))) : null;
  let reconcileCount = 0;
  reconcileJson?.write('[');
  let done = false;
  const files = (): (CsvFile | XlsxFile)[] => [rowsCsv, rowsXlsx, ...(rejectedCsv ? [rejectedCsv] : []), ...(rejectedXlsx ? [rejectedXlsx] : []), ...(reconcileCsv ? [reconcileCsv] : [])];
  const open = (what: string) => {
    if (done) throw new ProductSyncError('PS_ERR_REPORT', `report writer of ${dir}: ${what} after finish or abort`);
  };

  return {
    async addRow(o) {
      open('addRow');
      const values = [o.row === null ? '' : String(o.row), o.key ?? '', o.outcome, o.tradeItemId ?? '', o.manufacturedItemId ?? '', (o.changedFields ?? []).join('; '), formatIssues(o.issues)];
      await rowsCsv.line(values);
      await rowsXlsx.line(values);
    },
    async addRejected(_row, cells, issues) {
      open('addRejected');
      rejectedCsv ??= new CsvFile(at('rejected.csv'), rejectedHeader);
      rejectedXlsx ??= new XlsxFile(at('rejected.xlsx'), 'rejected', rejectedHeader, opts.xlsxMaxRows);
      const values = [...opts.sourceHeaders.map((_, i) => cellText(cells[i])), formatIssues(issues)];
      await rejectedCsv.line(values);
      await rejectedXlsx.line(values);
    },
    async addReconcile(e) {
      open('addReconcile');
      if (!reconcileCsv || !reconcileJson) throw new ProductSyncError('PS_ERR_REPORT', `report writer of ${dir}: addReconcile on a writer opened without reconcile`);
      await reconcileCsv.line([e.key, e.status, e.field, e.sheetValue, e.apiValue]);
      if (!reconcileJson.write(`${reconcileCount++ === 0 ? '\n' : ',\n'}${JSON.stringify(e)}`)) await once(reconcileJson, 'drain');
    },
    async finish(summary) {
      open('finish');
      done = true;
      const written = files();
      for (const f of written) await f.close();
      const finals = written.map((f) => f.final);
      if (reconcileJson) {
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
    },
    async abort() {
      if (done) return;
      done = true;
      for (const f of files()) await (f instanceof XlsxFile ? f.abort() : f.close()).catch(() => undefined);
      if (reconcileJson) {
        reconcileJson.end();
        await once(reconcileJson, 'close').catch(() => undefined);
      }
      for (const name of REPORT_FILES) await discardTemp(at(name));
    },
  };
}
