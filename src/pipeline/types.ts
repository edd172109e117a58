/** Data that flows between pipeline stages (docs/architecture.md "The path of a row"). */
import type { ListName, LookupKind } from '../api/fields.ts';

// A sheet is what a reader yields (src/formats/sheet.ts), an issue is the shared table's (src/issue-codes.ts):
// re-exported so that the pipeline names all the data it passes in one place.
export type { BatchedRows, Cell, Sheet, SheetRow } from '../formats/sheet.ts';
export type { Issue, Severity } from '../issue-codes.ts';
import type { Cell } from '../formats/sheet.ts';
import type { Issue } from '../issue-codes.ts';

/** The API object a mapping targets. */
export type Target = 'tradeItem' | 'manufacturedItem';

/** A row after mapping and validation: the API body it asks for, plus its issues. */
export interface Draft {
  row: number;
  /** The match key (GTIN-14 or tradeItemId), or null when it could not be read. */
  key: string | null;
  target: Target;
  /**
   * API fields with values (nested objects already built from `netContents[0].value`-style paths). Never holds null.
   */
  fields: Record<string, unknown>;
  /** Fields whose empty cell asks to send null (empty policy `clear`). */
  clear: string[];
  issues: Issue[];
  /** The row's original cells, aligned with the sheet headers (for rejected.xlsx). */
  source: Cell[];
  /**
   * Labels still to be resolved to ids (mapping `lookup` columns); their fields are absent from `fields` until then.
   */
  lookups?: DraftLookup[];
  /** Where each field path's value came from: the sheet column and the cell as text (issues name them). */
  origins?: Record<string, { column: string; value: string | null }>;
}

/** How a mapping column's labels are resolved (mapping `lookup`, docs/mapping.md "Lookups"). */
export type LookupSpec =
  { list: ListName } | 'harmonized-code' | { brand: { create?: boolean } } | { kind: LookupKind };

/** Labels of one lookup column of a row, waiting for reference resolution. */
export interface DraftLookup {
  /** The field path the resolved id(s) go to (`tradeItemStatusId`, `productCategories[0].categoryId`). */
  field: string;
  /**
   * Where the resolved id(s) go in the draft's fields (the mapping's resolved path): resolution never reads the
   * mapping.
   */
  segments: readonly (string | number)[];
  /** The sheet header the labels came from. */
  column: string;
  /** The labels (trimmed, split, value-mapped); one unless the field is a list. */
  values: string[];
  /** True when the field takes a list of ids (then every value resolves to one element). */
  array: boolean;
  lookup: LookupSpec;
}
