import { describe, expect, it } from 'vitest';
import { DraftResolver } from '../src/pipeline/resolve/resolve-drafts.ts';
import type { ReferenceResolver } from '../src/pipeline/resolve/reference-resolver.ts';
import type { Draft, Issue } from '../src/pipeline/types.ts';

/** A resolver whose brands exist once created, counting the requests, failing the names in `down` once each. */
function brandResolver(down: Set<string> = new Set()) {
  const brands = new Map<string, string>();
  const asked: string[] = [];
  const resolver = {
    languages: ['fr'],
    stats: {},
    resolveBrand: async (name: string, { create, lookOnly }: { create: boolean; lookOnly?: boolean }) => {
      asked.push(lookOnly ? `${name} (look only)` : name);
      await new Promise((r) => setTimeout(r, 1));
      if (down.delete(name)) throw new Error(`503 for ${name}`);
      const id = brands.get(name);
      if (id) return { brandId: id, created: false, archived: false };
      if (!create || lookOnly) return { brandId: null, created: false, wouldCreate: true };
      brands.set(name, `b-${brands.size + 1}`);
      return { brandId: brands.get(name)!, created: true, archived: false };
    },
  } as unknown as ReferenceResolver;
  return { resolver, asked };
}

const draft = (row: number, brand: string, issues: Issue[] = []): Draft => ({
  row,
  key: null,
  target: 'tradeItem',
  fields: {},
  clear: [],
  issues,
  source: [],
  lookups: [
    {
      field: 'brandId',
      segments: ['brandId'],
      column: 'Marque',
      values: [brand],
      array: false,
      lookup: { brand: { create: true } },
    },
  ],
});

describe('DraftResolver', () => {
  it('asks once per label for the run, sets every row, and reports the brand as created on the row that created it only', async () => {
    const { resolver, asked } = brandResolver();
    const r = new DraftResolver(resolver);
    const first = [draft(2, 'Alpha'), draft(3, 'Alpha'), draft(4, 'Beta')];
    const second = [draft(5, 'Alpha'), draft(6, 'Beta'), draft(7, 'Gamma')];
    await r.resolveChunk(first);
    await r.resolveChunk(second);
    expect(asked.sort()).toEqual(['Alpha', 'Beta', 'Gamma']);
    const all = [...first, ...second];
    expect(all.map((d) => d.fields.brandId)).toEqual(['b-1', 'b-1', 'b-2', 'b-1', 'b-2', 'b-3']);
    expect(all.map((d) => d.issues.map((i) => i.code))).toEqual([
      ['BRAND_CREATED'],
      [],
      ['BRAND_CREATED'],
      [],
      [],
      ['BRAND_CREATED'],
    ]);
    expect(all.every((d) => d.lookups === undefined)).toBe(true);
  });

  it('only looks up the brand of a row already rejected (no create), reports it, and asks again after a failed request', async () => {
    const { resolver, asked } = brandResolver(new Set(['Delta']));
    const r = new DraftResolver(resolver);
    const bad: Issue = {
      row: 2,
      column: 'GTIN',
      field: 'gtin',
      value: 'x',
      code: 'GTIN_CHECK_DIGIT',
      severity: 'error',
      message: 'bad',
    };
    const rejected = draft(2, 'Alpha', [bad]);
    await r.resolveChunk([rejected]);
    expect(asked).toEqual(['Alpha (look only)']);
    expect(rejected.fields.brandId).toBeUndefined();
    expect(rejected.issues.map((i) => i.code)).toEqual(['GTIN_CHECK_DIGIT', 'BRAND_WOULD_CREATE']);
    // The look-up's "would be created" is no answer for a valid row: it asks, and creates.
    const valid = draft(3, 'Alpha');
    await r.resolveChunk([valid]);
    expect(valid.fields.brandId).toBe('b-1');
    expect(valid.issues.map((i) => i.code)).toEqual(['BRAND_CREATED']);
    // A later rejected row takes the run's answer: the brand exists now.
    const later = draft(4, 'Alpha', [{ ...bad, row: 4 }]);
    await r.resolveChunk([later]);
    expect(later.issues.map((i) => i.code)).toEqual(['GTIN_CHECK_DIGIT']);
    asked.length = 0;
    await expect(r.resolveChunk([draft(5, 'Delta')])).rejects.toThrow(/503 for Delta/);
    const again = draft(6, 'Delta');
    await r.resolveChunk([again]);
    expect(asked).toEqual(['Delta', 'Delta']);
    expect(again.fields.brandId).toBe('b-2');
  });
});
