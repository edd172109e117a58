/**
 * The run's lifecycle, for both drivers: the inline one (runImport / runValidate, one process) and the queue one
 * (startQueuedRun produces chunk files for chunk jobs, pushChunk runs one, finishRun assembles the report).
 */
import { allFences, type Fence } from '../../api/fence.ts';
import { LeaseLostError, ProductSyncError } from '../../errors.ts';
import { logger as rootLogger } from '../../logger.ts';
import type { RunSummary } from '../report/report.ts';
import type { ExecutedRow } from '../sync/execute.ts';
import { sheetWantsReportThread } from '../report/report-thread-start.ts';
import { REPORT_THREAD_ROWS, ReportAssembler, type Counts } from './assemble.ts';
import { acquireLease, holderOf, Lease, type LeaseHolder, type LeaseStore } from '../../lease/lease.ts';
import { duplicateResults, sweepDuplicates } from './duplicates.ts';
import { pendingFile } from './pending-duplicates.ts';
import { RequestTally } from './request-tally.ts';
import { leaseStoreFor } from '../../lease/lease-store.ts';
import {
  notAttemptedIssue,
  recoverChunk,
  resultsExist,
  settleArchiveChunk,
  type ChunkKind,
  type PlanCheck,
  type ResultRow,
  type RowChunk,
} from './chunks.ts';
import { abortError, leaseApi, openRun, type OpenedRun } from './open-run.ts';
import { produceChunks, type ProducedChunk } from './produce-chunks.ts';
import { decideGate, runGate, type GateTally } from './quality-gate.ts';
import { createPendingBrands } from './pending-brands.ts';
import { mergeRunLedger } from '../undo/ledger-file.ts';
import {
  mergeChunkApiFigures,
  runApiFigures,
  type ChunkApiFigures,
  type RunApiFigures,
} from '../report/api-figures.ts';
import type { RunContext } from './run-context.ts';
import { pushArchiveChunk, pushRowChunk, runShare, type PushContext, type PushedChunk } from './push.ts';
import {
  abortOf,
  interruption,
  readAbortMark,
  readRunState,
  writeAbortMark,
  writeRunState,
  type ImportRequest,
  type RunAbort,
  type RunState,
} from './run-state.ts';
import { traced } from '../../tracing.ts';
import { holdForTest } from '../../test-hold.ts';

export type { ImportRequest, RunAbort } from './run-state.ts';
export type { RunContext, RunProgress } from './run-context.ts';

/** The end of a run: its id, exit code (docs/commands.md "Exit codes"), summary and report files. */
export interface RunResult {
  runId: string;
  /** 0-3 (docs/commands.md "Exit codes"), or 130 / 143 for a run interrupted by SIGINT / SIGTERM. */
  exitCode: number;
  summary: RunSummary;
  reportDir: string;
  files: string[];
  /** Write requests this process sent for the run (0 for a run with nothing to change). */
  writes?: number;
  kind?: 'import' | 'validate' | 'reconcile';
}

// Row chunks pushed at once by an inline run, with the next one prepared meanwhile and started the moment one ends:
// enough to keep API_CONCURRENCY busy across a chunk's tail, few enough that memory holds three chunks.
const CHUNKS_IN_FLIGHT = 2;
// Finished chunks whose outcomes wait for the report (an earlier chunk still pushing, or the report files busy): past
// this many the second pass waits, so their outcomes held in memory stay bounded.
const REPORT_BACKLOG = 4;

function summaryOf(
  state: RunState,
  counts: Counts,
  requests: { reference: number; product: number },
  aborted: RunAbort | undefined,
  api?: RunApiFigures,
): RunSummary {
  const exitCode = aborted ? aborted.exitCode : counts.invalid + counts.failed + counts.notAttempted > 0 ? 1 : 0;
  return {
    runId: state.runId,
    source: { file: state.request.file, sha256: state.sha256, rows: state.rows },
    mapping: state.mappingName,
    mode: state.request.mode,
    dryRun: state.request.dryRun,
    startedAt: state.startedAt,
    finishedAt: new Date().toISOString(),
    counts,
    requests,
    exitCode,
    ...(state.scope ? { scope: state.scope } : {}),
    ...(state.withheld ? { withheld: state.withheld } : {}),
    ...(state.held ? { held: state.held } : {}),
    ...(aborted ? { aborted: aborted.message, ...(aborted.code ? { abortCode: aborted.code } : {}) } : {}),
    ...(state.request.notes?.length ? { notes: [...state.request.notes] } : {}),
    ...(api ? { api } : {}),
  };
}

