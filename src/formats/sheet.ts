/** What a reader yields: a sheet's headers and rows, read lazily; the pipeline's first data (docs/architecture.md). */
import type { Issue } from '../issue-codes.ts';

/** A cell value as a reader yields it: CSV cells are strings (null when empty); XLSX keeps numbers, booleans, dates. */
export type Cell = string | number | boolean | Date | null;

/** One data row of a sheet; `cells` are aligned with the sheet's headers. */
export interface SheetRow {
  row: number;
  cells: Cell[];
  /** Problems the reader found on this row (ragged row, error cell, cell too long…). */
  issues: Issue[];
}

/** An opened sheet: its headers and a stream of rows read lazily (never the whole file in memory). */
export interface Sheet {
  file: string;
  format: 'csv' | 'xlsx';
  /** Worksheet name for XLSX. */
  sheetName?: string;
  headerRow: number;
  headers: string[];
  /** The rows above the header (headerRow > 1), as text: rejected.* repeat them to re-import with the same mapping. */
  preamble?: string[][];
  /** The data rows, in order; readers that have them in batches also hand them over so ({@link BatchedRows}). */
  rows: AsyncIterable<SheetRow> | BatchedRows;
  /** Details for the report: detected encoding and delimiter (CSV), date system (XLSX)… */
  info: Record<string, string | number | boolean>;
}

/**
 * Rows a reader holds in batches (a decoded chunk of a CSV): `nextBatch` hands over the rows not yet taken of the
 * current batch, or the next one (null at the end) — one promise per batch instead of one per row (see rowBatches).
 */
export interface BatchedRows extends AsyncIterableIterator<SheetRow> {
  nextBatch(): Promise<readonly SheetRow[] | null>;
}
