/**
 * The report of a run, assembled in row order from its chunks' results as they finish: chunk n is written once chunks
 * 0..n-1 are; archives follow the rows. Each chunk's results are streamed from disk, never the whole run in memory.
 */
import { createReportWriter, type Outcome, type ReportWriter, type RunSummary } from '../report/report.ts';
import { isRejected, readResults, type ChunkKind } from './chunks.ts';
import type { RunState } from './run-state.ts';

export type Counts = RunSummary['counts'];

const COUNT_KEY: Record<Outcome, keyof Counts> = {
  created: 'created', updated: 'updated', unchanged: 'unchanged', archived: 'archived', unarchived: 'unarchived', invalid: 'invalid', failed: 'failed', skipped: 'skipped', not_attempted: 'notAttempted', valid: 'valid',
};

export function emptyCounts(rows: number): Counts {
  return { rows, created: 0, updated: 0, unchanged: 0, archived: 0, unarchived: 0, invalid: 0, failed: 0, skipped: 0, notAttempted: 0, valid: 0 };
}

/** Feeds a run's report writer from chunk results, in order. */
export class ReportAssembler {
  readonly counts: Counts;
  readonly #workDir: string;
  readonly #writer: ReportWriter;
  readonly #ready = new Set<number>();
  #next = 0;
  #tail: Promise<void> = Promise.resolve();

  private constructor(workDir: string, writer: ReportWriter, rows: number) {
    this.#workDir = workDir;
    this.#writer = writer;
    this.counts = emptyCounts(rows);
  }

  /** The report writer of a run: rejected.* get the sheet's headers, the rows above them and the mapping's decimal separator, so they re-import with the same mapping. */
  static async open(workDir: string, state: Pick<RunState, 'headers' | 'rows' | 'preamble' | 'decimalSeparator'>): Promise<ReportAssembler> {
    const writer = await createReportWriter(workDir, { sourceHeaders: state.headers, ...(state.preamble ? { preamble: state.preamble } : {}), ...(state.decimalSeparator ? { decimalSeparator: state.decimalSeparator } : {}) });
    return new ReportAssembler(workDir, writer, state.rows);
  }

  /** Row chunk `index` has its results: it and every ready chunk after it in order go to the report now. */
  ready(index: number): Promise<void> {
    this.#ready.add(index);
    this.#tail = this.#tail.then(async () => {
      while (this.#ready.has(this.#next)) {
        this.#ready.delete(this.#next);
        await this.#copy('rows', this.#next++);
      }
    });
    return this.#tail;
  }

  async #copy(kind: ChunkKind, index: number): Promise<void> {
    for await (const r of readResults(this.#workDir, kind, index)) {
      this.counts[COUNT_KEY[r.outcome]]++;
      await this.#writer.addRow(r);
      if (r.row !== null && isRejected(r.outcome)) await this.#writer.addRejected(r.row, r.source ?? [], r.issues);
    }
  }

  /** Adds the archive chunks' results and writes the report files, summary.json last. */
  async finish(archiveChunks: number, summary: (counts: Counts) => RunSummary): Promise<{ files: string[]; summary: RunSummary }> {
    await this.#tail;
    for (let i = 0; i < archiveChunks; i++) await this.#copy('archives', i);
    const s = summary(this.counts);
    const { files } = await this.#writer.finish(s);
    return { files, summary: s };
  }

  async abort(): Promise<void> {
    await this.#tail.catch(() => undefined);
    await this.#writer.abort();
  }
}