/** Inline driver: both passes, pushing chunks as the second pass produces them, the report assembled as they finish. */
function runInline(req: ImportRequest, ctx: RunContext, kind: 'import' | 'validate'): Promise<RunResult> {
  // The run's requests are counted through its clients (those of other runs of this process are not).
  const tally = new RequestTally();
  return driveInline(req, { ...ctx, clients: ctx.clients.forRun({ count: tally.count }) }, kind, tally).finally(() =>
    tally.close(),
  );
}

/**
 * The inline run, step by step: open it (first pass), push the chunks as the second pass produces them, read the sheet
 * again if validate found keys on several rows, push the archives, write the report. Every write of the run — the
 * executors', a brand created while resolving — goes through the run's clients, fenced by its lease (api/fence.ts).
 */
async function driveInline(
  req: ImportRequest,
  ctx: RunContext,
  kind: 'import' | 'validate',
  tally: RequestTally,
): Promise<RunResult> {
  const t0 = performance.now();
  const share = runShare();
  const stopListening = stopOnInterruption(ctx, share);
  const run = await openRun(req, ctx, kind, share);
  // A gated import prepares every chunk before it pushes one: the gate is decided before the first write.
  const gate = runGate(run.state, run.mapping.gate);
  if (gate) deferBrands(run, gate);
  const drive = await startInline(run, ctx, kind, tally, t0);
  let finished: Awaited<ReturnType<ReportAssembler['finish']>>;
  try {
    // Every write from here on (pending brands, the executors') goes through the run's clients (run.clients), fenced
    // by its lease. An earlier attempt passed the gate but stopped before it created every brand it planned: created
    // first.
    if (!gate) await createPlannedBrands(run);
    await traced('pass.rows', { runId: drive.state.runId }, () => pushAsProduced(drive));
    await readAgainForDuplicateKeys(drive);
    await pushArchives(drive);
    await sweepLateDuplicates(drive);
    finished = await traced('report', { runId: drive.state.runId }, () => writeReport(drive));
  } catch (err) {
    await drive.assembler.abort();
    throw err;
  } finally {
    stopListening();
    await run.api?.close();
    await run.lease?.release();
  }
  return endInline(drive, finished);
}

/** An inline run under way: what its steps share. */
interface InlineDrive {
  run: OpenedRun;
  state: RunState;
  workDir: string;
  ctx: RunContext;
  kind: 'import' | 'validate';
  tally: RequestTally;
  log: NonNullable<RunContext['logger']>;
  t0: number;
  /** Whether the report is written by a worker thread. */
  thread: boolean;
  assembler: ReportAssembler;
  pushCtx: PushContext;
  apiAtStart: ReturnType<NonNullable<RunContext['limiter']>['snapshot']> | undefined;
  rowsRead: number;
  /** Operations done (rows with their outcome from a push or a plan). */
  done: number;
  errors: number;
  writes: number;
  firstWriteMs: number | undefined;
}

/** Interrupted (SIGINT / SIGTERM): nothing more is sent, the rest of the sheet is read and reported not attempted. */
function stopOnInterruption(ctx: RunContext, share: OpenedRun['share']): () => void {
  const interrupted = () => void (share.stop.reason ??= interruption(ctx.signal!));
  if (ctx.signal?.aborted) interrupted();
  else ctx.signal?.addEventListener('abort', interrupted, { once: true });
  return () => ctx.signal?.removeEventListener('abort', interrupted);
}

