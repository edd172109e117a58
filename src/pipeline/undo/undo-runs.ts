/**
 * The runs an undo deals with: the run to undo (by id under the report dir, or by its directory), the undo's own id,
 * and the later runs that touched the same items (docs/undo.md).
 */
import type { ScopeSpec } from '../scope.ts';
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ProductSyncError } from '../../errors.ts';
import { LEDGER_FILE, readLedger } from './ledger-file.ts';

/** What run.json and summary.json tell of a finished run. */
export interface FinishedRun {
  runId: string;
  dir: string;
  reportDir: string;
  owner: string;
  kind: string;
  /** The run an undo undid. */
  undoes?: string;
  startedAt: string;
  dryRun: boolean;
  /** The summary says the run stopped before its end (lease lost, interrupted). */
  aborted: boolean;
  ledger: string;
  /** The scope the run kept to (run.json), which its undo keeps to as well. */
  scope?: ScopeSpec;
}

async function readJson<T>(file: string): Promise<T | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

type RunJson = { runId?: string; kind?: string; ownerCompanyId?: string; undoes?: string; scope?: { spec: ScopeSpec } };
type SummaryJson = { runId?: string; startedAt?: string; dryRun?: boolean; aborted?: string };

async function finishedRun(dir: string): Promise<FinishedRun | undefined> {
  const summary = await readJson<SummaryJson>(join(dir, 'summary.json'));
  const run = await readJson<RunJson>(join(dir, 'run.json'));
  if (!summary || !run?.ownerCompanyId) return undefined;
  return {
    runId: basename(dir),
    dir,
    reportDir: dirname(dir),
    owner: run.ownerCompanyId,
    kind: run.kind ?? 'import',
    ...(run.undoes ? { undoes: run.undoes } : {}),
    startedAt: summary.startedAt ?? '',
    dryRun: Boolean(summary.dryRun),
    aborted: Boolean(summary.aborted),
    ledger: join(dir, LEDGER_FILE),
    ...(run.scope ? { scope: run.scope.spec } : {}),
  };
}

const undoError = (message: string) => new ProductSyncError('PS_ERR_UNDO', message);

/** The run `target` names: a run directory, or a run id under `reportDir`. */
export async function findRunToUndo(target: string, reportDir: string): Promise<FinishedRun> {
  const asDir = resolve(target);
  const dir =
    existsSync(join(asDir, 'run.json')) || existsSync(join(asDir, 'summary.json'))
      ? asDir
      : resolve(reportDir, basename(target));
  if (basename(target) !== target && dir !== asDir) throw undoError(`no run directory at ${target}`);
  if (!existsSync(dir)) throw undoError(`no run ${target} in ${resolve(reportDir)}`);
  if (!existsSync(join(dir, 'summary.json')))
    throw undoError(
      `run ${basename(dir)} has not finished (no summary.json): run its command again to finish it, then undo it`,
    );
  const run = await finishedRun(dir);
  if (!run) throw undoError(`run ${basename(dir)} has no readable run.json or summary.json`);
  if (run.kind === 'validate' || run.kind === 'reconcile')
    throw undoError(`run ${run.runId} is a ${run.kind}: it sent nothing`);
  if (run.dryRun) throw undoError(`run ${run.runId} was a dry run: it sent nothing`);
  if (!existsSync(run.ledger))
    throw undoError(`run ${run.runId} has no undo ledger (${LEDGER_FILE}): it ran before ledgers were kept`);
  return run;
}

/**
 * The undo's run id: `undo-<run>`, `undo-<run>-u2`… — the first not taken by another run, or the one left unfinished
 * by an earlier attempt of this undo (which resumes). A finished undo is not run again under its id: undoing the same
 * run again is a new run that finds everything as before.
 */
export async function undoRunIdFor(reportDir: string, undone: string): Promise<string> {
  for (let n = 1; ; n++) {
    const id = n === 1 ? `undo-${undone}` : `undo-${undone}-u${n}`;
    const dir = join(reportDir, id);
    if (!existsSync(dir)) return id;
    const run = await readJson<RunJson>(join(dir, 'run.json'));
    if (run?.undoes === undone && !existsSync(join(dir, 'summary.json'))) return id;
  }
}

/** The last undo of run `undone` in `reportDir`, as its directory tells: finished (its summary) or not. */
export async function lastUndoOf(
  reportDir: string,
  undone: string,
): Promise<{ runId: string; summary?: Record<string, unknown> } | undefined> {
  let last: { runId: string; summary?: Record<string, unknown> } | undefined;
  for (let n = 1; ; n++) {
    const id = n === 1 ? `undo-${undone}` : `undo-${undone}-u${n}`;
    const dir = join(reportDir, id);
    if (!existsSync(dir)) return last;
    const run = await readJson<RunJson>(join(dir, 'run.json'));
    if (run?.undoes !== undone) continue;
    const summary = await readJson<Record<string, unknown>>(join(dir, 'summary.json'));
    last = { runId: id, ...(summary ? { summary } : {}) };
  }
}

