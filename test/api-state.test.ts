import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { useSandboxClients } from './helpers/sandbox.ts';
import type { ProductClient } from '../src/api/product-client.ts';
import {
  openApiState,
  PAGE_SIZE,
  SpillIndex,
  type ApiStateSource,
  type StateProduct,
} from '../src/pipeline/sync/api-state.ts';
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';
import type { ApiState } from '../src/pipeline/sync/plan.ts';
import { testGtin } from './helpers/sheets.ts';

const owner = DEMO_COMPANY_ID;
const SUPPLIER_A = '11111111-1111-4111-8111-111111111111';
const SUPPLIER_B = '22222222-2222-4222-8222-222222222222';
const N = 1200;
const { sandbox, clients } = useSandboxClients();

/**
 * The sandbox's catalogue: N items with GTIN-14s (item 7 archived; items 10 and 11 have a duplicate; item 12 stored as
 * GTIN-13), manufactured items for the first 100.
 */
function seed(): { gtins: string[]; dup11: string } {
  const store = sandbox.handle.store;
  store.reset();
  const gtins: string[] = [];
  const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
  for (let i = 0; i < N; i++) {
    const g = testGtin(i).padStart(14, '0');
    gtins.push(g);
    store.tradeItems.set(id(i), {
      tradeItemId: id(i),
      ownerCompanyId: owner,
      archived: i === 7,
      fields: {
        gtin: i === 12 ? g.slice(1) : g,
        tradeItemName: `Biscuits au beurre ${i}`,
        netContents: [{ value: 100 + i, unitOfMeasure: 'g' }],
        brandId: null,
        productRange: 'Biscuits',
      },
    });
  }
  // Item 10's duplicate (made by another tool) comes first and is archived: the active one is kept.
  // Item 11's duplicate is active too, and comes after: the first one is kept.
  const put = (tradeItemId: string, archived: boolean, fields: { gtin?: string; tradeItemName?: string }, o = owner) =>
    store.tradeItems.set(tradeItemId, { tradeItemId, ownerCompanyId: o, archived, fields });
  const dup11 = id(900_001);
  put(dup11, false, { gtin: gtins[11], tradeItemName: 'Duplicate of 11' });
  const reorder = [...store.tradeItems.entries()];
  store.tradeItems.clear();
  put(id(900_002), true, { gtin: gtins[10], tradeItemName: 'Old 10' });
  for (const [k, v] of reorder) store.tradeItems.set(k, v);
  // Another owner's item with a sheet GTIN must never show.
  put(id(950_000), false, { gtin: gtins[0] }, '33333333-3333-4333-8333-333333333333');
  for (let i = 0; i < 100; i++) {
    for (const [s, sup] of [SUPPLIER_A, SUPPLIER_B].entries()) {
      if (s === 1 && i % 2 === 1) continue;
      const mid = `10000000-0000-4000-8000-${String(i * 2 + s).padStart(12, '0')}`;
      store.manufacturedItems.set(mid, {
        manufacturedItemId: mid,
        tradeItemId: id(i),
        supplierCompanyId: sup,
        fields: { manufacturedItemName: `M ${i} ${s}` },
      });
    }
  }
  return { gtins, dup11 };
}

/** The product client behind a server that caps Take at `cap`. */
function capped(product: ProductClient, cap: number): StateProduct {
  const clamp = <Q extends Record<string, string | number>>(q: Q): Q => ({
    ...q,
    ...(q.Take !== undefined ? { Take: Math.min(Number(q.Take), cap) } : {}),
  });
  return {
    searchTradeItems: (q) => product.searchTradeItems(clamp(q)),
    searchManufacturedItems: (q) => product.searchManufacturedItems(clamp(q)),
  };
}

const searches = () => {
  const c = sandbox.handle.counts().byRoute;
  return Object.entries(c)
    .filter(([r]) => /GET .*(tradeitems|manufactureditems)/i.test(r))
    .reduce((n, [, v]) => n + v, 0);
};

const plain = (s: ApiState) => ({
  tradeItems: Object.fromEntries([...s.tradeItems].sort(([a], [b]) => a.localeCompare(b))),
  manufacturedItems: Object.fromEntries([...s.manufacturedItems].sort(([a], [b]) => a.localeCompare(b))),
});

