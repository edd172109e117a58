/**
 * The first pass of a run: every row's match key, read before anything is sent, so that a key on several rows marks
 * every one of them (docs/sync.md) and `full` mode knows which of the owner's items the sheet names.
 *
 * Memory: GTIN-14 keys are 14 digits, exact as float64 numbers, so they are kept in typed arrays (12 bytes a row while
 * reading: the key and its row; 8 bytes a distinct key after); other keys (tradeItemIds) go to a Map. While reading,
 * the arrays are fixed-size blocks (BLOCK keys each) added as rows come: a growing sheet is never copied into an array
 * twice its size (old and new array together held three times the keys at the moment of the copy). finish() gathers
 * the blocks into one array sorted in place, then drops them.
 */
import { toGtin14 } from '../gtin.ts';
import { duplicateKeyIssue } from '../map/validate.ts';
import { MAX_ROWS, type UnreadableKey } from '../withheld.ts';
import type { Issue } from '../types.ts';

/** Keys of a sheet: membership, distinct count, and the rows of every duplicated key. */
/** Keys a block holds: 4 MiB of float64 keys (and 2 MiB of row numbers). */
export const BLOCK = (4 * 1024 * 1024) / 8;

export class SheetKeys {
  /** Full blocks, then the one being filled (its first #n % block entries used). */
  #keyBlocks: Float64Array[] = [];
  #rowBlocks: Uint32Array[] = [];
  #n = 0;
  readonly #block: number;
  #strings = new Map<string, number | number[]>();
  #sorted: Float64Array | null = null;
  /** Distinct GTIN keys, kept when the sorted array is dropped. */
  #distinctNumbers = 0;
  #dropped = false;
  #dups = new Map<string, number[]>();
  /** Rows read by the first pass (with or without a key). */
  rows = 0;
  /** Rows whose key cell could not be read (the first MAX_ROWS + 1 kept; `unreadableRows` counts them all). */
  readonly unreadable: UnreadableKey[] = [];
  unreadableRows = 0;

  /** Records a row whose key cell could not be read (text: the cell as text, null when empty). */
  addUnreadable(row: number, text: string | null): void {
    this.unreadableRows++;
    if (this.unreadable.length <= MAX_ROWS) this.unreadable.push({ row, text });
  }

  /** `block`: keys per block (tests use small blocks to cross block boundaries). */
  constructor(block = BLOCK) {
    if (!Number.isInteger(block) || block < 1)
      throw new Error(`SheetKeys: block must be a positive integer, got ${block}`);
    this.#block = block;
  }

  /** Records the key of `row` (null: the row has none and takes part in no duplicate). */
  add(row: number, key: string | null): void {
    this.rows++;
    if (key === null) return;
    const n = gtin14Number(key);
    if (n >= 0) {
      const at = this.#n % this.#block;
      if (at === 0) {
        // A small sheet gets a small first block; the next ones are full size.
        const size = this.#keyBlocks.length === 0 ? Math.min(this.#block, 1024) : this.#block;
        this.#keyBlocks.push(new Float64Array(size));
        this.#rowBlocks.push(new Uint32Array(size));
      } else if (at === this.#keyBlocks.at(-1)!.length) {
        this.#grow(this.#keyBlocks.length - 1);
      }
      this.#keyBlocks.at(-1)![at] = n;
      this.#rowBlocks.at(-1)![at] = row;
      this.#n++;
      return;
    }
    const seen = this.#strings.get(key);
    if (seen === undefined) this.#strings.set(key, row);
    else if (typeof seen === 'number') this.#strings.set(key, [seen, row]);
    else seen.push(row);
  }

  /** The first block, started small, doubles up to the block size. */
  #grow(b: number): void {
    const old = this.#keyBlocks[b]!;
    const size = Math.min(this.#block, old.length * 2);
    const keys = new Float64Array(size);
    keys.set(old);
    this.#keyBlocks[b] = keys;
    const rows = new Uint32Array(size);
    rows.set(this.#rowBlocks[b]!);
    this.#rowBlocks[b] = rows;
  }

  /** Key and row of entry i (in reading order). */
  #keyAt(i: number): number {
    return this.#keyBlocks[Math.floor(i / this.#block)]![i % this.#block]!;
  }

