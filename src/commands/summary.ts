import type { RunResult } from '../pipeline/run/run.ts';

/** A person-readable summary of a finished run: counts, exit code and where the reports are. */
export function formatSummary(result: RunResult): string {
  const { summary } = result;
  const c = summary.counts;
  const r = summary.reconcile;
  const lines = r
    ? [
        `reconcile ${summary.runId} — ${summary.source.file}, mapping ${summary.mapping} (nothing was written)`,
        `  rows ${c.rows}: in sync ${r.inSync}, differ ${r.differs}, missing in the API ${r.missingInApi}, invalid ${c.invalid}; items missing from the sheet ${r.missingInSheet}`,
      ]
    : result.kind === 'validate'
      ? [
          `validate ${summary.runId} — ${summary.source.file}, mapping ${summary.mapping} (nothing was sent)`,
          `  rows ${c.rows}: valid ${c.valid}, invalid ${c.invalid}`,
        ]
      : [
          `run ${summary.runId}${summary.dryRun ? ' (dry run: nothing was written)' : ''} — ${summary.source.file}, mapping ${summary.mapping}, mode ${summary.mode}`,
          `  rows ${c.rows}: created ${c.created}, updated ${c.updated}, unchanged ${c.unchanged}, unarchived ${c.unarchived}, archived ${c.archived}, invalid ${c.invalid}, failed ${c.failed}, skipped ${c.skipped}, not attempted ${c.notAttempted}`,
        ];
  lines.push(`  requests: reference ${summary.requests.reference}, product ${summary.requests.product}`);
  const aborted = (summary as { aborted?: string }).aborted;
  if (aborted) lines.push(`  ABORTED: ${aborted}`);
  lines.push(`  report: ${result.reportDir}`, `  exit code ${result.exitCode}`);
  return lines.join('\n');
}
