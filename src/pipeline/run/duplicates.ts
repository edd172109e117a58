/**
 * The fence's last window, closed after the fact (docs/concurrency.md, "The window that remains"): a holder paused
 * between its fence check and the socket write can let one create out after another run took the lease over. Against an
 * API that assigns its own ids, that is a second item for a key. Both runs look for it before they end:
 *
 * - the run that took the lease over from a holder that never released it checks every key it created that the lost
 *   run's journal (`<its run dir>/chunks`, and earlier attempts' `outdated-<n>/chunks`) names in a create sent without
 *   an answer, or answered late: a second live item is the lost run's (it landed after this run looked): archived;
 * - the lost run, once it knows its lease is gone, checks its own late creates (answered when its fence no longer held:
 *   journalled `late`) under a lease taken again: when another live item holds the key, its own is archived.
 *
 * What is removed is written to `<run>/duplicates.jsonl` of both runs, and reported `duplicate_removed` (a line without
 * a row number, like an archive) by the run whose directory holds it.
 */
import { appendFile, readdir, readFile } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { allFences, type Fence } from '../../api/fence.ts';
import type { TradeItemRecord } from '../../api/types.ts';
import { LeaseLostError } from '../../errors.ts';
import { logger } from '../../logger.ts';
import { issue } from '../../issue-codes.ts';
import { gtinKey } from '../gtin.ts';
import type { ResultRow } from './chunks.ts';
import { describeHolder, LeaseBusyError, type Lease } from '../../lease/lease.ts';
import { keepPending, notePending, readPending, type PendingCheck } from './pending-duplicates.ts';

/** One duplicate removed: its key, the item archived, the run that created it and the run that archived it. */
export interface DuplicateLine {
  key: string;
  tradeItemId: string;
  createdBy: string;
  removedBy: string;
  at: string;
}

/** What the sweep needs of the product API. */
export interface DuplicateApi {
  searchTradeItems(query: Record<string, string | number>): Promise<{ tradeItems: TradeItemRecord[] | null }>;
  archiveTradeItems(ids: string[]): Promise<unknown>;
}

/** A trade-item create a journal knows: sent without an answer, or confirmed (`late`: answered after the fence). */
export interface JournalledCreate {
  state: 'sent' | 'confirmed' | 'failed' | 'planned';
  tradeItemId?: string;
  late?: boolean;
}

const CREATE_OP = /^(.*):\d+:(tradeItem\.create|manufacturedItem\.createWithTradeItem)$/;
const FILE = 'duplicates.jsonl';

/** The journals of a run directory: its chunks and the chunks earlier attempts set aside. */
async function journalFiles(dir: string): Promise<string[]> {
  const dirs = [join(dir, 'chunks')];
  const names = existsSync(dir) ? await readdir(dir) : [];
  for (const n of names) if (/^outdated-\d+$/.test(n)) dirs.push(join(dir, n, 'chunks'));
  const files: string[] = [];
  for (const d of dirs) {
    if (!existsSync(d)) continue;
    for (const f of await readdir(d)) if (f.endsWith('.journal.jsonl')) files.push(join(d, f));
  }
  return files;
}

/**
 * The trade-item creates journalled under a run directory, by key (the latest state of each; read only — the journal
 * may belong to a run still alive). `only`: the keys wanted (the others are not kept).
 */
export async function journalledCreates(
  dir: string,
  only?: ReadonlySet<string>,
): Promise<Map<string, JournalledCreate[]>> {
  const byKey = new Map<string, JournalledCreate[]>();
  for (const file of await journalFiles(dir)) {
    const latest = new Map<string, JournalledCreate>();
    for (const line of (await readFile(file, 'utf8')).split('\n')) {
      if (!line.includes('.create')) continue;
      let rec: { op?: unknown; s?: unknown; r?: { tradeItemId?: unknown; late?: unknown } };
      try {
        rec = JSON.parse(line) as typeof rec;
      } catch {
        continue;
      }
      if (typeof rec.op !== 'string' || !CREATE_OP.test(rec.op)) continue;
      latest.set(rec.op, {
        state: rec.s as JournalledCreate['state'],
        ...(typeof rec.r?.tradeItemId === 'string' ? { tradeItemId: rec.r.tradeItemId } : {}),
        ...(rec.r?.late === true ? { late: true } : {}),
      });
    }
    for (const [op, c] of latest) {
      const key = CREATE_OP.exec(op)![1]!;
      if (only && !only.has(key)) continue;
      byKey.set(key, [...(byKey.get(key) ?? []), c]);
    }
  }
  return byKey;
}

/** The owner's live trade items of a GTIN key. */
async function liveItems(api: DuplicateApi, owner: string, key: string): Promise<TradeItemRecord[]> {
  const want = gtinKey(key);
  if (!want) return [];
  const page = await api.searchTradeItems({ OwnerCompanyId: owner, GTIN: key, Take: 500 });
  return (page.tradeItems ?? []).filter((t) => !t.archived && gtinKey(t.gtin) === want);
}

