import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { join, resolve as resolvePath } from 'node:path';
import type { Redis } from 'ioredis';
import type { Config } from '../config.ts';
import { ProductSyncError } from '../errors.ts';
import { logger as rootLogger, type Logger } from '../logger.ts';
import type { ApiClients } from '../api/clients.ts';
import type { ManufacturedItemRecord, TradeItemRecord } from '../api/types.ts';
import { canonical, gtinKey } from './sync/canonical.ts';
import { apiIssue, Executor, type ExecutedRow } from './sync/execute.ts';
import { openJournal, type Journal } from './sync/journal.ts';
import { loadMapping, type Mapping } from './map/mapping.ts';
import { archiveGuard, manufacturedKey, planArchives, planRow, type ApiState, type ArchiveEntry, type Mode, type RowPlan } from './sync/plan.ts';
import { createReportWriter, type Outcome, type RunSummary } from './report/report.ts';
import { prepareDrafts, type PreparedDrafts } from './prepare.ts';
import { Throttle } from './sync/throttle.ts';
import type { Draft, Issue } from './types.ts';

/** What to run: a sheet, its mapping and the sync settings (CLI flags, queue job data). */
export interface ImportRequest {
  file: string;
  mapping: string;
  owner?: string;
  mode?: Mode;
  dryRun?: boolean;
  reportDir?: string;
  language?: string;
  sheet?: string;
  allowArchive?: boolean;
  maxArchiveRatio?: number;
}

/** Progress of a run, for a progress bar or a job's progress. */
export interface RunProgress {
  stage: 'read' | 'resolve' | 'plan' | 'push' | 'report';
  rowsRead: number;
  operationsSent: number;
  errors: number;
  rowsTotal?: number;
}

/** What a run needs from its driver. */
export interface RunContext {
  config: Config;
  clients: ApiClients;
  /** Shared reference cache (second level); null or absent: in-process only. */
  redis?: Redis | null;
  logger?: Logger;
  signal?: AbortSignal;
  onProgress?: (p: RunProgress) => void;
  /** Shared concurrency gate; wire the client's 429 hook to `throttle.rateLimited` so every request backs off. */
  throttle?: Throttle;
}

/** The end of a run: its id, exit code (DESIGN §5.1), summary and report files. */
export interface RunResult {
  runId: string;
  exitCode: 0 | 1 | 2 | 3;
  summary: RunSummary;
  reportDir: string;
  files: string[];
  /** Write requests this process sent for the run (0 for a run with nothing to change). */
  writes?: number;
}

/** A run read, validated, resolved and planned, ready to push in chunks (the queue driver's unit). */
export interface PreparedRun {
  runId: string;
  workDir: string;
  chunks: RowPlan[][];
  archives: ArchiveEntry[][];
  aborted?: { exitCode: 2 | 3; message: string };
}

/** Persistent state of a prepared run (workDir/state.json): everything finalize needs besides the executed rows. */
interface RunState {
  runId: string;
  request: Required<Pick<ImportRequest, 'file' | 'mapping' | 'mode' | 'dryRun'>> & ImportRequest;
  mappingName: string;
  ownerCompanyId: string;
  sha256: string;
  rows: number;
  startedAt: string;
  headers: string[];
  /** Rows that end before any API write: invalid, unchanged, skipped (and planned outcomes in a dry run). */
  settled: ExecutedRow[];
  /** Source cells of rows that may end up rejected (invalid or sent), by row number. */
  sources: Record<number, unknown[]>;
  referenceRequests: number;
  productRequests: number;
  aborted?: { exitCode: 2 | 3; message: string };
  validateOnly?: boolean;
}

const ISSUE_NOT_SENT = (row: number, why: string): Issue => ({ row, column: null, field: null, value: null, code: 'NOT_ATTEMPTED', severity: 'error', message: `not attempted: ${why}` });

