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