  #rowAt(i: number): number {
    return this.#rowBlocks[Math.floor(i / this.#block)]![i % this.#block]!;
  }

  /** Ends the pass: sorts the numeric keys, finds the duplicated ones and drops the per-row arrays. */
  finish(): this {
    const all = new Float64Array(this.#n);
    for (let b = 0, at = 0; at < this.#n; b++) {
      const block = this.#keyBlocks[b]!;
      const take = Math.min(block.length, this.#n - at);
      all.set(take === block.length ? block : block.subarray(0, take), at);
      at += take;
    }
    // In place (no comparator: numeric order, no copy).
    const sorted = all.sort();
    const dupNums = new Set<number>();
    let unique = 0;
    for (let i = 0; i < sorted.length; i++) {
      if (i > 0 && sorted[i] === sorted[i - 1]) dupNums.add(sorted[i]!);
      else sorted[unique++] = sorted[i]!;
    }
    if (dupNums.size > 0) {
      for (let i = 0; i < this.#n; i++) {
        const k = this.#keyAt(i);
        if (!dupNums.has(k)) continue;
        const key = gtinText(k);
        const list = this.#dups.get(key);
        if (list) list.push(this.#rowAt(i));
        else this.#dups.set(key, [this.#rowAt(i)]);
      }
    }
    for (const [key, rows] of this.#strings) if (typeof rows !== 'number') this.#dups.set(key, rows);
    // Few duplicates (the usual sheet): the sorted array is kept as it is rather than copied to its exact size.
    this.#sorted = unique >= sorted.length - sorted.length / 8 ? sorted.subarray(0, unique) : sorted.slice(0, unique);
    this.#distinctNumbers = unique;
    this.#keyBlocks = [];
    this.#rowBlocks = [];
    return this;
  }

  /** Distinct keys of the sheet. */
  get distinct(): number {
    return this.#distinctNumbers + this.#strings.size;
  }

  /**
   * Frees the sorted keys once nothing will ask has() (a run's archive plan is made, or there is none): an import's
   * second pass only asks for duplicates, and a large sheet's keys are 8 bytes each for the whole run otherwise.
   */
  dropMembership(): void {
    if (!this.#sorted) throw new Error('SheetKeys.dropMembership before finish');
    this.#sorted = new Float64Array(0);
    this.#dropped = true;
  }

  /** Keys found on more than one row. */
  get duplicated(): number {
    return this.#dups.size;
  }

  /** True when some row of the sheet (valid or not) has this key. */
  has(key: string): boolean {
    if (this.#dropped) throw new Error('SheetKeys.has after dropMembership');
    const want = gtin14Number(key);
    if (want < 0) return this.#strings.has(key);
    const sorted = this.#sorted;
    if (!sorted) throw new Error('SheetKeys.has before finish');
    let lo = 0;
    let hi = sorted.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const v = sorted[mid]!;
      if (v === want) return true;
      if (v < want) lo = mid + 1;
      else hi = mid - 1;
    }
    return false;
  }

  /** The DUPLICATE_KEY issue of a row whose key is on other rows too, or undefined. */
  duplicateIssue(
    row: number,
    key: string | null,
    options: { column?: string | null; field?: string | null },
  ): Issue | undefined {
    if (key === null) return undefined;
    const rows = this.#dups.get(key);
    return rows ? duplicateKeyIssue(row, key, rows, options) : undefined;
  }
}

/** A 14-digit key as its number (exact: below 2^53), in one pass over its characters; -1 for any other key. */
function gtin14Number(key: string): number {
  if (key.length !== 14) return -1;
  let n = 0;
  for (let i = 0; i < 14; i++) {
    const d = key.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

function gtinText(n: number): string {
  return toGtin14(String(n));
}
