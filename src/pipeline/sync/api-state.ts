/**
 * The API's current records for a chunk of sheet keys, without holding the owner's catalogue in memory.
 *
 * Strategy rule (chosen once, in openApiState, by cost in "one-GTIN search" units):
 *   - open() always fetches the first trade-item page (Take 500; for target manufacturedItem also the first
 *     manufactured-item page): it tells the totals and the page size the server really gives.
 *   - search costs  S = sheetKeys × (1, or 2 for target manufacturedItem: the GTIN search + its manufactured items);
 *   - index costs   I = PAGE_WEIGHT × (remaining trade-item pages + remaining manufactured-item pages),
 *     a 500-item page weighing PAGE_WEIGHT (= 4) one-GTIN searches. Over loopback a page costs several searches (its
 *     records are serialized, sent and parsed; docs/performance.md has the figures); against a remote API the round
 *     trip weighs on both alike and brings the ratio down, hence 4. Re-measure against the real API and adjust
 *     PAGE_WEIGHT.
 *   - index when needIndex (full mode / reconcile), when the key is tradeItemId (the trade-item search has no
 *     TradeItemId filter), or when I ≤ S (a catalogue that fits in the first page is therefore always indexed: I = 0);
 *     search otherwise.
 *
 * Scope (src/pipeline/scope.ts, docs/scopes.md), for full mode and reconcile (needIndex): a scope naming brands (and a
 * gtin key) is read as its slice, the trade-item pages of each brand (BrandId filter; the manufactured items likewise),
 * and a sheet key the slice does not hold is searched by GTIN over the whole owner (an item of another brand is seen,
 * never created twice); any other scope reads the owner's pages. A scope naming suppliers first reads their
 * manufactured items (SupplierCompanyId filter) to know which trade items are theirs. Every record is then tested
 * against the scope on our side (gtinPrefixes have no API filter: the GTIN search is exact); catalog.scope counts the
 * scope's items and missingFrom yields only the scope's.
 *
 * index: every page is appended as JSON lines to <dir>/catalog/trade-items.jsonl (and manufactured-items.jsonl); memory
 * keeps only sorted typed arrays (key as a number, byte offset, length, archived flag: 16 bytes per item, SpillIndex),
 * and a chunk's records are read back with positional reads. GTIN-14 keys are exact numbers; tradeItemIds and
 * manufactured items (by trade item id) are indexed by a 52-bit hash, every candidate being checked against the record
 * read back.
 */
