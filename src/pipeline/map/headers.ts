/** Header matching (DESIGN §5.3): which sheet column each mapping column reads. */
import { ProductSyncError } from '../../errors.ts';
import type { MappingColumn } from './mapping.ts';

/** A header as compared: NFC, non-breaking spaces as spaces, surrounding and repeated spaces removed, lower case. */
export function normalizeHeader(header: string): string {
  return header.normalize('NFC').replace(/[\s\u00a0\u2007\u202f\ufeff]+/g, ' ').trim().toLowerCase();
}

const list = (headers: readonly string[]): string => headers.map((h) => JSON.stringify(h)).join(', ');

/**
 * The sheet column index of each mapping column (same order as `mapping.columns`); of a column's alternative
 * names the first present in the sheet wins. Throws PS_ERR_FILE_HEADER naming every mapped header that is missing
 * from the sheet or present twice, and the sheet's headers. Columns the mapping does not name are ignored.
 */
export function matchHeaders(sheetHeaders: readonly string[], mapping: { columns: readonly Pick<MappingColumn, 'columns'>[] }): number[] {
  const positions = new Map<string, number[]>();
  sheetHeaders.forEach((h, i) => {
    const k = normalizeHeader(h ?? '');
    if (k === '') return;
    const at = positions.get(k);
    if (at) at.push(i);
    else positions.set(k, [i]);
  });
  const missing: string[] = [];
  const twice: string[] = [];
  const indexes = mapping.columns.map((c) => {
    const name = c.columns.find((n) => positions.has(normalizeHeader(n)));
    if (name === undefined) {
      missing.push(c.columns.length === 1 ? JSON.stringify(c.columns[0]) : `one of ${list(c.columns)}`);
      return -1;
    }
    const at = positions.get(normalizeHeader(name))!;
    if (at.length > 1) {
      const shown = `${JSON.stringify(name)} (columns ${at.map((i) => i + 1).join(', ')})`;
      if (!twice.includes(shown)) twice.push(shown);
    }
    return at[0]!;
  });
  if (missing.length > 0 || twice.length > 0) {
    const parts = [
      missing.length > 0 ? `mapped column${missing.length > 1 ? 's' : ''} missing from the sheet: ${missing.join('; ')}` : '',
      twice.length > 0 ? `header${twice.length > 1 ? 's' : ''} present more than once: ${twice.join('; ')}` : '',
    ].filter(Boolean);
    throw new ProductSyncError('PS_ERR_FILE_HEADER', `${parts.join('. ')}. The sheet's headers are: ${list(sheetHeaders)}`);
  }
  return indexes;
}
