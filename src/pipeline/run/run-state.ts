/**
 * A run's identity and its small persistent state (`<run>/run.json`): enough for any process to push a chunk or finish
 * the report.
 */
import { createHash, webcrypto } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ProductSyncError, RunInterrupted } from '../../errors.ts';
import { writingTo } from '../../fs-errors.ts';
import type { FieldFillCount } from '../map/field-fill.ts';
import type { Mapping, QualityGate } from '../map/mapping.ts';
import type { ReportLanguage } from '../report-language.ts';
import { ownTempPathFor, writeFileAtomic } from '../report/atomic.ts';
import type { ScopeSpec, ScopeSummary } from '../scope.ts';
import type { Mode } from '../sync/plan.ts';
import type { WithheldSummary } from '../withheld.ts';
import type { Grant, LeaseHolder } from '../../lease/lease.ts';

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
  /** The scope of the run when the feed overrides the mapping's (src/pipeline/scope.ts). */
  scope?: ScopeSpec;
  /** Full mode: archive even the items rows with unreadable keys could stand for (logged). */
  archiveDespiteInvalidKeys?: boolean;
  /** reconcile: exit 1 when the sheet and the API differ (default true). */
  failOnDiff?: boolean;
  /** What the report should say beyond the rows (summary.json `notes`), e.g. the files a feed's tick skipped. */
  notes?: string[];
  /** Apply the run even when it is over its quality gate (`--waive-gate`, the console's "Apply anyway"). */
  waiveGate?: boolean;
  /** The feed's quality gate, which replaces the mapping's (docs/mapping.md "Quality gates"). */
  gate?: QualityGate;
  /** The feed's own rules, added to the mapping's: the file holding them (a rules file, or the feed file itself). */
  rules?: string;
  /**
   * A feed's run: the feed, and where its remote file came from (its source's URL, no secret). Kept in run.json so
   * the run's undo names the same OpenLineage job and sheet (docs/operations.md "OpenLineage").
   */
  feed?: string;
  sourceLocation?: string;
}

/** What summary.json `held` says of a run its gate held. */
export interface HeldRun {
  gate: QualityGate;
  rows: number;
  invalidRows: number;
  invalidShare: number;
  /** Rows failing each rule of the gate's list that failed at all. */
  ruleRows: Record<string, number>;
  message: string;
}

/** Why a run stopped before sending everything: its exit code and message (summary.json `aborted`). */
export interface RunAbort {
  /** 3 (aborted), 2 (nothing could be sent), or 130 / 143 (interrupted by SIGINT / SIGTERM). */
  exitCode: number;
  message: string;
  /** The error code that stopped it. */
  code?: string;
}

/** The error a run stops on when its signal is aborted (its reason, when it is one of ours). */
export function interruption(signal: AbortSignal): ProductSyncError {
  return signal.reason instanceof ProductSyncError
    ? signal.reason
    : new ProductSyncError('PS_ERR_RUN_INTERRUPTED', 'interrupted');
}

/** The abort of a run stopped by `err`. */
export function abortOf(err: ProductSyncError): RunAbort {
  return { exitCode: err instanceof RunInterrupted ? err.exitCode : 3, message: err.message, code: err.code };
}

/** run.json: written after the first pass, completed when the second pass ends. */
export interface RunState {
  runId: string;
  kind: 'import' | 'validate';
  request: Required<Pick<ImportRequest, 'file' | 'mapping' | 'mode' | 'dryRun'>> & ImportRequest;
  mappingName: string;
  ownerCompanyId: string;
  sha256: string;
  /** Data rows of the sheet (first pass). */
  rows: number;
  startedAt: string;
  headers: string[];
  /** Rows above the header (headerRow > 1), for rejected.*; the mapping's decimal separator, for its numbers. */
  preamble?: unknown[][];
  decimalSeparator?: ',' | '.';
  chunkSize: number;
  /** Row chunks and archive chunks (row chunks known when the second pass ends). */
  rowChunks: number;
  archiveChunks: number;
  /** The run's scope and the items it held (summary.json `scope`). */
  scope?: ScopeSummary;
  /** Full mode: archives withheld for rows whose key could not be read (summary.json `withheld`). */
  withheld?: WithheldSummary;
  /** The language of the report's messages (the mapping's reportLanguage). */
  reportLanguage?: ReportLanguage;
  /** The mapped fields the sheet's rows fill (the scorecard's completeness, counted by a pass over every row). */
  fill?: FieldFillCount[];
  /** How chunks learn the API's current records (sync/api-state.ts). */
  apiState?: { strategy: string; catalogItems: number; pages: number };
  /** Requests sent while preparing (both passes, lookups, API state). */
  referenceRequests: number;
  productRequests: number;
  aborted?: RunAbort;
  /** The quality gate held the run (summary.json `held`). */
  held?: HeldRun;
  /** The quality gate let the run write (decided once every chunk was prepared; a resumed run keeps it). */
  gatePassed?: boolean;
  /**
   * The lease grants of this run's processes, in the store `where` (inline runs): consecutive tokens mean no other run
   * held the lease between them, so what an earlier attempt's creates left in the API is this run's.
   */
  leaseTokens?: { where: string; tokens: number[]; broken?: boolean };
  /**
   * Queue mode: the (owner, API) lease this run holds until its report (its chunk jobs check and renew it, workers keep
   * it between jobs, finishing releases it).
   */
  lease?: {
    api: string;
    grant: Grant;
    holder: LeaseHolder;
    ttlMs: number;
    /** The run whose grant this one took over (never released): its late creates are looked for before the report. */
    takenFrom?: LeaseHolder;
  };
  /**
   * Queue mode: which plans the chunk files hold (absent: the first). A retried prepare step that plans again after
   * another run held the lease counts up (the earlier chunks set aside in `outdated-<plan>`); chunk jobs of another
   * plan send nothing.
   */
  plan?: number;
}

