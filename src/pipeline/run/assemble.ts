/**
 * The report of a run, assembled in row order from its chunks' results as they finish: chunk n is written once chunks
 * 0..n-1 are; archives follow the rows. Each chunk's results are streamed from disk, or handed over by the inline
 * driver that has them in hand (a few chunks at most), never the whole run in memory.
 */
import { dirname } from 'node:path';
import { IssueBreakdown, rowIssues } from '../report/issue-breakdown.ts';
import { createReportWriter, type ReportWriter, type RunSummary } from '../report/report.ts';
import { buildScorecard } from '../report/scorecard.ts';
import { previousScorecard } from '../report/scorecard-history.ts';
import { ValidityTally } from '../report/scorecard-tally.ts';
import type { RunContext } from './run-context.ts';
import { COUNT_KEY } from '../outcomes.ts';
import { isRejected, readResults, type ChunkKind, type ResultRow } from './chunks.ts';
import type { RunState } from './run-state.ts';

export type Counts = RunSummary['counts'];

/** What of the run state the report needs: the sheet's shape, and for the scorecard its fill, language and names. */
type ReportState = Pick<
  RunState,
  'headers' | 'rows' | 'preamble' | 'decimalSeparator' | 'fill' | 'reportLanguage' | 'runId' | 'mappingName'
>;

/**
 * Sheets of at least this many rows get their report written by a worker thread in inline runs: below it the thread's
 * start-up (a few tens of milliseconds) costs more than the lines it takes off the run's thread (a few µs each).
 */
export const REPORT_THREAD_ROWS = 50_000;
/**
 * {@link REPORT_THREAD_ROWS} for a run that does not know its rows before its report opens (validate): sheets of 4 MB
 * or more.
 */
export { REPORT_THREAD_BYTES } from '../report/report-thread-start.ts';

export function emptyCounts(rows: number): Counts {
  return {
    rows,
    created: 0,
    updated: 0,
    unchanged: 0,
    archived: 0,
    unarchived: 0,
    invalid: 0,
    failed: 0,
    skipped: 0,
    notAttempted: 0,
    valid: 0,
    duplicateRemoved: 0,
  };
}

/** Feeds a run's report writer from chunk results, in order. */
export class ReportAssembler {
  readonly counts: Counts;
  /**
   * Every line's issues, tallied here where each row's issues pass once (a resumed run replays each chunk's results
   * once, from its file), before the lines go to a report thread as packed text.
   */
  readonly #issues = new IssueBreakdown();
  /** The scorecard's validity by rule, tallied in the same pass (scorecard-tally.ts). */
  readonly #validity = new ValidityTally();
  readonly #state: ReportState;
  readonly #workDir: string;
  readonly #writer: ReportWriter;
  /**
   * Chunks ready for the report and not written yet: their outcomes when the driver has them in hand, else null (read
   * from disk).
   */
  readonly #ready = new Map<number, readonly ResultRow[] | null>();
  #next = 0;
  #tail: Promise<void> = Promise.resolve();

  private constructor(workDir: string, writer: ReportWriter, state: ReportState) {
    this.#workDir = workDir;
    this.#writer = writer;
    this.#state = state;
    this.counts = emptyCounts(state.rows);
  }

  /**
   * The report writer of a run: rejected.* get the sheet's headers, the rows above them and the mapping's decimal
   * separator, so they re-import with the same mapping. `thread`: the files are written by a worker thread
   * (report-thread.ts) — worth its start-up for large sheets only ({@link REPORT_THREAD_ROWS}).
   */
  static async open(workDir: string, state: ReportState, options: { thread?: boolean } = {}): Promise<ReportAssembler> {
    const writerOptions = {
      sourceHeaders: state.headers,
      ...(state.reportLanguage ? { language: state.reportLanguage } : {}),
      ...(state.preamble ? { preamble: state.preamble } : {}),
      ...(state.decimalSeparator ? { decimalSeparator: state.decimalSeparator } : {}),
    };
    // Loaded only for the sheets that use it: node:worker_threads is no part of a small run's start-up.
    const writer = options.thread
      ? (await import('../report/report-thread.ts')).openReportThread(workDir, writerOptions)
      : await createReportWriter(workDir, writerOptions);
    return new ReportAssembler(workDir, writer, state);
  }

