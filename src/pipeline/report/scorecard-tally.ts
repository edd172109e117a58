/**
 * The scorecard's validity by rule (scorecard.ts), tallied as the report's lines pass (run/assemble.ts), like the issue
 * breakdown: per issue code, the distinct rows having it — one counter per code, whatever the sheet's size.
 */
import type { Issue } from '../types.ts';
import { ruleIdOf, type ScorecardCode } from './scorecard.ts';

export class ValidityTally {
  readonly #codes = new Map<string, { rows: number; severity: 'error' | 'warning' }>();

  /** The issues of one line of the report (lines without a row, archives, are not the sheet's). */
  add(row: number | null, issues: readonly Issue[]): void {
    if (row === null || issues.length === 0) return;
    for (let n = 0; n < issues.length; n++) {
      const i = issues[n]!;
      let again = false;
      for (let p = 0; p < n && !again; p++) again = issues[p]!.code === i.code;
      if (again) continue;
      const c = this.#codes.get(i.code);
      if (c) {
        c.rows++;
        if (i.severity === 'error') c.severity = 'error';
      } else this.#codes.set(i.code, { rows: 1, severity: i.severity });
    }
  }

  /** Codes by rows, most first (then by code). */
  result(): ScorecardCode[] {
    return [...this.#codes]
      .map(([code, c]) => ({ code, rule: ruleIdOf(code), severity: c.severity, rows: c.rows }))
      .sort((a, b) => b.rows - a.rows || (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
  }
}