async function record(dirs: string[], lines: DuplicateLine[]): Promise<void> {
  if (lines.length === 0) return;
  const text = lines.map((l) => JSON.stringify(l)).join('\n') + '\n';
  for (const d of dirs) if (existsSync(d)) await appendFile(join(d, FILE), text);
}

/**
 * The run that took the lease over (`workDir`, run `runId`) from `lost` (its run id and directory): every key this run
 * created that the lost run's journal names in a create not answered in time is looked up; a live item other than this
 * run's is that create's, and is archived. Returns what was removed (written to both runs' duplicates.jsonl).
 */
export async function removeDuplicatesOfLostRun(o: {
  api: DuplicateApi;
  owner: string;
  runId: string;
  workDir: string;
  lost: { runId: string; dir: string };
  /** Filled with the keys whose unanswered create left no second item yet (it may still come). */
  pending?: PendingCheck[];
}): Promise<DuplicateLine[]> {
  const theirs = await journalledCreates(o.lost.dir);
  const late = [...theirs].filter(([, cs]) => cs.some((c) => c.state === 'sent' || c.late));
  if (late.length === 0) return [];
  const ours = await journalledCreates(o.workDir, new Set(late.map(([key]) => key)));
  const removed: DuplicateLine[] = [];
  for (const [key, cs] of late) {
    const mine = new Set(
      (ours.get(key) ?? []).flatMap((c) => (c.state === 'confirmed' && c.tradeItemId ? [c.tradeItemId] : [])),
    );
    if (mine.size === 0) continue;
    const known = new Set(cs.flatMap((c) => (c.tradeItemId ? [c.tradeItemId] : [])));
    const unanswered = cs.some((c) => c.state === 'sent');
    const others = (await liveItems(o.api, o.owner, key)).filter(
      (t) => !mine.has(t.tradeItemId) && (known.has(t.tradeItemId) || unanswered),
    );
    if (others.length === 0) {
      if (unanswered)
        o.pending?.push({
          key,
          keep: [...mine],
          lostRun: o.lost.runId,
          lostDir: o.lost.dir,
          since: new Date().toISOString(),
        });
      continue;
    }
    await o.api.archiveTradeItems(others.map((t) => t.tradeItemId));
    const at = new Date().toISOString();
    for (const t of others)
      removed.push({ key, tradeItemId: t.tradeItemId, createdBy: o.lost.runId, removedBy: o.runId, at });
  }
  await record([o.workDir, o.lost.dir], removed);
  return removed;
}

/**
 * A run that lost its lease, holding it again: each of its own creates answered late (after its fence stopped holding)
 * is looked up; when another live item holds the key, its own came second, and is archived.
 */
export async function removeOwnLateDuplicates(o: {
  api: DuplicateApi;
  owner: string;
  runId: string;
  workDir: string;
}): Promise<DuplicateLine[]> {
  const removed: DuplicateLine[] = [];
  for (const [key, cs] of await journalledCreates(o.workDir)) {
    const mine = new Set(cs.flatMap((c) => (c.late && c.tradeItemId ? [c.tradeItemId] : [])));
    if (mine.size === 0) continue;
    const live = await liveItems(o.api, o.owner, key);
    const others = live.filter((t) => !mine.has(t.tradeItemId));
    const own = live.filter((t) => mine.has(t.tradeItemId));
    if (others.length === 0 || own.length === 0) continue;
    await o.api.archiveTradeItems(own.map((t) => t.tradeItemId));
    const at = new Date().toISOString();
    for (const t of own) removed.push({ key, tradeItemId: t.tradeItemId, createdBy: o.runId, removedBy: o.runId, at });
  }
  await record([o.workDir], removed);
  return removed;
}

/**
 * The keys earlier takeovers noted (pending-duplicates.ts), looked at again: a live item beside the kept one is a late
 * create's, archived. Returns what was removed (written to this run's and the lost run's duplicates.jsonl).
 */
export async function removePendingDuplicates(o: {
  api: DuplicateApi;
  owner: string;
  runId: string;
  workDir: string;
  file: string;
}): Promise<DuplicateLine[]> {
  const checks = await readPending(o.file);
  if (checks.length === 0) return [];
  const removed: DuplicateLine[] = [];
  const left: PendingCheck[] = [];
  for (const c of checks) {
    const live = await liveItems(o.api, o.owner, c.key);
    const keep = new Set(c.keep);
    if (!live.some((t) => keep.has(t.tradeItemId))) continue;
    const others = live.filter((t) => !keep.has(t.tradeItemId));
    if (others.length === 0) {
      left.push(c);
      continue;
    }
    await o.api.archiveTradeItems(others.map((t) => t.tradeItemId));
    const at = new Date().toISOString();
    const lines = others.map((t) => ({
      key: c.key,
      tradeItemId: t.tradeItemId,
      createdBy: c.lostRun,
      removedBy: o.runId,
      at,
    }));
    await record([o.workDir, c.lostDir], lines);
    removed.push(...lines);
  }
  await keepPending(o.file, left);
  return removed;
}