/** After openRun: the run's requests kept with it, "run opened" logged, the report opened, the push context made. */
async function startInline(
  run: OpenedRun,
  ctx: RunContext,
  kind: 'import' | 'validate',
  tally: RequestTally,
  t0: number,
): Promise<InlineDrive> {
  const { state, workDir, share } = run;
  const log = ctx.logger ?? rootLogger;
  // An import may be resumed: its requests are kept with it (validate resumes nothing).
  if (kind === 'import') await tally.persistIn(workDir);
  log.info(
    {
      runId: state.runId,
      file: state.request.file,
      mapping: run.mapping.name,
      mode: state.request.mode,
      dryRun: state.request.dryRun,
      rows: state.rows,
      apiState: state.apiState,
    },
    'run opened',
  );
  // Large sheets get their report written by a worker thread, on the other core. Validate does not know its rows yet
  // (it counts them as it reads, see openRun): the file's size decides there.
  const thread = run.keysFromRows ? sheetWantsReportThread(state.request.file) : state.rows >= REPORT_THREAD_ROWS;
  const assembler = await ReportAssembler.open(workDir, state, { thread });
  const drive: InlineDrive = {
    run,
    state,
    workDir,
    ctx,
    kind,
    tally,
    log,
    t0,
    thread,
    assembler,
    pushCtx: {
      config: ctx.config,
      clients: run.clients,
      shared: share,
      ...(ctx.throttle ? { throttle: ctx.throttle } : {}),
      ...(ctx.signal ? { signal: ctx.signal } : {}),
      ...(state.leaseTokens?.broken ? { earlierCreatesOurs: false } : {}),
      onResult: (r: ExecutedRow) => {
        drive.done++;
        if (r.outcome === 'failed') drive.errors++;
        if (drive.done % 200 === 0) progress(drive, 'push');
      },
    },
    apiAtStart: ctx.limiter?.snapshot(),
    rowsRead: 0,
    done: 0,
    errors: 0,
    writes: 0,
    firstWriteMs: undefined,
  };
  return drive;
}

function progress(drive: InlineDrive, stage: 'read' | 'push'): void {
  const { ctx } = drive;
  ctx.onProgress?.({
    stage,
    rowsRead: drive.rowsRead,
    operationsSent: drive.done,
    writes: drive.writes,
    errors: drive.errors,
    rowsTotal: drive.state.rows,
    ...(ctx.limiter ? { api: ctx.limiter.snapshot() } : {}),
  });
}

/** A chunk's writes counted; its abort (a lease lost, the API refusing) stops the run. */
function counted(drive: InlineDrive, p: PushedChunk): void {
  drive.writes += p.writes;
  if (p.writes > 0) drive.firstWriteMs ??= performance.now() - drive.t0;
  if (p.abort) drive.run.share.stop.reason ??= abortError(p.abort);
}

/** The second pass: chunks pushed (or settled) as they come, their outcomes to the report in order. */
async function pushAsProduced(drive: InlineDrive): Promise<void> {
  const { run, state, workDir } = drive;
  // A push frees its slot when its last row has its outcome, not when the report has caught up with it (a chunk
  // finished before the one ahead of it would otherwise hold a slot while nothing is sent for it).
  const pushing = new Set<Promise<void>>();
  const reporting = new Set<Promise<void>>();
  // The first failure of a push or of the report ends the run (thrown below, whatever the loop was doing then).
  let failure: { err: unknown } | undefined;
  const track = (set: Set<Promise<void>>, p: Promise<void>) => {
    const q: Promise<void> = p.catch((err: unknown) => void (failure ??= { err })).finally(() => set.delete(q));
    set.add(q);
  };
  const waitOn = async (waitFor: Promise<unknown>) => {
    await waitFor;
    if (failure) throw failure.err;
  };
  const report = (index: number, rows?: ResultRow[]) => track(reporting, drive.assembler.ready(index, rows));
  const reading: RunContext = {
    ...drive.ctx,
    onProgress: (p) => {
      drive.rowsRead = p.rowsRead;
      progress(drive, 'read');
    },
  };
  const gated = run.gateTally !== undefined;
  // A gated run's chunks, prepared (and written) but not yet pushed or reported: pushed once the gate is decided.
  const deferred: { index: number; status: ProducedChunk['status'] }[] = [];
  const push = (index: number, chunk?: RowChunk) =>
    track(
      pushing,
      traced('chunk.push', { kind: 'rows', index }, () =>
        pushRowChunk(workDir, state.ownerCompanyId, index, drive.pushCtx, chunk),
      ).then((p) => {
        counted(drive, p);
        report(index, p.results);
      }),
    );
  for await (const c of produceChunks(run, reading, { settle: true })) {
    drive.rowsRead = c.rowsRead;
    progress(drive, 'read');
    if (gated) {
      // Settled chunks' results are on disk (an import writes them): reported from there after the verdict.
      if (c.status === 'settled') drive.done += c.results!.length - c.chunk!.settled.length;
      // Chunks an earlier attempt prepared are counted from their files.
      if (c.status === 'prepared' || c.status === 'pushed') await run.gateTally!.addEarlier(workDir, c.index, c.status);
      deferred.push({ index: c.index, status: c.status });
      continue;
    }
    // `c` was prepared while the chunks ahead of it were pushing: it starts as soon as a slot frees.
    while (pushing.size >= CHUNKS_IN_FLIGHT || reporting.size >= REPORT_BACKLOG)
      await waitOn(Promise.race([...pushing, ...reporting]));
    if (failure) throw failure.err;
    if (c.status === 'pushed') {
      report(c.index);
    } else if (c.status === 'settled') {
      // As pushRowChunk counts them: rows that had a plan (nothing to send) are operations done, settled rows are not.
      drive.done += c.results!.length - c.chunk!.settled.length;
      report(c.index, c.results);
    } else {
      push(c.index, c.chunk);
    }
  }
  if (gated) {
    // Over the gate: nothing is sent; every planned row is reported not attempted, saying why.
    const held = await decideGate(run.gateTally!, run);
    if (held) drive.log.warn({ runId: state.runId, held }, 'run held by its quality gate');
    else await createPlannedBrands(run);
    run.gateTally = undefined;
    for (const d of deferred) {
      while (pushing.size >= CHUNKS_IN_FLIGHT || reporting.size >= REPORT_BACKLOG)
        await waitOn(Promise.race([...pushing, ...reporting]));
      if (failure) throw failure.err;
      if (d.status === 'pushed' || d.status === 'settled') report(d.index);
      else push(d.index);
    }
  }
  await waitOn(Promise.all(pushing));
  await waitOn(Promise.all(reporting));
}

