/** Header matching (docs/mapping.md "Header matching"): which sheet column each mapping column reads. */
import { ProductSyncError } from '../../errors.ts';
import { columnLetters } from '../../formats/column-letters.ts';
import type { HeaderRef, MappingColumn } from './mapping.ts';
import type { Sheet } from '../types.ts';

/** A header as compared: NFC, non-breaking spaces as spaces, surrounding and repeated spaces removed, lower case. */
export function normalizeHeader(header: string): string {
  return header
    .normalize('NFC')
    .replace(/[\s\u00a0\u2007\u202f\ufeff]+/g, ' ')
    .trim()
    .toLowerCase();
}

const list = (headers: readonly string[]): string => headers.map((h) => JSON.stringify(h)).join(', ');

/** What matchHeaders needs of a mapping column: its `sources` (header names only, in `columns`, when it has none). */
type MatchedColumn = Pick<MappingColumn, 'columns'> & Partial<Pick<MappingColumn, 'sources'>>;

const sourcesOf = (c: MatchedColumn): readonly HeaderRef[] => c.sources ?? [{ names: c.columns }];

/** True for a source that names a column by more than its header (group, occurrence or position): reports say which. */
export function isAddressed(ref: HeaderRef): boolean {
  return !('names' in ref) || ref.group !== undefined || ref.occurrence !== undefined;
}

/**
 * The name issues give the column a source reads: its header as the sheet writes it, and, for a column addressed by
 * group, occurrence or position, which one with its letter — `Valeur (Poids brut, column D)`, `Valeur #2 (column D)`,
 * `Valeur (column G)` — so a person finds the cell among columns of one name.
 */
export function sourceLabel(ref: HeaderRef, index: number, headers: readonly string[]): string {
  const header = headers[index] ?? '';
  if (!isAddressed(ref) || index < 0) return header;
  const letter = `column ${columnLetters(index + 1)}`;
  if (!('names' in ref)) return header.trim() === '' ? letter : `${header} (${letter})`;
  const occurrence = ref.occurrence !== undefined ? ` #${ref.occurrence}` : '';
  return `${header}${occurrence} (${ref.group !== undefined ? `${ref.group}, ` : ''}${letter})`;
}

/**
 * The group title over each column (as compared), and each title as written: a title covers its column and the empty
 * cells right of it until the next title (merged cells read this way).
 */
export function groupTitles(
  groupRow: readonly string[] | undefined,
  width: number,
): { over: string[]; written: Map<string, string> } {
  const over: string[] = [];
  const written = new Map<string, string>();
  let current = '';
  for (let i = 0; i < width; i++) {
    const raw = String(groupRow?.[i] ?? '');
    const t = normalizeHeader(raw);
    if (t !== '') {
      current = t;
      if (!written.has(t)) written.set(t, raw.trim());
    }
    over.push(current);
  }
  return { over, written };
}

/**
 * The sheet column index of each mapping column (same order as `mapping.columns`), followed by those of the columns'
 * fallbacks (column by column, in order: mapRow reads them from there). Of a column's alternative names the first
 * present in the sheet wins; a group narrows the search to the columns under that title on `groupRow` (the row above
 * the header), an occurrence picks the n-th match. Throws PS_ERR_FILE_HEADER naming every mapped header that is missing
 * from the sheet, present twice where the mapping does not say which (with how to say it), or not found under its
 * group, and the sheet's headers. Columns the mapping does not name are ignored.
 */
