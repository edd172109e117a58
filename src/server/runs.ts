/**
 * A run as the console's API shows it. One `id` from queued to done: the import job's id. The run directory's name
 * (run-state.ts runIdFor, `<sheet>-<hash>[-rN]`) is another id, known only once the worker has prepared the run: the
 * runs list used to show the job id while queued and that name once done, so a run seemed to change its id. Here the
 * directory's name is only `reportDir`, and the job id is the one every route takes.
 */
import { basename } from 'node:path';
import type { IssueBreakdownEntry } from '../pipeline/report/issue-breakdown.ts';
import { inIssueOrder } from '../pipeline/report/issue-order.ts';
import type { RunSummary } from '../pipeline/report/report.ts';
import type { RunStatus } from '../queue/enqueue.ts';

/** What a run is, in the console's words. */
export type RunState = 'queued' | 'running' | 'done' | 'failed' | 'aborted' | 'held';

/** How many issue lines a run shows (issues.csv and summary.json hold them all). */
export const TOP_ISSUES = 5;

/** A run of the API (`GET /runs`, `GET /runs/:id`). */
export interface ApiRun {
  id: string;
  /** The file the run imported (an upload's original name; a feed run's file, never the feed's name). */
  fileName: string;
  origin: string;
  /** A feed run's feed (null otherwise). */
  feed: string | null;
  mapping: string;
  /** The scope the run kept to (full runs, reconcile) and what it withheld from archiving. */
  scope: RunSummary['scope'] | null;
  withheld: RunSummary['withheld'] | null;
  /** Its quality gate held it (status held): the gate, the measured share, the rules that held it; nothing written. */
  held: RunSummary['held'] | null;
  queuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  status: RunState;
  progress: unknown;
  counts: RunSummary['counts'] | null;
  exitCode: number | null;
  /** The first issue lines of summary.json's breakdown (errors first, then most rows), and how many lines it has. */
  issues: IssueBreakdownEntry[];
  issueLines: number;
  /** Why it failed or was aborted, in words. */
  reason: string | null;
  /** The report files it wrote (`/runs/:id/files/<name>`). */
  files: string[];
  /** The run directory's name under REPORT_DIR (not an id the routes take). */
  reportDir: string | null;
  rerun: string | null;
  /** A held run: the route that queues it again with its gate waived (POST; the console's Apply anyway). */
  apply: string | null;
}

function stateOf(s: RunStatus): RunState {
  if (s.state === 'completed') {
    const r = s.result;
    if (r?.summary.held) return 'held';
    return r && (r.exitCode === 3 || r.summary.aborted) ? 'aborted' : 'done';
  }
  if (s.state === 'failed') return 'failed';
  if (s.state === 'active' || s.state === 'waiting-children') return 'running';
  return 'queued';
}

/** A mapping as the console names it: its file name without folder and extension. */
export const mappingName = (m: string): string => basename(m).replace(/\.(ya?ml|json)$/i, '');

/** The runs list's filters (`GET /runs?feed=&mapping=&file=`): each given one must match (file: part of the name). */
export interface RunFilter {
  feed?: string;
  mapping?: string;
  file?: string;
}

/** Does a run pass the filter? Feed and mapping exactly, the file name by a part of it (case ignored). */
export function runMatches(r: ApiRun, f: RunFilter): boolean {
  if (f.feed !== undefined && r.feed !== f.feed) return false;
  if (f.mapping !== undefined && r.mapping !== mappingName(f.mapping)) return false;
  if (f.file !== undefined && !r.fileName.toLowerCase().includes(f.file.toLowerCase())) return false;
  return true;
}

/** The API's view of a job's status. */
export function apiRun(s: RunStatus): ApiRun {
  const summary = s.result?.summary;
  const status = stateOf(s);
  return {
    id: s.id,
    fileName: s.fileName ?? basename(s.file),
    origin: s.origin,
    feed: s.feed ?? null,
    mapping: mappingName(s.mapping),
    scope: summary?.scope ?? null,
    withheld: summary?.withheld ?? null,
    held: summary?.held ?? null,
    queuedAt: s.createdAt,
    // The run's own start once it has one (a parent job is taken again after its chunks: processedOn moves).
    startedAt: summary?.startedAt ?? s.processedAt,
    finishedAt: summary?.finishedAt ?? s.finishedAt,
    status,
    progress: s.progress,
    counts: summary?.counts ?? null,
    exitCode: s.result?.exitCode ?? null,
    issues: inIssueOrder(summary?.issues ?? []).slice(0, TOP_ISSUES),
    issueLines: summary?.issues?.length ?? 0,
    reason: summary?.aborted ?? s.failedReason,
    files: (s.result?.files ?? []).map((f) => basename(f)),
    reportDir: s.result?.runId ?? null,
    rerun: status === 'queued' || status === 'running' ? null : `/runs/${s.id}/rerun`,
    apply: status === 'held' ? `/runs/${s.id}/apply` : null,
  };
}