/** sha256 of a file, streamed. */
export async function sha256File(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const chunk of createReadStream(file)) h.update(chunk as Buffer);
  return h.digest('hex');
}

/** Deterministic run id: the same sheet, mapping, owner and mode give the same id (a rerun resumes); `-rN` after a finished one. */
async function runIdFor(reportDir: string, sha: string, mapping: Mapping, owner: string, req: ImportRequest, kind: string): Promise<string> {
  const h = createHash('sha256').update(JSON.stringify([mapping.name, mapping.hash ?? '', owner, req.mode ?? 'upsert', Boolean(req.dryRun), kind])).digest('hex');
  const base = `${sha.slice(0, 12)}-${h.slice(0, 8)}`;
  const taken = new Set(existsSync(reportDir) ? await readdir(reportDir) : []);
  for (let n = 1; ; n++) {
    const id = n === 1 ? base : `${base}-r${n}`;
    if (!taken.has(id) || !existsSync(join(reportDir, id, 'summary.json'))) return id;
  }
}

/** The owner's items as the API has them: a full paged scan, or GTIN searches for a small sheet. */
async function loadApiState(ctx: RunContext, owner: string, drafts: Draft[], mapping: Mapping, full: boolean): Promise<ApiState> {
  const product = ctx.clients.product;
  const tradeItems = new Map<string, TradeItemRecord>();
  const manufacturedItems = new Map<string, ManufacturedItemRecord>();
  const keyOf = (t: TradeItemRecord) => (mapping.key === 'tradeItemId' ? t.tradeItemId : gtinKey(t.gtin));
  const add = (t: TradeItemRecord) => {
    const k = keyOf(t);
    if (!k) return;
    const prev = tradeItems.get(k);
    // Should a duplicate exist (made by another tool), prefer the active one so updates land on what people see.
    if (!prev || (prev.archived && !t.archived)) tradeItems.set(k, t);
  };
  const small = !full && mapping.key === 'gtin' && drafts.length <= 50;
  if (small) {
    await Promise.all(
      drafts.map(async (d) => {
        const page = await product.searchTradeItems({ OwnerCompanyId: owner, GTIN: String(d.fields.gtin ?? d.key), Take: 500 });
        for (const t of page.tradeItems ?? []) add(t);
      }),
    );
  } else {
    for (const t of await allPages((q) => product.searchTradeItems(q).then((p) => ({ items: p.tradeItems ?? [], total: p.skipAndTakeQueryStats?.totalCount ?? 0 })), owner)) add(t);
  }
  if (mapping.target === 'manufacturedItem') {
    if (small) {
      await Promise.all(
        [...tradeItems.values()].map(async (t) => {
          const page = await product.searchManufacturedItems({ OwnerCompanyId: owner, TradeItemId: t.tradeItemId, Take: 500 });
          for (const m of page.manufacturedItems ?? []) manufacturedItems.set(manufacturedKey(m.tradeItemId, m.supplierCompanyId), m);
        }),
      );
    } else {
      const all = await allPages((q) => product.searchManufacturedItems(q).then((p) => ({ items: p.manufacturedItems ?? [], total: p.skipAndTakeQueryStats?.totalCount ?? 0 })), owner);
      for (const m of all) manufacturedItems.set(manufacturedKey(m.tradeItemId, m.supplierCompanyId), m);
    }
  }
  return { tradeItems, manufacturedItems, complete: !small };
}

/**
 * Every page of an owner's search: the first page tells the total, the others are fetched 8 at a time (a 100 000-item
 * catalogue is 200 pages: sequentially that is 200 round trips of latency). Items added while paging may be missed or
 * seen twice; the plan is keyed, so a repeat is harmless, and a run started while another writes is not supported.
 */
