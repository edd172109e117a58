/**
 * `product-sync undo`: takes a finished run back from its ledger (docs/undo.md). For each item the run changed, read
 * now (in batches, as the API state of an import is read), a field still holding what the run sent is put back, an
 * item the run created is archived, its archives and unarchives are reversed; a field changed since is a conflict and
 * its item is left alone. The undo is itself a run: it holds the owner lease (checked before each batch, fencing every
 * write), journals each item before writing it (a killed undo resumes and converges), and writes its own report and
 * ledger (it can be undone).
 */
import { outsideForUndo, resolveScope, type ResolvedScope, type ScopeSpec } from '../scope.ts';
import { labelKey } from '../resolve/reference-resolver.ts';
import { existsSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { ManufacturedItemRecord, TradeItemRecord } from '../../api/types.ts';
import { LeaseLostError, ProductSyncError } from '../../errors.ts';
import { EXIT } from '../../exit-codes.ts';
import { writingTo } from '../../fs-errors.ts';
import { logger as rootLogger } from '../../logger.ts';
import { redact } from '../../redact.ts';
import { gtinKey } from '../gtin.ts';
import { writeFileAtomic, writeJsonLinesAtomic } from '../report/atomic.ts';
import { openApiState, type ApiStateSource } from '../sync/api-state.ts';
import { openJournal } from '../sync/journal.ts';
import type { LedgerLine } from './ledger.ts';
import { manufacturedKey } from '../sync/plan.ts';
import { decideUndo, undoWrites, type UndoDecision, type UndoWrite } from './undo-plan.ts';
import { holderOf, type Lease } from '../../lease/lease.ts';
import { readLedger } from './ledger-file.ts';
import { RequestTally } from '../run/request-tally.ts';
import { acquireOwnerLease } from '../run/open-run.ts';
import type { RunContext } from '../run/run-context.ts';
import { abortOf, interruption } from '../run/run-state.ts';
import { batchPaths, writeUndoReport, type UndoItem, type UndoOutcome, type UndoSummary } from './undo-report.ts';
import { findRunToUndo, newerRunsTouching, undoRunIdFor, type FinishedRun, type NewerRun } from './undo-runs.ts';

export type { UndoItem, UndoOutcome, UndoSummary } from './undo-report.ts';
export type { NewerRun } from './undo-runs.ts';

/** Ledger lines per batch: read together, journalled in one file, reported together. */
export const UNDO_BATCH = 200;

/** What to undo. */
export interface UndoRequest {
  /** A run id (under reportDir) or a run directory. */
  target: string;
  reportDir: string;
  /** Read and decide only: nothing is sent, no run directory is written. */
  dryRun?: boolean;
  /** Undo even though later runs touched the same items. */
  force?: boolean;
}

/** The end of an undo. */
export interface UndoResult {
  runId: string;
  exitCode: number;
  summary: UndoSummary;
  /** The undo's run directory (a dry run writes none). */
  dir: string | null;
  writes: number;
  newer: NewerRun[];
}

/** What the undo's driver hears: each item as it is decided (the dry-run plan) or done. */
export interface UndoContext extends RunContext {
  onItem?: (item: UndoItem) => void;
}

interface UndoRunJson {
  runId: string;
  kind: 'undo';
  undoes: string;
  ownerCompanyId: string;
  startedAt: string;
  batches: number;
}

/** First pass over the ledger: its lines, the trade items it names, whether it names manufactured items. */
async function scanLedger(file: string): Promise<{ lines: number; ids: Set<string>; manufactured: boolean }> {
  let lines = 0;
  let manufactured = false;
  const ids = new Set<string>();
  for await (const l of readLedger(file)) {
    lines++;
    if (l.tradeItemId) ids.add(l.tradeItemId);
    if (l.manufacturedItemId) manufactured = true;
  }
  return { lines, ids, manufactured };
}

/** The ledger in batches of {@link UNDO_BATCH} lines, numbered from 1. */
async function* ledgerBatches(file: string): AsyncIterable<Array<{ n: number; line: LedgerLine }>> {
  let batch: Array<{ n: number; line: LedgerLine }> = [];
  let n = 0;
  for await (const line of readLedger(file)) {
    batch.push({ n: ++n, line });
    if (batch.length >= UNDO_BATCH) {
      yield batch;
      batch = [];
    }
  }
  if (batch.length > 0) yield batch;
}

function blocked(run: FinishedRun, newer: NewerRun[]): ProductSyncError {
  const list = newer
    .map((r) => `${r.runId} (${r.items} item${r.items === 1 ? '' : 's'}, e.g. ${r.sample.join(', ')})`)
    .join('; ');
  return new ProductSyncError(
    'PS_ERR_UNDO_BLOCKED',
    `later runs changed items of run ${run.runId}: ${list}. Undo them first (newest first), or give --force to undo ${run.runId} anyway (fields they changed since are reported as conflicts and left alone)`,
  );
}

/**
 * The GTINs the item of a ledger line may hold now: the ledger's, and those of a change of its gtin (a run keyed by
 * tradeItemId can change it; the ledger's GTIN is the one before).
 */
function gtinsOf(line: LedgerLine): string[] {
  const all: unknown[] = [line.gtin];
  for (const f of line.fields) if (f.item === 'tradeItem' && f.field === 'gtin') all.push(f.sent, f.before);
  return [...new Set(all.filter((g): g is string => typeof g === 'string' && gtinKey(g) !== null))];
}

/** The API's records of a batch's items: by GTIN through the API state source, by id where it found another item. */
async function currentRecords(
  batch: ReadonlyArray<{ line: LedgerLine }>,
  source: ApiStateSource,
  ctx: RunContext,
  owner: string,
): Promise<Array<{ trade: TradeItemRecord | undefined; manu: ManufacturedItemRecord | undefined }>> {
  const keys = [...new Set(batch.flatMap((b) => gtinsOf(b.line).map((g) => gtinKey(g)!)))];
  const state = await source.forKeys(keys);
  return Promise.all(
    batch.map(async ({ line }) => {
      let trade: TradeItemRecord | undefined;
      for (const gtin of gtinsOf(line)) {
        const found = state.tradeItems.get(gtinKey(gtin)!);
        if (!found) continue;
        if (!line.tradeItemId || found.tradeItemId === line.tradeItemId) {
          trade = found;
          break;
        }
        // Two items with one GTIN (another tool made one): the ledger's is looked up by its id.
        const page = await ctx.clients.product.searchTradeItems({ OwnerCompanyId: owner, GTIN: gtin, Take: 500 });
        trade = (page.tradeItems ?? []).find((t) => t.tradeItemId === line.tradeItemId);
        if (trade) break;
      }
      let manu: ManufacturedItemRecord | undefined;
      if (trade && line.manufacturedItemId && line.supplierCompanyId) {
        manu = state.manufacturedItems.get(manufacturedKey(trade.tradeItemId, line.supplierCompanyId));
        if (manu && manu.manufacturedItemId !== line.manufacturedItemId) {
          const page = await ctx.clients.product.searchManufacturedItems({
            OwnerCompanyId: owner,
            TradeItemId: trade.tradeItemId,
            Take: 500,
          });
          manu = (page.manufacturedItems ?? []).find((m) => m.manufacturedItemId === line.manufacturedItemId);
        }
      }
      return { trade, manu };
    }),
  );
}

async function pool<T>(items: readonly T[], limit: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(Math.max(1, limit), items.length) }, async () => {
      while (next < items.length) await work(items[next++]!);
    }),
  );
}

