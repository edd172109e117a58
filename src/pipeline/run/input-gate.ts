/**
 * The input gate: what an inline `import` refuses before it sends anything, checked before a sheet is queued
 * (`enqueue`, a console upload, a feed tick), so a file the worker would refuse is refused where a person still sees
 * the answer.
 *
 * It runs the checks of the run's own path, with the same functions and so the same messages: the mapping loads and is
 * valid (loadMapping), the sheet is a readable regular file within the size cap, of a supported type (sniffed from its
 * bytes: not empty, not binary), a workbook passes the zip guard (every entry inflated and checked, as the run does
 * before its first row), the encoding is detected, the header row is read and within the column cap, the mapped
 * columns are found in it (matchSheetHeaders), and the first data row reads. It never reads the whole sheet: row
 * problems further down are the run's to report, row by row.
 */
import type { Mapping } from '../map/mapping.ts';
import { loadMapping } from '../map/mapping.ts';
import { matchSheetHeaders } from '../map/headers.ts';
import type { ImportRequest } from './run-state.ts';
import { openMappedSheet } from './sheet-pass.ts';

/** What the gate learnt of an input it let through. */
export interface CheckedInput {
  mapping: Mapping;
  format: 'csv' | 'xlsx';
  /** The worksheet read (XLSX). */
  sheetName?: string;
  headers: string[];
}

/**
 * Checks a sheet and its mapping as `import` would before sending anything; throws the ProductSyncError `import` would
 * throw (PS_ERR_MAPPING_INVALID, PS_ERR_FILE_UNREADABLE, PS_ERR_FILE_TYPE, PS_ERR_FILE_TOO_LARGE, PS_ERR_FILE_HEADER).
 * The mapping is loaded first, as the run does: a bad mapping is the error reported even when the file is bad too.
 * `mappingsDir`: where a mapping given by name is looked for (default ./mappings, as the CLI).
 */
export async function checkInput(
  req: Pick<ImportRequest, 'file' | 'mapping' | 'sheet'>,
  options: { mappingsDir?: string } = {},
): Promise<CheckedInput> {
  const mapping = await loadMapping(
    req.mapping,
    options.mappingsDir === undefined ? {} : { mappingsDir: options.mappingsDir },
  );
  // The zip guard's full scan ends before the header is read.
  const sheet = await openMappedSheet(req, mapping);
  const rows = sheet.rows[Symbol.asyncIterator]();
  try {
    matchSheetHeaders(sheet, mapping);
    await rows.next();
  } finally {
    await rows.return?.();
  }
  return {
    mapping,
    format: sheet.format,
    ...(sheet.sheetName === undefined ? {} : { sheetName: sheet.sheetName }),
    headers: sheet.headers,
  };
}
