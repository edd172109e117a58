/**
 * The supplier scorecard of a run (summary.json `scorecard`, docs/scorecard.md): four parts, each 0–100 — validity
 * (share of rows valid), completeness (share of each mapped field filled, averaged), timeliness (the feed's `expect:`
 * deadline met) and stability (the sheet's columns as in the previous run, few rows created or archived) — weighted
 * into a score 0–100 and a grade A–E. Validity dominates: more than 20 % of rows invalid grades D at best, more than
 * 40 % E. A part that cannot be measured (no deadline, no previous run, no row) is left out and the others keep their
 * proportions. Pure: the tallies are scorecard-tally.ts, the previous run scorecard-history.ts.
 */
import { ruleIdOf as catalogueRuleOf } from '../../rule-catalogue.ts';

/** A grade, best first. */
export const GRADES = ['A', 'B', 'C', 'D', 'E'] as const;
export type Grade = (typeof GRADES)[number];

/** The lowest score of each grade but E (A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, E below). */
export const GRADE_FLOORS: Readonly<Record<Exclude<Grade, 'E'>, number>> = { A: 90, B: 80, C: 70, D: 60 };

/** The weights of the parts (their sum is 100). */
export const WEIGHTS = { validity: 55, completeness: 25, timeliness: 10, stability: 10 } as const;
export type ScorePart = keyof typeof WEIGHTS;

/**
 * Invalid shares that cap the grade: above `d` (20 %) a run grades D at best (its score at most 69), above `e` (40 %)
 * E (at most 59).
 */
export const INVALID_CAPS = { d: 0.2, e: 0.4 } as const;

/** Column changes that take the column half of stability to 0 (each change costs a quarter of it). */
export const COLUMN_CHANGES_TO_ZERO = 4;

/** The grade of a score. */
export function gradeOf(score: number): Grade {
  for (const g of ['A', 'B', 'C', 'D'] as const) if (score >= GRADE_FLOORS[g]) return g;
  return 'E';
}

/** The parts of a score, each 0–100, null when not measured. */
export type ScoreParts = Record<ScorePart, number | null>;

/**
 * The score (0–100, whole) of parts measured (each 0–100), and the cap an invalid share put on it. A run with no part
 * measured (no row, no deadline, no previous run) scores 0.
 */
export function scoreOf(parts: ScoreParts, invalidShare: number): { score: number; capped?: 'D' | 'E' } {
  let sum = 0;
  let weights = 0;
  for (const p of Object.keys(WEIGHTS) as ScorePart[]) {
    const v = parts[p];
    if (v === null) continue;
    sum += WEIGHTS[p] * Math.min(100, Math.max(0, v));
    weights += WEIGHTS[p];
  }
  let score = weights === 0 ? 0 : Math.round(sum / weights);
  if (invalidShare > INVALID_CAPS.e && score >= GRADE_FLOORS.D) return { score: GRADE_FLOORS.D - 1, capped: 'E' };
  if (invalidShare > INVALID_CAPS.d && score >= GRADE_FLOORS.C) return { score: GRADE_FLOORS.C - 1, capped: 'D' };
  score = Math.min(100, Math.max(0, score));
  return { score };
}

/** The rule an issue code is counted under in the scorecard's validity: the catalogue's (src/rule-catalogue.ts). */
export function ruleIdOf(code: string): string {
  return catalogueRuleOf({ code, field: null }) ?? code;
}

/** Rows with issues of one code (validity by rule). */
export interface ScorecardCode {
  code: string;
  /** The rule the code is counted under (ruleIdOf). */
  rule: string;
  severity: 'error' | 'warning';
  /** Distinct rows with the code. */
  rows: number;
}

/** One mapped field and how many rows filled it. */
export interface FieldFillEntry {
  field: string;
  /** The sheet column it was read from (null: none of its columns is in the sheet). */
  column: string | null;
  filled: number;
}

/** The scorecard of a run, as summary.json holds it. */
export interface Scorecard {
  score: number;
  grade: Grade;
  /** Each part 0–100, null when it could not be measured (left out of the score). */
  parts: ScoreParts;
  weights: typeof WEIGHTS;
  /** The grade was capped by the share of invalid rows (more than 20 %: D, more than 40 %: E). */
  capped?: 'D' | 'E';
  /** The feed the run came from (absent: not a feed's run). */
  feed?: string;
  /** The report's language (its scorecard file speaks it). */
  language: string;
  validity: { rows: number; invalid: number; invalidShare: number; codes: ScorecardCode[] };
  completeness: { fields: (FieldFillEntry & { share: number })[] };
  /** The feed's `expect:` deadline: met or missed; null when the run answers no deadline. */
  timeliness: { expected: boolean; met: boolean | null };
  stability: {
    /** The previous run of the same feed (else mapping) compared with; null when this is the first. */
    previousRunId: string | null;
    columnsAdded: string[];
    columnsRemoved: string[];
    columnsRenamed: { from: string; to: string }[];
    created: number;
    archived: number;
    /** (created + archived) / rows, at most 1. */
    churn: number;
  };
  /** The sheet's headers (the next run compares its own with them). */
  columns: string[];
}