import { open, rm, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import type { ManufacturedItemRecord, SkipAndTakeQueryStats, TradeItemRecord } from '../../api/types.ts';
import { fileWriteError, writingTo } from '../../fs-errors.ts';
import { makeDir } from '../../make-dir.ts';
import { gtinKey } from '../gtin.ts';
import { recordInScope, type ResolvedScope } from '../scope.ts';
import { manufacturedKey, type ApiState, type ArchiveEntry } from './plan.ts';

export type StateStrategy = 'search' | 'index';

/** Weight of one full page request, in one-GTIN searches (see the rule above). */
export const PAGE_WEIGHT = 4;
/** Take asked for every page. */
export const PAGE_SIZE = 500;

/** The searches the source needs (a ProductClient, or the executor's ProductWriter). */
export interface StateProduct {
  searchTradeItems(
    query: { OwnerCompanyId: string } & Record<string, string | number>,
  ): Promise<{ tradeItems: TradeItemRecord[] | null; skipAndTakeQueryStats: SkipAndTakeQueryStats | null }>;
  searchManufacturedItems(query: { OwnerCompanyId: string } & Record<string, string | number>): Promise<{
    manufacturedItems: ManufacturedItemRecord[] | null;
    skipAndTakeQueryStats: SkipAndTakeQueryStats | null;
  }>;
}

export interface ApiStateSource {
  readonly strategy: StateStrategy;
  /**
   * Catalogue figures known after open(): the owner's trade items (total, from the first page), the active ones
   * (exact for 'index': distinct keys whose kept record is not archived — what the plan and the archive guard see;
   * null for 'search'), and the trade-item pages at the page size the server gives.
   */
  readonly catalog: {
    total: number;
    active: number | null;
    pages: number;
    /** Index strategy with a scope: the scope's items (archived included) and its active ones. */
    scope?: { items: number; active: number };
  };
  /**
   * Records of these keys (GTIN-14 strings, or tradeItemIds when key is 'tradeItemId'), plus, for target
   * manufacturedItem, the manufactured items of the trade items found.
   */
  forKeys(keys: readonly string[]): Promise<ApiState>;
  /**
   * Index strategy only: the owner's ACTIVE trade items whose key is not in the sheet (`inSheet(key)` false), streamed
   * in key order; only the scope's when opened with one.
   */
  missingFrom(inSheet: (key: string) => boolean): AsyncIterable<ArchiveEntry & { record: TradeItemRecord }>;
  /** Closes the spill files and removes them (unless keepFiles). */
  close(): Promise<void>;
}

export interface OpenApiStateOptions {
  product: StateProduct;
  owner: string;
  target: 'tradeItem' | 'manufacturedItem';
  key: 'gtin' | 'tradeItemId';
  /** Run directory: the index spills into <dir>/catalog/. */
  dir: string;
  /** Distinct valid keys of the sheet (known from a first pass). */
  sheetKeys: number;
  /** Full mode / reconcile: the complete catalogue is needed (missingFrom). */
  needIndex: boolean;
  /** Parallel requests (default 8). */
  concurrency?: number;
  signal?: AbortSignal;
  /** Keep <dir>/catalog/*.jsonl after close (debugging). */
  keepFiles?: boolean;
  /** With needIndex: the part of the catalogue the sheet covers (missingFrom and catalog.scope keep to it). */
  scope?: ResolvedScope;
}

type Page<T> = { items: T[]; total: number };
type Search<T> = (q: { OwnerCompanyId: string } & Record<string, string | number>) => Promise<Page<T>>;

/** Should a duplicate exist (made by another tool), keep the active one; otherwise the first seen (API order). */
function prefer<T extends { archived: boolean }>(map: Map<string, T>, key: string, rec: T): void {
  const prev = map.get(key);
  if (!prev || (prev.archived && !rec.archived)) map.set(key, rec);
}

/** 52-bit FNV-1a-style hash of a string, as an exact double (index of tradeItemIds). */
function hash52(s: string): number {
  let h1 = 0x811c9dc5;
  let h2 = 0x01000193;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    h1 = Math.imul(h1 ^ c, 0x01000193);
    h2 = Math.imul(h2 ^ c, 0x5bd1e995) ^ (h2 >>> 15);
  }
  return (h1 >>> 0) * 0x100000 + ((h2 >>> 0) & 0xfffff);
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw signal.reason instanceof Error ? signal.reason : new Error('aborted');
}

/** Runs `work` over `items` with at most `limit` in flight. */
async function pool<T>(
  items: readonly T[],
  limit: number,
  work: (item: T) => Promise<void>,
  signal?: AbortSignal,
): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(Math.max(1, limit), items.length) }, async () => {
      while (next < items.length) {
        throwIfAborted(signal);
        await work(items[next++]!);
      }
    }),
  );
}

/** Every record of a narrow search (one GTIN, one trade item): normally one page; pages on should a server cap Take. */
async function searchAll<T>(
  search: Search<T>,
  query: { OwnerCompanyId: string } & Record<string, string | number>,
  signal?: AbortSignal,
): Promise<T[]> {
  const first = await search({ ...query, Take: PAGE_SIZE });
  const out = [...first.items];
  while (first.items.length > 0 && out.length < first.total) {
    throwIfAborted(signal);
    const p = await search({ ...query, Skip: out.length, Take: PAGE_SIZE });
    if (p.items.length === 0) break;
    out.push(...p.items);
  }
  return out;
}

/** A record length at or above this is kept aside (a map by position): the arrays hold 2 bytes a length. */
const LONG = 0xffff;

/**
 * Sorted compact index over a JSONL spill file: per record a numeric key (8 bytes), byte offset (5 bytes: up to 1 TiB
 * of spill), byte length (2 bytes; the rare longer record in a side map), archived flag (1 byte) and, while building,
 * its position in the API's order (4 bytes; to keep the first of duplicates, as a flat scan would): 16 bytes an item
 * once sealed. The arrays are sized once from the catalogue's total (the first page tells it) and grow only should the
 * catalogue grow while it is paged (one array copied at a time); they are sorted in place, so the peak stays near the
 * arrays themselves (a rerun against a large catalogue holds little else).
 */