/**
 * Validate learnt the keys from its rows (openRun): a key on several rows marks every one of them, as an import's first
 * pass would, so the report so far is dropped and the sheet read again with the duplicates known.
 */
async function readAgainForDuplicateKeys(drive: InlineDrive): Promise<void> {
  const { run, state, workDir } = drive;
  if (!run.keysFromRows) return;
  run.keysFromRows = false;
  if (run.keys.duplicated > 0 && !run.share.stop.reason) {
    drive.log.info(
      { runId: state.runId, duplicatedKeys: run.keys.duplicated },
      'keys on several rows: reading the sheet again to mark them',
    );
    await drive.assembler.abort();
    drive.assembler = await ReportAssembler.open(workDir, state, { thread: drive.thread });
    drive.rowsRead = drive.done = drive.errors = 0;
    await pushAsProduced(drive);
  }
  drive.assembler.counts.rows = state.rows;
  await writeRunState(workDir, state);
}

/**
 * The fence's last window (docs/concurrency.md "The window that remains"): the second items a lost holder's late create
 * left for the keys this run created, looked for (and archived) before the report.
 */
async function sweepLateDuplicates(drive: InlineDrive): Promise<void> {
  const { ctx, state, workDir, run, kind } = drive;
  const lease = run.lease;
  if (kind !== 'import' || state.request.dryRun || !lease) return;
  const api = leaseApi(ctx);
  await sweepRun(ctx, state, workDir, {
    lease,
    store: runLeaseStore(ctx, state.ownerCompanyId, api),
    api,
    waitMs: ctx.lease?.waitMs ?? 0,
    holder: holderOf(state.runId, 'inline', undefined, workDir),
  });
}

/** The lease store of (owner, api) where this run keeps its lease: the queue's Redis when there is one. */
function runLeaseStore(ctx: RunContext, owner: string, api: string): LeaseStore {
  return leaseStoreFor(
    { redis: ctx.redis ?? null, prefix: ctx.config.QUEUE_PREFIX, stateDir: ctx.config.STATE_DIR },
    owner,
    api,
  );
}

/** The late duplicates of a run holding `o.lease` swept (duplicates.ts); what the sweep found goes to its notes. */
async function sweepRun(
  ctx: RunContext,
  state: RunState,
  workDir: string,
  o: { lease: Lease; store: LeaseStore; api: string; waitMs: number; holder: LeaseHolder; guard?: Fence },
): Promise<void> {
  const ttlMs = o.lease.ttlMs;
  const note = await sweepDuplicates({
    api: (fence) => ctx.clients.forRun({ fence }).product,
    owner: state.ownerCompanyId,
    runId: state.runId,
    workDir,
    lease: o.lease,
    waitMs: Math.max(o.waitMs, 2 * ttlMs),
    pending: pendingFile(ctx.config.STATE_DIR, state.ownerCompanyId, o.api),
    ...(o.guard ? { guard: o.guard } : {}),
    retake: (waitMs) => acquireLease({ store: o.store, owner: state.ownerCompanyId, holder: o.holder, ttlMs, waitMs }),
  });
  if (note) state.request.notes = [...(state.request.notes ?? []), note];
}