const OUTCOME: Record<UndoDecision['verdict'], UndoOutcome> = {
  restore: 'restored',
  conflict: 'conflict',
  unchanged: 'unchanged',
  failed: 'failed',
};

/** Undoes a finished run (or, with dryRun, tells what it would do). */
export function runUndo(req: UndoRequest, ctx: UndoContext): Promise<UndoResult> {
  // Its requests are counted through its clients (those of other runs of this process, the console's, are not).
  const tally = new RequestTally();
  return undo(req, { ...ctx, clients: ctx.clients.forRun({ count: tally.count }) }, tally).finally(() => tally.close());
}

async function undo(req: UndoRequest, given: UndoContext, tally: RequestTally): Promise<UndoResult> {
  const log = given.logger ?? rootLogger;
  const run = await findRunToUndo(req.target, req.reportDir);
  const scan = await scanLedger(run.ledger);
  const dryRun = Boolean(req.dryRun);
  const owner = run.owner;
  const stop: { reason: ProductSyncError | null } = { reason: null };
  // The lease first: a second undo of the same run waiting for it (--wait-lock) then picks its run id once the first
  // has finished (a new `-u2` run), instead of writing over the finished one's report; a refused undo writes nothing.
  const lease = dryRun ? undefined : await takeLease(given, owner, `undo-${run.runId}`, stop);
  // Every write of the undo goes through clients fenced by its lease.
  const ctx: UndoContext = lease ? { ...given, clients: given.clients.forRun({ fence: lease }) } : given;
  const interrupted = () => void (stop.reason ??= interruption(ctx.signal!));
  let source: ApiStateSource | undefined;
  // A dry run writes nothing beside the run: the API state's spill files (if any) go to a scratch directory.
  let scratch: string | undefined;
  try {
    // Under the lease: a run that finished while this undo waited for it is seen.
    const newer = await newerRunsTouching(run, scan.ids);
    if (newer.length > 0 && !req.force) throw blocked(run, newer);
    // The ids are needed for that check only: not kept for the whole undo (their size: docs/undo.md, Memory).
    scan.ids.clear();
    const runId = dryRun ? `undo-${run.runId}` : await undoRunIdFor(run.reportDir, run.runId);
    const dir = join(run.reportDir, runId);
    const batches = Math.ceil(scan.lines / UNDO_BATCH);
    let startedAt = new Date().toISOString();
    if (!dryRun) {
      const previous = existsSync(join(dir, 'run.json'))
        ? (JSON.parse(await readFile(join(dir, 'run.json'), 'utf8')) as UndoRunJson)
        : undefined;
      startedAt = previous?.startedAt ?? startedAt;
      const state: UndoRunJson = { runId, kind: 'undo', undoes: run.runId, ownerCompanyId: owner, startedAt, batches };
      const file = join(dir, 'run.json');
      await writingTo('cannot write the run state', file, async () => {
        await mkdir(join(dir, 'chunks'), { recursive: true });
        await writeFileAtomic(file, `${JSON.stringify(state, null, 2)}\n`);
      });
    }
    if (ctx.signal?.aborted) interrupted();
    else ctx.signal?.addEventListener('abort', interrupted, { once: true });
    let writes = 0;
    const dryCounts = { items: 0, restored: 0, conflict: 0, unchanged: 0, failed: 0 };
    // The run's scope: an item outside it now (another supplier's since) is left alone, as a conflict.
    const scope = run.scope ? await scopeOf(run.scope, owner, ctx) : undefined;
    log.info({ runId, undoes: run.runId, items: scan.lines, dryRun }, 'undo opened');
    const work = async () => {
      let n = -1;
      for await (const batch of ledgerBatches(run.ledger)) {
        n++;
        if (!dryRun && existsSync(batchPaths(dir, n).results)) continue;
        if (stop.reason) {
          await settleBatch(dir, n, batch, `not attempted: ${stop.reason.message}`);
          continue;
        }
        try {
          // The lease is checked (renewed if it runs short) before each batch; each write is fenced by it too.
          await lease?.ready();
          source ??= await openApiState({
            product: ctx.clients.product,
            owner,
            target: scan.manufactured ? 'manufacturedItem' : 'tradeItem',
            key: 'gtin',
            dir: dryRun ? (scratch ??= await mkdtemp(join(tmpdir(), 'product-sync-undo-'))) : dir,
            sheetKeys: scan.lines,
            needIndex: false,
            concurrency: ctx.config.API_CONCURRENCY,
          });
          const records = await currentRecords(batch, source, ctx, owner);
          if (dryRun) {
            batch.forEach(({ n: line, line: l }, i) => {
              const d = decideWithin(scope, l, records[i]!.trade, records[i]!.manu);
              const item = d.incomplete
                ? itemOf(line, l, d, 'failed', d.incomplete)
                : itemOf(line, l, d, OUTCOME[d.verdict]);
              dryCounts.items++;
              dryCounts[item.outcome]++;
              ctx.onItem?.(item);
            });
            continue;
          }
          writes += await undoBatch(dir, n, batch, records, ctx, owner, stop, scope);
        } catch (err) {
          // The journal or a file of the report refused: the undo stops (the same command resumes it).
          if (dryRun || (err instanceof ProductSyncError && /^PS_ERR_(FILE_WRITE|JOURNAL)$/.test(err.code))) throw err;
          if (err instanceof LeaseLostError) stop.reason ??= err;
          // A batch that could not be read (the API away after its retries, the lease lost): its items failed.
          await settleBatch(dir, n, batch, redact((err as Error).message), ctx.onItem);
        }
      }
    };
    await work();
    const aborted = stop.reason ? abortOf(stop.reason) : undefined;
    const summaryOf = (counts: UndoSummary['counts']): UndoSummary => ({
      runId,
      kind: 'undo',
      undoes: run.runId,
      ownerCompanyId: owner,
      dryRun,
      startedAt,
      finishedAt: new Date().toISOString(),
      counts,
      writes,
      requests: { product: tally.total().product },
      ...(newer.length > 0 ? { forcedOver: newer.map((r) => r.runId) } : {}),
      exitCode: aborted ? aborted.exitCode : counts.conflict + counts.failed > 0 ? EXIT.rowsFailed : EXIT.ok,
      ...(aborted ? { aborted: aborted.message, ...(aborted.code ? { abortCode: aborted.code } : {}) } : {}),
    });
    const summary = dryRun ? summaryOf(dryCounts) : await writeUndoReport(dir, batches, summaryOf);
    log.info({ runId, counts: summary.counts, writes }, 'undo finished');
    return { runId, exitCode: summary.exitCode, summary, dir: dryRun ? null : dir, writes, newer };
  } finally {
    ctx.signal?.removeEventListener('abort', interrupted);
    await source?.close();
    if (scratch) await rm(scratch, { recursive: true, force: true });
    await lease?.release();
  }
}