/** True when the run's journals hold a create answered after its fence stopped holding. */
export async function hasLateCreates(workDir: string): Promise<boolean> {
  for (const cs of (await journalledCreates(workDir)).values()) if (cs.some((c) => c.late)) return true;
  return false;
}

/** The duplicates removed for or by the run of `workDir`, as report lines (`duplicate_removed`, no row number). */
export async function duplicateResults(workDir: string): Promise<ResultRow[]> {
  const file = join(workDir, FILE);
  if (!existsSync(file)) return [];
  const seen = new Set<string>();
  const rows: ResultRow[] = [];
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (line.trim() === '') continue;
    const d = JSON.parse(line) as DuplicateLine;
    if (seen.has(d.tradeItemId)) continue;
    seen.add(d.tradeItemId);
    rows.push({
      row: null,
      key: d.key,
      outcome: 'duplicate_removed',
      tradeItemId: d.tradeItemId,
      manufacturedItemId: null,
      changedFields: ['archived'],
      issues: [
        issue('DUPLICATE_REMOVED', {
          row: null,
          message: `a second item for ${d.key}, created by run ${d.createdBy} after its lease had run out, archived by run ${d.removedBy}`,
        }),
      ],
    });
  }
  return rows;
}

/** What {@link sweepDuplicates} needs of a run. */
export interface SweepInput {
  /** The product API with its writes fenced by `fence` (the run's clients bound to it). */
  api: (fence: Fence) => DuplicateApi;
  owner: string;
  runId: string;
  workDir: string;
  /** The run's lease (held, or lost). */
  lease: Lease;
  /** Takes the lease again for a run that lost it (waits at most `waitMs`). */
  retake: (waitMs: number) => Promise<Lease>;
  /** How long a run that lost its lease waits for it to check its late creates. */
  waitMs: number;
  /** What must hold besides the lease for the sweep to write (a queued run's import job lock). */
  guard?: Fence;
  /** The machine's file of keys to look at again for this owner and API (pending-duplicates.ts). */
  pending?: string;
}

/**
 * Before a run's report: a run that took the lease over from a holder that never released it removes that run's late
 * second items; a run that lost its lease and has creates answered late takes the lease again (waiting up to `waitMs`
 * for the run that holds it to end) and removes its own. Returns a note for the report when no check could be made.
 */
export async function sweepDuplicates(o: SweepInput): Promise<string | undefined> {
  const log = logger.child({ runId: o.runId });
  const fenced = (lease: Lease): DuplicateApi => o.api(o.guard ? allFences([lease, o.guard]) : lease);
  try {
    // A fence that ran out stops the run before any renewal said whether another run took the lease: ask now.
    await o.lease.ready().catch(() => undefined);
    if (!o.lease.lost) {
      const file = o.pending;
      if (file) {
        const removed = await removePendingDuplicates({ ...o, api: fenced(o.lease), file });
        if (removed.length > 0)
          log.warn({ removed: removed.length }, 'second items of late creates noted by an earlier run archived');
      }
      const from = o.lease.takenFrom;
      if (!from || from.runId === o.runId) return undefined;
      if (!from.dir || !existsSync(from.dir))
        return `took the lease over from run ${from.runId}, whose journal is not on this machine: second items it may have created after its lease ran out were not looked for`;
      const pending: PendingCheck[] = [];
      const removed = await removeDuplicatesOfLostRun({
        ...o,
        api: fenced(o.lease),
        lost: { runId: from.runId, dir: from.dir! },
        pending,
      });
      if (file) await notePending(file, pending);
      if (removed.length > 0)
        log.warn(
          { removed: removed.length, lostRun: from.runId },
          'second items of a run that lost its lease archived',
        );
      return undefined;
    }
    if (!(o.lease.lost instanceof LeaseLostError) || !(await hasLateCreates(o.workDir))) return undefined;
    let again: Lease;
    try {
      again = await o.retake(o.waitMs);
    } catch (err) {
      if (!(err instanceof LeaseBusyError)) throw err;
      return `creates answered after this run's lease ran out were not checked for second items (${describeHolder(err.holder)} holds the lease): run the same import again`;
    }
    try {
      const removed = await removeOwnLateDuplicates({ ...o, api: fenced(again) });
      if (removed.length > 0)
        log.warn({ removed: removed.length }, 'own second items created after the lease ran out archived');
    } finally {
      await again.release();
    }
    return undefined;
  } catch (err) {
    log.warn({ err: (err as Error).message }, 'cannot check for second items');
    return `second items were not looked for: ${(err as Error).message}`;
  }
}
