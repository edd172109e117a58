/**
 * One chunk of the second pass: its drafts resolved, looked up in the API state and planned; written as a chunk file to
 * push, or settled at once when it needs no request.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { LeaseLostError } from '../../errors.ts';
import type { ExecutedRow } from '../sync/execute.ts';
import { openJournal, type JournalEntry } from '../sync/journal.ts';
import { makeDir } from '../../make-dir.ts';
import { planRow } from '../sync/plan.ts';
import { scopeIssue } from '../scope.ts';
import { userRuleChecker } from '../map/user-rules.ts';
import type { Draft, Issue } from '../types.ts';
import { OUTCOME_OF_ACTION } from '../outcomes.ts';
import {
  chunkPaths,
  notAttemptedIssue,
  readChunk,
  writeChunk,
  writeResults,
  type ResultRow,
  type RowChunk,
} from './chunks.ts';
import { outcomesWithoutRequests } from './push.ts';
import type { Fence } from '../../api/fence.ts';
import { abortError, type OpenedRun } from './open-run.ts';
import { notePendingBrands, withPendingBrands } from './pending-brands.ts';

const hasError = (d: Draft) => d.issues.some((i) => i.severity === 'error');
/**
 * A draft with an error, settled: nothing is sent for it, its source cells go to the rejected file. Invalid, unless the
 * error is the API's (a brand it would not create): then failed, and the same sheet imported again may pass.
 */
const invalidOutcome = (d: Draft): ResultRow =>
  unsent(d, d.issues.some((i) => i.code === 'BRAND_CREATE_FAILED') ? 'failed' : 'invalid', d.issues);
/** A row the run did not attempt (it stopped), saying why. */
const notAttemptedOutcome = (d: Draft, why: string): ResultRow =>
  unsent(d, 'not_attempted', [...d.issues, notAttemptedIssue(d.row, why)]);
/** The outcome of a row for which nothing was sent, with its source cells (for rejected.*). */
const unsent = (d: Draft, outcome: ResultRow['outcome'], issues: Issue[]): ResultRow => ({
  row: d.row,
  key: d.key,
  outcome,
  tradeItemId: null,
  manufacturedItemId: null,
  changedFields: [],
  issues,
  source: d.source,
});

/** A chunk just prepared: 'new' (its chunk file written, to push) or 'settled' (`results` are its outcomes). */
export interface PreparedChunk {
  index: number;
  status: 'new' | 'settled';
  chunk: RowChunk;
  results?: ResultRow[];
}

/**
 * Resolves, looks up and plans one chunk's drafts; writes the chunk file, or with `settle` the outcomes of a chunk that
 * needs no request.
 */
