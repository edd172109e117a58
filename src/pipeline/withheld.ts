/**
 * Unreadable keys never archive (docs/scopes.md, "What a full run withholds"). A full run archives the scope's items
 * its sheet does not name; a row whose key cannot be read is in the sheet all the same, so the items it could stand
 * for are withheld from the archive:
 *   - an Excel-damaged number (`3.76E+12`): every item whose GTIN has that magnitude and those leading digits (either
 *     rounded or cut: 3.755e12 ≤ GTIN < 3.77e12);
 *   - a wrong check digit: the items one digit change or one adjacent swap away (same length);
 *   - other unreadable text (letters, a digit too many or too few, a tradeItemId that is not a uuid): the items one
 *     edit away (a change, a swap, a character more or less);
 *   - an empty key, or more unreadable rows than MAX_ROWS: nothing to narrow by, every archive of the run is withheld.
 * Pure: the run gives the rows (first pass) and asks for each archive candidate.
 */
import { SCIENTIFIC } from './gtin.ts';

/** A row whose key could not be read, with the key cell as text (null: empty). */
export interface UnreadableKey {
  row: number;
  text: string | null;
}

/** An item withheld from the archive. */
export interface WithheldItem {
  tradeItemId: string;
  gtin: string | null;
}

/** One row's part of summary.json `withheld`. */
export interface WithheldRow {
  row: number;
  /** The key cell as the sheet has it (null: empty). */
  value: string | null;
  reason: string;
  /** The items it withholds (at most ITEMS_LISTED; `items` counts them all). */
  withheld: WithheldItem[];
  items: number;
}

/** summary.json `withheld`. */
export interface WithheldSummary {
  /** Archives withheld. */
  count: number;
  /** True when every archive of the run was withheld (an empty key, or too many unreadable rows to narrow by). */
  all: boolean;
  /** Why, in one line (CLI, console). */
  message: string;
  rows: WithheldRow[];
  /** Rows with unreadable keys beyond those listed. */
  moreRows?: number;
}

/** Beyond this many unreadable rows, a run does not narrow: it withholds every archive. */
export const MAX_ROWS = 1000;
/** Items listed per row in summary.json (all are counted). */
export const ITEMS_LISTED = 100;

type Match = (candidate: string) => boolean;

/** Optimal-string-alignment distance ≤ 1: equal, one change, one adjacent swap, or (indels) one character more/less. */
function withinOne(a: string, b: string, indels: boolean): boolean {
  if (a === b) return true;
  if (a.length === b.length) {
    let i = 0;
    while (i < a.length && a[i] === b[i]) i++;
    if (a.slice(i + 1) === b.slice(i + 1)) return true; // one change
    return a[i] === b[i + 1] && a[i + 1] === b[i] && a.slice(i + 2) === b.slice(i + 2); // one swap
  }
  if (!indels || Math.abs(a.length - b.length) !== 1) return false;
  const [s, l] = a.length < b.length ? [a, b] : [b, a];
  let i = 0;
  while (i < s.length && s[i] === l[i]) i++;
  return s.slice(i) === l.slice(i + 1);
}

const stripZeros = (s: string) => s.replace(/^0+(?=.)/, '');

/** The match of one unreadable GTIN cell and its reason; null: nothing to narrow by. */
function gtinMatch(text: string): { match: Match; reason: string } | null {
  const t = text.replace(/[\s\u00a0\u2007\u202f]/g, '');
  if (t === '') return null;
  if (SCIENTIFIC.test(t)) {
    const m = /^[+-]?(\d+)(?:[.,](\d+))?[eE]([+-]?\d+)$/.exec(t);
    if (!m) return null;
    const digits = `${m[1]}${m[2] ?? ''}`;
    const k = (m[2] ?? '').length;
    const scale = Number(m[3]) - k - 1;
    if (scale < 0) return null;
    const mant = BigInt(digits);
    const pow = 10n ** BigInt(scale);
    // Rounded (as Excel shows it) or cut: from mantissa − ½ unit to mantissa + 1 unit of its last digit.
    const lo = (mant * 10n - 5n) * pow;
    const hi = (mant + 1n) * 10n * pow;
    return {
      match: (g) => {
        const n = BigInt(g);
        return n >= lo && n < hi;
      },
      reason: `Excel-damaged number ${text}: withholds the items whose GTIN lies from ${lo} to below ${hi}`,
    };
  }
  const s = stripZeros(t);
  if (/^\d+$/.test(s) && [8, 12, 13, 14].includes(t.length)) {
    return {
      match: (g) => withinOne(stripZeros(g), s, false),
      reason: `unreadable GTIN ${text}: withholds the items one digit change or one swap away`,
    };
  }
  return {
    match: (g) => withinOne(stripZeros(g), s, true),
    reason: `unreadable GTIN ${text}: withholds the items one character change, swap, addition or removal away`,
  };
}