async function withSource<T>(
  opts: Partial<Parameters<typeof openApiState>[0]>,
  use: (s: ApiStateSource, dir: string) => Promise<T>,
): Promise<T> {
  const dir = mkdtempSync(join(tmpdir(), 'ps-api-state-'));
  const source = await openApiState({
    product: clients.product,
    owner,
    target: 'tradeItem',
    key: 'gtin',
    dir,
    sheetKeys: 3,
    needIndex: false,
    ...opts,
  });
  try {
    return await use(source, dir);
  } finally {
    await source.close();
  }
}

describe('openApiState', () => {
  it('picks search for 3 keys against 1 200 items and index for 1 000 keys, by cost', async () => {
    seed();
    const before = searches();
    await withSource({ sheetKeys: 3 }, async (s) => {
      expect(s.strategy).toBe('search');
      expect(s.catalog).toEqual({ total: N + 2, active: null, pages: 3 });
      expect(searches() - before).toBe(1); // only the first page
    });
    await withSource({ sheetKeys: 1000 }, async (s, dir) => {
      expect(s.strategy).toBe('index');
      // 1 202 records, 1 200 GTINs: item 7 archived, the duplicates collapse to their kept record.
      expect(s.catalog).toEqual({ total: N + 2, active: N - 1, pages: 3 });
      expect(readdirSync(join(dir, 'catalog'))).toEqual(['trade-items.jsonl']);
    });
    await withSource({ sheetKeys: 3, needIndex: true }, async (s) => expect(s.strategy).toBe('index'));
    await withSource({ sheetKeys: 3, key: 'tradeItemId' }, async (s) => expect(s.strategy).toBe('index'));
    // Manufactured items double the search cost and add their pages to the index: 3 keys → 6 < 4 × 2.
    await withSource({ sheetKeys: 3, target: 'manufacturedItem' }, async (s) => expect(s.strategy).toBe('search'));
    await withSource({ sheetKeys: 5, target: 'manufacturedItem' }, async (s) => expect(s.strategy).toBe('index'));
  });

  it('both strategies return the same records for the same keys: archived item, duplicates, GTIN-13 stored, unknown key', async () => {
    const { gtins, dup11 } = seed();
    const keys = [gtins[0]!, gtins[7]!, gtins[10]!, gtins[11]!, gtins[500]!, gtins[1199]!, '00000000000017', gtins[0]!];
    const [viaSearch, viaIndex] = await Promise.all([
      withSource({ sheetKeys: 3 }, async (s) => (expect(s.strategy).toBe('search'), s.forKeys(keys))),
      withSource({ sheetKeys: 3, needIndex: true }, async (s) => (expect(s.strategy).toBe('index'), s.forKeys(keys))),
    ]);
    expect(viaSearch.complete).toBe(false);
    expect(viaIndex.complete).toBe(true);
    expect(plain(viaIndex)).toEqual(plain(viaSearch));
    expect([...viaIndex.tradeItems.keys()].sort()).toEqual(
      [gtins[0], gtins[7], gtins[10], gtins[11], gtins[500], gtins[1199]].sort(),
    );
    expect(viaIndex.tradeItems.get(gtins[7]!)?.archived).toBe(true);
    // active over the archived duplicate
    expect(viaIndex.tradeItems.get(gtins[10]!)?.tradeItemName).toBe('Biscuits au beurre 10');
    // first of two active ones
    expect(viaIndex.tradeItems.get(gtins[11]!)?.tradeItemName).toBe('Biscuits au beurre 11');
    expect(viaIndex.tradeItems.get(gtins[11]!)?.tradeItemId).not.toBe(dup11);
    expect(viaIndex.tradeItems.get(gtins[0]!)?.ownerCompanyId).toBe(owner);
  });

  it('the index finds a GTIN stored with fewer digits, and by tradeItemId', async () => {
    const { gtins } = seed();
    await withSource({ needIndex: true }, async (s) => {
      const st = await s.forKeys([gtins[12]!]);
      expect(st.tradeItems.get(gtins[12]!)?.gtin).toBe(gtins[12]!.slice(1));
    });
    await withSource({ key: 'tradeItemId' }, async (s) => {
      const ids = [
        '00000000-0000-4000-8000-000000000003',
        '00000000-0000-4000-8000-000000000007',
        '00000000-0000-4000-8000-999999999999',
      ];
      const st = await s.forKeys(ids);
      expect([...st.tradeItems.keys()].sort()).toEqual(ids.slice(0, 2));
      expect(st.tradeItems.get(ids[0]!)?.tradeItemName).toBe('Biscuits au beurre 3');
      // every record is its own key: all but item 7 and the archived duplicate
      expect(s.catalog.active).toBe(N + 2 - 2);
    });
  });

  it('missingFrom lists exactly the active items not in the sheet, streamed', async () => {
    const { gtins } = seed();
    const sheet = new Set(gtins.slice(0, 1150));
    await withSource({ needIndex: true, sheetKeys: sheet.size }, async (s) => {
      const missing = [];
      for await (const m of s.missingFrom((k) => sheet.has(k))) missing.push(m);
      expect(missing.map((m) => m.key)).toEqual(gtins.slice(1150).sort());
      for (const m of missing) {
        expect(m.record.archived).toBe(false);
        expect(m.tradeItemId).toBe(m.record.tradeItemId);
        expect(m.record.gtin).toBe(m.key);
      }
      // Dropping item 7 (archived), 10 (kept: active) and 11 from the sheet.
      const some = new Set(gtins);
      for (const i of [7, 10, 11]) some.delete(gtins[i]!);
      const listed = [];
      for await (const m of s.missingFrom((k) => some.has(k))) listed.push(m);
      expect(listed.map((m) => m.record.tradeItemName)).toEqual(['Biscuits au beurre 10', 'Biscuits au beurre 11']);
    });
    await withSource({ sheetKeys: 3 }, async (s) => {
      await expect(
        (async () => {
          for await (const m of s.missingFrom(() => false)) void m;
        })(),
      ).rejects.toThrow(/index/);
    });
  });

  it('target manufacturedItem: the manufactured items of the trade items found, the same by both strategies', async () => {
    const { gtins } = seed();
    const keys = [gtins[0]!, gtins[1]!, gtins[2]!, gtins[150]!];
    const [viaSearch, viaIndex] = await Promise.all([
      withSource(
        { sheetKeys: 3, target: 'manufacturedItem' },
        async (s) => (expect(s.strategy).toBe('search'), s.forKeys(keys)),
      ),
      withSource({ needIndex: true, target: 'manufacturedItem' }, async (s, dir) => {
        expect(readdirSync(join(dir, 'catalog')).sort()).toEqual(['manufactured-items.jsonl', 'trade-items.jsonl']);
        return s.forKeys(keys);
      }),
    ]);
    expect(plain(viaIndex)).toEqual(plain(viaSearch));
    const id = (i: number) => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
    expect([...viaIndex.manufacturedItems.keys()].sort()).toEqual(
      [
        `${id(0)}|${SUPPLIER_A}`,
        `${id(0)}|${SUPPLIER_B}`,
        `${id(1)}|${SUPPLIER_A}`,
        `${id(2)}|${SUPPLIER_A}`,
        `${id(2)}|${SUPPLIER_B}`,
      ].sort(),
    );
    expect(viaIndex.manufacturedItems.get(`${id(2)}|${SUPPLIER_B}`)?.manufacturedItemName).toBe('M 2 1');
  });

  it('a server that caps Take below 500 still pages completely', async () => {
    const { gtins } = seed();
    const dir = mkdtempSync(join(tmpdir(), 'ps-api-state-'));
    const s = await openApiState({
      product: capped(clients.product, 70),
      owner,
      target: 'manufacturedItem',
      key: 'gtin',
      dir,
      sheetKeys: 0,
      needIndex: true,
      concurrency: 3,
    });
    try {
      expect(PAGE_SIZE).toBe(500);
      expect(s.catalog).toEqual({ total: N + 2, active: N - 1, pages: Math.ceil((N + 2) / 70) });
      const st = await s.forKeys(gtins);
      expect(st.tradeItems.size).toBe(N);
      expect(st.manufacturedItems.size).toBe(150);
      let missing = 0;
      for await (const m of s.missingFrom(() => false)) missing += m.key ? 1 : 0;
      expect(missing).toBe(N - 1);
    } finally {
      await s.close();
    }
    expect(existsSync(join(dir, 'catalog'))).toBe(false); // the spill is removed on close
  });
});