async function allPages<T>(search: (q: { OwnerCompanyId: string; Skip: number; Take: number }) => Promise<{ items: T[]; total: number }>, owner: string, pageSize = 500): Promise<T[]> {
  const first = await search({ OwnerCompanyId: owner, Skip: 0, Take: pageSize });
  const pages: T[][] = [first.items];
  // A server that caps Take below what was asked answers smaller pages: step by what it gave.
  const step = first.items.length > 0 && first.items.length < pageSize ? first.items.length : pageSize;
  const skips: number[] = [];
  for (let skip = step; skip < first.total; skip += step) skips.push(skip);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(8, skips.length) }, async () => {
      while (next < skips.length) {
        const i = next++;
        pages[i + 1] = (await search({ OwnerCompanyId: owner, Skip: skips[i]!, Take: step })).items;
      }
    }),
  );
  return pages.flat();
}

function chunk<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const invalidRow = (d: Draft): ExecutedRow => ({ row: d.row, key: d.key, outcome: 'invalid', tradeItemId: null, manufacturedItemId: null, changedFields: [], issues: d.issues });

/** Reads, validates, resolves and plans; persists the run state in workDir so any worker can push chunks and finalize. */
export async function prepareRun(req: ImportRequest, ctx: RunContext & { chunkSize?: number; validateOnly?: boolean }): Promise<PreparedRun> {
  const log = (ctx.logger ?? rootLogger).child({ stage: 'prepare' });
  const mode = req.mode ?? 'upsert';
  const mapping = await loadMapping(req.mapping);
  const owner = req.owner ?? mapping.ownerCompanyId ?? ctx.config.OWNER_COMPANY_ID;
  if (!owner) throw new ProductSyncError('PS_ERR_CLI_USAGE', 'no owner company: give --owner, set ownerCompanyId in the mapping, or OWNER_COMPANY_ID');
  const reportDir = resolvePath(req.reportDir ?? ctx.config.REPORT_DIR);
  const sha = await sha256File(req.file);
  const runId = await runIdFor(reportDir, sha, mapping, owner, req, ctx.validateOnly ? 'validate' : 'import');
  const workDir = join(reportDir, runId);
  await mkdir(workDir, { recursive: true });
  const startedAt = new Date().toISOString();
  const refBefore = ctx.clients.stats.reference;
  const productBefore = ctx.clients.stats.product;
  log.info({ runId, file: req.file, mapping: mapping.name, mode, dryRun: Boolean(req.dryRun) }, 'run prepared');

  const prepared: PreparedDrafts = await prepareDrafts({
    file: req.file, mapping, owner, language: req.language, sheet: req.sheet, dryRun: Boolean(req.dryRun) || Boolean(ctx.validateOnly),
    clients: ctx.clients, redis: ctx.redis ?? null, config: ctx.config, signal: ctx.signal,
    onProgress: (rowsRead, stage) => ctx.onProgress?.({ stage, rowsRead, operationsSent: 0, errors: 0 }),
  });
  const { drafts, headers } = prepared;
  const settled: ExecutedRow[] = [];
  const sources: Record<number, unknown[]> = {};
  const valid: Draft[] = [];
  for (const d of drafts) {
    sources[d.row] = d.source;
    if (d.issues.some((i) => i.severity === 'error')) settled.push(invalidRow(d));
    else valid.push(d);
  }

  const state: RunState = {
    runId, request: { ...req, mode, dryRun: Boolean(req.dryRun) }, mappingName: mapping.name, ownerCompanyId: owner, sha256: sha,
    rows: drafts.length, startedAt, headers, settled, sources, referenceRequests: 0, productRequests: 0, validateOnly: ctx.validateOnly,
  };
  let rowPlans: RowPlan[] = [];
  let archives: ArchiveEntry[] = [];
  if (ctx.validateOnly) {
    for (const d of valid) settled.push({ row: d.row, key: d.key, outcome: 'skipped', tradeItemId: null, manufacturedItemId: null, changedFields: [], issues: d.issues });
  } else {
    ctx.onProgress?.({ stage: 'plan', rowsRead: drafts.length, operationsSent: 0, errors: settled.length });
    const apiState = await loadApiState(ctx, owner, valid, mapping, mode === 'full');
    const options = { target: mapping.target, mode, ownerCompanyId: owner, key: mapping.key };
    for (const d of valid) {
      const p = planRow(d, apiState, options);
      if (p.steps.length === 0 || req.dryRun) {
        const outcome: Outcome = ({ create: 'created', update: 'updated', unarchive: 'unarchived', unchanged: 'unchanged', skipped: 'skipped' } as const)[p.action];
        settled.push({ row: p.row, key: p.key, outcome, tradeItemId: p.tradeItemId, manufacturedItemId: p.manufacturedItemId, changedFields: outcome === 'unchanged' || outcome === 'skipped' ? [] : p.changedFields, issues: [...d.issues, ...p.issues] });
      } else {
        rowPlans.push({ ...p, issues: [...d.issues, ...p.issues] });
      }
    }
    if (mode === 'full') {
      const sheetKeys = new Set(drafts.map((d) => d.key).filter((k): k is string => k !== null));
      archives = planArchives(apiState, sheetKeys);
      const verdict = archiveGuard(apiState, archives.length, req.maxArchiveRatio ?? 0.1, Boolean(req.allowArchive));
      if (verdict.tripped) {
        const message = `archive guard tripped: the plan archives ${verdict.toArchive} of ${verdict.active} active items (${(verdict.ratio * 100).toFixed(1)} % > ${(verdict.maxRatio * 100).toFixed(1)} %); nothing was sent. Check the sheet is complete, or allow it with --allow-archive / --max-archive-ratio`;
        state.aborted = { exitCode: 3, message };
        for (const p of rowPlans) settled.push({ row: p.row, key: p.key, outcome: 'not_attempted', tradeItemId: p.tradeItemId, manufacturedItemId: p.manufacturedItemId, changedFields: [], issues: [...p.issues, ISSUE_NOT_SENT(p.row, 'archive guard tripped')] });
        for (const a of archives) settled.push({ row: null, key: a.key, outcome: 'not_attempted', tradeItemId: a.tradeItemId, manufacturedItemId: null, changedFields: [], issues: [ISSUE_NOT_SENT(0, message)] });
        rowPlans = [];
        archives = [];
      } else if (req.dryRun) {
        for (const a of archives) settled.push({ row: null, key: a.key, outcome: 'archived', tradeItemId: a.tradeItemId, manufacturedItemId: null, changedFields: ['archived'], issues: [] });
        archives = [];
      }
    }
  }
  // Sources are kept only for rows that may be rejected (invalid now, or sent and possibly failing).
  const keep = new Set<number>([...settled.filter((s) => s.outcome === 'invalid').map((s) => s.row!), ...rowPlans.map((p) => p.row)]);
  for (const r of Object.keys(sources)) if (!keep.has(Number(r))) delete sources[Number(r)];
  state.referenceRequests = ctx.clients.stats.reference - refBefore;
  state.productRequests = ctx.clients.stats.product - productBefore;
  await writeFile(join(workDir, 'state.json'), JSON.stringify(state));
  preparedStates.set(workDir, state);
  return { runId, workDir, chunks: chunk(rowPlans, ctx.chunkSize ?? 250), archives: chunk(archives, 500), ...(state.aborted ? { aborted: state.aborted } : {}) };
}