export class SpillIndex {
  private keys: Float64Array;
  private offLo: Uint32Array;
  private offHi: Uint8Array;
  private lens: Uint16Array;
  private arch: Uint8Array;
  private seqs: Uint32Array | null;
  /** Lengths ≥ LONG, by offset (which sorting leaves as it is). */
  private long = new Map<number, number>();
  n = 0;
  private end = 0;
  private fh: FileHandle | null = null;

  constructor(
    readonly file: string,
    capacity: number,
  ) {
    const c = Math.max(16, capacity);
    this.keys = new Float64Array(c);
    this.offLo = new Uint32Array(c);
    this.offHi = new Uint8Array(c);
    this.lens = new Uint16Array(c);
    this.arch = new Uint8Array(c);
    this.seqs = new Uint32Array(c);
  }

  async open(): Promise<void> {
    this.fh = await open(this.file, 'w+');
  }

  private grow(min: number): void {
    const c = Math.max(min, Math.ceil(this.keys.length * 1.25));
    const g = <A extends Float64Array | Uint32Array | Uint16Array | Uint8Array>(a: A, C: new (n: number) => A): A => {
      const b = new C(c);
      b.set(a.subarray(0, this.n));
      return b;
    };
    this.keys = g(this.keys, Float64Array);
    this.offLo = g(this.offLo, Uint32Array);
    this.offHi = g(this.offHi, Uint8Array);
    this.lens = g(this.lens, Uint16Array);
    this.arch = g(this.arch, Uint8Array);
    this.seqs = g(this.seqs!, Uint32Array);
  }

  /** Appends a page of records (positional write at a reserved range: pages may arrive in any order). */
  async add<T extends { archived?: unknown }>(
    records: readonly T[],
    firstSeq: number,
    keyOf: (r: T) => number | null,
    inScope?: (r: T) => boolean,
  ): Promise<void> {
    const bufs: Buffer[] = [];
    let size = 0;
    const base = this.end;
    for (let i = 0; i < records.length; i++) {
      const r = records[i]!;
      const k = keyOf(r);
      if (k === null) continue;
      const buf = Buffer.from(JSON.stringify(r) + '\n', 'utf8');
      if (this.n === this.keys.length) this.grow(this.n + 1);
      const off = base + size;
      if (off >= 2 ** 40) throw new Error(`${this.file}: the catalogue spill passed 1 TiB`);
      this.keys[this.n] = k;
      this.offLo[this.n] = off % 2 ** 32;
      this.offHi[this.n] = Math.floor(off / 2 ** 32);
      if (buf.length >= LONG) {
        this.lens[this.n] = LONG;
        this.long.set(off, buf.length);
      } else this.lens[this.n] = buf.length;
      // Bit 0: archived; bit 1: outside the run's scope.
      this.arch[this.n] = (r.archived ? 1 : 0) | (inScope && !inScope(r) ? 2 : 0);
      this.seqs![this.n] = firstSeq + i;
      this.n++;
      bufs.push(buf);
      size += buf.length;
    }
    if (size === 0) return;
    this.end += size;
    const all = Buffer.concat(bufs, size);
    // A write may take part of the bytes (the disk filled meanwhile): the rest goes on, or fails with the reason.
    for (let done = 0; done < size;) {
      const { bytesWritten } = await this.fh!.write(all, done, size - done, base + done);
      if (bytesWritten === 0)
        throw Object.assign(new Error(`ENOSPC: nothing written, write '${this.file}'`), {
          code: 'ENOSPC',
          syscall: 'write',
          path: this.file,
        });
      done += bytesWritten;
    }
  }

