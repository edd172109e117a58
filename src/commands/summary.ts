import { limitedLine } from '../pipeline/report/api-figures.ts';
import type { IssueBreakdownEntry } from '../pipeline/report/issue-breakdown.ts';
import { inIssueOrder } from '../pipeline/report/issue-order.ts';
import type { RunResult } from '../pipeline/run/run.ts';
import type { Scorecard } from '../pipeline/report/scorecard.ts';
import { textTable } from './text-table.ts';

/** Lines of the issue table at the end of a summary (issues.csv has them all). */
const TOP_ISSUES = 10;
/** Characters of a value shown in the table and the hint. */
const SHOWN_VALUE_CHARS = 40;

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
          `  rows ${c.rows}: created ${c.created}, updated ${c.updated}, unchanged ${c.unchanged}, unarchived ${c.unarchived}, archived ${c.archived}, invalid ${c.invalid}, failed ${c.failed}, skipped ${c.skipped}, not attempted ${c.notAttempted}${c.duplicateRemoved ? `, duplicates removed ${c.duplicateRemoved}` : ''}`,
        ];
  if (summary.scope)
    lines.push(
      `  scope: ${summary.scope.text}${summary.scope.items !== null ? ` (${summary.scope.items} items, ${summary.scope.active ?? '?'} active)` : ''}`,
    );
  if (summary.withheld) {
    lines.push(`  WITHHELD: ${summary.withheld.message}`);
    for (const w of summary.withheld.rows.slice(0, 5))
      lines.push(
        `    row ${w.row} ${w.value === null ? '(empty key)' : JSON.stringify(w.value)}: ${w.items} item(s)${w.withheld.length > 0 ? ` — ${w.withheld.map((i) => i.gtin ?? i.tradeItemId).join(', ')}` : ''}`,
      );
    if (summary.withheld.rows.length > 5)
      lines.push(`    … ${summary.withheld.rows.length - 5} more row(s) in summary.json "withheld"`);
  }
  lines.push(`  requests: reference ${summary.requests.reference}, product ${summary.requests.product}`);
  const aborted = (summary as { aborted?: string }).aborted;
  if (summary.held) lines.push(`  HELD: ${summary.held.message}`);
  else if (aborted) lines.push(`  ABORTED: ${aborted}`);
  const limited = limitedLine(summary.api);
  if (limited) lines.push(limited);
  lines.push(...issueLines(summary.issues ?? [], c.rows));
  if (summary.scorecard) lines.push(scorecardLine(summary.scorecard));
  lines.push(`  report: ${result.reportDir}`, `  exit code ${result.exitCode}`);
  return lines.join('\n');
}

/**
 * The scorecard in one line: `scorecard: 84/100, grade B (validity 97, completeness 71, timeliness –, stability 100)`.
 */
export function scorecardLine(s: Scorecard): string {
  const part = (v: number | null) => (v === null ? '–' : String(Math.round(v)));
  const parts = (Object.keys(s.parts) as (keyof Scorecard['parts'])[]).map((p) => `${p} ${part(s.parts[p])}`);
  const cap = s.capped ? `; capped at ${s.capped}: ${Math.round(s.validity.invalidShare * 100)} % of rows invalid` : '';
  return `  scorecard: ${s.score}/100, grade ${s.grade} (${parts.join(', ')}${cap})`;
}

const shown = (v: string) => JSON.stringify(v.length > SHOWN_VALUE_CHARS ? `${v.slice(0, SHOWN_VALUE_CHARS)}…` : v);

/**
 * The issues as a small table, errors first (issue-order.ts), and for each code × column failing more than half the
 * rows a hint that the mapping, more than the data, is wrong (a whole column rejected usually is the wrong column).
 */
export function issueLines(given: readonly IssueBreakdownEntry[], rows: number): string[] {
  if (given.length === 0) return [];
  const issues = inIssueOrder(given);
  const top = issues.slice(0, TOP_ISSUES);
  const table = textTable(
    ['rows', 'code', 'column', 'field', 'first rows', 'values', 'rule'],
    top.map((e) => [
      String(e.rows),
      e.code,
      e.column ?? '',
      e.field ?? '',
      e.firstRows.join(' '),
      e.values
        .slice(0, 3)
        // Approximate counts (issue-breakdown.ts) are upper bounds of the true ones.
        .map((v) => `${shown(v.value)} (${e.approximate ? '≤' : ''}${v.rows})`)
        .join(', '),
      e.rule ?? '',
    ]),
  );
  const more = issues.length > TOP_ISSUES ? ` (top ${TOP_ISSUES} of ${issues.length}, all in issues.csv)` : '';
  const out = [`  issues by code and column, errors first${more}:`, ...table.split('\n').map((l) => `    ${l}`)];
  for (const e of issues) {
    if (e.rows * 2 <= rows || e.column === null || e.severity !== 'error') continue;
    const samples = e.values.slice(0, 2).map((v) => shown(v.value));
    out.push(
      `  Likely a mapping problem: ${e.rows} of ${rows} rows fail ${e.code} on column ${JSON.stringify(e.column)}` +
        `${e.field ? ` (field ${e.field})` : ''}${samples.length > 0 ? `, e.g. ${samples.join(', ')}` : ''}` +
        ` — check the mapping's column${e.field ? ` for ${e.field}` : ''}.`,
    );
  }
  return out;
}
