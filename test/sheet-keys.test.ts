import { describe, expect, it } from 'vitest';
import { BLOCK, SheetKeys } from '../src/pipeline/run/sheet-keys.ts';
import { testGtin } from './helpers/sheets.ts';

const g14 = (i: number) => testGtin(i).padStart(14, '0');

describe('SheetKeys', () => {
  it('blocks of 4 MiB of keys', () => {
    expect(BLOCK * 8).toBe(4 * 1024 * 1024);
  });

  for (const block of [1, 3, 7, 1000]) {
    it(`finds every key and the rows of duplicates across block boundaries (block ${block})`, () => {
      const keys = new SheetKeys(block);
      const rows = 50;
      // Row r has key r, except every 10th row, which repeats the key of row r - 9 (a block or more earlier).
      const keyOf = (r: number) => (r % 10 === 9 ? g14(r - 9) : g14(r));
      for (let r = 0; r < rows; r++) keys.add(r + 2, keyOf(r));
      keys.add(rows + 2, null);
      keys.finish();
      expect(keys.rows).toBe(rows + 1);
      expect(keys.distinct).toBe(rows - 5);
      expect(keys.duplicated).toBe(5);
      for (let r = 0; r < rows; r++) {
        expect(keys.has(keyOf(r))).toBe(true);
        const issue = keys.duplicateIssue(r + 2, keyOf(r), {});
        expect(issue !== undefined).toBe(r % 10 === 9 || r % 10 === 0);
      }
      for (let r = 0; r < rows; r++) if (r % 10 === 9) expect(keys.has(g14(r))).toBe(false);
      expect(keys.has(g14(1000))).toBe(false);
      // The duplicate names the other row, however many blocks apart.
      expect(JSON.stringify(keys.duplicateIssue(2 + 9, g14(0), {}))).toContain('2');
    });
  }

  it('keeps keys at the ends of the GTIN-14 range exact (numbers up to 10^14 - 1)', () => {
    const keys = new SheetKeys(2);
    const edge = ['00000000000000', '00000000000017', '99999999999994', '99999999999999', '12345678901231'];
    edge.forEach((k, i) => keys.add(i + 2, k));
    keys.finish();
    for (const k of edge) expect(keys.has(k)).toBe(true);
    expect(keys.has('99999999999998')).toBe(false);
    expect(keys.has('00000000000001')).toBe(false);
    expect(keys.distinct).toBe(edge.length);
  });

  it('other keys (tradeItemIds, long ones) go by their text, next to GTIN keys', () => {
    const keys = new SheetKeys(2);
    const long = 'x'.repeat(100_000);
    keys.add(2, 'A-1');
    keys.add(3, long);
    keys.add(4, g14(1));
    keys.add(5, 'A-1');
    keys.add(6, '1234567890123'); // 13 digits: a text key, not the number of a GTIN-14
    keys.finish();
    expect(keys.has(long)).toBe(true);
    expect(keys.has(long + 'y')).toBe(false);
    expect(keys.has('1234567890123')).toBe(true);
    expect(keys.has('01234567890123')).toBe(false);
    expect(keys.distinct).toBe(4);
    expect(keys.duplicated).toBe(1);
    expect(keys.duplicateIssue(5, 'A-1', {})).toBeDefined();
    expect(keys.duplicateIssue(3, long, {})).toBeUndefined();
  });

  it('a sheet of many duplicates keeps one entry a key', () => {
    const keys = new SheetKeys(4);
    for (let r = 0; r < 100; r++) keys.add(r + 2, g14(r % 3));
    keys.finish();
    expect(keys.distinct).toBe(3);
    expect(keys.duplicated).toBe(3);
    for (let i = 0; i < 3; i++) expect(keys.has(g14(i))).toBe(true);
    expect(keys.has(g14(3))).toBe(false);
  });

  it('an empty sheet, and has() before finish() says so', () => {
    const keys = new SheetKeys();
    keys.add(2, g14(1));
    expect(() => keys.has(g14(1))).toThrow(/before finish/);
    const empty = new SheetKeys().finish();
    expect(empty.distinct).toBe(0);
    expect(empty.has(g14(1))).toBe(false);
  });

  it('a large sheet: more than one full block', () => {
    const keys = new SheetKeys();
    const n = BLOCK + 1000;
    for (let r = 0; r < n; r++) keys.add(r + 2, String(10_000_000_000_000 + r * 7));
    keys.finish();
    expect(keys.distinct).toBe(n);
    expect(keys.duplicated).toBe(0);
    for (const r of [0, BLOCK - 1, BLOCK, BLOCK + 1, n - 1])
      expect(keys.has(String(10_000_000_000_000 + r * 7))).toBe(true);
    expect(keys.has(String(10_000_000_000_000 + 3))).toBe(false);
  });

  it('dropMembership frees the sorted keys: counts and duplicates stay, has() says it was dropped', () => {
    const keys = new SheetKeys(2);
    for (let r = 0; r < 10; r++) keys.add(r + 2, g14(r % 6));
    keys.add(12, 'T-1');
    expect(() => keys.dropMembership()).toThrow(/before finish/);
    keys.finish();
    keys.dropMembership();
    expect(keys.distinct).toBe(7);
    expect(keys.duplicated).toBe(4);
    expect(keys.duplicateIssue(2, g14(0), {})).toBeDefined();
    expect(keys.duplicateIssue(7, g14(5), {})).toBeUndefined();
    expect(() => keys.has(g14(0))).toThrow(/after dropMembership/);
    expect(() => keys.has('T-1')).toThrow(/after dropMembership/);
  });
});
