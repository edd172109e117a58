/**
 * The run's lifecycle, for both drivers: the inline one (runImport / runValidate, one process) and the queue one
 * (startQueuedRun produces chunk files for chunk jobs, pushChunk runs one, finishRun assembles the report).
 */
import { allFences, type Fence } from '../../api/fence.ts';
import { withFence, withRunScope } from '../../api/run-scope.ts';
import { LeaseLostError, ProductSyncError } from '../../errors.ts';
import { logger as rootLogger } from '../../logger.ts';
import { issue } from '../../issue-codes.ts';
import type { RunSummary } from '../report/report.ts';
import type { ExecutedRow } from '../sync/execute.ts';
import { sheetWantsReportThread } from '../report/report-thread-start.ts';
import { REPORT_THREAD_ROWS, ReportAssembler, type Counts } from './assemble.ts';
import { Lease } from './lease.ts';
import { RequestTally } from './request-tally.ts';
import { leaseStoreFor } from './lease-store.ts';
import { recoverChunk, resultsExist, settleArchiveChunk, type ChunkKind, type ResultRow } from './chunks.ts';
import { abortError, openRun, produceChunks } from './open-run.ts';
import { mergeRunLedger } from './ledger-file.ts';
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
    ...(aborted ? { aborted: aborted.message, ...(aborted.code ? { abortCode: aborted.code } : {}) } : {}),
    ...(state.request.notes?.length ? { notes: [...state.request.notes] } : {}),
    ...(api ? { api } : {}),
  };
}

/** Inline driver: both passes, pushing chunks as the second pass produces them, the report assembled as they finish. */
function runInline(req: ImportRequest, ctx: RunContext, kind: 'import' | 'validate'): Promise<RunResult> {
  // The run's requests are counted in its scope (those of other runs of this process are not).
  const tally = new RequestTally();
  return withRunScope({ count: tally.count }, () => driveInline(req, ctx, kind, tally));
}

