/** Data that flows between pipeline stages (DESIGN §3). */
import type { ListName, LookupKind } from '../api/fields.ts';

/** A cell value as a reader yields it: CSV cells are strings (or null when empty); XLSX keeps numbers, booleans and dates. */
export type Cell = string | number | boolean | Date | null;

/** How bad an issue is: an `error` keeps the row from being sent, a `warning` is reported only. */
export type Severity = 'error' | 'warning';

/** A problem with a file, a row or a cell — data, never an exception. `row` is the sheet's own 1-based row number. */
export interface Issue {
  row: number | null;
  column: string | null;
  field: string | null;
  value: string | null;
  /** A stable code (docs/issue-codes.md), e.g. `GTIN_CHECK_DIGIT`. */
  code: string;
  severity: Severity;
  message: string;
}

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
  /** The rows above the header (headerRow > 1), as text: rejected.* reproduce them so they re-import with the same mapping. */
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

/** The API object a mapping targets. */
export type Target = 'tradeItem' | 'manufacturedItem';

/** A row after mapping and validation: the API body it asks for, plus its issues. */
export interface Draft {
  row: number;
  /** The match key (GTIN-14 or tradeItemId), or null when it could not be read. */
  key: string | null;
  target: Target;
  /** API fields with values (nested objects already built from `netContents[0].value`-style paths). Never holds null. */
  fields: Record<string, unknown>;
  /** Fields whose empty cell asks to send null (empty policy `clear`). */
  clear: string[];
  issues: Issue[];
  /** The row's original cells, aligned with the sheet headers (for rejected.xlsx). */
  source: Cell[];
  /** Labels still to be resolved to ids (mapping `lookup` columns); their fields are absent from `fields` until then. */
  lookups?: DraftLookup[];
  /** Where each field path's value came from: the sheet column and the cell as text (issues name them). */
  origins?: Record<string, { column: string; value: string | null }>;
}

/** How a mapping column's labels are resolved (mapping `lookup`, DESIGN §5.3). */
export type LookupSpec =
  | { list: ListName }
  | 'harmonized-code'
  | { brand: { create?: boolean } }
  | { kind: LookupKind };

/** Labels of one lookup column of a row, waiting for reference resolution. */
export interface DraftLookup {
  /** The field path the resolved id(s) go to (`tradeItemStatusId`, `productCategories[0].categoryId`). */
  field: string;
  /** Where the resolved id(s) go in the draft's fields (the mapping's resolved path): resolution never reads the mapping. */
  segments: readonly (string | number)[];
  /** The sheet header the labels came from. */
  column: string;
  /** The labels (trimmed, split, value-mapped); one unless the field is a list. */
  values: string[];
  /** True when the field takes a list of ids (then every value resolves to one element). */
  array: boolean;
  lookup: LookupSpec;
}