// The run state of runs prepared in this process: an inline run must not parse its own (large) state.json back twice.
const preparedStates = new Map<string, RunState>();

async function readState(workDir: string): Promise<RunState> {
  const cached = preparedStates.get(workDir);
  if (cached) return cached;
  try {
    return JSON.parse(await readFile(join(workDir, 'state.json'), 'utf8')) as RunState;
  } catch (err) {
    throw new ProductSyncError('PS_ERR_JOURNAL', `run state missing or unreadable in ${workDir}`, { cause: err });
  }
}

function executorFor(ctx: RunContext, owner: string, journal: Journal, onResult: (r: ExecutedRow) => void): Executor {
  return new Executor({
    api: ctx.clients.product, ownerCompanyId: owner, journal, onResult, signal: ctx.signal,
    throttle: ctx.throttle ?? new Throttle(ctx.config.API_CONCURRENCY, ctx.config.API_MAX_RPS),
  });
}

/** Runs `work` with an executor over the run's journal `journalName`; the executor's abort reason is thrown (retryable when the circuit opened). */
async function withExecutor(
  prepared: Pick<PreparedRun, 'runId' | 'workDir'>,
  ctx: RunContext,
  journalName: string,
  work: (ex: Executor) => Promise<void>,
): Promise<ExecutedRow[]> {
  const state = await readState(prepared.workDir);
  const journal = await openJournal(join(prepared.workDir, journalName));
  const results: ExecutedRow[] = [];
  try {
    const ex = executorFor(ctx, state.ownerCompanyId, journal, (r) => results.push(r));
    await work(ex);
    if (ex.abortReason) throw ex.abortReason;
    return results;
  } finally {
    await journal.close();
  }
}