/** `full` mode's archive chunks, pushed in turn; once the run has stopped, settled not attempted. */
async function pushArchives(drive: InlineDrive): Promise<void> {
  const { state, workDir, run } = drive;
  const { share } = run;
  for (let i = 0; i < state.archiveChunks; i++) {
    if (resultsExist(workDir, 'archives', i)) continue;
    if (share.stop.reason)
      await settleArchiveChunk(workDir, i, 'not_attempted', [notAttemptedIssue(null, share.stop.reason.message)]);
    else
      counted(
        drive,
        await traced('chunk.push', { kind: 'archives', index: i }, () =>
          pushArchiveChunk(workDir, state.ownerCompanyId, i, drive.pushCtx),
        ),
      );
  }
}

/**
 * The run's ledger merged (an import that wrote), then the report and summary. The lease is held until the report is
 * written (as finishRun does in queue mode): a run's report is true to the API when it ends, since the next run for
 * this owner starts after it.
 */
async function writeReport(drive: InlineDrive): Promise<Awaited<ReturnType<ReportAssembler['finish']>>> {
  const { ctx, state, workDir, run, kind } = drive;
  ctx.onProgress?.({
    stage: 'report',
    rowsRead: drive.rowsRead,
    operationsSent: drive.done,
    writes: drive.writes,
    errors: drive.errors,
    rowsTotal: state.rows,
  });
  const aborted = state.aborted ?? (run.share.stop.reason ? abortOf(run.share.stop.reason) : undefined);
  const requests = drive.tally.total();
  if (kind === 'import' && !state.request.dryRun) await mergeRunLedger(workDir, state.rowChunks, state.archiveChunks);
  const api =
    drive.apiAtStart && ctx.limiter
      ? runApiFigures(drive.apiAtStart, ctx.limiter.snapshot(), performance.now() - drive.t0)
      : undefined;
  return drive.assembler.finish(
    state.archiveChunks,
    (counts) => summaryOf(state, counts, requests, aborted, api),
    kind === 'import' ? await duplicateResults(workDir) : [],
    ctx.scorecard,
  );
}

/** "run finished" logged; the run's result. */
function endInline(drive: InlineDrive, finished: Awaited<ReturnType<ReportAssembler['finish']>>): RunResult {
  const { state } = drive;
  const { files, summary } = finished;
  drive.log.info(
    {
      runId: state.runId,
      ms: Math.round(performance.now() - drive.t0),
      firstWriteMs: drive.firstWriteMs === undefined ? null : Math.round(drive.firstWriteMs),
      writes: drive.writes,
    },
    'run finished',
  );
  return {
    runId: state.runId,
    exitCode: summary.exitCode as RunResult['exitCode'],
    summary,
    reportDir: drive.workDir,
    files,
    writes: drive.writes,
    kind: drive.kind,
  };
}

/**
 * The inline import: read, validate, resolve, plan and push in chunks, then the report — one process, no Redis needed.
 */
export function runImport(req: ImportRequest, ctx: RunContext): Promise<RunResult> {
  return runInline(req, ctx, 'import');
}

/** Validate only: read, map, validate, resolve; a report of issues, no write sent. */
export function runValidate(req: ImportRequest, ctx: RunContext): Promise<RunResult> {
  return runInline({ ...req, dryRun: true }, ctx, 'validate');
}

/** A queued run after its second pass: the chunk jobs to wait for. */
export interface QueuedRun {
  runId: string;
  rows: number;
  workDir: string;
  rowChunks: number;
  archiveChunks: number;
  aborted?: RunAbort;
}

/**
 * Queue driver, parent side: both passes; `onChunk` is called for every chunk file as soon as it is written (the parent
 * adds its chunk job then, so pushing starts while the pass goes on). Chunks an earlier attempt already pushed are not
 * handed out again. The run's lease (ctx.lease.queued) outlives this step: the workers keep it between jobs.
 */