  /**
   * Sorts by (key, API order), in place: the arrays are swapped together by a quicksort of their own, so sealing
   * allocates nothing the size of the catalogue (a permutation sorted with a comparator, then each array copied
   * through it, held several times the keys' bytes at once at the end of paging). Then drops the build-only parts.
   */
  seal(): void {
    const { keys } = this;
    const seqs = this.seqs!;
    const less = (i: number, j: number) => keys[i]! < keys[j]! || (keys[i] === keys[j] && seqs[i]! < seqs[j]!);
    const swap = (i: number, j: number) => {
      let t = keys[i]!;
      keys[i] = keys[j]!;
      keys[j] = t;
      t = seqs[i]!;
      seqs[i] = seqs[j]!;
      seqs[j] = t;
      t = this.offLo[i]!;
      this.offLo[i] = this.offLo[j]!;
      this.offLo[j] = t;
      t = this.offHi[i]!;
      this.offHi[i] = this.offHi[j]!;
      this.offHi[j] = t;
      t = this.lens[i]!;
      this.lens[i] = this.lens[j]!;
      this.lens[j] = t;
      t = this.arch[i]!;
      this.arch[i] = this.arch[j]!;
      this.arch[j] = t;
    };
    // Ranges left to sort; the larger half is pushed and the smaller one sorted next, so the stack stays O(log n).
    const stack: number[] = [0, this.n - 1];
    while (stack.length > 0) {
      let hi = stack.pop()!;
      let lo = stack.pop()!;
      while (hi - lo > 16) {
        // Median of three as the pivot, moved to hi: sorted and reversed catalogues (API order by key) split evenly.
        const mid = lo + ((hi - lo) >>> 1);
        if (less(mid, lo)) swap(mid, lo);
        if (less(hi, lo)) swap(hi, lo);
        if (less(mid, hi)) swap(mid, hi);
        let store = lo;
        for (let i = lo; i < hi; i++) if (less(i, hi)) swap(i, store++);
        swap(store, hi);
        if (store - lo < hi - store) {
          stack.push(store + 1, hi);
          hi = store - 1;
        } else {
          stack.push(lo, store - 1);
          lo = store + 1;
        }
      }
      for (let i = lo + 1; i <= hi; i++) for (let j = i; j > lo && less(j, j - 1); j--) swap(j, j - 1);
    }
    this.seqs = null;
    // Trimmed to n only when the first page's total overstated the catalogue by much (items archived meanwhile…).
    if (this.keys.length - this.n > 1024 && this.keys.length > this.n * 1.1) {
      const trim = <A extends Float64Array | Uint32Array | Uint16Array | Uint8Array>(a: A): A =>
        a.slice(0, this.n) as A;
      this.keys = trim(this.keys);
      this.offLo = trim(this.offLo);
      this.offHi = trim(this.offHi);
      this.lens = trim(this.lens);
      this.arch = trim(this.arch);
    }
  }

  /** Byte offset of the record at position i. */
  offsetAt(i: number): number {
    return this.offHi[i]! * 2 ** 32 + this.offLo[i]!;
  }

  /** Byte length of the record at position i. */
  lengthAt(i: number): number {
    const len = this.lens[i]!;
    return len === LONG ? this.long.get(this.offsetAt(i))! : len;
  }

  /** Bytes held by the index arrays. */
  get bytes(): number {
    return (
      this.keys.byteLength +
      this.offLo.byteLength +
      this.offHi.byteLength +
      this.lens.byteLength +
      this.arch.byteLength +
      (this.seqs?.byteLength ?? 0) +
      this.long.size * 16
    );
  }

  /** First position whose key is ≥ k (sealed index). */
  lowerBound(k: number): number {
    let lo = 0;
    let hi = this.n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid]! < k) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Positions [from, to) holding key k. */
  range(k: number): [number, number] {
    const from = this.lowerBound(k);
    let to = from;
    while (to < this.n && this.keys[to] === k) to++;
    return [from, to];
  }

  keyAt(i: number): number {
    return this.keys[i]!;
  }

  archivedAt(i: number): boolean {
    return (this.arch[i]! & 1) === 1;
  }

  /** True when the record at i is outside the scope the index was built for. */
  outOfScopeAt(i: number): boolean {
    return (this.arch[i]! & 2) === 2;
  }

  /** Records at these positions, in the order given; nearby ranges are read together. */
  async read<T>(positions: readonly number[]): Promise<T[]> {
    const out = new Array<T>(positions.length);
    const order = positions.map((p, i) => [this.offsetAt(p), this.lengthAt(p), i] as const).sort((a, b) => a[0] - b[0]);
    const GAP = 16 * 1024;
    const MAX = 1024 * 1024;
    let i = 0;
    while (i < order.length) {
      const start = order[i]![0];
      let end = start + order[i]![1];
      let j = i + 1;
      while (j < order.length && order[j]![0] - end <= GAP && order[j]![0] + order[j]![1] - start <= MAX) {
        end = Math.max(end, order[j]![0] + order[j]![1]);
        j++;
      }
      const buf = Buffer.allocUnsafe(end - start);
      const { bytesRead } = await this.fh!.read(buf, 0, buf.length, start);
      if (bytesRead !== buf.length)
        throw new Error(`${this.file}: short read at ${start} (${bytesRead} of ${buf.length} bytes)`);
      for (let k = i; k < j; k++) {
        const [off, len, at] = order[k]!;
        out[at] = JSON.parse(buf.toString('utf8', off - start, off - start + len)) as T;
      }
      i = j;
    }
    return out;
  }

  async close(): Promise<void> {
    await this.fh?.close();
    this.fh = null;
  }
}