export async function prepareChunk(
  run: OpenedRun,
  index: number,
  drafts: Draft[],
  settle: boolean,
  guard: Fence | undefined,
): Promise<PreparedChunk> {
  const { state, share } = run;
  const settled: ResultRow[] = [];
  const chunk: RowChunk = { index, settled, plans: [] };
  const stopped = () => share.stop.reason !== null;
  // Rows outside the scope are refused before their labels are resolved: nothing of them is written (a brand create).
  if (run.scope)
    for (const d of drafts) {
      if (hasError(d)) continue;
      const outside = scopeIssue(d, run.scope);
      if (outside) d.issues.push(outside);
    }
  if (!stopped()) {
    try {
      await run.resolver.resolveChunk(drafts);
    } catch (err) {
      // A brand create the run's fence refused, the credential refused, the reference API unavailable after its
      // retries: the run stops; these rows, like the rest, are not attempted, and the report says so.
      share.stop.reason ??= err instanceof LeaseLostError ? err : abortError(err);
    }
  }
  for (const d of drafts) if (d.lookups) d.lookups = undefined;
  // The mapping's own rules read the row as it would be sent: after its labels are resolved to ids.
  if (run.mapping.rules.length > 0) await userRuleChecker(run.mapping.rules).check(drafts);
  run.gateTally?.add(drafts);
  if (state.kind === 'validate') {
    // Every row is settled here, in sheet order: the outcomes go to the report as they are (no file, no request). By
    // index: a for-of in an async function makes an iterator result a row.
    for (let i = 0; i < drafts.length; i++) {
      const d = drafts[i]!;
      // Stopped (interrupted) before its labels were resolved: a row without an error yet is not known valid.
      if (stopped() && !hasError(d)) {
        settled.push(notAttemptedOutcome(d, share.stop.reason!.message));
        continue;
      }
      settled.push(
        hasError(d)
          ? invalidOutcome(d)
          : {
              row: d.row,
              key: d.key,
              outcome: 'valid',
              tradeItemId: null,
              manufacturedItemId: null,
              changedFields: [],
              issues: d.issues,
            },
      );
    }
    return { index, status: 'settled', chunk, results: settled };
  }
  const valid: Draft[] = [];
  for (const d of drafts) {
    if (hasError(d)) settled.push(invalidOutcome(d));
    else valid.push(d);
  }
  if (valid.length > 0) {
    let apiState;
    if (!stopped() && run.api) {
      try {
        apiState = await run.api.forKeys(valid.map((d) => d.key!));
      } catch (err) {
        share.stop.reason ??= abortError(err);
      }
    }
    const options = {
      target: run.mapping.target,
      mode: state.request.mode,
      ownerCompanyId: state.ownerCompanyId,
      key: run.mapping.key,
    };
    for (const d of valid) {
      if (!apiState) {
        settled.push(notAttemptedOutcome(d, share.stop.reason?.message ?? 'run stopped'));
        continue;
      }
      const p = planRow(d, apiState, options);
      const issues = [...d.issues, ...p.issues];
      if (state.request.dryRun) {
        const outcome = OUTCOME_OF_ACTION[p.action];
        settled.push({
          row: p.row,
          key: p.key,
          outcome,
          tradeItemId: p.tradeItemId,
          manufacturedItemId: p.manufacturedItemId,
          changedFields: outcome === 'unchanged' || outcome === 'skipped' ? [] : p.changedFields,
          issues,
        });
      } else {
        chunk.plans.push({ ...p, issues, source: d.source });
      }
    }
  }
  if (run.earlier && chunk.plans.length > 0) await keepEarlierOutcomes(run.earlier, run.workDir, chunk);
  const outcomes = settle ? outcomesWithoutRequests(run.workDir, chunk) : null;
  // A queued run's prepare that lost its job to another worker writes no chunk file over the one that worker writes.
  guard?.check();
  // Before the verdict, the brands this chunk's rows will need are noted, not created (pending-brands.ts).
  if (run.resolver.deferBrandCreates) await notePendingBrands(run.workDir, chunk, run.resolver);
  if (outcomes)
    return { index, status: 'settled', chunk, results: await writeResults(run.workDir, 'rows', index, outcomes) };
  await writeChunk(run.workDir, 'rows', index, chunk);
  return { index, status: 'new', chunk };
}

const KEPT_OUTCOMES: ReadonlySet<string> = new Set(['created', 'updated', 'unarchived']);

/**
 * A run planning again after another run held the lease: a row the API already holds as this run wants it (its new
 * plan sends nothing) keeps the outcome of the earlier attempt that wrote it — created, updated — when the item is the
 * one that attempt wrote. Its earlier plan goes into the chunk with that attempt's journal entries (every step
 * confirmed: nothing is sent again), so the report and the undo ledger say what the run did to it.
 */
async function keepEarlierOutcomes(earlier: string, workDir: string, chunk: RowChunk): Promise<void> {
  const old = chunkPaths(earlier, 'rows', chunk.index);
  if (!existsSync(old.input) || !existsSync(old.journal)) return;
  // Its plans as they were sent: with the ids of the brands that attempt created after its gate (pending-brands.ts).
  const before = await withPendingBrands(earlier, await readChunk(earlier, 'rows', chunk.index), true);
  const oldPlans = new Map(before.plans.map((p) => [p.row, p]));
  const journal = await openJournal(old.journal);
  const carried: [string, JournalEntry][] = [];
  try {
    for (let i = 0; i < chunk.plans.length; i++) {
      const p = chunk.plans[i]!;
      const was = oldPlans.get(p.row);
      if (p.steps.length > 0 || p.action !== 'unchanged' || !was || was.key !== p.key) continue;
      const done = journal.state(`row:${p.row}`);
      const r = done?.state === 'confirmed' ? (done.result as ExecutedRow) : undefined;
      if (!r || !KEPT_OUTCOMES.has(r.outcome) || r.tradeItemId !== p.tradeItemId) continue;
      if (p.manufacturedItemId && r.manufacturedItemId !== p.manufacturedItemId) continue;
      const steps = was.steps.map((step, s) => `${was.key}:${s}:${step.kind}`);
      const entries = steps.map((op) => [op, journal.state(op)] as const);
      if (!entries.every(([, e]) => e?.state === 'confirmed')) continue;
      chunk.plans[i] = { ...was, issues: p.issues, source: p.source };
      for (const [op, e] of entries) carried.push([op, e!]);
      carried.push([`row:${p.row}`, done!]);
    }
  } finally {
    await journal.close();
  }
  if (carried.length === 0) return;
  await makeDir(join(workDir, 'chunks'));
  const next = await openJournal(chunkPaths(workDir, 'rows', chunk.index).journal);
  try {
    for (const [op, e] of carried) next.record(op, e.state, e.result);
  } finally {
    await next.close();
  }
}
