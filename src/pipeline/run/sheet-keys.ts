/**
 * The first pass of a run: every row's match key, read before anything is sent, so that a key on several rows marks
 * every one of them (DESIGN §7) and `full` mode knows which of the owner's items the sheet names.
 *
 * Memory: GTIN-14 keys are 14 digits, exact as float64 numbers, so they are kept in typed arrays (16 bytes a row while
 * reading, 8 bytes a distinct key after); other keys (tradeItemIds) go to a Map. A million-row sheet costs ~16 MB here.
 */
import { toGtin14 } from '../gtin.ts';
import { duplicateKeyIssue } from '../map/validate.ts';
import type { Issue } from '../types.ts';


/** Keys of a sheet: membership, distinct count, and the rows of every duplicated key. */
export class SheetKeys {
  #keys = new Float64Array(1024);
  #rows = new Uint32Array(1024);
  #n = 0;
  #strings = new Map<string, number | number[]>();
  #sorted: Float64Array | null = null;
  #dups = new Map<string, number[]>();
  /** Rows read by the first pass (with or without a key). */
  rows = 0;

  /** Records the key of `row` (null: the row has none and takes part in no duplicate). */
  add(row: number, key: string | null): void {
    this.rows++;
    if (key === null) return;
    const n = gtin14Number(key);
    if (n >= 0) {
      if (this.#n === this.#keys.length) {
        const keys = new Float64Array(this.#n * 2);
        keys.set(this.#keys);
        this.#keys = keys;
        const rows = new Uint32Array(this.#n * 2);
        rows.set(this.#rows);
        this.#rows = rows;
      }
      this.#keys[this.#n] = n;
      this.#rows[this.#n++] = row;
      return;
    }
    const seen = this.#strings.get(key);
    if (seen === undefined) this.#strings.set(key, row);
    else if (typeof seen === 'number') this.#strings.set(key, [seen, row]);
    else seen.push(row);
  }

  /** Ends the pass: sorts the numeric keys, finds the duplicated ones and drops the per-row arrays. */
  finish(): this {
    const sorted = this.#keys.slice(0, this.#n).sort();
    const dupNums = new Set<number>();
    let unique = 0;
    for (let i = 0; i < sorted.length; i++) {
      if (i > 0 && sorted[i] === sorted[i - 1]) dupNums.add(sorted[i]!);
      else sorted[unique++] = sorted[i]!;
    }
    if (dupNums.size > 0) {
      for (let i = 0; i < this.#n; i++) {
        const k = this.#keys[i]!;
        if (!dupNums.has(k)) continue;
        const key = gtinText(k);
        const list = this.#dups.get(key);
        if (list) list.push(this.#rows[i]!);
        else this.#dups.set(key, [this.#rows[i]!]);
      }
    }
    for (const [key, rows] of this.#strings) if (typeof rows !== 'number') this.#dups.set(key, rows);
    this.#sorted = sorted.slice(0, unique);
    this.#keys = new Float64Array(0);
    this.#rows = new Uint32Array(0);
    return this;
  }

  /** Distinct keys of the sheet. */
  get distinct(): number {
    return (this.#sorted?.length ?? 0) + this.#strings.size;
  }

  /** Keys found on more than one row. */
  get duplicated(): number {
    return this.#dups.size;
  }

  /** True when some row of the sheet (valid or not) has this key. */
  has(key: string): boolean {
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
  duplicateIssue(row: number, key: string | null, options: { column?: string | null; field?: string | null }): Issue | undefined {
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