/** Pushes one chunk of row plans (idempotent through the journal and deterministic ids); throws a retryable error when the circuit opened. */
export function executeChunk(prepared: Pick<PreparedRun, 'runId' | 'workDir'>, plans: RowPlan[], ctx: RunContext, journalName = 'journal.jsonl'): Promise<ExecutedRow[]> {
  return withExecutor(prepared, ctx, journalName, (ex) => ex.run(plans));
}

/** Archives entries of a full run (idempotent). */
export function executeArchives(prepared: Pick<PreparedRun, 'runId' | 'workDir'>, entries: ArchiveEntry[], ctx: RunContext, journalName = 'journal.jsonl'): Promise<ExecutedRow[]> {
  return withExecutor(prepared, ctx, journalName, (ex) => ex.archive(entries));
}

/** Writes the report from the settled rows and the executed ones; every input row gets exactly one outcome. */
export async function finalizeRun(
  prepared: Pick<PreparedRun, 'runId' | 'workDir'>,
  results: ExecutedRow[],
  ctx: RunContext & { aborted?: { exitCode: 2 | 3; message: string }; pushRequests?: number },
): Promise<RunResult> {
  const state = await readState(prepared.workDir);
  ctx.onProgress?.({ stage: 'report', rowsRead: state.rows, operationsSent: results.length, errors: 0 });
  const byRow = new Map<number, ExecutedRow>();
  const extra: ExecutedRow[] = [];
  for (const r of [...state.settled, ...results]) {
    if (r.row === null) extra.push(r);
    else byRow.set(r.row, r);
  }
  const writer = await createReportWriter(prepared.workDir, { sourceHeaders: state.headers });
  const counts = { rows: state.rows, created: 0, updated: 0, unchanged: 0, archived: 0, unarchived: 0, invalid: 0, failed: 0, skipped: 0, notAttempted: 0 };
  const countKey: Record<Outcome, keyof typeof counts> = {
    created: 'created', updated: 'updated', unchanged: 'unchanged', archived: 'archived', unarchived: 'unarchived', invalid: 'invalid', failed: 'failed', skipped: 'skipped', not_attempted: 'notAttempted',
  };
  const rowNumbers = [...byRow.keys()].sort((a, b) => a - b);
  for (const n of rowNumbers) {
    const r = byRow.get(n)!;
    counts[countKey[r.outcome]]++;
    await writer.addRow(r);
    if (r.outcome === 'invalid' || r.outcome === 'failed' || r.outcome === 'not_attempted') {
      await writer.addRejected(n, (state.sources[n] ?? []) as never, r.issues);
    }
  }
  for (const r of extra) {
    counts[countKey[r.outcome]]++;
    await writer.addRow(r);
  }
  const aborted = ctx.aborted ?? state.aborted;
  const exitCode: 0 | 1 | 2 | 3 = aborted ? aborted.exitCode : counts.invalid + counts.failed + counts.notAttempted > 0 ? 1 : 0;
  const summary: RunSummary = {
    runId: state.runId,
    source: { file: state.request.file, sha256: state.sha256, rows: state.rows },
    mapping: state.mappingName,
    mode: state.request.mode,
    dryRun: state.request.dryRun,
    startedAt: state.startedAt,
    finishedAt: new Date().toISOString(),
    counts,
    requests: { reference: state.referenceRequests, product: state.productRequests + (ctx.pushRequests ?? 0) },
    exitCode,
    ...(aborted ? { aborted: aborted.message } : {}),
  };
  const { files } = await writer.finish(summary);
  preparedStates.delete(prepared.workDir);
  return { runId: state.runId, exitCode, summary, reportDir: prepared.workDir, files };
}

