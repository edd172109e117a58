/**
 * Opening a run and its two passes over the sheet.
 *
 * First pass: only the key column of every row (SheetKeys), so duplicates are known on every row involved before
 * anything is sent and `full` mode knows which items the sheet names; then the API state source (search or catalogue
 * index) and, in `full` mode, the archives and their guard. Second pass: rows in chunks through map → validate →
 * resolve → plan, each chunk written to the run directory as it is produced (chunks.ts) so pushing starts while the
 * pass goes on.
 */
import { existsSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { join, resolve as resolvePath } from 'node:path';
import { MANUFACTURED_ITEM_FIELDS, TRADE_ITEM_FIELDS } from '../../api/fields.ts';
import { LeaseLostError, ProductSyncError } from '../../errors.ts';
import { issue } from '../../issue-codes.ts';
import { loadMapping, type Mapping } from '../map/mapping.ts';
import { checkSheetFile } from '../read/read-sheet.ts';
import { rowBatches } from '../read/row-batches.ts';
import type { DraftResolver } from '../resolve/resolve-drafts.ts';
import { openApiState, type ApiStateSource } from '../sync/api-state.ts';
import type { ExecutedRow, RunStop } from '../sync/execute.ts';
import { openJournal, type JournalEntry } from '../sync/journal.ts';
import { makeDir } from '../../make-dir.ts';
import { logger as rootLogger } from '../../logger.ts';
import { archiveGuard, planRow, type ArchiveEntry, type Mode, type RowAction } from '../sync/plan.ts';
import type { CircuitBreaker } from '../sync/throttle.ts';
import { describeScope, scopeIssue, scopeMissingError, type ResolvedScope } from '../scope.ts';
import { Withholder } from '../withheld.ts';
import { runScope } from './scope-of-run.ts';
import type { Draft, Issue, Sheet } from '../types.ts';
import {
  chunkExists,
  chunkPaths,
  readChunk,
  resultsExist,
  settleArchiveChunk,
  writeChunk,
  writeResults,
  type ResultRow,
  type RowChunk,
} from './chunks.ts';
import { outcomesWithoutRequests } from './push.ts';
import type { Fence } from '../../api/fence.ts';
import { acquireLease, holderOf, type Lease } from './lease.ts';
import { leaseStoreFor } from './lease-store.ts';
import { removeOwnLateDuplicates } from './duplicates.ts';
import { withFence } from '../../api/run-scope.ts';
import {
  abortOf,
  previousRunState,
  runIdFor,
  sha256File,
  writeRunState,
  type ImportRequest,
  type RunState,
} from './run-state.ts';
import { draftReader, draftResolverFor, openMappedSheet, readSheetKeys } from './sheet-pass.ts';
import { SheetKeys } from './sheet-keys.ts';
import type { RunContext } from './run-context.ts';

const ARCHIVE_CHUNK = 500;
// Rows of the second pass read between two turns of the event loop.
const YIELD_ROWS = 128;

/** A run after its first pass: ready to produce chunks. */
export interface OpenedRun {
  state: RunState;
  workDir: string;
  mapping: Mapping;
  keys: SheetKeys;
  api: ApiStateSource | null;
  resolver: DraftResolver;
  /**
   * Shared by the run's executors in this process; a reason set here turns every row still to send into not_attempted.
   */
  share: { stop: RunStop; breaker: CircuitBreaker };
  /** Held from before the first pass until the report (imports only). */
  lease?: Lease;
  /**
   * Validate reads the sheet once: `keys` are learnt by the second pass (no first pass), and `state.rows` is known when
   * it ends. If a key then turns out to be on several rows, the driver reads the sheet again with `keys` known (see
   * runInline), so those rows are marked as an import's would be; most sheets have no duplicate and are read once.
   */
  keysFromRows?: boolean;
  /** The sheet as opened by openRun (headers read, no row yet), taken by the next produceChunks. */
  sheet?: Sheet;
  /** The run's scope (the feed's, else the mapping's): rows outside it are refused (SCOPE_OUTSIDE). */
  scope?: ResolvedScope;
  /** Where an earlier attempt's outdated chunks were set aside (the run plans every row again). */
  earlier?: string;
}

const OUTCOME: Record<RowAction, ResultRow['outcome']> = {
  create: 'created',
  update: 'updated',
  unarchive: 'unarchived',
  unchanged: 'unchanged',
  skipped: 'skipped',
};

const notAttempted = (row: number | null, why: string): Issue =>
  issue('NOT_ATTEMPTED', { row, message: `not attempted: ${why}` });
const hasError = (d: Draft) => d.issues.some((i) => i.severity === 'error');
/**
 * A draft with an error, settled: nothing is sent for it, its source cells go to the rejected file. Invalid, unless the
 * error is the API's (a brand it would not create): then failed, and the same sheet imported again may pass.
 */
const invalidOutcome = (d: Draft): ResultRow => ({
  row: d.row,
  key: d.key,
  outcome: d.issues.some((i) => i.code === 'BRAND_CREATE_FAILED') ? 'failed' : 'invalid',
  tradeItemId: null,
  manufacturedItemId: null,
  changedFields: [],
  issues: d.issues,
  source: d.source,
});

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The owner company of a run (--owner, the mapping's, OWNER_COMPANY_ID), checked to be a uuid before anything is read
 * or sent.
 */
export function runOwner(req: ImportRequest, mapping: Mapping, ctx: RunContext): string {
  const owner = req.owner ?? mapping.ownerCompanyId ?? ctx.config.OWNER_COMPANY_ID;
  if (!owner)
    throw new ProductSyncError(
      'PS_ERR_CLI_USAGE',
      'no owner company: give --owner, set ownerCompanyId in the mapping, or OWNER_COMPANY_ID',
    );
  if (!UUID.test(owner))
    throw new ProductSyncError(
      'PS_ERR_CLI_USAGE',
      `owner company "${owner}" is not a uuid (from ${req.owner ? '--owner' : mapping.ownerCompanyId ? 'the mapping' : 'OWNER_COMPANY_ID'})`,
    );
  return owner.toLowerCase();
}

/**
 * Fields only internal service credentials may send (createdBy): a mapping that feeds one is refused before anything is
 * sent unless API_CREDENTIAL_INTERNAL says the credential is internal (a token does not tell the client; the API
 * answers 400 to every such row otherwise).
 */
function refuseInternalOnlyFields(mapping: Mapping, ctx: RunContext): void {
  if (ctx.config.API_CREDENTIAL_INTERNAL) return;
  const fed = [...mapping.columns.map((c) => c.field.top), ...mapping.defaults.map((d) => d.field.top)].filter((f) =>
    INTERNAL_ONLY.has(f),
  );
  if (fed.length > 0) {
    throw new ProductSyncError(
      'PS_ERR_MAPPING_INVALID',
      `${mapping.file}: the mapping feeds ${[...new Set(fed)].join(', ')}, which only internal service credentials may send; set API_CREDENTIAL_INTERNAL=true if this credential is one, or remove the column`,
    );
  }
}

const INTERNAL_ONLY: ReadonlySet<string> = new Set(
  [...TRADE_ITEM_FIELDS, ...MANUFACTURED_ITEM_FIELDS].filter((f) => f.internalOnly).map((f) => f.name),
);

/** The error a run stops on, as a ProductSyncError (its message goes to summary.json `aborted`). */
export function abortError(err: unknown): ProductSyncError {
  if (err instanceof ProductSyncError) return err;
  return new ProductSyncError('PS_ERR_RUN_ABORTED', (err as Error)?.message ?? String(err), { cause: err });
}

/**
 * Resolves the mapping, owner and run id, reads the key column (first pass), opens the API state and plans archives.
 */
export async function openRun(
  req: ImportRequest,
  ctx: RunContext,
  kind: 'import' | 'validate',
  share: OpenedRun['share'],
): Promise<OpenedRun> {
  const mode = req.mode ?? 'upsert';
  // The sheet is hashed while the mapping loads; a mapping that fails is still the error reported.
  const hashing = checkSheetFile(req.file).then(() => sha256File(req.file));
  hashing.catch(() => undefined);
  const mapping = await loadMapping(req.mapping);
  const owner = runOwner(req, mapping, ctx);
  // Full mode archives what the sheet does not name: of which part of the catalogue must be said, before anything is
  // read from the API or sent (docs/scopes.md).
  if (kind === 'import' && mode === 'full' && (req.scope ?? mapping.scope) === undefined)
    throw scopeMissingError('full mode', mapping.file);
  if (kind === 'import') refuseInternalOnlyFields(mapping, ctx);
  const reportDir = resolvePath(req.reportDir ?? ctx.config.REPORT_DIR);
  const sha = await hashing;
  const dryRun = kind === 'validate' || Boolean(req.dryRun);
  const runId = await runIdFor(reportDir, sha, mapping, owner, req, kind);
  const workDir = join(reportDir, runId);
  // Two runs never plan and push for one owner on one API at once (nor share a run directory).
  const lease = kind === 'import' ? await takeLease(ctx, owner, runId, workDir, share) : undefined;
  try {
    return await openLeased(req, ctx, kind, share, {
      mapping,
      owner,
      reportDir,
      sha,
      runId,
      workDir,
      dryRun,
      mode,
      lease,
    });
  } catch (err) {
    await lease?.release();
    throw err;
  }
}

/**
 * This run's lease grants, the earlier attempts' first; `broken` once another run may have held the lease between two.
 */
function grantsOf(previous: RunState | undefined, lease: Lease): NonNullable<RunState['leaseTokens']> {
  const before = previous?.leaseTokens;
  if (!before) return { where: lease.where, tokens: [lease.token], ...(previous ? { broken: true } : {}) };
  const last = before.tokens[before.tokens.length - 1];
  const broken =
    Boolean(before.broken) || before.where !== lease.where || last === undefined || lease.token !== last + 1;
  return { where: lease.where, tokens: [...before.tokens, lease.token].slice(-20), ...(broken ? { broken } : {}) };
}

/**
 * True when an earlier attempt of this run made plans that another run may have outdated since: the lease was granted
 * to someone else between that attempt's grant and this one (tokens not consecutive, another store, or unknown).
 */
function plansOutdated(previous: RunState | undefined, lease: Lease): boolean {
  if (!previous) return false;
  return grantsOf(previous, lease).broken === true;
}

/**
 * Sets an earlier attempt's chunks aside (`<run>/outdated-<n>/chunks`): a run that plans again starts from no chunk, no
 * journal and no result. Returns where they went (the new plans take an earlier outcome from there when the API still
 * holds what that attempt wrote: see earlierOutcomes).
 */
async function setChunksAside(workDir: string): Promise<string | undefined> {
  const chunks = join(workDir, 'chunks');
  if (!existsSync(chunks)) return undefined;
  for (let n = 1; ; n++) {
    const aside = join(workDir, `outdated-${n}`);
    if (existsSync(aside)) continue;
    await mkdir(aside, { recursive: true });
    await rename(chunks, join(aside, 'chunks'));
    return aside;
  }
}

/** The product API as the lease names it. */
export function leaseApi(ctx: Pick<RunContext, 'apiId' | 'config'>): string {
  return ctx.apiId ?? ctx.config.PRODUCT_API_URL ?? 'embedded';
}

/** Takes the run's owner lease (docs/concurrency.md) and keeps it renewed; losing it stops the run's writes. */
async function takeLease(
  ctx: RunContext,
  owner: string,
  runId: string,
  workDir: string,
  share: OpenedRun['share'],
): Promise<Lease> {
  const queued = ctx.lease?.queued;
  const lease = await acquireLease({
    store: leaseStoreFor(
      { redis: ctx.redis ?? null, prefix: ctx.config.QUEUE_PREFIX, stateDir: ctx.config.STATE_DIR },
      owner,
      leaseApi(ctx),
    ),
    owner,
    holder: holderOf(runId, queued ? 'queued' : 'inline', queued?.jobId, workDir),
    ttlMs: ctx.config.LEASE_TTL_SECONDS * 1000,
    waitMs: ctx.lease?.waitMs ?? 0,
    reuseSameRun: Boolean(queued),
    ...(ctx.lease?.onWait ? { onWait: ctx.lease.onWait } : {}),
  });
  lease.onLost((err) => void (share.stop.reason ??= err));
  lease.keepAlive();
  try {
    await ctx.lease?.onGranted?.(lease, { owner, api: leaseApi(ctx) });
  } catch (err) {
    await lease.release();
    throw err;
  }
  return lease;
}

async function openLeased(
  req: ImportRequest,
  ctx: RunContext,
  kind: 'import' | 'validate',
  share: OpenedRun['share'],
  o: {
    mapping: Mapping;
    owner: string;
    reportDir: string;
    sha: string;
    runId: string;
    workDir: string;
    dryRun: boolean;
    mode: Mode;
    lease: Lease | undefined;
  },
): Promise<OpenedRun> {
  const { mapping, owner, sha, runId, workDir, dryRun, mode, lease } = o;
  await mkdir(workDir, { recursive: true });
  const earlierState = await previousRunState(workDir);
  // Another run held the lease since an earlier attempt of this run planned: its plans may be outdated (the other run
  // created or changed these items since), so every row is planned again from the API as it is now — rows already
  // pushed included — and nothing of the earlier plans is sent (docs/concurrency.md, "Resuming a run").
  const outdated = kind === 'import' && lease !== undefined && !ctx.lease?.queued && plansOutdated(earlierState, lease);
  const earlier = outdated ? await setChunksAside(workDir) : undefined;
  if (outdated)
    (ctx.logger ?? rootLogger).warn(
      { runId },
      'another run held the lease since this run planned: planning every row again from the API as it is now',
    );
  // An earlier attempt's creates answered after its lease had run out may have made second items: its own are
  // archived now, under this grant, before the API is read again (run/duplicates.ts).
  if (outdated && !dryRun)
    await withFence(lease, () => removeOwnLateDuplicates({ api: ctx.clients.product, owner, runId, workDir }));
  const previous = outdated && earlierState ? { ...earlierState, leaseTokens: undefined } : earlierState;
  const chunkSize = previous?.chunkSize ?? ctx.chunkSize ?? ctx.config.CHUNK_SIZE;
  const refBefore = ctx.clients.stats.reference;
  const productBefore = ctx.clients.stats.product;

  // First pass: the key column only — except for validate, which sends nothing: its rows are read once, the keys with
  // them (OpenedRun.keysFromRows), and the sheet is read again only when some key is on several rows.
  const sheet = await openMappedSheet(req, mapping);
  const keysFromRows = kind === 'validate';
  const keys = keysFromRows ? new SheetKeys() : await readSheetKeys(sheet, mapping, ctx);

  const state: RunState = {
    runId,
    kind,
    request: { ...req, mode, dryRun },
    mappingName: mapping.name,
    ownerCompanyId: owner,
    sha256: sha,
    rows: keys.rows,
    startedAt: previous?.startedAt ?? new Date().toISOString(),
    headers: sheet.headers,
    ...(sheet.preamble?.length ? { preamble: sheet.preamble } : {}),
    decimalSeparator: mapping.decimalSeparator,
    chunkSize,
    rowChunks: Math.ceil(keys.rows / chunkSize),
    archiveChunks: 0,
    referenceRequests: 0,
    productRequests: 0,
    ...(lease && ctx.lease?.queued
      ? { lease: { api: leaseApi(ctx), grant: lease.grant, holder: lease.holder, ttlMs: lease.ttlMs } }
      : {}),
    ...(lease && !ctx.lease?.queued
      ? { leaseTokens: outdated ? { where: lease.where, tokens: [lease.token] } : grantsOf(previous, lease) }
      : {}),
  };
  let api: ApiStateSource | null = null;
  let scope: ResolvedScope | undefined;
  if (kind === 'import') {
    try {
      scope = await runScope(req, mapping, owner, ctx);
      api = await openApiState({
        product: ctx.clients.product,
        owner,
        target: mapping.target,
        key: mapping.key,
        dir: workDir,
        sheetKeys: keys.distinct,
        needIndex: mode === 'full',
        ...(scope ? { scope } : {}),
        concurrency: Math.min(16, ctx.config.API_CONCURRENCY),
        ...(ctx.signal ? { signal: ctx.signal } : {}),
      });
      state.apiState = { strategy: api.strategy, catalogItems: api.catalog.total, pages: api.catalog.pages };
    } catch (err) {
      share.stop.reason ??= abortError(err);
    }
  } else {
    // Validate refuses rows outside the scope too (a brand list read, nothing sent).
    scope = await runScope(req, mapping, owner, ctx);
  }
  if (scope && !state.scope)
    state.scope = { spec: scope.spec, text: describeScope(scope.spec), items: null, active: null };
  try {
    if (mode === 'full' && api)
      await planArchives(state, outdated ? undefined : previous, api, keys, req, workDir, share, mapping, ctx);
    // The archive plan was the last to ask which keys the sheet has: the rest of the run only asks for duplicates.
    if (!keysFromRows) keys.dropMembership();
    state.referenceRequests = ctx.clients.stats.reference - refBefore;
    state.productRequests = ctx.clients.stats.product - productBefore;
    if (share.stop.reason) state.aborted ??= abortOf(share.stop.reason);
    await writeRunState(workDir, state);
  } catch (err) {
    // The catalogue index holds a file open: a run that cannot go on (a full disk) closes it before it says why.
    await api?.close().catch(() => undefined);
    throw err;
  }

  const resolver = draftResolverFor(ctx, req, mapping, owner, dryRun);
  return {
    state,
    workDir,
    mapping,
    keys,
    api,
    resolver,
    share,
    ...(lease ? { lease } : {}),
    ...(keysFromRows ? { keysFromRows, sheet } : {}),
    ...(scope ? { scope } : {}),
    ...(earlier ? { earlier } : {}),
  };
}

/**
 * `full` mode: the owner's active items missing from the sheet, in archive chunks, the archive guard (docs/sync.md).
 * A tripped guard stops the run before anything is sent; a dry run reports the archives as planned. A resumed run keeps
 * the archive chunks its first attempt planned (the catalogue has changed since, by this very run).
 */
async function planArchives(
  state: RunState,
  previous: RunState | undefined,
  api: ApiStateSource,
  keys: SheetKeys,
  req: ImportRequest,
  workDir: string,
  share: OpenedRun['share'],
  mapping: Mapping,
  ctx: RunContext,
): Promise<void> {
  if (previous?.archiveChunks !== undefined && previous.rowChunks === state.rowChunks && previous.apiState) {
    state.archiveChunks = previous.archiveChunks;
    if (previous.scope) state.scope = previous.scope;
    if (previous.withheld) state.withheld = previous.withheld;
    if (previous.aborted) state.aborted = previous.aborted;
    if (state.aborted) share.stop.reason ??= new ProductSyncError('PS_ERR_ARCHIVE_GUARD', state.aborted.message);
    return;
  }
  let batch: ArchiveEntry[] = [];
  let total = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await writeChunk(workDir, 'archives', state.archiveChunks++, batch);
    batch = [];
  };
  // Rows whose key could not be read are in the sheet all the same: the items they could stand for are withheld.
  const lifted = Boolean(req.archiveDespiteInvalidKeys);
  const withholder = new Withholder(keys.unreadable, keys.unreadableRows, mapping.key, lifted);
  if (lifted && !withholder.none)
    ctx.logger?.warn(
      { runId: state.runId, rows: keys.unreadableRows },
      `--archive-despite-invalid-keys: ${keys.unreadableRows} row(s) with unreadable keys do not withhold archives`,
    );
  for await (const e of api.missingFrom((k) => keys.has(k))) {
    const gtin = e.record.gtin ?? null;
    if (withholder.withhold({ tradeItemId: e.tradeItemId, key: e.key, gtin })) continue;
    batch.push({ tradeItemId: e.tradeItemId, key: e.key, gtin });
    total++;
    if (batch.length >= ARCHIVE_CHUNK) await flush();
  }
  await flush();
  const withheld = withholder.summary();
  if (withheld) state.withheld = withheld;
  const spec = req.scope ?? mapping.scope;
  if (spec !== undefined)
    state.scope = {
      spec,
      text: describeScope(spec),
      items: api.catalog.scope?.items ?? api.catalog.total,
      active: api.catalog.active,
    };
  const verdict = archiveGuard(api.catalog.active ?? 0, total, req.maxArchiveRatio ?? 0.1, Boolean(req.allowArchive));
  const settle = async (outcome: 'archived' | 'not_attempted', issues: Issue[]) => {
    for (let i = 0; i < state.archiveChunks; i++) await settleArchiveChunk(workDir, i, outcome, issues);
  };
  if (verdict.tripped) {
    const err = new ProductSyncError(
      'PS_ERR_ARCHIVE_GUARD',
      `archive guard tripped: the plan archives ${verdict.toArchive} of ${verdict.active} active items of the scope (${state.scope?.text ?? 'the owner'}) (${(verdict.ratio * 100).toFixed(1)} % > ${(verdict.maxRatio * 100).toFixed(1)} %); nothing was sent. Check the sheet is complete, or allow it with --allow-archive / --max-archive-ratio [PS_ERR_ARCHIVE_GUARD]`,
    );
    share.stop.reason ??= err;
    state.aborted = abortOf(err);
    await settle('not_attempted', [notAttempted(0, err.message)]);
  } else if (state.request.dryRun) {
    await settle('archived', []);
  }
}

/** One chunk of the second pass: its index, and its rows unless an earlier attempt already prepared or pushed it. */
export interface ProducedChunk {
  index: number;
  /**
   * 'pushed': results exist; 'prepared': the chunk file exists (push it); 'new': `chunk` was just prepared and written;
   * 'settled' (with `settle`, and always for validate, which sends nothing): the chunk needs no request, `results` are
   * its outcomes in report order (`chunk` what they came from).
   */
  status: 'pushed' | 'prepared' | 'new' | 'settled';
  chunk?: RowChunk;
  results?: ResultRow[];
  rowsRead: number;
}

/** Options of {@link produceChunks}. */
export interface ProduceOptions {
  /**
   * A chunk that needs no request (validate, a dry run, rows all invalid or unchanged) gets its outcomes at once
   * instead of a chunk file to push: written as its results (an import: a rerun skips it), not written at all by
   * validate (nothing to resume). The inline driver sets it; queue chunk jobs need their chunk files.
   */
  settle?: boolean;
  /** Checked before each chunk file is written (a queued run's import job lock). */
  guard?: Fence;
}

/**
 * The second pass: streams the sheet in chunks of `chunkSize` rows, each mapped, validated, resolved, planned and
 * written.
 */
export async function* produceChunks(
  run: OpenedRun,
  ctx: RunContext,
  options: ProduceOptions = {},
): AsyncGenerator<ProducedChunk> {
  const { mapping, state } = run;
  const sheet = run.sheet ?? (await openMappedSheet(state.request, mapping));
  delete run.sheet;
  const learn = Boolean(run.keysFromRows);
  const pushes = state.kind === 'import';
  const draftOf = draftReader(sheet, mapping, run.keys, learn);
  // Chunk files and results go here (a chunk settled without a push writes no chunk file that would make it).
  if (state.kind === 'import') await mkdir(join(run.workDir, 'chunks'), { recursive: true });
  let rowsRead = 0;
  let index = 0;
  let status: ProducedChunk['status'] = chunkStatus(run, 0);
  let drafts: Draft[] = [];
  let inChunk = 0;
  const emit = async (): Promise<ProducedChunk> => {
    const out: ProducedChunk =
      status === 'new'
        ? { ...(await prepareChunk(run, index, drafts, Boolean(options.settle), options.guard)), rowsRead }
        : { index, status, rowsRead };
    drafts = [];
    inChunk = 0;
    index++;
    status = chunkStatus(run, index);
    return out;
  };
  // A batch of rows at a time (rowBatches): one await per batch of the reader, not per row.
  // Read whole even when the run stops (interrupted, lease lost): every row gets its outcome in the report.
  for await (const batch of rowBatches(sheet.rows)) {
    // By index: a for-of in an async generator makes an iterator result a row.
    for (let b = 0; b < batch.length; b++) {
      const row = batch[b]!;
      rowsRead++;
      if (status === 'new') drafts.push(draftOf(row));
      if (rowsRead % 1000 === 0)
        ctx.onProgress?.({
          stage: 'read',
          rowsRead,
          operationsSent: 0,
          errors: 0,
          ...(learn ? {} : { rowsTotal: state.rows }),
        });
      // Rows come from a buffer without a turn of the event loop: let the chunks being pushed meanwhile take their
      // answers and send their next requests now and then, rather than wait for the whole chunk to be read. Validate
      // pushes nothing (its report's writes get their turns when the reader waits for the file).
      if (pushes && rowsRead % YIELD_ROWS === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      if (++inChunk === state.chunkSize) yield await emit();
    }
  }
  if (inChunk > 0) yield await emit();
  if (learn) {
    run.keys.finish();
    state.rows = rowsRead;
    state.rowChunks = index;
    return;
  }
  if (rowsRead !== state.rows)
    throw new ProductSyncError(
      'PS_ERR_FILE_UNREADABLE',
      `${state.request.file}: the second read gave ${rowsRead} rows, the first ${state.rows}: was the file changed during the run?`,
    );
}

function chunkStatus(run: OpenedRun, index: number): ProducedChunk['status'] {
  // Validate writes no chunk file nor results (nothing to resume): no file to look for.
  if (run.state.kind === 'validate') return 'new';
  if (resultsExist(run.workDir, 'rows', index)) return 'pushed';
  return chunkExists(run.workDir, 'rows', index) ? 'prepared' : 'new';
}

/**
 * Resolves, looks up and plans one chunk's drafts; writes the chunk file, or with `settle` the outcomes of a chunk that
 * needs no request.
 */
async function prepareChunk(
  run: OpenedRun,
  index: number,
  drafts: Draft[],
  settle: boolean,
  guard: Fence | undefined,
): Promise<Pick<ProducedChunk, 'index' | 'status' | 'chunk' | 'results'>> {
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
  if (state.kind === 'validate') {
    // Every row is settled here, in sheet order: the outcomes go to the report as they are (no file, no request). By
    // index: a for-of in an async function makes an iterator result a row.
    for (let i = 0; i < drafts.length; i++) {
      const d = drafts[i]!;
      // Stopped (interrupted) before its labels were resolved: a row without an error yet is not known valid.
      if (stopped() && !hasError(d)) {
        settled.push({
          row: d.row,
          key: d.key,
          outcome: 'not_attempted',
          tradeItemId: null,
          manufacturedItemId: null,
          changedFields: [],
          issues: [...d.issues, notAttempted(d.row, share.stop.reason!.message)],
          source: d.source,
        });
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
        settled.push({
          row: d.row,
          key: d.key,
          outcome: 'not_attempted',
          tradeItemId: null,
          manufacturedItemId: null,
          changedFields: [],
          issues: [...d.issues, notAttempted(d.row, share.stop.reason?.message ?? 'run stopped')],
          source: d.source,
        });
        continue;
      }
      const p = planRow(d, apiState, options);
      const issues = [...d.issues, ...p.issues];
      if (state.request.dryRun) {
        const outcome = OUTCOME[p.action];
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
  const before = await readChunk(earlier, 'rows', chunk.index);
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