function itemOf(line: number, l: LedgerLine, d: UndoDecision, outcome: UndoOutcome, message?: string): UndoItem {
  return {
    line,
    gtin: l.gtin,
    tradeItemId: l.tradeItemId,
    action: d.action,
    outcome,
    conflicts: d.conflicts,
    ...((message ?? d.message) ? { message: message ?? d.message } : {}),
  };
}

/** A batch whose items get no write: failed with `why` (its ledger empty). */
async function settleBatch(
  dir: string,
  n: number,
  batch: ReadonlyArray<{ n: number; line: LedgerLine }>,
  why: string,
  onItem?: (i: UndoItem) => void,
): Promise<void> {
  const items = batch.map(({ n: line, line: l }) => ({
    line,
    gtin: l.gtin,
    tradeItemId: l.tradeItemId,
    action: 'none',
    outcome: 'failed' as const,
    conflicts: [],
    message: why,
  }));
  items.forEach((i) => onItem?.(i));
  await writeBatch(dir, n, items, []);
}

async function writeBatch(dir: string, n: number, items: UndoItem[], ledger: LedgerLine[]): Promise<void> {
  const p = batchPaths(dir, n);
  await writingTo('cannot write the undo batch', p.results, async () => {
    await writeJsonLinesAtomic(p.ledger, ledger);
    await writeJsonLinesAtomic(p.results, items);
  });
}