/** The inline driver: prepare, push every chunk, archive, report — one process, no Redis needed. */
export async function runImport(req: ImportRequest, ctx: RunContext): Promise<RunResult> {
  const t0 = performance.now();
  const prepared = await prepareRun(req, ctx);
  const tPrepared = performance.now();
  const productAfterPrepare = ctx.clients.stats.product;
  const results: ExecutedRow[] = [];
  let aborted: { exitCode: 3; message: string } | undefined;
  let writes = 0;
  if (!prepared.aborted) {
    const journal = await openJournal(join(prepared.workDir, 'journal.jsonl'));
    const state = await readState(prepared.workDir);
    let sent = 0;
    let errors = 0;
    const total = prepared.chunks.reduce((n, c) => n + c.length, 0);
    try {
      const ex = executorFor(ctx, state.ownerCompanyId, journal, (r) => {
        results.push(r);
        sent++;
        if (r.outcome === 'failed') errors++;
        if (sent % 50 === 0 || sent === total) ctx.onProgress?.({ stage: 'push', rowsRead: state.rows, operationsSent: sent, errors, rowsTotal: total });
      });
      await ex.run(prepared.chunks.flat());
      await ex.archive(prepared.archives.flat());
      writes = ex.writesSent;
      if (ex.abortReason) aborted = { exitCode: 3, message: ex.abortReason.message };
    } catch (err) {
      aborted = { exitCode: 3, message: (err as Error).message };
      const done = new Set(results.map((r) => r.row));
      for (const p of prepared.chunks.flat()) {
        if (!done.has(p.row)) results.push({ row: p.row, key: p.key, outcome: 'failed', tradeItemId: p.tradeItemId, manufacturedItemId: p.manufacturedItemId, changedFields: [], issues: [...p.issues, apiIssue(p.row, err)] });
      }
    } finally {
      await journal.close();
    }
  }
  const tPushed = performance.now();
  const result = await finalizeRun(prepared, results, { ...ctx, pushRequests: ctx.clients.stats.product - productAfterPrepare, ...(aborted ? { aborted } : {}) });
  const ms = (a: number, b: number) => Math.round(b - a);
  (ctx.logger ?? rootLogger).info({ runId: result.runId, prepareMs: ms(t0, tPrepared), pushMs: ms(tPrepared, tPushed), reportMs: ms(tPushed, performance.now()), writes }, 'run finished');
  return { ...result, writes };
}

/** Validate only: read, map, validate, resolve; a report of issues, no write sent. */
export async function runValidate(req: ImportRequest, ctx: RunContext): Promise<RunResult> {
  const prepared = await prepareRun({ ...req, dryRun: true }, { ...ctx, validateOnly: true });
  return finalizeRun(prepared, [], ctx);
}

