/**
 * A run's chunks on disk, in its run directory: what a chunk needs to be pushed by any process, its journal, and its
 * results once pushed. Nothing of a run is held in memory beyond the chunks in hand.
 *
 *   <run>/chunks/rows-<n>.json           rows of chunk n: settled outcomes (invalid, unchanged, dry-run…) and plans
 *   <run>/chunks/rows-<n>.journal.jsonl  the chunk's journal (replayed when the chunk is pushed again)
 *   <run>/chunks/rows-<n>.results.jsonl  one outcome per row of the chunk, in row order (the report reads these)
 *   <run>/chunks/rows-<n>.undo.jsonl     the chunk's undo ledger (written just before its results; merged into
 *                                         <run>/undo.jsonl when the report is assembled)
 *   <run>/chunks/archives-<n>.*          the same for a chunk of `full`-mode archives
 */
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { ProductSyncError } from '../../errors.ts';
import { writingTo } from '../../fs-errors.ts';
import { makeDir } from '../../make-dir.ts';
import { issue } from '../../issue-codes.ts';
import { writeJsonLinesAtomic, writeJsonLinesIf } from '../report/atomic.ts';
import { isRejectedOutcome } from '../outcomes.ts';
import { failedRow, type ExecutedRow } from '../sync/execute.ts';
import { readJournal, type Journal } from '../sync/journal.ts';
import { withPendingBrands } from './pending-brands.ts';
import { rowLedgerLine, type LedgerLine } from '../undo/ledger.ts';
import type { ArchiveEntry, RowPlan } from '../sync/plan.ts';
import type { Cell, Issue } from '../types.ts';

export type ChunkKind = 'rows' | 'archives';

/** A row's outcome as the report needs it: the source cells ride along for rows that may end in rejected.*. */
export interface ResultRow extends ExecutedRow {
  source?: readonly Cell[] | readonly unknown[];
}

/** A plan and the row's source cells (written to rejected.* if the push fails). */
export type SourcedPlan = RowPlan & { source: readonly Cell[] | readonly unknown[] };

/** One chunk of rows, ready to push. */
export interface RowChunk {
  index: number;
  settled: ResultRow[];
  plans: SourcedPlan[];
}

/** The files of one chunk. */
export function chunkPaths(
  workDir: string,
  kind: ChunkKind,
  index: number,
): { input: string; journal: string; results: string; ledger: string } {
  const base = join(workDir, 'chunks', `${kind}-${index}`);
  return {
    input: `${base}.json`,
    journal: `${base}.journal.jsonl`,
    results: `${base}.results.jsonl`,
    ledger: `${base}.undo.jsonl`,
  };
}

/**
 * A queued run's chunk job: true while the run is still on the job's plan (run.json `plan`). Asked after a chunk file
 * is written and before it is moved into `chunks/`, so a job of a plan set aside never adds a file to the chunks of the
 * plan that followed (docs/concurrency.md "Resuming a run").
 */
export type PlanCheck = () => Promise<boolean>;

/** Writes a chunk's file atomically; under `own`, only while the run is on the writer's plan (false: not written). */
async function writeChunkFile(file: string, lines: Iterable<unknown>, own: PlanCheck | undefined): Promise<boolean> {
  if (own) return writeJsonLinesIf(file, lines, own);
  await writeJsonLinesAtomic(file, lines);
  return true;
}

/**
 * The undo ledger of a chunk (undo/ledger.ts), written atomically before its results (whose presence means the chunk is
 * done): only what the chunk's journal says was sent. False when `own` says the run planned again.
 */
export async function writeChunkLedger(
  workDir: string,
  kind: ChunkKind,
  index: number,
  lines: readonly LedgerLine[],
  own?: PlanCheck,
): Promise<boolean> {
  const file = chunkPaths(workDir, kind, index).ledger;
  return writingTo('cannot write the undo ledger of the chunk', file, () => writeChunkFile(file, lines, own));
}

/** True when a request of the plan's row went out, as its journal tells (a failed row may have changed part of it). */
export function rowAttempted(journal: Pick<Journal, 'state'>, plan: RowPlan): boolean {
  return plan.steps.some((step, i) => {
    const s = journal.state(`${plan.key}:${i}:${step.kind}`)?.state;
    return s === 'confirmed' || s === 'sent' || s === 'failed';
  });
}