/** A later run that changed items of the run to undo. */
export interface NewerRun {
  runId: string;
  startedAt: string;
  items: number;
  /** A few of the items (trade item ids). */
  sample: string[];
}

/**
 * The later runs that stand between `run` and its undo: the finished runs of its report dir (same owner) started after
 * it whose ledgers name items of `ids` (the trade items `run` changed) and whose changes are still live. Not counted:
 * the undos of `run` itself; a run undone since by a finished (not aborted) undo that is itself still live ("undo the
 * newer run first" then lets `run` be undone); an undo of one of those later runs (it only takes a later change back).
 */
export async function newerRunsTouching(run: FinishedRun, ids: ReadonlySet<string>): Promise<NewerRun[]> {
  const later: FinishedRun[] = [];
  for (const name of await readdir(run.reportDir)) {
    if (name === run.runId) continue;
    const dir = join(run.reportDir, name);
    if (!existsSync(join(dir, LEDGER_FILE)) || !(await stat(dir)).isDirectory()) continue;
    const other = await finishedRun(dir);
    if (other && other.owner === run.owner && other.startedAt > run.startedAt) later.push(other);
  }
  const live = liveness(later);
  const inLater = new Set(later.map((r) => r.runId));
  const found: NewerRun[] = [];
  for (const other of later) {
    if (other.undoes === run.runId || (other.undoes && inLater.has(other.undoes)) || !live(other.runId)) continue;
    let items = 0;
    const sample: string[] = [];
    for await (const line of readLedger(other.ledger)) {
      if (!line.tradeItemId || !ids.has(line.tradeItemId)) continue;
      items++;
      if (sample.length < 3) sample.push(line.tradeItemId);
    }
    if (items > 0) found.push({ runId: other.runId, startedAt: other.startedAt, items, sample });
  }
  return found.sort((a, b) => a.startedAt.localeCompare(b.startedAt));
}

/**
 * Whether a run's changes are still live: not taken back by a finished, not aborted undo whose own changes are live
 * (an undo of an undo gives the run back). Undos start after what they undo, so the chains end.
 */
function liveness(runs: readonly FinishedRun[]): (runId: string) => boolean {
  const undosOf = new Map<string, FinishedRun[]>();
  for (const r of runs)
    if (r.kind === 'undo' && r.undoes && !r.aborted) undosOf.set(r.undoes, [...(undosOf.get(r.undoes) ?? []), r]);
  const memo = new Map<string, boolean>();
  const live = (runId: string): boolean => {
    let v = memo.get(runId);
    if (v === undefined) {
      v = !(undosOf.get(runId) ?? []).some((u) => live(u.runId));
      memo.set(runId, v);
    }
    return v;
  };
  return live;
}

/** Where a run's changes came from, as its undo's OpenLineage events name them (the import's job and sheet). */
export interface UndoneOrigin {
  /** The run directly undone. */
  runId: string;
  owner: string;
  /** The import's mapping (as given), feed and sheet (a feed's remote file: its URL). */
  mapping: string;
  feed?: string;
  source: string;
}

type ImportRunJson = RunJson & {
  request?: { file?: string; mapping?: string; feed?: string; sourceLocation?: string };
};

/**
 * The origin of the run `target` names (as findRunToUndo finds it, finished or not): the import it is, or, for an
 * undo, the import at the end of its chain of undos. Undefined when no such run can be read.
 */
export async function undoneOrigin(target: string, reportDir: string): Promise<UndoneOrigin | undefined> {
  const asDir = resolve(target);
  let dir = existsSync(join(asDir, 'run.json')) ? asDir : resolve(reportDir, basename(target));
  const runId = basename(dir);
  // Each undo undoes an earlier run of the same report dir: the chain ends (bounded all the same).
  for (let hops = 0; hops < 100; hops++) {
    const run = await readJson<ImportRunJson>(join(dir, 'run.json'));
    if (!run?.ownerCompanyId) return undefined;
    if (run.kind === 'undo' && run.undoes) {
      dir = join(dirname(dir), run.undoes);
      continue;
    }
    const r = run.request;
    if (!r?.file || !r.mapping) return undefined;
    return {
      runId,
      owner: run.ownerCompanyId,
      mapping: r.mapping,
      ...(r.feed ? { feed: r.feed } : {}),
      source: r.sourceLocation ?? r.file,
    };
  }
  return undefined;
}
