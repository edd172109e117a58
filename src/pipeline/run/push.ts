/** Pushing one chunk: its plans through an executor over the chunk's own journal; its results written next to it. */
import { OUTCOME_OF_ACTION } from '../outcomes.ts';
import { existsSync } from 'node:fs';
import type { ApiClients } from '../../api/clients.ts';
import type { Fence } from '../../api/fence.ts';
import type { Config } from '../../config.ts';
import { apiIssue, Executor, failedRow, type ExecutedRow, type RunStop } from '../sync/execute.ts';
import { openJournal } from '../sync/journal.ts';
import { CircuitBreaker, Throttle } from '../sync/throttle.ts';
import { archiveLedgerLine, type LedgerLine } from '../undo/ledger.ts';
import {
  chunkPaths,
  isRejected,
  readChunk,
  rowChunkLedger,
  writeChunkLedger,
  writeResults,
  type PlanCheck,
  type ResultRow,
  type RowChunk,
} from './chunks.ts';
import { withPendingBrands } from './pending-brands.ts';

/** What pushing needs: the product client, the shared throttle, and what the run's executors share. */
export interface PushContext {
  config: Config;
  clients: ApiClients;
  throttle?: Throttle;
  signal?: AbortSignal;
  /** Shared by every chunk of a run in this process: an abort stops them all, failures count run-wide. */
  shared?: { stop: RunStop; breaker: CircuitBreaker };
  /**
   * Queue mode: an aborted chunk throws instead of writing its results, so a retry pushes it again (a predicate: for
   * which aborts).
   */
  throwOnAbort?: boolean | ((abort: Error) => Promise<boolean>);
  /**
   * Checked right before the chunk's results are written (a queue job's lock: a worker that lost its job writes none).
   */
  guard?: Fence;
  /**
   * A queued run's chunk job: whether the run is still on the job's plan, asked before each file of the chunk is moved
   * into place (chunks.ts PlanCheck): a job of a plan set aside writes nothing.
   */
  own?: PlanCheck;
  /** Each row as it finishes (progress). */
  onResult?: (r: ExecutedRow) => void;
  /**
   * False when another run may have written since an earlier attempt of this run (ExecuteOptions.earlierCreatesOurs).
   */
  earlierCreatesOurs?: boolean;
}

/** What a pushed chunk tells its driver. */
export interface PushedChunk {
  rows: number;
  failed: number;
  writes: number;
  /** Set when the run must stop (credential rejected, circuit open). */
  abort?: Error;
  /**
   * The chunk's outcomes in report order, as written to its results file (the inline driver reports them without
   * reading the file back).
   */
  results?: ResultRow[];
}

// The creates an executor starts in one turn of the event loop share one journal write (each still on disk before it is
// sent).
const JOURNAL_OPTIONS = { batchDurable: true };

const throwsOn = async (ctx: PushContext, abort: Error): Promise<boolean> =>
  typeof ctx.throwOnAbort === 'function' ? ctx.throwOnAbort(abort) : Boolean(ctx.throwOnAbort);

/** False when a queued run's chunk job finds the run on another plan now (PushContext `own`). */
const stillOwn = async (ctx: PushContext): Promise<boolean> => !ctx.own || (await ctx.own());

/** A fresh run-wide share for the executors of one run in this process. */
export function runShare(): { stop: RunStop; breaker: CircuitBreaker } {
  return { stop: { reason: null }, breaker: new CircuitBreaker(8) };
}

function executor(
  ctx: PushContext,
  owner: string,
  journal: Awaited<ReturnType<typeof openJournal>>,
  onResult: (r: ExecutedRow) => void,
): Executor {
  return new Executor({
    api: ctx.clients.product,
    ownerCompanyId: owner,
    journal,
    signal: ctx.signal,
    onResult,
    throttle: ctx.throttle ?? new Throttle(ctx.config.API_CONCURRENCY * 2),
    createRetryMaxMs: ctx.config.CREATE_RETRY_MAX_MS,
    ...(ctx.shared ? { stop: ctx.shared.stop, breaker: ctx.shared.breaker } : {}),
    ...(ctx.earlierCreatesOurs === false ? { earlierCreatesOurs: false } : {}),
  });
}

/**
 * The outcomes of a chunk that needs no request — every plan without steps (settled rows, unchanged or skipped rows,
 * a dry run) — and was never pushed (no journal of an earlier attempt); null when it must be pushed.
 */
