/**
 * The outcomes of a row, in one place: every input row (or archive without a row) ends with exactly one of them in the
 * report (docs/reports.md "Outcomes").
 */

/** The outcomes of an input row (or of an archive without a row): docs/reports.md "Outcomes". */
export const OUTCOMES = [
  'created',
  'updated',
  'unchanged',
  'archived',
  'unarchived',
  'invalid',
  'failed',
  'skipped',
  'not_attempted',
  'valid',
  'duplicate_removed',
] as const;
/** The outcome of one input row (or of one archive without a row). */
export type Outcome = (typeof OUTCOMES)[number];

/** True for outcomes whose row goes to rejected.* (its source cells are kept), given the line has a row. */
export const isRejectedOutcome = (outcome: Outcome): boolean =>
  outcome === 'invalid' || outcome === 'failed' || outcome === 'not_attempted';

/** The outcome a row's planned action (sync/plan.ts `RowAction`) ends in once done (at once when nothing is sent). */
export const OUTCOME_OF_ACTION = {
  create: 'created',
  update: 'updated',
  unarchive: 'unarchived',
  unchanged: 'unchanged',
  skipped: 'skipped',
} as const satisfies Record<string, Outcome>;

/** Each outcome's key in summary.json `counts` (camelCase). */
export const COUNT_KEY = {
  created: 'created',
  updated: 'updated',
  unchanged: 'unchanged',
  archived: 'archived',
  unarchived: 'unarchived',
  invalid: 'invalid',
  failed: 'failed',
  skipped: 'skipped',
  not_attempted: 'notAttempted',
  valid: 'valid',
  duplicate_removed: 'duplicateRemoved',
} as const satisfies Record<Outcome, string>;