/** Opens the API state of an owner for a sheet: chooses search or index by cost (rule at the top of this file). */
/** Opens the API state of an owner for a sheet: chooses search or index by cost (rule at the top of this file). */
export async function openApiState(opts: OpenApiStateOptions): Promise<ApiStateSource> {
  const { product, owner, target, key, signal } = opts;
  const concurrency = opts.concurrency ?? 8;
  const manufactured = target === 'manufacturedItem';
  const tradeSearch: Search<TradeItemRecord> = (q) =>
    product.searchTradeItems(q).then((p) => ({
      items: p.tradeItems ?? [],
      total: p.skipAndTakeQueryStats?.totalCount ?? (p.tradeItems ?? []).length,
    }));
  const manuSearch: Search<ManufacturedItemRecord> = (q) =>
    product.searchManufacturedItems(q).then((p) => ({
      items: p.manufacturedItems ?? [],
      total: p.skipAndTakeQueryStats?.totalCount ?? (p.manufacturedItems ?? []).length,
    }));
  const searchKeys = keySearcher({ tradeSearch, manuSearch, owner, manufactured, concurrency, signal });

  // The scope (needIndex only): the slice read through the BrandId filter when it names brands and the key is a GTIN;
  // the suppliers' trade items through the SupplierCompanyId filter; everything else on our side (rule at the top).
  const scope = opts.needIndex && opts.scope && opts.scope.spec !== 'owner' ? opts.scope : null;
  const slice = scope?.brandIds && key === 'gtin' ? [...scope.brandIds] : null;
  let supplierItems: Set<string> | null = null;
  if (scope?.suppliers) {
    supplierItems = new Set();
    for (const s of scope.suppliers) {
      throwIfAborted(signal);
      for (const m of await pageAll(manuSearch, { OwnerCompanyId: owner, SupplierCompanyId: s }, concurrency, signal))
        if (typeof m.tradeItemId === 'string') supplierItems.add(m.tradeItemId.toLowerCase());
    }
  }
  const inScope = scope ? (t: TradeItemRecord) => recordInScope(t, scope, supplierItems) : undefined;
  const queries: Record<string, string>[] = slice ? slice.map((b) => ({ BrandId: b })) : [{}];

  throwIfAborted(signal);
  const firsts = await Promise.all(
    queries.map((q) =>
      Promise.all([
        tradeSearch({ OwnerCompanyId: owner, ...q, Skip: 0, Take: PAGE_SIZE }),
        manufactured ? manuSearch({ OwnerCompanyId: owner, ...q, Skip: 0, Take: PAGE_SIZE }) : Promise.resolve(null),
      ]),
    ),
  );
  // A server that caps Take below what was asked answers smaller pages: step by what it gave.
  const stepOf = (p: Page<unknown>) => (p.items.length > 0 && p.items.length < PAGE_SIZE ? p.items.length : PAGE_SIZE);
  const pagesOf = (p: Page<unknown>) => Math.max(1, Math.ceil(p.total / stepOf(p)));
  let tradePages = 0;
  let extraPages = 0;
  let total = 0;
  for (const [t, m] of firsts) {
    tradePages += pagesOf(t);
    extraPages += pagesOf(t) - 1 + (m ? pagesOf(m) - 1 : 0);
    total += t.total;
  }
  const searchCost = opts.sheetKeys * (manufactured ? 2 : 1);
  const indexCost = PAGE_WEIGHT * extraPages;
  const strategy: StateStrategy =
    opts.needIndex || key === 'tradeItemId' || indexCost <= searchCost ? 'index' : 'search';

  if (strategy === 'search')
    return {
      strategy: 'search',
      catalog: { total, active: null, pages: tradePages },
      forKeys: searchKeys,
      // eslint-disable-next-line require-yield
      async *missingFrom() {
        throw new Error('missingFrom needs the index strategy (open with needIndex: true)');
      },
      async close() {},
    };

  const dir = join(opts.dir, 'catalog');
  await writingTo('cannot write the catalogue index to', dir, () => makeDir(dir));
  const manuTotal = firsts.reduce((n, [, m]) => n + (m?.total ?? 0), 0);
  const trade = new SpillIndex(join(dir, 'trade-items.jsonl'), total + 64);
  const manu = manufactured ? new SpillIndex(join(dir, 'manufactured-items.jsonl'), manuTotal + 64) : null;
  const tradeKeyNum =
    key === 'gtin'
      ? (t: TradeItemRecord) => {
          const g = gtinKey(t.gtin);
          return g === null ? null : Number(g);
        }
      : (t: TradeItemRecord) => (typeof t.tradeItemId === 'string' ? hash52(t.tradeItemId.toLowerCase()) : null);
  const manuKeyNum = (m: ManufacturedItemRecord) =>
    typeof m.tradeItemId === 'string' ? hash52(m.tradeItemId.toLowerCase()) : null;
  try {
    await trade.open();
    await manu?.open();
    type Task = { q: Record<string, string>; skip: number; take: number; manu: boolean; base: number };
    const tasks: Task[] = [];
    // Each query's records are numbered after the previous queries' (API order within a query).
    let tradeBase = 0;
    let manuBase = 0;
    for (let i = 0; i < queries.length; i++) {
      const q = queries[i]!;
      const [ft, fm] = firsts[i]!;
      await trade.add(ft.items, tradeBase, tradeKeyNum, inScope);
      if (manu && fm) await manu.add(fm.items, manuBase, manuKeyNum);
      const push = (first: Page<unknown>, isManu: boolean, base: number) => {
        const step = stepOf(first);
        for (let skip = step; skip < first.total; skip += step) tasks.push({ q, skip, take: step, manu: isManu, base });
      };
      push(ft, false, tradeBase);
      if (fm) push(fm, true, manuBase);
      tradeBase += ft.total + PAGE_SIZE;
      manuBase += (fm?.total ?? 0) + PAGE_SIZE;
    }
    await pool(
      tasks,
      concurrency,
      async (t) => {
        const query = { OwnerCompanyId: owner, ...t.q, Skip: t.skip, Take: t.take };
        if (t.manu) await manu!.add((await manuSearch(query)).items, t.base + t.skip, manuKeyNum);
        else await trade.add((await tradeSearch(query)).items, t.base + t.skip, tradeKeyNum, inScope);
      },
      signal,
    );
    trade.seal();
    manu?.seal();
  } catch (err) {
    await trade.close();
    await manu?.close();
    if (!opts.keepFiles) await rm(dir, { recursive: true, force: true });
    throw fileWriteError(err, 'cannot write the catalogue index to', dir);
  }
  return indexSource({
    trade,
    manu,
    key,
    dir,
    keepFiles: Boolean(opts.keepFiles),
    total,
    pages: tradePages,
    scoped: scope !== null,
    // A slice does not hold the owner's other items: a key it lacks is searched over the owner.
    ...(slice ? { outside: searchKeys } : {}),
  });
}