  /**
   * Row chunk `index` has its results: it and every ready chunk after it in order go to the report now. `rows`: the
   * chunk's outcomes in report order when the caller has them (as written to its results file, or for validate instead
   * of it); else they are read from the file. A driver holds them only while the chunks before it are written.
   */
  ready(index: number, rows?: readonly ResultRow[]): Promise<void> {
    this.#ready.set(index, rows ?? null);
    this.#tail = this.#tail.then(async () => {
      while (this.#ready.has(this.#next)) {
        const given = this.#ready.get(this.#next)!;
        this.#ready.delete(this.#next);
        await this.#copy('rows', this.#next++, given);
      }
    });
    return this.#tail;
  }

  async #copy(kind: ChunkKind, index: number, given: readonly ResultRow[] | null = null): Promise<void> {
    // Awaited only when the writer asks to wait: an await per line would cost a microtask turn per row.
    if (given) {
      // By index: a for-of in an async function makes an iterator result a line.
      for (let i = 0; i < given.length; i++) {
        const wait = this.#add(given[i]!);
        if (wait) await wait;
      }
    } else {
      for await (const r of readResults(this.#workDir, kind, index)) {
        const wait = this.#add(r);
        if (wait) await wait;
      }
    }
  }

  #add(line: ResultRow): Promise<void> | undefined {
    const k = COUNT_KEY[line.outcome];
    this.counts[k] = (this.counts[k] ?? 0) + 1;
    this.#issues.add(line.row, line.issues);
    // A column notice (issue-breakdown.ts) is said once in the summary's notes, not on each row.
    const kept = rowIssues(line.issues);
    const r = kept === line.issues ? line : { ...line, issues: [...kept] };
    this.#validity.add(r.row, r.issues);
    const wait = this.#writer.addRow(r);
    if (r.row === null || !isRejected(r.outcome)) return wait;
    const row = r.row;
    return wait
      ? wait.then(() => this.#writer.addRejected(row, r.source ?? [], r.issues))
      : this.#writer.addRejected(row, r.source ?? [], r.issues);
  }

  /**
   * Adds the archive chunks' results (and `extra` lines without a row: duplicates removed) and writes the report
   * files, summary.json last.
   */
  async finish(
    archiveChunks: number,
    summary: (counts: Counts) => RunSummary,
    extra: readonly ResultRow[] = [],
    scorecard: RunContext['scorecard'] = {},
  ): Promise<{ files: string[]; summary: RunSummary }> {
    await this.#tail;
    for (let i = 0; i < archiveChunks; i++) await this.#copy('archives', i);
    if (extra.length > 0) await this.#copy('archives', -1, extra);
    const s = summary(this.counts);
    this.#issues.fill(s);
    await this.#scorecard(s, scorecard);
    const { files } = await this.#writer.finish(s);
    return { files, summary: s };
  }

  /**
   * The run's scorecard into its summary (runs whose first pass counted the fields filled: imports and validate). Its
   * stability compares with the previous run of its feed, else its mapping, in the same report directory.
   */
  async #scorecard(s: RunSummary, o: NonNullable<RunContext['scorecard']>): Promise<void> {
    const state = this.#state;
    if (!state.fill) return;
    const previous = await previousScorecard(
      dirname(this.#workDir),
      { mapping: state.mappingName, ...(o.feed ? { feed: o.feed } : {}) },
      state.runId,
    );
    s.scorecard = buildScorecard({
      rows: s.counts.rows,
      invalid: s.counts.invalid,
      created: s.counts.created,
      archived: s.counts.archived,
      codes: this.#validity.result(),
      fill: state.fill,
      headers: state.headers,
      language: state.reportLanguage ?? 'en',
      ...(o.feed ? { feed: o.feed } : {}),
      ...(o.deadline ? { deadline: o.deadline } : {}),
      ...(previous ? { previous } : {}),
    });
  }

  async abort(): Promise<void> {
    await this.#tail.catch(() => undefined);
    await this.#writer.abort();
  }
}