export function outcomesWithoutRequests(workDir: string, chunk: RowChunk): ResultRow[] | null {
  if (!chunk.plans.every((p) => p.steps.length === 0) || existsSync(chunkPaths(workDir, 'rows', chunk.index).journal))
    return null;
  const results: ResultRow[] = [...chunk.settled];
  for (const p of chunk.plans)
    results.push({
      row: p.row,
      key: p.key,
      outcome: OUTCOME_OF_ACTION[p.action],
      tradeItemId: p.tradeItemId,
      manufacturedItemId: p.manufacturedItemId,
      changedFields: [],
      issues: p.issues,
    });
  return results;
}

/** Pushes row chunk `index` (read from disk unless given) and writes its results; idempotent through its journal. */
export async function pushRowChunk(
  workDir: string,
  owner: string,
  index: number,
  ctx: PushContext,
  given?: RowChunk,
): Promise<PushedChunk> {
  // A gated run's rows name the brands created after its verdict by placeholders: their ids now (pending-brands.ts).
  const read = given ?? (await readChunk(workDir, 'rows', index));
  const chunk = await withPendingBrands(workDir, read, ctx.shared?.stop.reason != null);
  const paths = chunkPaths(workDir, 'rows', index);
  let results: ResultRow[] = [...chunk.settled];
  const sourceOf = new Map(chunk.plans.map((p) => [p.row, p.source]));
  let writes = 0;
  let abort: Error | undefined;
  let ledger: LedgerLine[] = [];
  // Rows with nothing to send and no journal (no earlier attempt): their outcome is the plan's.
  const unsent = outcomesWithoutRequests(workDir, chunk);
  if (unsent) {
    results = unsent;
    for (const r of unsent.slice(chunk.settled.length)) ctx.onResult?.(r);
  } else {
    const journal = await openJournal(paths.journal, JOURNAL_OPTIONS);
    try {
      // The chunk and its journal are this plan's only if they were opened before the run could plan again.
      if (!(await stillOwn(ctx))) return { rows: 0, failed: 0, writes: 0 };
      const ex = executor(ctx, owner, journal, (r) => {
        results.push(isRejected(r.outcome) ? { ...r, source: sourceOf.get(r.row!) ?? [] } : r);
        ctx.onResult?.(r);
      });
      try {
        await ex.run(chunk.plans);
      } catch (err) {
        // A journal that cannot be written: the rows not finished are failed, the run stops.
        abort = err as Error;
        const done = new Set(results.map((r) => r.row));
        for (const p of chunk.plans)
          if (!done.has(p.row))
            results.push({ ...failedRow(p, [...p.issues, apiIssue(p.row, err)]), source: p.source });
      }
      writes = ex.writesSent;
      abort ??= ex.abortReason ?? undefined;
      ledger = rowChunkLedger(chunk.plans, results, journal);
    } finally {
      await journal.close();
    }
  }
  if (abort && (await throwsOn(ctx, abort))) throw abort;
  ctx.guard?.check();
  // Before the results, whose presence says the chunk is done: a finished chunk always has its ledger.
  const ledgered = unsent ? true : await writeChunkLedger(workDir, 'rows', index, ledger, ctx.own);
  const sorted = (ledgered ? await writeResults(workDir, 'rows', index, results, ctx.own) : null) ?? results;
  return {
    rows: results.length,
    failed: results.filter((r) => r.outcome === 'failed').length,
    writes,
    ...(abort ? { abort } : {}),
    results: sorted,
  };
}

/** Archives chunk `index` of a `full` run and writes its results (archiving is idempotent). */
export async function pushArchiveChunk(
  workDir: string,
  owner: string,
  index: number,
  ctx: PushContext,
): Promise<PushedChunk> {
  const entries = await readChunk(workDir, 'archives', index);
  const journal = await openJournal(chunkPaths(workDir, 'archives', index).journal, JOURNAL_OPTIONS);
  const results: ResultRow[] = [];
  try {
    if (!(await stillOwn(ctx))) return { rows: 0, failed: 0, writes: 0 };
    const ex = executor(ctx, owner, journal, (r) => {
      results.push(r);
      ctx.onResult?.(r);
    });
    await ex.archive(entries);
    if (ex.abortReason && (await throwsOn(ctx, ex.abortReason))) throw ex.abortReason;
    ctx.guard?.check();
    const byId = new Map(entries.map((e) => [e.tradeItemId, e]));
    const archived = results.filter((r) => r.outcome === 'archived' && r.tradeItemId && byId.has(r.tradeItemId));
    const lines = archived.map((r) => archiveLedgerLine(byId.get(r.tradeItemId!)!));
    if (await writeChunkLedger(workDir, 'archives', index, lines, ctx.own))
      await writeResults(workDir, 'archives', index, results, ctx.own);
    return {
      rows: results.length,
      failed: results.filter((r) => r.outcome === 'failed').length,
      writes: ex.writesSent,
      ...(ex.abortReason ? { abort: ex.abortReason } : {}),
    };
  } finally {
    await journal.close();
  }
}