export async function startQueuedRun(
  req: ImportRequest,
  given: RunContext,
  onChunk: (c: { runId: string; workDir: string; kind: ChunkKind; index: number; plan?: number }) => Promise<void>,
): Promise<QueuedRun> {
  // Clients of its own: its requests counted apart from the other jobs a worker runs at once.
  const ctx: RunContext = { ...given, clients: given.clients.forRun({}) };
  const share = runShare();
  const run = await openRun(req, ctx, 'import', share);
  const { state, workDir } = run;
  // A gated run adds no chunk job before the gate is decided: every chunk is prepared first.
  const gate = runGate(state, run.mapping.gate);
  if (gate) deferBrands(run, gate);
  const deferred: number[] = [];
  const refBefore = ctx.clients.stats.reference - state.referenceRequests;
  const productBefore = ctx.clients.stats.product - state.productRequests;
  const guard = ctx.fences?.length ? allFences(ctx.fences) : undefined;
  const plan = state.plan ? { plan: state.plan } : {};
  try {
    // Its writes (brands created while resolving) go through the run's clients (run.clients), fenced by its lease.
    await traced('pass.rows', { runId: state.runId }, async () => {
      // As driveInline: the brands an earlier attempt planned and passed the gate with, before any chunk job.
      if (!gate) await createPlannedBrands(run);
      for await (const c of produceChunks(run, ctx, guard ? { guard } : {})) {
        if (gate) {
          if (c.status === 'prepared' || c.status === 'pushed') await gate.addEarlier(workDir, c.index, c.status);
          if (c.status !== 'pushed') deferred.push(c.index);
        } else if (c.status !== 'pushed')
          await onChunk({ runId: state.runId, workDir, kind: 'rows', index: c.index, ...plan });
      }
      if (gate)
        await afterQueuedGate(gate, run, deferred, guard, (index) =>
          onChunk({ runId: state.runId, workDir, kind: 'rows', index, ...plan }),
        );
    });
  } finally {
    // Not released: a retried import job takes it again, its chunks check it, the workers keep it
    // (queue/lease-keeper.ts).
    run.lease?.stop();
    await run.api?.close();
  }
  guard?.check();
  for (let i = 0; i < state.archiveChunks; i++) {
    if (resultsExist(workDir, 'archives', i)) continue;
    if (share.stop.reason)
      await settleArchiveChunk(workDir, i, 'not_attempted', [notAttemptedIssue(null, share.stop.reason.message)]);
    else await onChunk({ runId: state.runId, workDir, kind: 'archives', index: i, ...plan });
  }
  if (share.stop.reason) state.aborted ??= abortOf(share.stop.reason);
  state.referenceRequests = ctx.clients.stats.reference - refBefore;
  state.productRequests = ctx.clients.stats.product - productBefore;
  await writeRunState(workDir, state);
  return {
    runId: state.runId,
    rows: state.rows,
    workDir,
    rowChunks: state.rowChunks,
    archiveChunks: state.archiveChunks,
    ...(state.aborted ? { aborted: state.aborted } : {}),
  };
}

/**
 * A gated queued run, every chunk prepared: the verdict, then the chunk jobs — or, held, no job at all: each chunk is
 * settled not attempted, saying why (as a chunk job would settle it once its run stopped).
 */
async function afterQueuedGate(
  gate: GateTally,
  run: OpenedRun,
  deferred: readonly number[],
  guard: Fence | undefined,
  add: (index: number) => Promise<void>,
): Promise<void> {
  run.gateTally = undefined;
  const held = await decideGate(gate, run);
  if (held) {
    rootLogger.warn({ runId: run.state.runId, held }, 'run held by its quality gate');
    for (const i of deferred) await recoverChunk(run.workDir, 'rows', i, held.message, 'not_attempted');
    return;
  }
  // The brands the chunks name, created before their jobs are added (which read their ids from the run's brand file).
  await createPlannedBrands(run);
  const stop = run.share.stop.reason;
  if (stop) {
    // A worker that lost this job leaves the chunks to the one that has it; else they are not attempted, saying why.
    guard?.check();
    for (const i of deferred) await recoverChunk(run.workDir, 'rows', i, stop.message, 'not_attempted');
    return;
  }
  for (const i of deferred) await add(i);
}

/**
 * A run under a gate not yet decided: its rows counted by `gate`, and the brands they name planned, not created, until
 * the verdict (pending-brands.ts).
 */
function deferBrands(run: OpenedRun, gate: GateTally): void {
  run.gateTally = gate;
  run.resolver.deferBrandCreates = true;
}

/**
 * The brands the run planned while its gate was undecided, created now that it may write (pending-brands.ts); what
 * stops that (the fence, the credential, the API away) stops the run: the rows still to send are then not attempted.
 */
async function createPlannedBrands(run: OpenedRun): Promise<void> {
  if (run.state.kind !== 'import' || run.state.request.dryRun) return;
  try {
    await createPendingBrands(run.workDir, run.resolver, run.share);
  } catch (err) {
    run.share.stop.reason ??= err instanceof LeaseLostError ? err : abortError(err);
  }
}

/**
 * What a chunk job is fenced by besides the run's lease: its own lock (a worker that lost its job sends nothing more).
 */
