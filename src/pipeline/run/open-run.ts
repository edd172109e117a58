/**
 * Opening a run: its mapping, owner and id, the owner lease, the first pass over the sheet (only the key column of
 * every row, SheetKeys, so duplicates are known on every row involved before anything is sent and `full` mode knows
 * which items the sheet names), then the API state source (search or catalogue index) and, in `full` mode, the archives
 * (plan-archives.ts). The second pass is produce-chunks.ts.
 */
import { existsSync } from 'node:fs';
import type { GateTally } from './quality-gate.ts';
import { mkdir, rename } from 'node:fs/promises';
import { join, resolve as resolvePath } from 'node:path';
import { MANUFACTURED_ITEM_FIELDS, TRADE_ITEM_FIELDS } from '../../api/fields.ts';
import { ProductSyncError } from '../../errors.ts';
import { loadMapping, withFeedQuality, type Mapping } from '../map/mapping.ts';
import { checkSheetFile } from '../read/read-sheet.ts';
import type { DraftResolver } from '../resolve/resolve-drafts.ts';
import { openApiState, type ApiStateSource, type OpenApiStateOptions } from '../sync/api-state.ts';
import type { RunStop } from '../sync/execute.ts';
import { logger as rootLogger } from '../../logger.ts';
import { type Mode } from '../sync/plan.ts';
import type { CircuitBreaker } from '../sync/throttle.ts';
import { describeScope, scopeMissingError, type ResolvedScope } from '../scope.ts';
import { runScope } from './scope-of-run.ts';
import type { Sheet } from '../types.ts';
import { acquireLease, holderOf, type AcquireOptions, type Lease, type LeaseHolder } from '../../lease/lease.ts';
import { leaseStoreFor } from '../../lease/lease-store.ts';
import { removeOwnLateDuplicates, removePendingDuplicates } from './duplicates.ts';
import { pendingFile } from './pending-duplicates.ts';
import { allFences } from '../../api/fence.ts';
import type { ApiClients } from '../../api/clients.ts';
import {
  abortMarkFile,
  abortOf,
  previousRunState,
  runIdFor,
  sha256File,
  writeRunState,
  type ImportRequest,
  type RunState,
} from './run-state.ts';
import { draftResolverFor, openMappedSheet, readSheetKeys } from './sheet-pass.ts';
import { FieldFill } from '../map/field-fill.ts';
import { matchSheetHeaders } from '../map/headers.ts';
import { SheetKeys } from './sheet-keys.ts';
import type { RunContext } from './run-context.ts';
import { planArchives } from './plan-archives.ts';
import { traced } from '../../tracing.ts';

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
   * The run's clients (the context's, bound with ApiClients.forRun): every write through them is fenced by the run's
   * lease and the context's fences. Every write of the run goes through them (docs/concurrency.md).
   */
  clients: ApiClients;
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
  /** The quality gate's count (an import under a gate:, not waived, not yet decided): all chunks prepared first. */
  gateTally?: GateTally;
  /** Validate: the mapped fields its rows fill, counted by its one pass (imports count them in the first pass). */
  fill?: FieldFill;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/**
 * The owner company of a run (--owner, the mapping's, OWNER_COMPANY_ID), checked to be a uuid before anything is read
 * or sent.
 */
