/** Pushing one chunk: its plans through an executor over the chunk's own journal; its results written next to it. */
import { existsSync } from 'node:fs';
import type { ApiClients } from '../../api/clients.ts';
import type { Config } from '../../config.ts';
import { apiIssue, Executor, type ExecutedRow, type RunStop } from '../sync/execute.ts';
import { openJournal } from '../sync/journal.ts';
import type { RowAction } from '../sync/plan.ts';
import { CircuitBreaker, Throttle } from '../sync/throttle.ts';
import { chunkPaths, isRejected, readChunk, writeResults, type ResultRow, type RowChunk } from './chunks.ts';

/** What pushing needs: the product client, the shared throttle, and what the run's executors share. */
export interface PushContext {
  config: Config;
  clients: ApiClients;
  throttle?: Throttle;
  signal?: AbortSignal;
  /** Shared by every chunk of a run in this process: an abort stops them all, failures count run-wide. */
  shared?: { stop: RunStop; breaker: CircuitBreaker };
  /** Queue mode: an aborted chunk throws instead of writing its results, so a retry pushes it again. */
  throwOnAbort?: boolean;
  /** Each row as it finishes (progress). */
  onResult?: (r: ExecutedRow) => void;
}

/** What a pushed chunk tells its driver. */
export interface PushedChunk {
  rows: number;
  failed: number;
  writes: number;
  /** Set when the run must stop (credential rejected, circuit open). */
  abort?: Error;
}

const OUTCOME: Record<RowAction, ExecutedRow['outcome']> = { create: 'created', update: 'updated', unarchive: 'unarchived', unchanged: 'unchanged', skipped: 'skipped' };

/** A fresh run-wide share for the executors of one run in this process. */
export function runShare(): { stop: RunStop; breaker: CircuitBreaker } {
  return { stop: { reason: null }, breaker: new CircuitBreaker(8) };
}

function executor(ctx: PushContext, owner: string, journal: Awaited<ReturnType<typeof openJournal>>, onResult: (r: ExecutedRow) => void): Executor {
  return new Executor({
    api: ctx.clients.product, ownerCompanyId: owner, journal, signal: ctx.signal, onResult,
    throttle: ctx.throttle ?? new Throttle(ctx.config.API_CONCURRENCY, ctx.config.API_MAX_RPS),
    ...(ctx.shared ? { stop: ctx.shared.stop, breaker: ctx.shared.breaker } : {}),
  });
}

/** Pushes row chunk `index` (read from disk unless given) and writes its results; idempotent through its journal. */
export async function pushRowChunk(workDir: string, owner: string, index: number, ctx: PushContext, given?: RowChunk): Promise<PushedChunk> {
  const chunk = given ?? (await readChunk(workDir, 'rows', index));
  const paths = chunkPaths(workDir, 'rows', index);
  const results: ResultRow[] = [...chunk.settled];
  const sourceOf = new Map(chunk.plans.map((p) => [p.row, p.source]));
  let writes = 0;
  let abort: Error | undefined;
  // Rows with nothing to send and no journal (no earlier attempt): their outcome is the plan's.
  if (chunk.plans.every((p) => p.steps.length === 0) && !existsSync(paths.journal)) {
    for (const p of chunk.plans) {
      const r: ResultRow = { row: p.row, key: p.key, outcome: OUTCOME[p.action], tradeItemId: p.tradeItemId, manufacturedItemId: p.manufacturedItemId, changedFields: [], issues: p.issues };
      results.push(r);
      ctx.onResult?.(r);
    }
  } else {
    const journal = await openJournal(paths.journal);
    try {
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
        for (const p of chunk.plans) if (!done.has(p.row)) results.push({ row: p.row, key: p.key, outcome: 'failed', tradeItemId: p.tradeItemId, manufacturedItemId: p.manufacturedItemId, changedFields: [], issues: [...p.issues, apiIssue(p.row, err)], source: p.source });
      }
      writes = ex.writesSent;
      abort ??= ex.abortReason ?? undefined;
    } finally {
      await journal.close();
    }
  }
  if (abort && ctx.throwOnAbort) throw abort;
  await writeResults(workDir, 'rows', index, results);
  return { rows: results.length, failed: results.filter((r) => r.outcome === 'failed').length, writes, ...(abort ? { abort } : {}) };
}

/** Archives chunk `index` of a `full` run and writes its results (archiving is idempotent). */
export async function pushArchiveChunk(workDir: string, owner: string, index: number, ctx: PushContext): Promise<PushedChunk> {
  const entries = await readChunk(workDir, 'archives', index);
  const journal = await openJournal(chunkPaths(workDir, 'archives', index).journal);
  const results: ResultRow[] = [];
  try {
    const ex = executor(ctx, owner, journal, (r) => {
      results.push(r);
      ctx.onResult?.(r);
    });
    await ex.archive(entries);
    if (ex.abortReason && ctx.throwOnAbort) throw ex.abortReason;
    await writeResults(workDir, 'archives', index, results);
    return { rows: results.length, failed: results.filter((r) => r.outcome === 'failed').length, writes: ex.writesSent, ...(ex.abortReason ? { abort: ex.abortReason } : {}) };
  } finally {
    await journal.close();
  }
}