export interface ChunkGuard extends Fence {
  readonly lost: Error | null;
}

/**
 * Queue driver, chunk side: pushes one chunk (any worker; idempotent through its journal). The run's lease is checked
 * first and fences every write with the job's lock. A run whose lease is lost (now or by an earlier chunk) settles the
 * chunk's unsent rows as not attempted; a worker that lost its job throws and writes nothing; other aborts throw so the
 * job is retried.
 */
export async function pushChunk(
  c: { workDir: string; kind: ChunkKind; index: number; plan?: number },
  ctx: RunContext,
  jobLock: ChunkGuard,
): Promise<PushedChunk> {
  const nothing = { rows: 0, failed: 0, writes: 0 };
  let state = await readRunState(c.workDir);
  // A chunk of plans the run made again since (a retried prepare step after another run held the lease): the chunk of
  // that index now is another job's.
  if ((c.plan ?? 0) !== (state.plan ?? 0)) return nothing;
  if (resultsExist(c.workDir, c.kind, c.index)) return nothing;
  // The run may plan again from here on (its prepare step retried): every file of this chunk is moved into place only
  // while the run is still on the job's plan, so none lands among the next plan's (docs/concurrency.md).
  const own: PlanCheck = async () => ((await readRunState(c.workDir)).plan ?? 0) === (c.plan ?? 0);
  let abort = await readAbortMark(c.workDir, c.plan);
  let lease: Lease | undefined;
  if (!abort && state.lease) {
    const store = runLeaseStore(ctx, state.ownerCompanyId, state.lease.api);
    // Held as of nothing: the renewal below tells whether the run still holds it.
    lease = new Lease(store, state.lease.grant, state.lease.holder, state.lease.ttlMs, {
      sentAt: { mono: -Infinity, wall: -Infinity },
    });
    try {
      await lease.renew();
      lease.keepAlive();
    } catch (err) {
      if (!(err instanceof LeaseLostError))
        throw new ProductSyncError('PS_ERR_QUEUE', `cannot check the run's lease: ${(err as Error).message}`, {
          cause: err,
          retryable: true,
        });
      // The lease another run holds may be this run's own again (its prepare step retried, planning again): then this
      // job's plan is outdated and it writes nothing.
      state = await readRunState(c.workDir);
      if ((c.plan ?? 0) !== (state.plan ?? 0) || state.lease?.grant.id !== lease.grant.id) return nothing;
      abort = abortOf(err);
    }
  }
  if (abort) {
    await holdForTest('PS_TEST_CHUNK_ABORT_HOLD');
    jobLock.check();
    // A chunk file gone from under it (its plan set aside meanwhile) is no failure: the chunk is another plan's now.
    const settled = await recoverChunk(c.workDir, c.kind, c.index, abort.message, 'not_attempted', own).catch(
      async (err: unknown) => {
        if (await own()) throw err;
        return false;
      },
    );
    if (settled) await writeAbortMark(c.workDir, abort, c.plan);
    return nothing;
  }
  // The worker stopping (ctx.signal) stops the chunk as an abort does: nothing more is sent, what is in flight settles
  // and is journalled, and the chunk throws (below), so its results are not written and it is pushed again later.
  const share = runShare();
  const stopped = () => void (share.stop.reason ??= interruption(ctx.signal!));
  if (ctx.signal?.aborted) stopped();
  else ctx.signal?.addEventListener('abort', stopped, { once: true });
  const pushCtx: PushContext = {
    config: ctx.config,
    // Every write of the chunk is fenced by the job's lock and the run's lease.
    clients: ctx.clients.forRun({ fence: allFences(lease ? [jobLock, lease] : [jobLock]) }),
    guard: jobLock,
    own,
    shared: share,
    ...(ctx.throttle ? { throttle: ctx.throttle } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    // The chunk's results are written (what was not sent: not attempted) only when the run's lease is lost for good
    // while this worker still holds the job; any other stop throws: the job is retried, or is another worker's now.
    throwOnAbort: async (err) =>
      !(
        err instanceof LeaseLostError &&
        lease &&
        (await jobLock.ready().then(
          () => true,
          () => false,
        )) &&
        (await leaseLostForGood(lease))
      ),
  };
  try {
    const pushed = await traced('chunk.push', { runId: state.runId, kind: c.kind, index: c.index }, () =>
      c.kind === 'rows'
        ? pushRowChunk(c.workDir, state.ownerCompanyId, c.index, pushCtx)
        : pushArchiveChunk(c.workDir, state.ownerCompanyId, c.index, pushCtx),
    );
    if (pushed.abort instanceof LeaseLostError) await writeAbortMark(c.workDir, abortOf(pushed.abort), c.plan);
    return pushed;
  } catch (err) {
    // Time ran out on the lease or the job lock without a verdict (Redis away): a retry of the chunk knows more.
    if (err instanceof LeaseLostError && !jobLock.lost && !lease?.lost)
      throw new ProductSyncError('PS_ERR_QUEUE', `${err.message}; the chunk will be tried again`, {
        cause: err,
        retryable: true,
      });
    throw err;
  } finally {
    ctx.signal?.removeEventListener('abort', stopped);
    lease?.stop();
  }
}

/**
 * The fence's last window for a queued run, as sweepLateDuplicates for an inline one: its chunk jobs journal creates
 * answered late, and its prepare step may have taken the lease over from a run that never released it. Its lease is the
 * one run.json keeps (the workers kept it alive until now): asked of the store here, held or lost.
 */
async function sweepQueuedRun(workDir: string, state: RunState, ctx: RunContext & QueuedFinish): Promise<void> {
  if (state.request.dryRun || !state.lease) return;
  const { api, grant, holder, ttlMs, takenFrom } = state.lease;
  const store = runLeaseStore(ctx, state.ownerCompanyId, api);
  // Held as of nothing: the sweep's first renewal tells whether the run still holds it.
  const lease = new Lease(store, grant, holder, ttlMs, { sentAt: { mono: -Infinity, wall: -Infinity }, takenFrom });
  try {
    lease.keepAlive();
    await sweepRun(ctx, state, workDir, {
      lease,
      store,
      api,
      waitMs: ctx.leaseWaitMs ?? 0,
      holder: holderOf(state.runId, 'queued', holder.jobId, workDir),
      ...(ctx.guard ? { guard: ctx.guard } : {}),
    });
  } finally {
    lease.stop();
  }
}

/** True when the store says another run holds the lease now (not merely that it could not be renewed in time). */
async function leaseLostForGood(lease: Lease): Promise<boolean> {
  await lease.ready().catch(() => undefined);
  return lease.lost !== null;
}

/** What the queue's finish step hands {@link finishRun} besides the run's context. */
export interface QueuedFinish {
  /** Product requests the chunk jobs sent, and what they saw of the API's limits. */
  pushRequests?: number;
  pushApi?: readonly (ChunkApiFigures | undefined)[];
  /** What must hold, besides the run's lease, for the finish step to write (its import job's lock). */
  guard?: Fence;
  /** How long a run that lost its lease waits to take it again to check its late creates (the job's --wait-lock). */
  leaseWaitMs?: number;
}

/** Queue driver, parent side at the end: late duplicates swept, then the report from every chunk's results. */
export async function finishRun(workDir: string, ctx: RunContext & QueuedFinish): Promise<RunResult> {
  const state = await readRunState(workDir);
  state.aborted ??= await readAbortMark(workDir, state.plan);
  await sweepQueuedRun(workDir, state, ctx);
  ctx.onProgress?.({
    stage: 'report',
    rowsRead: state.rows,
    operationsSent: state.rows,
    errors: 0,
    rowsTotal: state.rows,
  });
  const assembler = await ReportAssembler.open(workDir, state);
  for (let i = 0; i < state.rowChunks; i++) {
    if (!resultsExist(workDir, 'rows', i)) await recoverChunk(workDir, 'rows', i, 'the chunk never finished');
    await assembler.ready(i);
  }
  for (let i = 0; i < state.archiveChunks; i++)
    if (!resultsExist(workDir, 'archives', i)) await recoverChunk(workDir, 'archives', i, 'the chunk never finished');
  const requests = { reference: state.referenceRequests, product: state.productRequests + (ctx.pushRequests ?? 0) };
  if (!state.request.dryRun) await mergeRunLedger(workDir, state.rowChunks, state.archiveChunks);
  const duplicates = await duplicateResults(workDir);
  const { files, summary } = await traced('report', { runId: state.runId }, () =>
    assembler.finish(
      state.archiveChunks,
      (counts) => summaryOf(state, counts, requests, state.aborted, mergeChunkApiFigures(ctx.pushApi ?? [])),
      duplicates,
      ctx.scorecard,
    ),
  );
  return {
    runId: state.runId,
    exitCode: summary.exitCode as RunResult['exitCode'],
    summary,
    reportDir: workDir,
    files,
  };
}