/** What the API holds of the sheet's keys (sync/api-state.ts), read with the run's client, owner and concurrency. */
export function runApiState(
  ctx: RunContext,
  mapping: Mapping,
  owner: string,
  workDir: string,
  sheetKeys: OpenApiStateOptions['sheetKeys'],
  needIndex: boolean,
  scope: ResolvedScope | undefined,
): Promise<ApiStateSource> {
  return openApiState({
    product: ctx.clients.product,
    owner,
    target: mapping.target,
    key: mapping.key,
    dir: workDir,
    sheetKeys,
    needIndex,
    ...(scope ? { scope } : {}),
    concurrency: Math.min(16, ctx.config.API_CONCURRENCY),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
  });
}

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
  // A feed's own rules and gate apply to its runs (the feed's gate replaces the mapping's).
  const mapping = withFeedQuality(await loadMapping(req.mapping), req);
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
  // From here on every write of the run is fenced by its lease and the driver's fences (a queue job's lock).
  const fenced = lease
    ? { ...ctx, clients: ctx.clients.forRun({ fence: allFences([lease, ...(ctx.fences ?? [])]) }) }
    : ctx;
  try {
    return await openLeased(req, fenced, kind, share, {
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
 * A queued run's earlier prepare step planned under a grant another run may have followed: not the same grant, and not
 * the very next one (the lease ran out, and this run took it again with nobody between). Its chunk jobs check the
 * lease, but a retried prepare step holds it again: without this, they would send the earlier plans under the new
 * grant.
 */
function queuedPlansOutdated(previous: RunState | undefined, lease: Lease): boolean {
  if (!previous) return false;
  const before = previous.lease?.grant;
  if (!before) return true;
  if (before.id === lease.grant.id) return false;
  return (
    lease.token !== before.token + 1 || (lease.takenFrom !== undefined && lease.takenFrom.runId !== lease.holder.runId)
  );
}

/**
 * Sets an earlier attempt's chunks aside (`<run>/outdated-<n>/chunks`, with its abort mark): a run that plans again
 * starts from no chunk, no journal and no result. `first` runs before anything is moved, with the plan's number `n`.
 * Returns where they went (the new plans take an earlier outcome from there when the API still holds what that attempt
 * wrote: see earlierOutcomes).
 */
async function setChunksAside(
  workDir: string,
  earlierPlan: number | undefined,
  first?: (plan: number) => Promise<void>,
): Promise<{ dir: string; plan: number } | undefined> {
  const chunks = join(workDir, 'chunks');
  if (!existsSync(chunks)) return undefined;
  for (let n = 1; ; n++) {
    const aside = join(workDir, `outdated-${n}`);
    if (existsSync(aside)) continue;
    await first?.(n);
    await mkdir(aside, { recursive: true });
    await rename(chunks, join(aside, 'chunks'));
    const mark = abortMarkFile(workDir, earlierPlan);
    if (existsSync(mark)) await rename(mark, join(aside, 'aborted.json'));
    return { dir: aside, plan: n };
  }
}

/**
 * A queued run's lease as run.json keeps it, with the run it took the lease over from (its finish step looks for that
 * run's late creates): a retried prepare step that took the lease again from its own earlier grant keeps the holder the
 * earlier grant had taken it from.
 */
function queuedLease(ctx: RunContext, lease: Lease, earlier: RunState | undefined): NonNullable<RunState['lease']> {
  const from =
    lease.takenFrom && lease.takenFrom.runId !== lease.holder.runId ? lease.takenFrom : earlier?.lease?.takenFrom;
  return {
    api: leaseApi(ctx),
    grant: lease.grant,
    holder: lease.holder,
    ttlMs: lease.ttlMs,
    ...(from ? { takenFrom: from } : {}),
  };
}

/**
 * The second items of late creates an earlier run noted for this owner, archived under the run's lease (`ctx` holds
 * the run's clients, fenced by it).
 */
async function removeNotedDuplicates(ctx: RunContext, owner: string, runId: string, workDir: string): Promise<void> {
  const file = pendingFile(ctx.config.STATE_DIR, owner, leaseApi(ctx));
  try {
    const removed = await removePendingDuplicates({ api: ctx.clients.product, owner, runId, workDir, file });
    if (removed.length > 0)
      (ctx.logger ?? rootLogger).warn(
        { runId, removed: removed.length },
        'second items of late creates noted by an earlier run archived',
      );
  } catch (err) {
    // Looked at again before the report (run/duplicates.ts sweepDuplicates), and by the next run.
    (ctx.logger ?? rootLogger).warn({ runId, err: (err as Error).message }, 'cannot look at the noted late creates');
  }
}

/** The product API as the lease names it. */
export function leaseApi(ctx: Pick<RunContext, 'apiId' | 'config'>): string {
  return ctx.apiId ?? ctx.config.PRODUCT_API_URL ?? 'embedded';
}

/**
 * Takes the owner lease of `owner` on the run's API for `holder` (docs/concurrency.md): in Redis with REDIS_URL, else
 * the state directory's lease file; waiting as the context says (`ctx.lease`) unless `options` say otherwise.
 */
export function acquireOwnerLease(
  ctx: RunContext,
  owner: string,
  holder: LeaseHolder,
  options: Pick<AcquireOptions, 'reuseSameRun'> = {},
): Promise<Lease> {
  return acquireLease({
    store: leaseStoreFor(
      { redis: ctx.redis ?? null, prefix: ctx.config.QUEUE_PREFIX, stateDir: ctx.config.STATE_DIR },
      owner,
      leaseApi(ctx),
    ),
    owner,
    holder,
    ttlMs: ctx.config.LEASE_TTL_SECONDS * 1000,
    waitMs: ctx.lease?.waitMs ?? 0,
    ...options,
    ...(ctx.lease?.onWait ? { onWait: ctx.lease.onWait } : {}),
  });
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
  const holder = holderOf(runId, queued ? 'queued' : 'inline', queued?.jobId, workDir);
  const lease = await acquireOwnerLease(ctx, owner, holder, { reuseSameRun: Boolean(queued) });
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
  const queued = Boolean(ctx.lease?.queued);
  const outdated =
    kind === 'import' &&
    lease !== undefined &&
    (queued ? queuedPlansOutdated(earlierState, lease) : plansOutdated(earlierState, lease));
  // A queued run's chunk jobs of the earlier plans may still be waiting: run.json names the new grant and plan before
  // the chunks move, so they find their plan outdated and send nothing (run.ts pushChunk).
  const aside = outdated
    ? await setChunksAside(workDir, earlierState?.plan, async (plan) => {
        if (queued && earlierState && lease)
          await writeRunState(workDir, { ...earlierState, lease: queuedLease(ctx, lease, earlierState), plan });
      })
    : undefined;
  const earlier = aside?.dir;
  if (outdated)
    (ctx.logger ?? rootLogger).warn(
      { runId },
      'another run held the lease since this run planned: planning every row again from the API as it is now',
    );
  // An earlier attempt's creates answered after its lease had run out may have made second items: its own are
  // archived now, under this grant, before the API is read again (run/duplicates.ts).
  if (outdated && !dryRun) await removeOwnLateDuplicates({ api: ctx.clients.product, owner, runId, workDir });
  // Late creates an earlier takeover could not rule out (pending-duplicates.ts): their second items are archived before
  // the API is read, so this run plans against one item per key.
  if (kind === 'import' && !dryRun && lease) await removeNotedDuplicates(ctx, owner, runId, workDir);
  const previous = outdated && earlierState ? { ...earlierState, leaseTokens: undefined } : earlierState;
  const chunkSize = previous?.chunkSize ?? ctx.chunkSize ?? ctx.config.CHUNK_SIZE;
  const refBefore = ctx.clients.stats.reference;
  const productBefore = ctx.clients.stats.product;

  // First pass: the key column only — except for validate, which sends nothing: its rows are read once, the keys with
  // them (OpenedRun.keysFromRows), and the sheet is read again only when some key is on several rows.
  const sheet = await openMappedSheet(req, mapping);
  const keysFromRows = kind === 'validate';
  // The scorecard's completeness is counted where every row passes once: the first pass, or validate's only one.
  const fill = new FieldFill(mapping, sheet.headers, matchSheetHeaders(sheet, mapping));
  const keys = keysFromRows
    ? new SheetKeys()
    : await traced('pass.keys', { file: req.file }, () => readSheetKeys(sheet, mapping, ctx, fill));

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
    ...(lease && ctx.lease?.queued ? { lease: queuedLease(ctx, lease, earlierState) } : {}),
    ...(aside && queued ? { plan: aside.plan } : previous?.plan ? { plan: previous.plan } : {}),
    reportLanguage: mapping.reportLanguage,
    // The quality gate is decided once: an earlier attempt's verdict stands (quality-gate.ts).
    ...(previous?.held ? { held: previous.held } : {}),
    ...(previous?.gatePassed ? { gatePassed: true } : {}),
    ...(keysFromRows ? {} : { fill: fill.result() }),
    ...(lease && !ctx.lease?.queued
      ? { leaseTokens: outdated ? { where: lease.where, tokens: [lease.token] } : grantsOf(previous, lease) }
      : {}),
  };
  let api: ApiStateSource | null = null;
  let scope: ResolvedScope | undefined;
  if (kind === 'import') {
    try {
      scope = await runScope(req, mapping, owner, ctx);
      api = await runApiState(ctx, mapping, owner, workDir, keys.distinct, mode === 'full', scope);
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
    clients: ctx.clients,
    ...(lease ? { lease } : {}),
    ...(keysFromRows ? { keysFromRows, sheet, fill } : {}),
    ...(scope ? { scope } : {}),
    ...(earlier ? { earlier } : {}),
  };
}