export function matchHeaders(
  sheetHeaders: readonly string[],
  mapping: { columns: readonly MatchedColumn[] },
  groupRow?: readonly string[],
): number[] {
  const positions = new Map<string, number[]>();
  sheetHeaders.forEach((h, i) => {
    const k = normalizeHeader(h ?? '');
    if (k === '') return;
    const at = positions.get(k);
    if (at) at.push(i);
    else positions.set(k, [i]);
  });
  let titles: ReturnType<typeof groupTitles> | undefined;
  const missing: string[] = [];
  const twice: string[] = [];
  const notFound: string[] = [];

  const find = (ref: HeaderRef): number => {
    if (!('names' in ref)) {
      if (ref.position <= sheetHeaders.length) return ref.position - 1;
      notFound.push(
        `column ${columnLetters(ref.position)} (position ${ref.position}): the sheet has ${sheetHeaders.length} columns`,
      );
      return -1;
    }
    const name = ref.names.find((n) => positions.has(normalizeHeader(n)));
    if (name === undefined) {
      missing.push(ref.names.length === 1 ? JSON.stringify(ref.names[0]) : `one of ${list(ref.names)}`);
      return -1;
    }
    let at = positions.get(normalizeHeader(name))!;
    let where = '';
    if (ref.group !== undefined) {
      const { over, written } = (titles ??= groupTitles(groupRow, sheetHeaders.length));
      const group = normalizeHeader(ref.group);
      if (!written.has(group)) {
        notFound.push(
          `group ${JSON.stringify(ref.group)} of ${JSON.stringify(name)}: ${written.size === 0 ? 'the row above the header holds no title' : `the titles on the row above the header are ${list([...written.values()])}`}`,
        );
        return -1;
      }
      at = at.filter((i) => over[i] === group);
      where = ` under ${JSON.stringify(ref.group)}`;
      if (at.length === 0) {
        const under = sheetHeaders.filter((_, i) => over[i] === group);
        notFound.push(`${JSON.stringify(name)}${where}: the columns of that group are ${list(under)}`);
        return -1;
      }
    }
    if (ref.occurrence !== undefined) {
      if (ref.occurrence <= at.length) return at[ref.occurrence - 1]!;
      notFound.push(
        `${JSON.stringify(name)} #${ref.occurrence}${where}: the sheet has ${at.length} such column${at.length > 1 ? 's' : ''} (${at.map((i) => columnLetters(i + 1)).join(', ')})`,
      );
      return -1;
    }
    if (at.length > 1) {
      const shown = `${JSON.stringify(name)}${where} (columns ${at.map((i) => i + 1).join(', ')})`;
      if (!twice.includes(shown)) twice.push(shown);
    }
    return at[0]!;
  };

  const indexes = mapping.columns.map((c) => find(sourcesOf(c)[0]!));
  for (const c of mapping.columns) for (const ref of sourcesOf(c).slice(1)) indexes.push(find(ref));
  if (missing.length > 0 || twice.length > 0 || notFound.length > 0) {
    const parts = [
      missing.length > 0
        ? `mapped column${missing.length > 1 ? 's' : ''} missing from the sheet: ${missing.join('; ')}`
        : '',
      twice.length > 0
        ? `header${twice.length > 1 ? 's' : ''} present more than once: ${twice.join('; ')} — say which in the mapping: column: { header: <name>, occurrence: 2 } (the 2nd of them), or column: { header: <name>, group: <the title above it> }`
        : '',
      notFound.length > 0 ? `not found: ${notFound.join('; ')}` : '',
    ].filter(Boolean);
    throw new ProductSyncError(
      'PS_ERR_FILE_HEADER',
      `${parts.join('. ')}. The sheet's headers are: ${list(sheetHeaders)}`,
    );
  }
  return indexes;
}

/** The row above a sheet's header (its group titles), when the sheet has one. */
export function groupRowOf(sheet: Pick<Sheet, 'headerRow' | 'preamble'>): readonly string[] | undefined {
  return sheet.headerRow >= 2 ? sheet.preamble?.[sheet.headerRow - 2] : undefined;
}

/** matchHeaders on an opened sheet: its headers, and the row above them for the columns addressed by group. */
export function matchSheetHeaders(
  sheet: Pick<Sheet, 'headers' | 'headerRow' | 'preamble'>,
  mapping: { columns: readonly MatchedColumn[] },
): number[] {
  return matchHeaders(sheet.headers, mapping, groupRowOf(sheet));
}
