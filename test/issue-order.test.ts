// Errors first (issue 39 item 5): every issue list a person reads puts errors before warnings, each by rows.
import { describe, expect, it } from 'vitest';
import { issueLines } from '../src/commands/summary.ts';
import { runEndEvent } from '../src/events/run-events.ts';
import { IssueBreakdown, type IssueBreakdownEntry } from '../src/pipeline/report/issue-breakdown.ts';
import { inIssueOrder } from '../src/pipeline/report/issue-order.ts';
import type { RunSummary } from '../src/pipeline/report/report.ts';
import type { RunStatus } from '../src/queue/enqueue.ts';
import { apiRun } from '../src/server/runs.ts';
import type { Issue } from '../src/pipeline/types.ts';

const issue = (row: number, code: string, severity: Issue['severity'], column = 'EAN'): Issue => ({
  row,
  column,
  field: 'gtin',
  value: 'x',
  code,
  severity,
  message: code,
});

/** 40 rows with a warning, 3 with one error, 7 with another. */
function breakdown(): IssueBreakdown {
  const b = new IssueBreakdown();
  for (let row = 2; row < 42; row++) {
    const issues = [issue(row, 'BRAND_WOULD_CREATE', 'warning', 'Marque')];
    if (row < 5) issues.push(issue(row, 'GTIN_CHECK_DIGIT', 'error'));
    if (row >= 30 && row < 37) issues.push(issue(row, 'FIELD_REQUIRED', 'error', 'Nom'));
    b.add(row, issues);
  }
  return b;
}

describe('errors first', () => {
  it('summary.json issues (and issues.csv, written from them): errors before warnings, each by rows', () => {
    const codes = breakdown()
      .entries()
      .map((e) => [e.code, e.rows]);
    expect(codes).toEqual([
      ['FIELD_REQUIRED', 7],
      ['GTIN_CHECK_DIGIT', 3],
      ['BRAND_WOULD_CREATE', 40],
    ]);
  });

  it('the CLI table, a summary written before the order (read back), and run.finished put errors first', () => {
    const entries = breakdown().entries();
    const old: IssueBreakdownEntry[] = [...entries].sort((a, b) => b.rows - a.rows);
    expect(old[0]!.code).toBe('BRAND_WOULD_CREATE');
    expect(inIssueOrder(old).map((e) => e.code)).toEqual(entries.map((e) => e.code));

    const table = issueLines(old, 40).join('\n');
    expect(table).toContain('errors first');
    expect(table.indexOf('FIELD_REQUIRED')).toBeLessThan(table.indexOf('BRAND_WOULD_CREATE'));
    expect(table.indexOf('GTIN_CHECK_DIGIT')).toBeLessThan(table.indexOf('BRAND_WOULD_CREATE'));

    const summary = {
      runId: 'r1',
      source: { file: '/tmp/sheet.csv', sha256: '', rows: 40 },
      mapping: 'm',
      finishedAt: '2026-11-28T10:00:00.000Z',
      startedAt: '2026-11-28T09:59:00.000Z',
      counts: { rows: 40 },
      issues: old,
    } as unknown as RunSummary;
    const event = runEndEvent({ runId: 'r1', exitCode: 1, summary, reportDir: '/tmp/r1' }, {});
    const shown = (event.data as { issues: { code: string }[] }).issues.map((i) => i.code);
    expect(shown).toEqual(['FIELD_REQUIRED', 'GTIN_CHECK_DIGIT', 'BRAND_WOULD_CREATE']);

    // The console's top issues (GET /runs/:id) of a run whose summary lists a warning first.
    const run = apiRun({
      id: 'j1',
      state: 'completed',
      origin: 'upload',
      file: '/tmp/sheet.csv',
      mapping: 'm',
      progress: null,
      createdAt: summary.startedAt,
      processedAt: summary.startedAt,
      finishedAt: summary.finishedAt,
      failedReason: null,
      result: { exitCode: 1, summary, files: [], reportDir: '/tmp/r1' },
    } as unknown as RunStatus);
    expect(run.issues.map((i) => i.code)).toEqual(['FIELD_REQUIRED', 'GTIN_CHECK_DIGIT', 'BRAND_WOULD_CREATE']);
  });
});