/** The match of one unreadable tradeItemId cell; null: nothing to narrow by. */
function idMatch(text: string): { match: Match; reason: string } | null {
  const t = text.trim().toLowerCase();
  if (t === '') return null;
  return {
    match: (id) => withinOne(id, t, true),
    reason: `unreadable tradeItemId ${text}: withholds the items one character away`,
  };
}

/** Decides, for each archive candidate of a full run, whether a row with an unreadable key could stand for it. */
export class Withholder {
  readonly #rows: { row: UnreadableKey; match: Match; reason: string; items: WithheldItem[]; n: number }[] = [];
  readonly #allReason: string | null;
  readonly #allRows: UnreadableKey[] = [];
  readonly #lifted: boolean;
  readonly #total: number;
  #count = 0;

  /**
   * `unreadable`: the rows (at most MAX_ROWS + 1 kept), `total` how many there were; `lifted`
   * (--archive-despite-invalid-keys): nothing is withheld, the summary still names the rows.
   */
  constructor(unreadable: readonly UnreadableKey[], total: number, key: 'gtin' | 'tradeItemId', lifted: boolean) {
    this.#lifted = lifted;
    let allReason: string | null = null;
    if (total > MAX_ROWS) {
      allReason = `${total} rows have keys that cannot be read: too many to narrow by, every archive is withheld`;
      this.#allRows = unreadable.slice(0, MAX_ROWS);
    } else {
      for (const row of unreadable) {
        const m = row.text === null ? null : key === 'gtin' ? gtinMatch(row.text) : idMatch(row.text);
        if (m) this.#rows.push({ row, ...m, items: [], n: 0 });
        else {
          allReason ??= `row ${row.row} has an empty key: nothing to narrow by, every archive is withheld`;
          this.#allRows.push(row);
        }
      }
    }
    this.#allReason = allReason;
    this.#total = total;
  }

  /** True when there is nothing to withhold (no unreadable key). */
  get none(): boolean {
    return this.#total === 0;
  }

  /** Should this archive be withheld? Records it against the rows that could stand for it. */
  withhold(item: WithheldItem & { key: string | null }): boolean {
    if (this.#total === 0 || this.#lifted) return false;
    if (this.#allReason !== null) {
      this.#count++;
      return true;
    }
    let hit = false;
    for (const r of this.#rows) {
      if (item.key === null || !r.match(item.key)) continue;
      hit = true;
      r.n++;
      if (r.items.length < ITEMS_LISTED) r.items.push({ tradeItemId: item.tradeItemId, gtin: item.gtin });
    }
    if (hit) this.#count++;
    return hit;
  }

  /** summary.json `withheld` (undefined when no row had an unreadable key). */
  summary(): WithheldSummary | undefined {
    if (this.#total === 0) return undefined;
    const rows: WithheldRow[] = [
      ...this.#allRows.map((r) => ({
        row: r.row,
        value: r.text,
        reason: r.text === null ? 'empty key: nothing to narrow by' : 'one of too many unreadable keys',
        withheld: [],
        items: 0,
      })),
      ...this.#rows.map((r) => ({
        row: r.row.row,
        value: r.row.text,
        reason: r.reason,
        withheld: r.items,
        items: r.n,
      })),
    ].sort((a, b) => a.row - b.row);
    const listed = rows.length;
    const message = this.#lifted
      ? `--archive-despite-invalid-keys: ${this.#total} row(s) with unreadable keys did not withhold any archive`
      : this.#allReason !== null
        ? `${this.#count} archive(s) withheld: ${this.#allReason}`
        : `${this.#count} archive(s) withheld: ${this.#total} row(s) have keys that cannot be read, and these items could be theirs`;
    return {
      count: this.#lifted ? 0 : this.#count,
      all: !this.#lifted && this.#allReason !== null,
      message,
      rows,
      ...(this.#total > listed ? { moreRows: this.#total - listed } : {}),
    };
  }
}