/** Reconcile: compares the sheet with the API field by field and writes reconcile.json / .csv; sends no write. */
export async function runReconcile(req: ImportRequest, ctx: RunContext): Promise<RunResult> {
  const mapping = await loadMapping(req.mapping);
  const owner = req.owner ?? mapping.ownerCompanyId ?? ctx.config.OWNER_COMPANY_ID;
  if (!owner) throw new ProductSyncError('PS_ERR_CLI_USAGE', 'no owner company: give --owner, set ownerCompanyId in the mapping, or OWNER_COMPANY_ID');
  const reportDir = resolvePath(req.reportDir ?? ctx.config.REPORT_DIR);
  const sha = await sha256File(req.file);
  const runId = await runIdFor(reportDir, sha, mapping, owner, req, 'reconcile');
  const workDir = join(reportDir, runId);
  await mkdir(workDir, { recursive: true });
  const startedAt = new Date().toISOString();
  const { drafts, headers } = await prepareDrafts({
    file: req.file, mapping, owner, language: req.language, sheet: req.sheet, dryRun: true,
    clients: ctx.clients, redis: ctx.redis ?? null, config: ctx.config, signal: ctx.signal,
  });
  const refRequests = ctx.clients.stats.reference;
  const productBefore = ctx.clients.stats.product;
  const apiState = await loadApiState(ctx, owner, [], mapping, true);
  const writer = await createReportWriter(workDir, { sourceHeaders: headers, reconcile: true });
  const counts = { rows: drafts.length, created: 0, updated: 0, unchanged: 0, archived: 0, unarchived: 0, invalid: 0, failed: 0, skipped: 0, notAttempted: 0 };
  const seen = new Set<string>();
  const show = (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));
  for (const d of drafts) {
    if (d.key) seen.add(d.key);
    if (d.issues.some((i) => i.severity === 'error')) {
      counts.invalid++;
      await writer.addRow(invalidRow(d));
      await writer.addRejected(d.row, d.source, d.issues);
      continue;
    }
    const record = apiState.tradeItems.get(d.key!);
    if (!record) {
      await writer.addReconcile({ key: d.key!, status: 'missing_in_api', field: '', sheetValue: '', apiValue: '' });
      counts.skipped++;
      await writer.addRow({ row: d.row, key: d.key, outcome: 'skipped', tradeItemId: null, manufacturedItemId: null, changedFields: [], issues: d.issues });
      continue;
    }
    const differing: string[] = [];
    for (const [field, value] of Object.entries(d.fields)) {
      if (canonical(value) !== canonical(record[field])) {
        differing.push(field);
        await writer.addReconcile({ key: d.key!, status: 'differs', field, sheetValue: show(value), apiValue: show(record[field]) });
      }
    }
    if (differing.length === 0) await writer.addReconcile({ key: d.key!, status: 'in_sync', field: '', sheetValue: '', apiValue: '' });
    if (differing.length === 0) counts.unchanged++;
    else counts.skipped++;
    await writer.addRow({ row: d.row, key: d.key, outcome: differing.length === 0 ? 'unchanged' : 'skipped', tradeItemId: record.tradeItemId, manufacturedItemId: null, changedFields: differing, issues: d.issues });
  }
  for (const [key, item] of apiState.tradeItems) {
    if (!item.archived && !seen.has(key)) await writer.addReconcile({ key, status: 'missing_in_sheet', field: '', sheetValue: '', apiValue: item.tradeItemId });
  }
  const exitCode: 0 | 1 = counts.invalid > 0 ? 1 : 0;
  const summary: RunSummary = {
    runId, source: { file: req.file, sha256: sha, rows: drafts.length }, mapping: mapping.name, mode: req.mode ?? 'upsert', dryRun: true,
    startedAt, finishedAt: new Date().toISOString(), counts,
    requests: { reference: refRequests, product: ctx.clients.stats.product - productBefore }, exitCode,
  };
  const { files } = await writer.finish(summary);
  return { runId, exitCode, summary, reportDir: workDir, files };
}