async function driveInline(
  req: ImportRequest,
  ctx: RunContext,
  kind: 'import' | 'validate',
  tally: RequestTally,
): Promise<RunResult> {
  const t0 = performance.now();
  const log = ctx.logger ?? rootLogger;
  const share = runShare();
  // Interrupted (SIGINT / SIGTERM): nothing more is sent, the rest of the sheet is read and reported not attempted.
  const interrupted = () => void (share.stop.reason ??= interruption(ctx.signal!));
  if (ctx.signal?.aborted) interrupted();
  else ctx.signal?.addEventListener('abort', interrupted, { once: true });
  const run = await openRun(req, ctx, kind, share);
  const { state, workDir } = run;
  // An import may be resumed: its requests are kept with it (validate resumes nothing).
  if (kind === 'import') await tally.persistIn(workDir);
  log.info(
    {
      runId: state.runId,
      file: req.file,
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
  let assembler = await ReportAssembler.open(workDir, state, { thread });
  let rowsRead = 0;
  let done = 0;
  let errors = 0;
  let writes = 0;
  let firstWriteMs: number | undefined;
  const apiAtStart = ctx.limiter?.snapshot();
  const progress = (stage: 'read' | 'push') =>
    ctx.onProgress?.({
      stage,
      rowsRead,
      operationsSent: done,
      writes,
      errors,
      rowsTotal: state.rows,
      ...(ctx.limiter ? { api: ctx.limiter.snapshot() } : {}),
    });
  const pushCtx: PushContext = {
    config: ctx.config,
    clients: ctx.clients,
    shared: share,
    ...(ctx.throttle ? { throttle: ctx.throttle } : {}),
    ...(ctx.signal ? { signal: ctx.signal } : {}),
    ...(state.leaseTokens?.broken ? { earlierCreatesOurs: false } : {}),
    onResult: (r: ExecutedRow) => {
      done++;
      if (r.outcome === 'failed') errors++;
      if (done % 200 === 0) progress('push');
    },
  };
  const counted = (p: PushedChunk) => {
    writes += p.writes;
    if (p.writes > 0) firstWriteMs ??= performance.now() - t0;
    if (p.abort) share.stop.reason ??= abortError(p.abort);
  };
  // The second pass: chunks pushed (or settled) as they come, their outcomes to the report in order.
  const secondPass = async () => {
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
    const report = (index: number, rows?: ResultRow[]) => track(reporting, assembler.ready(index, rows));
    const reading: RunContext = {
      ...ctx,
      onProgress: (p) => {
        rowsRead = p.rowsRead;
        progress('read');
      },
    };
    for await (const c of produceChunks(run, reading, { settle: true })) {
      rowsRead = c.rowsRead;
      progress('read');
      // `c` was prepared while the chunks ahead of it were pushing: it starts as soon as a slot frees.
      while (pushing.size >= CHUNKS_IN_FLIGHT || reporting.size >= REPORT_BACKLOG)
        await waitOn(Promise.race([...pushing, ...reporting]));
      if (failure) throw failure.err;
      if (c.status === 'pushed') {
        report(c.index);
      } else if (c.status === 'settled') {
        // As pushRowChunk counts them: rows that had a plan (nothing to send) are operations done, settled rows are
        // not.
        done += c.results!.length - c.chunk!.settled.length;
        report(c.index, c.results);
      } else {
        track(
          pushing,
          pushRowChunk(workDir, state.ownerCompanyId, c.index, pushCtx, c.chunk).then((p) => {
            counted(p);
            report(c.index, p.results);
          }),
        );
      }
    }
    await waitOn(Promise.all(pushing));
    await waitOn(Promise.all(reporting));
  };
  let finished: Awaited<ReturnType<ReportAssembler['finish']>>;
  // Every write of the run — the executors', a brand created while resolving — is fenced by its lease (api/fence.ts).
  const fence = run.lease ? allFences([run.lease, ...(ctx.fences ?? [])]) : null;
  try {
    await withFence(fence, () => sendAll());
    ctx.onProgress?.({ stage: 'report', rowsRead, operationsSent: done, writes, errors, rowsTotal: state.rows });
    const aborted = state.aborted ?? (share.stop.reason ? abortOf(share.stop.reason) : undefined);
    const requests = tally.total();
    if (kind === 'import' && !state.request.dryRun) await mergeRunLedger(workDir, state.rowChunks, state.archiveChunks);
    // The lease is held until the report is written (as finishRun does in queue mode): a run's report is true to the
    // API when it ends, since the next run for this owner starts after it.
    const api =
      apiAtStart && ctx.limiter ? runApiFigures(apiAtStart, ctx.limiter.snapshot(), performance.now() - t0) : undefined;
    finished = await assembler.finish(state.archiveChunks, (counts) =>
      summaryOf(state, counts, requests, aborted, api),
    );
  } catch (err) {
    await assembler.abort();
    throw err;
  } finally {
    ctx.signal?.removeEventListener('abort', interrupted);
    await run.api?.close();
    await run.lease?.release();
  }
  const { files, summary } = finished;
  log.info(
    {
      runId: state.runId,
      ms: Math.round(performance.now() - t0),
      firstWriteMs: firstWriteMs === undefined ? null : Math.round(firstWriteMs),
      writes,
    },
    'run finished',
  );
  return {
    runId: state.runId,
    exitCode: summary.exitCode as RunResult['exitCode'],
    summary,
    reportDir: workDir,
    files,
    writes,
    kind,
  };

  /** Both passes' pushes and the archives. */
  async function sendAll(): Promise<void> {
    await secondPass();
    if (run.keysFromRows) {
      // Validate learnt the keys from its rows (openRun): a key on several rows marks every one of them, as an import's
      // first pass would, so the report so far is dropped and the sheet read again with the duplicates known.
      run.keysFromRows = false;
      if (run.keys.duplicated > 0 && !share.stop.reason) {
        log.info(
          { runId: state.runId, duplicatedKeys: run.keys.duplicated },
          'keys on several rows: reading the sheet again to mark them',
        );
        await assembler.abort();
        assembler = await ReportAssembler.open(workDir, state, { thread });
        rowsRead = done = errors = 0;
        await secondPass();
      }
      assembler.counts.rows = state.rows;
      await writeRunState(workDir, state);
    }
    for (let i = 0; i < state.archiveChunks; i++) {
      if (resultsExist(workDir, 'archives', i)) continue;
      if (share.stop.reason)
        await settleArchiveChunk(workDir, i, 'not_attempted', [
          issue('NOT_ATTEMPTED', { row: null, message: `not attempted: ${share.stop.reason.message}` }),
        ]);
      else counted(await pushArchiveChunk(workDir, state.ownerCompanyId, i, pushCtx));
    }
  }
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
  ctx: RunContext,
  onChunk: (c: { runId: string; workDir: string; kind: ChunkKind; index: number }) => Promise<void>,
): Promise<QueuedRun> {
  const share = runShare();
  const run = await openRun(req, ctx, 'import', share);
  const { state, workDir } = run;
  const refBefore = ctx.clients.stats.reference - state.referenceRequests;
  const productBefore = ctx.clients.stats.product - state.productRequests;
  const guard = ctx.fences?.length ? allFences(ctx.fences) : undefined;
  const fence = run.lease ? allFences([run.lease, ...(ctx.fences ?? [])]) : null;
  try {
    await withFence(fence, async () => {
      for await (const c of produceChunks(run, ctx, guard ? { guard } : {})) {
        if (c.status !== 'pushed') await onChunk({ runId: state.runId, workDir, kind: 'rows', index: c.index });
      }
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
      await settleArchiveChunk(workDir, i, 'not_attempted', [
        issue('NOT_ATTEMPTED', { row: null, message: `not attempted: ${share.stop.reason.message}` }),
      ]);
    else await onChunk({ runId: state.runId, workDir, kind: 'archives', index: i });
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
  c: { workDir: string; kind: ChunkKind; index: number },
  ctx: RunContext,
  jobLock: ChunkGuard,
): Promise<PushedChunk> {
  if (resultsExist(c.workDir, c.kind, c.index)) return { rows: 0, failed: 0, writes: 0 };
  const state = await readRunState(c.workDir);
  let abort = await readAbortMark(c.workDir);
  let lease: Lease | undefined;
  if (!abort && state.lease) {
    const store = leaseStoreFor(
      { redis: ctx.redis ?? null, prefix: ctx.config.QUEUE_PREFIX, stateDir: ctx.config.STATE_DIR },
      state.ownerCompanyId,
      state.lease.api,
    );
    // Held as of nothing: the renewal below tells whether the run still holds it.
    lease = new Lease(store, state.lease.grant, state.lease.holder, state.lease.ttlMs, {
      mono: -Infinity,
      wall: -Infinity,
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
      abort = abortOf(err);
    }
  }
  if (abort) {
    jobLock.check();
    await recoverChunk(c.workDir, c.kind, c.index, abort.message, 'not_attempted');
    await writeAbortMark(c.workDir, abort);
    return { rows: 0, failed: 0, writes: 0 };
  }
  // The worker stopping (ctx.signal) stops the chunk as an abort does: nothing more is sent, what is in flight settles
  // and is journalled, and the chunk throws (below), so its results are not written and it is pushed again later.
  const share = runShare();
  const stopped = () => void (share.stop.reason ??= interruption(ctx.signal!));
  if (ctx.signal?.aborted) stopped();
  else ctx.signal?.addEventListener('abort', stopped, { once: true });
  const pushCtx: PushContext = {
    config: ctx.config,
    clients: ctx.clients,
    guard: jobLock,
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
    const pushed = await withFence(allFences(lease ? [jobLock, lease] : [jobLock]), () =>
      c.kind === 'rows'
        ? pushRowChunk(c.workDir, state.ownerCompanyId, c.index, pushCtx)
        : pushArchiveChunk(c.workDir, state.ownerCompanyId, c.index, pushCtx),
    );
    if (pushed.abort instanceof LeaseLostError) await writeAbortMark(c.workDir, abortOf(pushed.abort));
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

/** True when the store says another run holds the lease now (not merely that it could not be renewed in time). */
async function leaseLostForGood(lease: Lease): Promise<boolean> {
  await lease.ready().catch(() => undefined);
  return lease.lost !== null;
}

/** Queue driver, parent side at the end: the report from every chunk's results, in row order. */
export async function finishRun(
  workDir: string,
  ctx: RunContext & { pushRequests?: number; pushApi?: readonly (ChunkApiFigures | undefined)[] },
): Promise<RunResult> {
  const state = await readRunState(workDir);
  state.aborted ??= await readAbortMark(workDir);
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
  const { files, summary } = await assembler.finish(state.archiveChunks, (counts) =>
    summaryOf(state, counts, requests, state.aborted, mergeChunkApiFigures(ctx.pushApi ?? [])),
  );
  return {
    runId: state.runId,
    exitCode: summary.exitCode as RunResult['exitCode'],
    summary,
    reportDir: workDir,
    files,
  };
}