/**
 * The abort mark of plan `plan` (RunState `plan`): `<run>/aborted.json` for the first, `aborted-p<n>.json` after. A
 * chunk job writes its own plan's, the report reads the run's plan's: a job of a plan set aside never ends the plan
 * that followed.
 */
export function abortMarkFile(workDir: string, plan: number | undefined): string {
  return join(workDir, plan ? `aborted-p${plan}.json` : 'aborted.json');
}

/**
 * The abort mark: written by a queued run's chunk job that found the run's lease lost (the prepare step writes
 * `aborted` in run.json itself); read when the report is assembled.
 */
export async function writeAbortMark(workDir: string, abort: RunAbort, plan?: number): Promise<void> {
  const file = abortMarkFile(workDir, plan);
  if (existsSync(file)) return;
  // Several chunk jobs may find the lease lost at once: each writes a temp file of its own, the last rename stands.
  const temp = ownTempPathFor(file);
  await writeFile(temp, JSON.stringify(abort));
  await rename(temp, file);
}

/** The abort a chunk job of plan `plan` recorded, if any. */
export async function readAbortMark(workDir: string, plan?: number): Promise<RunAbort | undefined> {
  try {
    return JSON.parse(await readFile(abortMarkFile(workDir, plan), 'utf8')) as RunAbort;
  } catch {
    return undefined;
  }
}

/** Files up to this size are hashed off the calling thread (sha256File). */
const WHOLE_HASH_BYTES = 16 * 1024 * 1024;

/** The sha256 of a file, in hex. */
export async function sha256File(file: string): Promise<string> {
  // A small file is read whole and hashed by WebCrypto, both in the thread pool: the calling thread goes on meanwhile
  // (openRun loads the mapping); a larger one is hashed as it streams (its run is long enough not to notice).
  const { size } = await stat(file);
  if (size <= WHOLE_HASH_BYTES)
    return Buffer.from(await webcrypto.subtle.digest('SHA-256', await readFile(file))).toString('hex');
  const h = createHash('sha256');
  // 1 MiB reads rather than the default 64 KiB: fewer round trips through the thread pool (one a read).
  for await (const chunk of createReadStream(file, { highWaterMark: 1024 * 1024 })) h.update(chunk as Buffer);
  return h.digest('hex');
}

/**
 * The identity of a run (or of its import job) from what makes it that run: the sha256, in hex, of their JSON. One
 * function for both, so the run id and the job id are hashed alike.
 */
export function identityHash(parts: readonly unknown[]): string {
  return createHash('sha256').update(JSON.stringify(parts)).digest('hex');
}

/**
 * Deterministic run id: the same sheet, mapping, owner and mode give the same id (a rerun resumes); `-rN` after a
 * finished one.
 */
export async function runIdFor(
  reportDir: string,
  sha: string,
  mapping: Mapping,
  owner: string,
  req: ImportRequest,
  kind: string,
): Promise<string> {
  const h = identityHash([
    mapping.name,
    mapping.hash ?? '',
    owner,
    req.mode ?? 'upsert',
    Boolean(req.dryRun),
    kind,
    // A feed's own scope makes another run of the same sheet (absent: run ids stay as they were before scopes).
    ...(req.scope !== undefined ? [req.scope] : []),
  ]);
  const base = `${sha.slice(0, 12)}-${h.slice(0, 8)}`;
  const taken = new Set(existsSync(reportDir) ? await readdir(reportDir) : []);
  for (let n = 1; ; n++) {
    const id = n === 1 ? base : `${base}-r${n}`;
    if (!taken.has(id) || !existsSync(join(reportDir, id, 'summary.json'))) return id;
  }
}

/** Writes run.json atomically; a refusal of the file system is PS_ERR_FILE_WRITE naming the file. */
export async function writeRunState(workDir: string, state: RunState): Promise<void> {
  const file = join(workDir, 'run.json');
  await writingTo('cannot write the run state', file, () =>
    writeFileAtomic(file, `${JSON.stringify(state, null, 2)}\n`),
  );
}

export async function readRunState(workDir: string): Promise<RunState> {
  try {
    return JSON.parse(await readFile(join(workDir, 'run.json'), 'utf8')) as RunState;
  } catch (err) {
    throw new ProductSyncError('PS_ERR_JOURNAL', `run state missing or unreadable in ${workDir}`, { cause: err });
  }
}

/** The run.json an earlier (killed) attempt of this run left, if any. */
export async function previousRunState(workDir: string): Promise<RunState | undefined> {
  return existsSync(join(workDir, 'run.json')) ? readRunState(workDir).catch(() => undefined) : undefined;
}
