// The issue breakdown's memory bounds (issue 24 item 1): value counters per entry, entries per run.
import { describe, expect, it } from 'vitest';
import {
  formatValues,
  IssueBreakdown,
  MAX_ENTRIES,
  TOP_VALUES,
  VALUE_CHARS,
  VALUE_COUNTERS,
} from '../src/pipeline/report/issue-breakdown.ts';
import type { Issue } from '../src/pipeline/types.ts';

const gtinIssue = (row: number, value: string | null, code = 'GTIN_CHECK_DIGIT', column = 'EAN'): Issue => ({
  row,
  column,
  field: 'gtin',
  value,
  code,
  severity: 'error',
  message: 'wrong check digit',
});

describe('IssueBreakdown', () => {
  it('many distinct values: at most ten shown, marked approximate, the frequent ones found within the error bound', () => {
    const b = new IssueBreakdown();
    let row = 2;
    // 10 000 rows: "hot" on every 10th row, "warm" on every 25th, the rest all distinct.
    for (let i = 0; i < 10_000; i++) {
      const value = i % 10 === 0 ? 'hot' : i % 25 === 0 ? 'warm' : `v${i}`;
      b.add(row++, [gtinIssue(row, value)]);
    }
    const [e] = b.entries();
    expect(e!.rows).toBe(10_000);
    expect(e!.values.length).toBeLessThanOrEqual(TOP_VALUES);
    expect(e!.approximate).toBe(true);
    const bound = e!.valueError!;
    expect(bound).toBeLessThanOrEqual(10_000 / VALUE_COUNTERS);
    // Space-Saving never under-counts a value it holds, and over-counts by at most the bound.
    const hot = e!.values.find((v) => v.value === 'hot')!;
    expect(e!.values[0]).toBe(hot);
    expect(hot.rows).toBeGreaterThanOrEqual(1000);
    expect(hot.rows).toBeLessThanOrEqual(1000 + bound);
    const warm = e!.values.find((v) => v.value === 'warm')!;
    expect(warm.rows).toBeGreaterThanOrEqual(200);
    expect(warm.rows).toBeLessThanOrEqual(200 + bound);
    expect(formatValues(e!)).toMatch(/^"hot" \(\d+\); "warm" \(\d+\);.* \(approximate, ±\d+\)$/);
  });

  it('counts a row once per code × column, leaves lines without a row out, truncates long values', () => {
    const b = new IssueBreakdown();
    b.add(2, [gtinIssue(2, 'a'), gtinIssue(2, 'b'), gtinIssue(2, 'x', 'GTIN_LENGTH')]);
    b.add(null, [gtinIssue(0, 'a')]);
    b.add(3, [gtinIssue(3, 'y'.repeat(VALUE_CHARS + 50))]);
    const entries = b.entries();
    expect(entries.map((e) => [e.code, e.rows, e.firstRows])).toEqual([
      ['GTIN_CHECK_DIGIT', 2, [2, 3]],
      ['GTIN_LENGTH', 1, [2]],
    ]);
    expect(entries[0]!.values.map((v) => v.value.length)).toEqual([1, VALUE_CHARS]);
    expect(entries[0]!.approximate).toBeUndefined();
  });

  it('past MAX_ENTRIES code × column pairs, further pairs are only counted, in a note', () => {
    const b = new IssueBreakdown();
    for (let c = 0; c < MAX_ENTRIES + 5; c++) b.add(2, [gtinIssue(2, 'v', 'GTIN_CHECK_DIGIT', `col${c}`)]);
    expect(b.entries()).toHaveLength(MAX_ENTRIES);
    const summary: { notes?: string[] } = {};
    b.fill(summary);
    expect(summary.notes).toEqual([
      `issues: 5 further code × column pairs (5 row issues) are not broken down, past the first ${MAX_ENTRIES}`,
    ]);
  });
});