/** Every record of a filtered search, its pages fetched `concurrency` at a time after the first. */
async function pageAll<T>(
  search: Search<T>,
  query: { OwnerCompanyId: string } & Record<string, string>,
  concurrency: number,
  signal?: AbortSignal,
): Promise<T[]> {
  const first = await search({ ...query, Skip: 0, Take: PAGE_SIZE });
  const step = first.items.length > 0 && first.items.length < PAGE_SIZE ? first.items.length : PAGE_SIZE;
  const skips: number[] = [];
  for (let skip = step; skip < first.total; skip += step) skips.push(skip);
  const pages = new Map<number, T[]>();
  await pool(
    skips,
    concurrency,
    async (skip) => void pages.set(skip, (await search({ ...query, Skip: skip, Take: step })).items),
    signal,
  );
  return [...first.items, ...skips.flatMap((s) => pages.get(s) ?? [])];
}

/** forKeys by search: one exact GTIN search per key (and, for manufactured items, one per trade item found). */
function keySearcher(o: {
  tradeSearch: Search<TradeItemRecord>;
  manuSearch: Search<ManufacturedItemRecord>;
  owner: string;
  manufactured: boolean;
  concurrency: number;
  signal?: AbortSignal | undefined;
}): (keys: readonly string[]) => Promise<ApiState> {
  return async (keys) => {
    const tradeItems = new Map<string, TradeItemRecord>();
    const manufacturedItems = new Map<string, ManufacturedItemRecord>();
    const wanted = [...new Set(keys)];
    const found = new Map<string, TradeItemRecord[]>();
    await pool(
      wanted,
      o.concurrency,
      async (k) => {
        // The GTIN filter is exact: records are matched on their GTIN-14 form.
        const recs = await searchAll(o.tradeSearch, { OwnerCompanyId: o.owner, GTIN: k }, o.signal);
        found.set(
          k,
          recs.filter((t) => gtinKey(t.gtin) === k),
        );
      },
      o.signal,
    );
    // Keys in the order asked, each key's records in API order: the same choice among duplicates as the index.
    for (const k of wanted) for (const t of found.get(k) ?? []) prefer(tradeItems, k, t);
    if (o.manufactured) {
      const kept = [...tradeItems.values()];
      const byTrade = new Map<string, ManufacturedItemRecord[]>();
      await pool(
        kept,
        o.concurrency,
        async (t) => {
          byTrade.set(
            t.tradeItemId,
            await searchAll(o.manuSearch, { OwnerCompanyId: o.owner, TradeItemId: t.tradeItemId }, o.signal),
          );
        },
        o.signal,
      );
      for (const t of kept)
        for (const m of byTrade.get(t.tradeItemId) ?? [])
          prefer(manufacturedItems, manufacturedKey(m.tradeItemId, m.supplierCompanyId), m);
    }
    return { tradeItems, manufacturedItems, complete: false };
  };
}

