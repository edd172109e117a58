import { describe, expect, it } from 'vitest';
import { ColumnStats, DistinctCounter, EXACT_LIMIT } from '../src/pipeline/run/column-stats.ts';

describe('column counts for OpenLineage (column-stats.ts)', () => {
  it('counts distinct values exactly up to the limit, then estimates them within a few percent', () => {
    const small = new DistinctCounter();
    for (let i = 0; i < 3 * EXACT_LIMIT; i++) small.add(`v${i % EXACT_LIMIT}`);
    expect(small.count).toBe(EXACT_LIMIT);
    expect(small.approximate).toBe(false);
    for (const n of [5_000, 200_000]) {
      const c = new DistinctCounter();
      for (let i = 0; i < n; i++) c.add(`0350${String(i).padStart(9, '0')}`);
      for (let i = 0; i < n; i += 3) c.add(`0350${String(i).padStart(9, '0')}`);
      expect(c.approximate).toBe(true);
      expect(Math.abs(c.count - n) / n).toBeLessThan(0.1);
    }
  });

  it('counts empty cells and distinct values of the mapped columns only', () => {
    const s = new ColumnStats(['GTIN', 'Name', 'Unmapped'], [0, 1, -1, 1]);
    s.add(['1', 'a', 'x']);
    s.add(['2', '', 'y']);
    s.add(['2', null, 'z']);
    s.add([3, 'a', 'z']);
    expect(s.toJSON()).toEqual({
      headers: ['GTIN', 'Name', 'Unmapped'],
      rows: 4,
      columns: {
        GTIN: { nullCount: 0, distinctCount: 3, approximate: false },
        Name: { nullCount: 2, distinctCount: 1, approximate: false },
      },
    });
  });
});