/** One batch: decide, journal, write, record; returns the write requests sent. */
/** decideUndo, unless the item is outside the run's scope now: then a conflict, and nothing is sent for it. */
function decideWithin(
  scope: ResolvedScope | undefined,
  line: LedgerLine,
  trade: TradeItemRecord | undefined,
  manu: ManufacturedItemRecord | undefined,
): UndoDecision {
  const outside = outsideForUndo(scope, trade, line.supplierCompanyId ?? manu?.supplierCompanyId);
  if (outside === undefined) return decideUndo(line, trade, manu);
  return {
    verdict: 'conflict',
    action: outside,
    conflicts: [],
    trade: {},
    manu: {},
    archive: null,
    ledger: null,
    message: outside,
  };
}

/** A run's scope, resolved against the owner's brands when it names any (one brand list). */
async function scopeOf(spec: ScopeSpec, owner: string, ctx: UndoContext): Promise<ResolvedScope | undefined> {
  if (spec === 'owner') return undefined;
  const brands = spec.brands ? await ctx.clients.product.listBrands(owner) : [];
  return resolveScope(spec, brands, labelKey);
}

async function undoBatch(
  dir: string,
  n: number,
  batch: ReadonlyArray<{ n: number; line: LedgerLine }>,
  records: ReadonlyArray<{ trade: TradeItemRecord | undefined; manu: ManufacturedItemRecord | undefined }>,
  ctx: UndoContext,
  owner: string,
  stop: { reason: ProductSyncError | null },
  scope: ResolvedScope | undefined,
): Promise<number> {
  const journal = await openJournal(batchPaths(dir, n).journal, { batchDurable: true });
  const api = ctx.clients.product;
  let writes = 0;
  const items: Array<UndoItem | undefined> = [];
  const ledgers: Array<LedgerLine | undefined> = [];
  const toArchive: number[] = [];
  try {
    const work = batch.map((b, i) => ({ ...b, i }));
    await pool(work, ctx.config.API_CONCURRENCY, async ({ n: lineNo, line, i }) => {
      const op = `item:${lineNo}`;
      const prior = journal.state(op);
      if (prior?.state === 'confirmed') {
        const r = prior.result as { item: UndoItem; ledger: LedgerLine | null };
        items[i] = r.item;
        ledgers[i] = r.ledger ?? undefined;
        return;
      }
      const { trade, manu } = records[i]!;
      const d = decideWithin(scope, line, trade, manu);
      // An earlier attempt of this undo planned (and may have sent) writes for this item: what it found then is what
      // the ledger keeps, and fields already put back are its doing.
      const planned = prior?.state === 'planned' ? (prior.result as { ledger: LedgerLine }).ledger : undefined;
      if (planned) {
        ledgers[i] = planned;
        if (d.verdict === 'unchanged') {
          items[i] = itemOf(lineNo, line, { ...d, action: 'restored by an earlier attempt' }, 'restored', '');
          return;
        }
      }
      if (d.verdict !== 'restore') {
        items[i] = itemOf(lineNo, line, d, OUTCOME[d.verdict]);
        return;
      }
      if (stop.reason) {
        items[i] = itemOf(lineNo, line, d, 'failed', `not attempted: ${stop.reason.message}`);
        return;
      }
      ledgers[i] = planned ?? d.ledger!;
      if (!planned) await journal.record(op, 'planned', { ledger: d.ledger }, true);
      try {
        for (const w of undoWrites(d, trade, manu)) {
          writes++;
          await send(api, w);
        }
        if (d.archive === true) toArchive.push(i);
        items[i] = d.incomplete ? itemOf(lineNo, line, d, 'failed', d.incomplete) : itemOf(lineNo, line, d, 'restored');
      } catch (err) {
        if (err instanceof LeaseLostError) stop.reason ??= err;
        items[i] = itemOf(lineNo, line, d, 'failed', redact((err as Error).message));
      }
    });
    if (toArchive.length > 0) {
      const ids = toArchive.map((i) => records[i]!.trade!.tradeItemId);
      try {
        if (stop.reason) throw stop.reason;
        writes++;
        await api.archiveTradeItems(ids);
      } catch (err) {
        if (err instanceof LeaseLostError) stop.reason ??= err;
        for (const i of toArchive)
          items[i] = { ...items[i]!, outcome: 'failed', message: redact((err as Error).message) };
      }
    }
    for (let i = 0; i < batch.length; i++) {
      const item = items[i]!;
      ctx.onItem?.(item);
      if (item.outcome === 'restored' || item.outcome === 'conflict' || item.outcome === 'unchanged')
        journal.record(`item:${batch[i]!.n}`, 'confirmed', { item, ledger: ledgers[i] ?? null });
    }
    // The undo's own ledger: what it restored, and what it may have changed in part (failed after planning).
    const ledger = batch
      .map(
        (_, i) =>
          ledgers[i] &&
          (items[i]!.outcome === 'restored' ? ledgers[i] : { ...ledgers[i]!, outcome: 'failed' as const }),
      )
      .filter((l): l is LedgerLine => l !== undefined);
    await writeBatch(dir, n, items as UndoItem[], ledger);
    return writes;
  } finally {
    await journal.close();
  }
}