/** The undo ledger lines of a row chunk's results (rows that changed nothing have none). */
export function rowChunkLedger(
  plans: readonly RowPlan[],
  results: readonly ExecutedRow[],
  journal: Pick<Journal, 'state'>,
): LedgerLine[] {
  const byRow = new Map(plans.map((p) => [p.row, p]));
  const lines: LedgerLine[] = [];
  for (const r of results) {
    const plan = r.row === null ? undefined : byRow.get(r.row);
    if (!plan) continue;
    const line = rowLedgerLine(plan, r, r.outcome !== 'failed' || rowAttempted(journal, plan));
    if (line) lines.push(line);
  }
  return lines.sort((a, b) => (a.row ?? 0) - (b.row ?? 0));
}

/** One line of a chunk file: a settled row, a plan, or an archive entry. */
type ChunkLine = { s: ResultRow } | { p: SourcedPlan } | { a: ArchiveEntry };

/** Writes a chunk's input atomically (a process killed while writing leaves no half chunk), one JSON line per row. */
export async function writeChunk(
  workDir: string,
  kind: ChunkKind,
  index: number,
  data: RowChunk | ArchiveEntry[],
): Promise<void> {
  const file = chunkPaths(workDir, kind, index).input;
  const lines: Iterable<ChunkLine> = Array.isArray(data)
    ? data.map((a) => ({ a }))
    : [...data.settled.map((s) => ({ s })), ...data.plans.map((p) => ({ p }))];
  await writingTo('cannot write the chunk file', file, async () => {
    await makeDir(join(workDir, 'chunks'));
    await writeJsonLinesAtomic(file, lines);
  });
}

/** node:readline, loaded when a chunk file is read back (a resume, a large run): not at every command's start. */
const lineReader = () => import('node:readline');

/** Reads a chunk's input. */
export async function readChunk(workDir: string, kind: 'rows', index: number): Promise<RowChunk>;
export async function readChunk(workDir: string, kind: 'archives', index: number): Promise<ArchiveEntry[]>;
export async function readChunk(workDir: string, kind: ChunkKind, index: number): Promise<RowChunk | ArchiveEntry[]> {
  const file = chunkPaths(workDir, kind, index).input;
  const { createInterface } = await lineReader();
  try {
    const chunk: RowChunk = { index, settled: [], plans: [] };
    const entries: ArchiveEntry[] = [];
    for await (const line of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity })) {
      if (line === '') continue;
      const l = JSON.parse(line) as ChunkLine;
      if ('s' in l) chunk.settled.push(l.s);
      else if ('p' in l) chunk.plans.push(l.p);
      else entries.push(l.a);
    }
    return kind === 'archives' ? entries : chunk;
  } catch (err) {
    throw new ProductSyncError('PS_ERR_JOURNAL', `chunk ${kind}-${index} of ${workDir} is missing or unreadable`, {
      cause: err,
    });
  }
}

export const chunkExists = (workDir: string, kind: ChunkKind, index: number): boolean =>
  existsSync(chunkPaths(workDir, kind, index).input);
export const resultsExist = (workDir: string, kind: ChunkKind, index: number): boolean =>
  existsSync(chunkPaths(workDir, kind, index).results);

/** A chunk's outcomes in report order: rows sorted by row number, archives in their order. */
export function inReportOrder(kind: ChunkKind, rows: ResultRow[]): ResultRow[] {
  if (kind !== 'rows') return rows;
  let sorted = true;
  for (let i = 1; i < rows.length && sorted; i++) sorted = (rows[i - 1]!.row ?? 0) <= (rows[i]!.row ?? 0);
  return sorted ? rows : [...rows].sort((a, b) => (a.row ?? 0) - (b.row ?? 0));
}

/**
 * Writes a chunk's outcomes (in report order), atomically: their presence means the chunk is done. Returns them in that
 * order, for a driver that hands them to the report without reading the file back; null when `own` says the run planned
 * again (nothing written).
 */
export async function writeResults(
  workDir: string,
  kind: ChunkKind,
  index: number,
  rows: ResultRow[],
): Promise<ResultRow[]>;
export async function writeResults(
  workDir: string,
  kind: ChunkKind,
  index: number,
  rows: ResultRow[],
  own: PlanCheck | undefined,
): Promise<ResultRow[] | null>;
export async function writeResults(
  workDir: string,
  kind: ChunkKind,
  index: number,
  rows: ResultRow[],
  own?: PlanCheck,
): Promise<ResultRow[] | null> {
  const sorted = inReportOrder(kind, rows);
  const file = chunkPaths(workDir, kind, index).results;
  const written = await writingTo('cannot write the results of the chunk', file, () =>
    writeChunkFile(file, sorted, own),
  );
  return written ? sorted : null;
}