/** What a scorecard is made of (scorecard-tally.ts counts it, the run and scorecard-history.ts add the rest). */
export interface ScorecardInput {
  rows: number;
  invalid: number;
  created: number;
  archived: number;
  codes: ScorecardCode[];
  fill: FieldFillEntry[];
  headers: string[];
  language: string;
  feed?: string;
  /** The feed's deadline, when the run answers one: met or missed. */
  deadline?: { met: boolean };
  /** The previous scorecard of the same feed or mapping, with its run id. */
  previous?: { runId: string; scorecard: Pick<Scorecard, 'columns' | 'completeness'> };
}

const pct = (n: number, of: number) => (of === 0 ? 0 : Math.round((1000 * n) / of) / 10);

/** The scorecard of a run. */
export function buildScorecard(i: ScorecardInput): Scorecard {
  const invalidShare = i.rows === 0 ? 0 : i.invalid / i.rows;
  const fields = i.fill.map((f) => ({ ...f, share: pct(f.filled, i.rows) }));
  const stability = stabilityOf(i);
  const parts: ScoreParts = {
    validity: i.rows === 0 ? null : pct(i.rows - i.invalid, i.rows),
    completeness:
      i.rows === 0 || fields.length === 0
        ? null
        : Math.round((10 * fields.reduce((s, f) => s + f.share, 0)) / fields.length) / 10,
    timeliness: i.deadline ? (i.deadline.met ? 100 : 0) : null,
    stability: stability.previousRunId === null ? null : stabilityPart(stability),
  };
  const { score, capped } = scoreOf(parts, invalidShare);
  return {
    score,
    grade: gradeOf(score),
    parts,
    weights: WEIGHTS,
    ...(capped ? { capped } : {}),
    ...(i.feed ? { feed: i.feed } : {}),
    language: i.language,
    validity: {
      rows: i.rows,
      invalid: i.invalid,
      invalidShare: Math.round(invalidShare * 10000) / 10000,
      codes: i.codes,
    },
    completeness: { fields },
    timeliness: { expected: Boolean(i.deadline), met: i.deadline ? i.deadline.met : null },
    stability,
    columns: i.headers,
  };
}

/** Stability 0–100: half the columns (each change a quarter of that half), half the rows not churned. */
export function stabilityPart(s: Scorecard['stability']): number {
  const changes = s.columnsAdded.length + s.columnsRemoved.length + s.columnsRenamed.length;
  const columns = Math.max(0, 1 - changes / COLUMN_CHANGES_TO_ZERO);
  return Math.round(1000 * (0.5 * columns + 0.5 * (1 - s.churn))) / 10;
}

/**
 * The columns and rows compared with the previous run: a field read from another column than last time, the old one
 * gone and the new one new, is a rename; other headers that came or went are added or removed.
 */
function stabilityOf(i: ScorecardInput): Scorecard['stability'] {
  const churn = i.rows === 0 ? 0 : Math.min(1, (i.created + i.archived) / i.rows);
  const base = { created: i.created, archived: i.archived, churn: Math.round(churn * 10000) / 10000 };
  const prev = i.previous;
  if (!prev) return { previousRunId: null, columnsAdded: [], columnsRemoved: [], columnsRenamed: [], ...base };
  const before = new Set(prev.scorecard.columns);
  const now = new Set(i.headers);
  const renamed: { from: string; to: string }[] = [];
  const earlier = new Map(prev.scorecard.completeness.fields.map((f) => [f.field, f.column]));
  for (const f of i.fill) {
    const from = earlier.get(f.field);
    if (!from || !f.column || from === f.column) continue;
    if (!now.has(from) && !before.has(f.column)) renamed.push({ from, to: f.column });
  }
  const renamedFrom = new Set(renamed.map((r) => r.from));
  const renamedTo = new Set(renamed.map((r) => r.to));
  return {
    previousRunId: prev.runId,
    columnsAdded: i.headers.filter((h) => h !== '' && !before.has(h) && !renamedTo.has(h)),
    columnsRemoved: prev.scorecard.columns.filter((h) => h !== '' && !now.has(h) && !renamedFrom.has(h)),
    columnsRenamed: renamed,
    ...base,
  };
}
