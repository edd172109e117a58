// The links of a run's end event (issue 33, deliver 7): the run's page in the console, and only report files that
// exist.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runEndEvent } from '../src/events/run-events.ts';
import type { RunSummary } from '../src/pipeline/report/report.ts';
import { runCounts, runSummary } from './helpers/summary.ts';

const counts = runCounts({ rows: 2, created: 2 });

function ended(files: string[], exitCode = 0): { reportDir: string; summary: RunSummary } {
  const reportDir = mkdtempSync(join(tmpdir(), 'ps-run-events-'));
  for (const f of files) writeFileSync(join(reportDir, f), '');
  const summary = runSummary(counts, {
    runId: 'abc-123',
    source: { file: '/in/sheet.csv', sha256: 'x', rows: 2 },
    startedAt: '2026-11-28T09:00:00.000Z',
    finishedAt: '2026-11-28T09:00:01.000Z',
    requests: { reference: 0, product: 2 },
    exitCode,
  });
  return { reportDir, summary };
}

const origin = { jobId: 'import-1 2', origin: 'cli', publicUrl: 'https://console.example/' };

describe('run end event links', () => {
  it("link the run's console page, not the JSON API", () => {
    const { reportDir, summary } = ended(['summary.json', 'rows.csv', 'issues.csv']);
    const e = runEndEvent({ runId: 'abc-123', exitCode: 0, summary, reportDir }, origin);
    const links = e.data.links as Record<string, string>;
    expect(links.run).toBe('https://console.example/#run=import-1%202');
    expect(links.summary).toBe('https://console.example/runs/import-1%202/files/summary.json');
  });

  it('leave rejected out when the run rejected nothing, and link it when it did', () => {
    const clean = ended(['summary.json', 'rows.csv', 'issues.csv']);
    const ok = runEndEvent({ runId: 'abc-123', exitCode: 0, ...clean }, origin).data.links as Record<string, string>;
    expect(Object.keys(ok).sort()).toEqual(['issues', 'rows', 'run', 'summary']);
    const some = ended(['summary.json', 'rows.csv', 'issues.csv', 'rejected.xlsx', 'rejected.csv'], 1);
    const bad = runEndEvent({ runId: 'abc-123', exitCode: 1, ...some }, origin).data.links as Record<string, string>;
    expect(bad.rejected).toBe('https://console.example/runs/import-1%202/files/rejected.xlsx');
  });
});
