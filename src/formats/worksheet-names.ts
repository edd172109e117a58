/** The visible worksheets of a workbook: what `mapping init` chooses among and `validate --preview` names. */
import { DEFAULT_LIMITS } from './limits.ts';
import { sniffFile } from './sniff.ts';
import { inspectWorkbook } from './zip-guard.ts';

/**
 * The names of the visible worksheets of an XLSX, in the workbook's order (none for a CSV). Hidden ones are left out:
 * a supplier hides the sheets of lists and formulas a template needs.
 */
export async function visibleWorksheets(file: string): Promise<string[]> {
  const { kind } = await sniffFile(file);
  if (kind !== 'xlsx-zip') return [];
  const book = await inspectWorkbook(file, DEFAULT_LIMITS);
  return book.sheets.filter((s) => s.state === 'visible').map((s) => s.name);
}
