import { describe, expect, it } from 'vitest';
import { parseMapping } from '../src/pipeline/map/mapping.ts';
import { Withholder } from '../src/pipeline/withheld.ts';

const base = 'target: tradeItem\ncolumns:\n  - { column: GTIN, field: gtin, type: gtin }\n';

describe('scope in a mapping', () => {
  it('takes brands, suppliers, gtinPrefixes or owner, and names the line of a wrong one', () => {
    expect(parseMapping(`${base}scope: owner\n`, 'm.yaml').scope).toBe('owner');
    expect(parseMapping(`${base}scope: { brands: [Alpha], gtinPrefixes: ["0376"] }\n`, 'm.yaml').scope).toEqual({
      brands: ['Alpha'],
      gtinPrefixes: ['0376'],
    });
    expect(() => parseMapping(`${base}scope: everything\n`, 'm.yaml')).toThrow(/m\.yaml:4: scope: scope is owner/);
    expect(() => parseMapping(`${base}scope: { suppliers: [acme] }\n`, 'm.yaml')).toThrow(/supplierCompanyId \(uuid\)/);
    expect(() => parseMapping(`${base}scope: {}\n`, 'm.yaml')).toThrow(/names brands, suppliers or gtinPrefixes/);
  });
});

describe('Withholder: unreadable keys never archive', () => {
  const item = (gtin: string) => ({ tradeItemId: `id-${gtin}`, gtin, key: gtin });
  it('withholds what an Excel-damaged number could stand for: same magnitude and leading digits', () => {
    const w = new Withholder([{ row: 2, text: '3.76E+12' }], 1, 'gtin', false);
    expect(w.withhold(item('03760001234567'))).toBe(true);
    expect(w.withhold(item('03755000000000'))).toBe(true);
    expect(w.withhold(item('03790001234567'))).toBe(false);
    expect(w.withhold(item('37600012345670'))).toBe(false);
    expect(w.summary()).toMatchObject({ count: 2, all: false, rows: [{ row: 2, items: 2 }] });
  });
  it('withholds the item a wrong check digit is one digit or one swap away from, not the others', () => {
    const w = new Withholder([{ row: 3, text: '3760001234568' }], 1, 'gtin', false);
    expect(w.withhold(item('03760001234567'))).toBe(true); // the check digit
    expect(w.withhold(item('03760001235468'))).toBe(true); // a swap
    expect(w.withhold(item('03760001299999'))).toBe(false);
  });
  it('withholds everything for an empty key, and nothing when lifted', () => {
    const all = new Withholder([{ row: 4, text: null }], 1, 'gtin', false);
    expect(all.withhold(item('04000000000000'))).toBe(true);
    expect(all.summary()).toMatchObject({ all: true, count: 1 });
    const lifted = new Withholder([{ row: 4, text: null }], 1, 'gtin', true);
    expect(lifted.withhold(item('04000000000000'))).toBe(false);
    expect(lifted.summary()).toMatchObject({ count: 0, all: false });
    expect(new Withholder([], 0, 'gtin', false).summary()).toBeUndefined();
  });
});