/** Streams a chunk's outcomes back, line by line. */
export async function* readResults(workDir: string, kind: ChunkKind, index: number): AsyncIterable<ResultRow> {
  const { createInterface } = await lineReader();
  const lines = createInterface({
    input: createReadStream(chunkPaths(workDir, kind, index).results, 'utf8'),
    crlfDelay: Infinity,
  });
  for await (const line of lines) if (line !== '') yield JSON.parse(line) as ResultRow;
}

/** True for outcomes whose row goes to rejected.* (its source cells kept): report.ts's rule, which rows.* relies on. */
export const isRejected = (outcome: ExecutedRow['outcome']): boolean => isRejectedOutcome(outcome);

function failedIssue(row: number | null, reason: string): Issue {
  return issue('API_FAILED', { row, message: `chunk failed after its retries: ${reason}` });
}

/**
 * Results of archive chunk `index` without pushing it: every entry gets `outcome` (planned in a dry run, not attempted,
 * failed).
 */
export async function settleArchiveChunk(
  workDir: string,
  index: number,
  outcome: 'archived' | 'not_attempted' | 'failed',
  issues: Issue[],
  own?: PlanCheck,
): Promise<boolean> {
  const entries = await readChunk(workDir, 'archives', index);
  const written = await writeResults(
    workDir,
    'archives',
    index,
    entries.map((a) => ({
      row: null,
      key: a.key,
      outcome,
      tradeItemId: a.tradeItemId,
      manufacturedItemId: null,
      changedFields: outcome === 'archived' ? ['archived'] : [],
      issues,
    })),
    own,
  );
  return written !== null;
}

/** The issue of a row (or of the archives: `row` null) the run did not attempt, saying why. */
export const notAttemptedIssue = (row: number | null, why: string): Issue =>
  issue('NOT_ATTEMPTED', { row, message: `not attempted: ${why}` });

/**
 * Results of a chunk whose push failed for good (a queue job out of retries), or that its run stopped before it was
 * pushed (`not_attempted`: the run lost its lease): what the chunk's journal confirmed keeps its outcome, the settled
 * rows theirs, the rest gets `outcome`. Does nothing when the chunk has results already. A chunk job passes `own`:
 * false when the run planned again meanwhile (nothing written, the chunk of that index is another plan's).
 */
export async function recoverChunk(
  workDir: string,
  kind: ChunkKind,
  index: number,
  reason: string,
  outcome: 'failed' | 'not_attempted' = 'failed',
  own?: PlanCheck,
): Promise<boolean> {
  if (resultsExist(workDir, kind, index)) return true;
  const why = (row: number | null) =>
    outcome === 'failed' ? failedIssue(row, reason) : notAttemptedIssue(row, reason);
  if (kind === 'archives') return settleArchiveChunk(workDir, index, outcome, [why(null)], own);
  // The brands a gated run created after its verdict, in the rows' undo values (those it did not create stay planned).
  const chunk = await withPendingBrands(workDir, await readChunk(workDir, 'rows', index), true);
  // Read only: a chunk job whose plan was set aside meanwhile creates no journal among the next plan's chunks.
  const journal = readJournal(chunkPaths(workDir, kind, index).journal);
  const rows: ResultRow[] = [...chunk.settled];
  // The ledger's view: what was confirmed, and the rows of which a request went out (failed: part may be there).
  const pushed: ExecutedRow[] = [];
  for (const p of chunk.plans) {
    const done = journal.state(`row:${p.row}`);
    if (done?.state === 'confirmed') {
      rows.push(done.result as ExecutedRow);
      pushed.push(done.result as ExecutedRow);
      continue;
    }
    const ids = { tradeItemId: p.tradeItemId, manufacturedItemId: p.manufacturedItemId };
    rows.push({
      row: p.row,
      key: p.key,
      outcome,
      ...ids,
      changedFields: [],
      issues: [...p.issues, why(p.row)],
      source: p.source,
    });
    if (rowAttempted(journal, p)) pushed.push(failedRow(p, []));
  }
  if (!(await writeChunkLedger(workDir, kind, index, rowChunkLedger(chunk.plans, pushed, journal), own))) return false;
  return (await writeResults(workDir, kind, index, rows, own)) !== null;
}