async function indexSource(o: {
  trade: SpillIndex;
  manu: SpillIndex | null;
  key: 'gtin' | 'tradeItemId';
  dir: string;
  keepFiles: boolean;
  total: number;
  pages: number;
  /** Opened with a scope: records outside it are flagged (SpillIndex.outOfScopeAt). */
  scoped: boolean;
  /** The index holds a slice only: keys it lacks are searched with this. */
  outside?: (keys: readonly string[]) => Promise<ApiState>;
}): Promise<ApiStateSource> {
  const { trade, manu } = o;
  const gtin = o.key === 'gtin';
  const keyOfRecord = (t: TradeItemRecord): string | null =>
    gtin ? gtinKey(t.gtin) : typeof t.tradeItemId === 'string' ? t.tradeItemId.toLowerCase() : null;
  const numOf = (k: string): number | null =>
    gtin ? (/^\d{14}$/.test(k) ? Number(k) : null) : hash52(k.toLowerCase());

  /** The kept record of each distinct key in a run of equal numeric keys (only the active ones when activeOnly). */
  async function resolveRun(from: number, to: number, activeOnly: boolean): Promise<Map<string, TradeItemRecord>> {
    const positions: number[] = [];
    for (let i = from; i < to; i++) if (!activeOnly || !trade.archivedAt(i)) positions.push(i);
    const out = new Map<string, TradeItemRecord>();
    for (const t of await trade.read<TradeItemRecord>(positions)) {
      const k = keyOfRecord(t);
      if (k !== null) prefer(out, k, t);
    }
    return out;
  }
  /** The position of the record a key keeps (its first active one, else its first), in a GTIN run [i, j). */
  const keptAt = (i: number, j: number): number => {
    for (let p = i; p < j; p++) if (!trade.archivedAt(p)) return p;
    return i;
  };

  // Active keys, exactly: a run of one numeric key is one key (GTIN); a hash run longer than one is resolved by reading
  // it. With a scope, the same for the scope's keys (its kept record in the scope).
  let active = 0;
  const inScope = { items: 0, active: 0 };
  const hashRuns: [number, number][] = [];
  for (let i = 0; i < trade.n;) {
    let j = i + 1;
    let anyActive = !trade.archivedAt(i);
    for (; j < trade.n && trade.keyAt(j) === trade.keyAt(i); j++) if (!trade.archivedAt(j)) anyActive = true;
    if (!gtin && j - i > 1) hashRuns.push([i, j]);
    else {
      if (anyActive) active++;
      const k = keptAt(i, j);
      if (!trade.outOfScopeAt(k)) {
        inScope.items++;
        if (anyActive) inScope.active++;
      }
    }
    i = j;
  }
  for (const [i, j] of hashRuns) {
    const kept = await resolveRun(i, j, false);
    for (const t of kept.values()) if (!t.archived) active++;
    // Hash runs are rare (a collision of 52-bit hashes): their scope is read from the records themselves.
    for (let p = i; p < j; p++)
      if (!trade.outOfScopeAt(p)) {
        inScope.items++;
        if (!trade.archivedAt(p)) inScope.active++;
      }
  }

  return {
    strategy: 'index',
    catalog: {
      total: o.total,
      active: o.scoped ? inScope.active : active,
      pages: o.pages,
      ...(o.scoped ? { scope: inScope } : {}),
    },
    async forKeys(keys) {
      const tradeItems = new Map<string, TradeItemRecord>();
      const manufacturedItems = new Map<string, ManufacturedItemRecord>();
      const want = new Map<string, string>(); // record key form → key as asked
      const positions: number[] = [];
      for (const k of new Set(keys)) {
        const n = numOf(k);
        if (n === null) continue;
        want.set(gtin ? k : k.toLowerCase(), k);
        const [from, to] = trade.range(n);
        for (let i = from; i < to; i++) positions.push(i);
      }
      positions.sort((a, b) => a - b); // (key, API order): duplicates are seen in API order
      for (const t of await trade.read<TradeItemRecord>(positions)) {
        const rk = keyOfRecord(t);
        const asked = rk === null ? undefined : want.get(rk);
        if (asked !== undefined) prefer(tradeItems, asked, t);
      }
      if (manu) {
        const mpos: number[] = [];
        const ids = new Set<string>();
        for (const t of tradeItems.values()) {
          const id = t.tradeItemId.toLowerCase();
          if (ids.has(id)) continue;
          ids.add(id);
          const [from, to] = manu.range(hash52(id));
          for (let i = from; i < to; i++) mpos.push(i);
        }
        mpos.sort((a, b) => a - b);
        for (const m of await manu.read<ManufacturedItemRecord>(mpos)) {
          if (ids.has(m.tradeItemId.toLowerCase()))
            prefer(manufacturedItems, manufacturedKey(m.tradeItemId, m.supplierCompanyId), m);
        }
      }
      if (o.outside) {
        const lacking = [...new Set(keys)].filter((k) => !tradeItems.has(k));
        if (lacking.length > 0) {
          const more = await o.outside(lacking);
          for (const [k, t] of more.tradeItems) tradeItems.set(k, t);
          for (const [k, m] of more.manufacturedItems) manufacturedItems.set(k, m);
        }
      }
      return { tradeItems, manufacturedItems, complete: true };
    },
    async *missingFrom(inSheet) {
      const BATCH = 256;
      let batch: number[] = [];
      const flush = async function* (): AsyncGenerator<ArchiveEntry & { record: TradeItemRecord }> {
        const recs = await trade.read<TradeItemRecord>(batch);
        batch = [];
        for (const t of recs) yield { tradeItemId: t.tradeItemId, key: gtinKey(t.gtin)!, record: t };
      };
      for (let i = 0; i < trade.n;) {
        let j = i + 1;
        while (j < trade.n && trade.keyAt(j) === trade.keyAt(i)) j++;
        if (gtin) {
          // The kept record of a GTIN is its first active one (API order) when any is active; outside the scope, it
          // is another's to archive.
          let first = -1;
          for (let p = i; p < j && first < 0; p++) if (!trade.archivedAt(p)) first = p;
          if (first >= 0 && !trade.outOfScopeAt(first) && !inSheet(String(trade.keyAt(i)).padStart(14, '0'))) {
            batch.push(first);
            if (batch.length >= BATCH) yield* flush();
          }
        } else {
          let anyActive = false;
          for (let p = i; p < j; p++) if (!trade.archivedAt(p) && !trade.outOfScopeAt(p)) anyActive = true;
          if (anyActive) {
            const runAll = await resolveRun(i, j, true);
            for (let p = i; p < j; p++) {
              if (!trade.outOfScopeAt(p)) continue;
              // Positions outside the scope: drop their keys from the run (read back to know them).
              const [t] = await trade.read<TradeItemRecord>([p]);
              const k = t ? keyOfRecord(t) : null;
              if (k !== null && runAll.get(k)?.tradeItemId === t!.tradeItemId) runAll.delete(k);
            }
            for (const [k, t] of runAll) if (!inSheet(k)) yield { tradeItemId: t.tradeItemId, key: k, record: t };
          }
        }
        i = j;
      }
      if (batch.length) yield* flush();
    },
    async close() {
      await trade.close();
      await manu?.close();
      if (!o.keepFiles) await rm(o.dir, { recursive: true, force: true });
    },
  };
}
