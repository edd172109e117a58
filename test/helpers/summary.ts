// Parts of a run's summary.json for the tests of what reads or writes one.
import type { RunSummary } from '../../src/pipeline/report/report.ts';

/** A run's `counts`: every outcome 0 but those given. */
export function runCounts(counts: Partial<RunSummary['counts']> & { rows: number }): RunSummary['counts'] {
  return {
    created: 0,
    updated: 0,
    unchanged: 0,
    archived: 0,
    unarchived: 0,
    invalid: 0,
    failed: 0,
    skipped: 0,
    notAttempted: 0,
    valid: 0,
    ...counts,
  };
}

/**
 * A hand-built summary.json of a run of `counts.rows` rows ({@link runCounts}): an upsert of in.csv run on
 * 2026-01-01 that sent nothing and exited 0, but for what `over` says.
 */
export function runSummary(
  counts: Partial<RunSummary['counts']> & { rows: number },
  over: Partial<RunSummary> = {},
): RunSummary {
  return {
    runId: 'run-1',
    source: { file: 'in.csv', sha256: 'abc', rows: counts.rows },
    mapping: 'm',
    mode: 'upsert',
    dryRun: false,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:01:00.000Z',
    counts: runCounts(counts),
    requests: { reference: 0, product: 0 },
    exitCode: 0,
    ...over,
  };
}