describe('SpillIndex (the catalogue index)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ps-spill-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  type Rec = { k: number; archived: boolean; text: string };
  const keyOf = (r: Rec) => r.k;

  it('finds every record across page writes that arrive out of order, with growth past its first size', async () => {
    const idx = new SpillIndex(join(dir, 'grow.jsonl'), 4);
    await idx.open();
    try {
      const page = (from: number, n: number): Rec[] =>
        Array.from({ length: n }, (_, i) => ({
          k: 1e13 + (((from + i) * 7919) % 1000),
          archived: (from + i) % 5 === 0,
          text: `r${from + i}`,
        }));
      // Pages of 50 added in reverse order (as concurrent fetches may end), 1000 records: the index grows from 16.
      for (let from = 950; from >= 0; from -= 50) await idx.add(page(from, 50), from, keyOf);
      idx.seal();
      expect(idx.n).toBe(1000);
      for (let i = 0; i < 1000; i++) {
        const k = 1e13 + ((i * 7919) % 1000);
        const [a, b] = idx.range(k);
        expect(b - a).toBe(1);
        expect(idx.archivedAt(a)).toBe(i % 5 === 0);
        const [r] = await idx.read<Rec>([a]);
        expect(r).toEqual({ k, archived: i % 5 === 0, text: `r${i}` });
      }
      expect(idx.range(5)).toEqual([0, 0]);
      // Grown by a quarter at a time: 16 bytes an item, and some room left.
      expect(idx.bytes).toBeGreaterThanOrEqual(1000 * 16);
      expect(idx.bytes).toBeLessThanOrEqual(1000 * 16 * 1.25);
    } finally {
      await idx.close();
    }
  });

  it('sized once from the total: 16 bytes an item once sealed, sorted in place (sorted, reversed and shuffled API orders)', async () => {
    for (const [name, order] of [
      ['sorted', (i: number) => i],
      ['reversed', (i: number) => 4999 - i],
      ['shuffled', (i: number) => (i * 2654435761) % 5000],
    ] as const) {
      const idx = new SpillIndex(join(dir, `sized-${name}.jsonl`), 5000);
      await idx.open();
      try {
        const recs: Rec[] = Array.from({ length: 5000 }, (_, i) => ({
          k: 2e13 + order(i) * 3,
          archived: false,
          text: `${name}${i}`,
        }));
        for (let from = 0; from < 5000; from += 500) await idx.add(recs.slice(from, from + 500), from, keyOf);
        expect(idx.bytes).toBe(5000 * (16 + 4));
        idx.seal();
        expect(idx.bytes).toBe(5000 * 16);
        for (let i = 1; i < 5000; i++) expect(idx.keyAt(i)).toBeGreaterThan(idx.keyAt(i - 1));
        const back = await idx.read<Rec>([0, 2500, 4999]);
        expect(back.map((r) => r.k)).toEqual([2e13, 2e13 + 2500 * 3, 2e13 + 4999 * 3]);
      } finally {
        await idx.close();
      }
    }
  });

  it('keeps duplicates in API order, and reads records longer than 64 KiB and offsets past 4 GiB right', async () => {
    const idx = new SpillIndex(join(dir, 'long.jsonl'), 8);
    await idx.open();
    try {
      const big = 'é'.repeat(70_000); // 140 000 bytes in UTF-8: more than a 2-byte length holds
      await idx.add(
        [
          { k: 3, archived: false, text: 'second' },
          { k: 2, archived: false, text: big },
        ],
        10,
        keyOf,
      );
      await idx.add(
        [
          { k: 3, archived: true, text: 'first' },
          { k: 1, archived: false, text: 'one' },
        ],
        0,
        keyOf,
      );
      idx.seal();
      expect(idx.keyAt(0)).toBe(1);
      expect(idx.keyAt(1)).toBe(2);
      expect(idx.range(3)).toEqual([2, 4]);
      const recs = await idx.read<Rec>([3, 0, 1, 2]);
      expect(recs.map((r) => r.text)).toEqual(['second', 'one', big, 'first']);
      expect(idx.lengthAt(1)).toBe(Buffer.byteLength(JSON.stringify({ k: 2, archived: false, text: big }) + '\n'));
      expect(idx.archivedAt(2)).toBe(true);
    } finally {
      await idx.close();
    }
    // Offsets are 5 bytes: 2^32 and above come back whole (no 4 GiB file written: the packing alone is checked).
    const far = new SpillIndex(join(dir, 'far.jsonl'), 4) as unknown as {
      offLo: Uint32Array;
      offHi: Uint8Array;
      offsetAt(i: number): number;
    };
    for (const off of [0, 2 ** 32 - 1, 2 ** 32, 2 ** 32 + 12345, 2 ** 40 - 1]) {
      far.offLo[0] = off % 2 ** 32;
      far.offHi[0] = Math.floor(off / 2 ** 32);
      expect(far.offsetAt(0)).toBe(off);
    }
  });
});
