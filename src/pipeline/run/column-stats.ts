/**
 * What the second pass saw of each mapped column, for the run's OpenLineage events (`dataQualityMetrics`): its empty
 * cells and its distinct values, counted as the rows stream by. Distinct values are counted exactly up to
 * EXACT_LIMIT, then estimated with a HyperLogLog sketch (its size and error: docs/operations.md) so memory stays
 * flat at a million rows. Kept only when OpenLineage events are sent (OPENLINEAGE_URL): a run without them counts
 * nothing.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writeFileAtomic } from '../report/atomic.ts';
import type { Cell } from '../types.ts';

/** The file the second pass leaves in the run's directory. */
export const COLUMN_STATS_FILE = 'column-stats.json';

/** What the file holds. */
export interface ColumnStatsFile {
  /** The sheet's header row, as read. */
  headers: string[];
  rows: number;
  /** Per mapped column (by its header): empty cells, and distinct values (estimated past {@link EXACT_LIMIT}). */
  columns: Record<string, { nullCount: number; distinctCount: number; approximate: boolean }>;
}

/** Distinct values counted exactly per column before the sketch takes over. */
export const EXACT_LIMIT = 1000;
const P = 10;
const M = 1 << P;

/** One column's distinct values: a set while small, a HyperLogLog sketch past EXACT_LIMIT. */
export class DistinctCounter {
  #exact: Set<string> | null = new Set();
  #registers: Uint8Array | null = null;

  add(value: string): void {
    if (this.#exact) {
      this.#exact.add(value);
      if (this.#exact.size <= EXACT_LIMIT) return;
      this.#registers = new Uint8Array(M);
      for (const v of this.#exact) this.#sketch(v);
      this.#exact = null;
      return;
    }
    this.#sketch(value);
  }

  /** The count: exact while under the limit, else the sketch's estimate. */
  get count(): number {
    if (this.#exact) return this.#exact.size;
    const r = this.#registers!;
    let sum = 0;
    let zeros = 0;
    for (let j = 0; j < M; j++) {
      sum += 2 ** -r[j]!;
      if (r[j] === 0) zeros++;
    }
    const alpha = 0.7213 / (1 + 1.079 / M);
    let e = (alpha * M * M) / sum;
    if (e <= 2.5 * M && zeros > 0) e = M * Math.log(M / zeros);
    else if (e > 2 ** 32 / 30) e = -(2 ** 32) * Math.log(1 - e / 2 ** 32);
    return Math.round(e);
  }

  get approximate(): boolean {
    return this.#exact === null;
  }

  #sketch(value: string): void {
    const h = hash32(value);
    const j = h >>> (32 - P);
    const rank = Math.min(Math.clz32((h << P) | (1 << (P - 1))) + 1, 32 - P + 1);
    if (rank > this.#registers![j]!) this.#registers![j] = rank;
  }
}

/** FNV-1a over the UTF-16 code units, then murmur3's finaliser (its bits well mixed for the sketch). */
function hash32(s: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < s.length; i++) {
    h ^= s.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/** The counts of one pass over a sheet: `add` each row's cells, `write` at the end. */
export class ColumnStats {
  readonly #columns: { index: number; header: string; nulls: number; distinct: DistinctCounter }[];
  #rows = 0;

  /** `mapped`: the indexes (in `headers`) of the columns the mapping reads. */
  constructor(
    readonly headers: readonly string[],
    mapped: readonly number[],
  ) {
    const seen = new Set<number>();
    this.#columns = [];
    for (const index of mapped) {
      if (index < 0 || index >= headers.length || seen.has(index)) continue;
      seen.add(index);
      this.#columns.push({ index, header: headers[index]!, nulls: 0, distinct: new DistinctCounter() });
    }
  }

  add(cells: readonly Cell[]): void {
    this.#rows++;
    for (const c of this.#columns) {
      const v = cells[c.index];
      if (v === null || v === undefined || v === '') c.nulls++;
      else c.distinct.add(v instanceof Date ? v.toISOString() : String(v));
    }
  }

  toJSON(): ColumnStatsFile {
    const columns: ColumnStatsFile['columns'] = {};
    for (const c of this.#columns)
      columns[c.header] = { nullCount: c.nulls, distinctCount: c.distinct.count, approximate: c.distinct.approximate };
    return { headers: [...this.headers], rows: this.#rows, columns };
  }

  /** Written to the run's directory (replacing an earlier pass's). */
  write(workDir: string): Promise<void> {
    return writeFileAtomic(join(workDir, COLUMN_STATS_FILE), `${JSON.stringify(this.toJSON())}\n`);
  }
}

/** The counts a run's second pass left in `workDir`, or null (none kept, or the run never got that far). */
export async function readColumnStats(workDir: string): Promise<ColumnStatsFile | null> {
  try {
    return JSON.parse(await readFile(join(workDir, COLUMN_STATS_FILE), 'utf8')) as ColumnStatsFile;
  } catch {
    return null;
  }
}

/** What a run's OpenLineage end event needs from its directory: its owner (run.json) and its column counts. */
export async function lineageFacts(workDir: string): Promise<{ owner: string | null; stats: ColumnStatsFile | null }> {
  const [state, stats] = await Promise.all([
    readFile(join(workDir, 'run.json'), 'utf8').then(
      (t) => JSON.parse(t) as { ownerCompanyId?: string; startedAt?: string },
      () => null,
    ),
    readColumnStats(workDir),
  ]);
  return { owner: state?.ownerCompanyId ?? null, stats };
}
