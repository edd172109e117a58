import type { Severity } from './types.ts';

/** The issue codes the readers put on rows (openSheet): code → severity and what it means, as data. */
export const READ_ISSUE_CODES = {
  ROW_RAGGED: ['warning', 'a CSV row has fewer cells than the header (the missing ones are empty), or an XLSX row has cells right of the last header; an error when a CSV row has non-empty cells beyond the header (they would be lost)'],
  CELL_TOO_LONG: ['error', 'a cell is longer than the cell cap (Excel\'s own limit is 32 767 characters); it is read as empty'],
  ENCODING_REPLACED: ['error', 'a CSV cell holds � where bytes were not valid in the file\'s encoding; the value is damaged'],
  CELL_ERROR: ['error', 'an XLSX cell holds an Excel error (#N/A, #REF!…) or a formula without a usable result; it is read as empty'],
  MERGED_HEADER: ['warning', 'header cells are merged: the title is in the first column only, the others have an empty header'],
  MERGED_CELL: ['warning', 'cells of this row are part of a merged range whose value is in its top-left cell only; they are read as empty'],
  ROW_HIDDEN: ['warning', 'the row is hidden in Excel; it is imported like the others'],
  HIDDEN_COLUMN: ['warning', 'the column is hidden in Excel; it is imported like the others'],
} as const satisfies Record<string, readonly [Severity, string]>;

/** One of the reader's issue codes. */
export type ReadIssueCode = keyof typeof READ_ISSUE_CODES;