type ProductApi = UndoContext['clients']['product'];
type Body = Record<string, unknown>;

/** The client call of each kind of undo write. */
const SEND: { [K in UndoWrite['kind']]: (api: ProductApi, id: string, body: Body) => Promise<unknown> } = {
  'tradeItem.patch': (api, id, body) => api.patchTradeItem(id, body),
  'tradeItem.put': (api, id, body) => api.putTradeItem(id, body),
  'manufacturedItem.patch': (api, id, body) => api.patchManufacturedItem(id, body),
  'manufacturedItem.put': (api, id, body) => api.putManufacturedItem(id, body),
  'tradeItem.unarchive': (api, id) => api.unarchiveTradeItem(id),
};

async function send(api: ProductApi, w: UndoWrite): Promise<void> {
  await SEND[w.kind](api, w.id, 'body' in w ? w.body : {});
}

/** The owner lease, as an import takes it (docs/concurrency.md): held for the whole undo, renewed while it runs. */
async function takeLease(
  ctx: RunContext,
  owner: string,
  runId: string,
  stop: { reason: ProductSyncError | null },
): Promise<Lease> {
  const lease = await acquireOwnerLease(ctx, owner, holderOf(runId, 'inline'));
  lease.onLost((err) => void (stop.reason ??= err));
  lease.keepAlive();
  return lease;
}

/** The report dir a command means: `--report-dir`, else REPORT_DIR. */
export function undoReportDir(reportDir: string | undefined, config: RunContext['config']): string {
  return resolve(reportDir ?? config.REPORT_DIR);
}
