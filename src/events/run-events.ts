import { existsSync } from 'node:fs';
import { basename, join } from 'node:path';
import { redact } from '../redact.ts';
import type { RunSummary } from '../pipeline/report/report.ts';
import { inIssueOrder } from '../pipeline/report/issue-order.ts';
import { makeEvent, type ProductSyncEvent } from './catalog.ts';

/** Where a run came from, as its events tell it. */
export interface RunOrigin {
  /** The queued run's import job (absent for an inline run). */
  jobId?: string;
  origin?: string;
  feed?: string;
  /** The console's public address (PUBLIC_URL): the events link to the run's page and report files under it. */
  publicUrl?: string;
}

/** A finished run as its end event needs it (RunResult's fields). */
export interface EndedRun {
  runId: string;
  exitCode: number;
  summary: RunSummary;
  reportDir: string;
  kind?: string;
}

/** Issues shown in a run.finished event: the top of summary.json's breakdown. */
export const TOP_ISSUES = 5;

const ABORT_REASONS: Record<string, string> = {
  PS_ERR_ARCHIVE_GUARD: 'archive_guard',
  PS_ERR_LEASE_LOST: 'lease_lost',
  PS_ERR_RUN_INTERRUPTED: 'interrupted',
};

/** Why a run was aborted, as a word: archive_guard, lease_lost, interrupted, api (the API failed us) or other. */
export function abortReason(code: string | undefined): string {
  if (code && ABORT_REASONS[code]) return ABORT_REASONS[code];
  return code && /^PS_ERR_(HTTP_|CIRCUIT_|AUTH_)/.test(code) ? 'api' : 'other';
}

/**
 * The links of a queued run's end event: its page in the console (`/#run=<job id>`, the page the console opens it on)
 * and the report files it wrote (a file the run did not write, rejected.xlsx when every row went through, is left out).
 */
function links(o: RunOrigin, reportDir: string): Record<string, string> | undefined {
  if (!o.publicUrl || !o.jobId) return undefined;
  const base = o.publicUrl.replace(/\/+$/, '');
  const id = encodeURIComponent(o.jobId);
  const out: Record<string, string> = { run: `${base}/#run=${id}` };
  const files = { summary: 'summary.json', rows: 'rows.csv', rejected: 'rejected.xlsx', issues: 'issues.csv' };
  for (const [key, name] of Object.entries(files))
    if (existsSync(join(reportDir, name))) out[key] = `${base}/runs/${id}/files/${name}`;
  return out;
}

function common(o: RunOrigin): Record<string, unknown> {
  return { jobId: o.jobId, origin: o.origin, feed: o.feed };
}

/** run.started of a run known by its run id (an inline run, told at its end) or its job (a queued run). */
export function runStartedEvent(
  key: string,
  o: RunOrigin,
  run: { runId?: string; file: string; mapping: string; startedAt: string },
): ProductSyncEvent {
  return makeEvent(
    'run.started',
    key,
    { ...common(o), runId: run.runId, file: basename(run.file), mapping: run.mapping, startedAt: run.startedAt },
    new Date(run.startedAt),
  );
}

/** The end event of a run that wrote its report: run.finished (exit 0 or 1), else run.aborted. */
export function runEndEvent(result: EndedRun, o: RunOrigin): ProductSyncEvent {
  const s = result.summary;
  const base = {
    runId: result.runId,
    ...common(o),
    kind: result.kind ?? 'import',
    exitCode: result.exitCode,
    file: basename(s.source.file),
    mapping: s.mapping,
    mode: s.mode,
    dryRun: s.dryRun,
    startedAt: s.startedAt,
    finishedAt: s.finishedAt,
    counts: s.counts,
    // The part of the owner's catalogue the run kept to (full runs, reconcile), and what it withheld from archiving.
    ...(s.scope ? { scope: s.scope } : {}),
    ...(s.withheld ? { withheld: { count: s.withheld.count, all: s.withheld.all, message: s.withheld.message } } : {}),
    reportDir: result.reportDir,
    links: links(o, result.reportDir),
  };
  const at = new Date(s.finishedAt);
  // A run its quality gate held ended as planned (every row reported, nothing written): run.finished, status held.
  if (result.exitCode === 0 || result.exitCode === 1 || s.held) {
    const issues = inIssueOrder(s.issues ?? [])
      .slice(0, TOP_ISSUES)
      .map(({ code, rule, severity, column, field, rows }) => ({ code, rule, severity, column, field, rows }));
    const status = s.held ? 'held' : result.exitCode === 0 ? 'ok' : 'issues';
    return makeEvent(
      'run.finished',
      result.runId,
      {
        ...base,
        status,
        ...(s.held ? { held: s.held } : {}),
        issues,
        // The supplier scorecard's grade (docs/scorecard.md); summary.json has all of it.
        ...(s.scorecard
          ? { scorecard: { score: s.scorecard.score, grade: s.scorecard.grade, parts: s.scorecard.parts } }
          : {}),
      },
      at,
    );
  }
  return makeEvent(
    'run.aborted',
    result.runId,
    {
      ...base,
      reason: abortReason(s.abortCode),
      code: s.abortCode ?? null,
      message: s.aborted?.replace(/ \[PS_ERR_[A-Z_]+\]$/, '') ?? null,
    },
    at,
  );
}

/** run.failed: the run ended without a report (`key`: its job and queued time, or the inline command's attempt). */
export function runFailedEvent(
  key: string,
  o: RunOrigin,
  run: { runId?: string; file: string; mapping: string; isSourceLabel?: boolean },
  err: unknown,
): ProductSyncEvent {
  const e = err as { code?: unknown; message?: unknown };
  // The queue's final failure carries the code in its message (`… [PS_ERR_…]`, see src/queue/workers.ts).
  const m = /^(.*) \[(PS_ERR_[A-Z_]+)\]$/s.exec(String(e?.message ?? err));
  const code = typeof e?.code === 'string' && e.code.startsWith('PS_ERR_') ? e.code : (m?.[2] ?? null);
  return makeEvent('run.failed', key, {
    ...common(o),
    runId: run.runId,
    // A feed's source that could not be read: its label (`dir:…/*.csv`, the URL) names what failed, no file does.
    file: run.isSourceLabel ? run.file : basename(run.file),
    mapping: run.mapping,
    error: { code, message: redact(m?.[1] ?? String(e?.message ?? err)).slice(0, 2000) },
  });
}
