/**
 * Where a supplier's table starts: the header row below titles, notes, logos and empty rows (merged or not, CSV or
 * XLSX), and the worksheet of a workbook whose table best matches product fields (a notice sheet first is passed over).
 * `mapping init` and the console mapper draft from what these choose; the draft says which row and sheet, and why.
 */
import { visibleWorksheets } from '../formats/worksheet-names.ts';
import { ProductSyncError } from '../errors.ts';
import { openSheet } from '../pipeline/read/read-sheet.ts';
import { cellText } from '../pipeline/map/transforms.ts';
import type { Cell } from '../pipeline/types.ts';

/** The lowest row looked at for the headers when none is given. */
export const MAX_HEADER_ROW = 12;
/** Data rows read below a candidate header row to see whether columns of data stand under it. */
const ROWS_BELOW = 30;
/** Longest text a header cell holds; a longer one is a note or a value. */
const HEADER_CHARS = 60;

/** What the choice reads of a row that could hold the headers. */
export interface HeaderRowCandidate {
  /** 1-based sheet row. */
  row: number;
  headers: string[];
  /** The data rows read below it (cells aligned with `headers`). */
  below: Cell[][];
}

/** How well a row looks like the header row, and the words that say why. */
export interface HeaderRowScore {
  row: number;
  score: number;
  /** Non-empty cells of the row. */
  cells: number;
  /** Of them, cells that read as headers (short text, not a number or a date, not repeated). */
  headerLike: number;
  /** Of them, headers that name a field (by the alias table). */
  known: number;
  /** Of them, columns with values in most rows below. */
  withData: number;
}

const NUMBER_LIKE = /^[+-]?[\d\s.,'’]+(?:e[+-]?\d+)?\s*%?$/i;
const DATE_LIKE = /^\d{1,4}[-/.]\d{1,2}[-/.]\d{1,4}$/;

/** True when a header cell reads as a header: text, short, not a number, a date or a quantity. */
function headerLikeCell(text: string): boolean {
  const t = text.trim();
  return t !== '' && t.length <= HEADER_CHARS && /\p{L}/u.test(t) && !NUMBER_LIKE.test(t) && !DATE_LIKE.test(t);
}

/**
 * The score of one candidate: headers that look like headers, twice more those naming a field, plus the columns with
 * data under them. A row of fewer than two cells (a title, a note, a logo's caption) is no header row, nor a row
 * without rows of data below.
 */
export function scoreHeaderRow(c: HeaderRowCandidate, isKnown: (header: string) => boolean): HeaderRowScore {
  const present = c.headers.map((h, i) => ({ h: h.trim(), i })).filter((x) => x.h !== '');
  const seen = new Set<string>();
  let headerLike = 0;
  let known = 0;
  let withData = 0;
  const rows = c.below.filter((r) => r.filter((x) => x !== null && cellText(x).trim() !== '').length >= 2);
  for (const { h, i } of present) {
    const key = h.toLowerCase();
    const unique = !seen.has(key);
    seen.add(key);
    if (unique && headerLikeCell(h)) headerLike++;
    if (unique && isKnown(h)) known++;
    const filled = rows.filter((r) => r[i] !== null && r[i] !== undefined && cellText(r[i]!).trim() !== '').length;
    if (rows.length > 0 && filled * 2 >= rows.length) withData++;
  }
  const base = { row: c.row, cells: present.length, headerLike, known, withData };
  // Headers stand above data: a row with no data row below (the last row of a sheet) is no header row either.
  if (present.length < 2 || rows.length === 0) return { ...base, score: 0 };
  return { ...base, score: headerLike + 2 * known + withData };
}

/** The header row found and why (the draft's note), or the first row when nothing beats it. */
export interface HeaderRowChoice {
  row: number;
  /** Why, when the row is not 1 (`row 1 holds one cell ("Catalogue 2027"), row 2 is empty`). */
  why?: string;
}

const shortText = (s: string): string => JSON.stringify(s.length > 60 ? `${s.slice(0, 57)}…` : s);

/**
 * Reads the candidates of the sheet's first rows and picks the best (the first of equals). Rows that cannot be a
 * header (empty, past the end) are skipped; rows above the choice are described in `why`.
 */
export async function findHeaderRow(
  file: string,
  sheet: string | undefined,
  isKnown: (header: string) => boolean,
): Promise<HeaderRowChoice> {
  const scores: HeaderRowScore[] = [];
  const above = new Map<number, string>();
  for (let row = 1; row <= MAX_HEADER_ROW; row++) {
    const candidate = await readCandidate(file, sheet, row);
    if (candidate === 'end') break;
    if (candidate === 'empty' || candidate.headers.every((h) => h.trim() === '')) {
      above.set(row, 'empty');
      continue;
    }
    const s = scoreHeaderRow(candidate, isKnown);
    scores.push(s);
    const cells = candidate.headers.filter((h) => h.trim() !== '');
    above.set(row, cells.length === 1 ? `one cell (${shortText(cells[0]!.trim())})` : `${cells.length} cells`);
    // Past the best row, rows of data follow: two rows in a row that score below it end the search.
    const best = Math.max(...scores.map((x) => x.score));
    const after = scores.slice(scores.findIndex((x) => x.score === best) + 1);
    if (best > 0 && after.length >= 2) break;
  }
  if (scores.length === 0) return { row: 1 };
  const best = scores.reduce((a, b) => (b.score > a.score ? b : a));
  if (best.row === 1 || best.score === 0) return { row: 1 };
  const rowsAbove = [...above.entries()]
    .filter(([r]) => r < best.row)
    .map(([r, what]) => `row ${r} ${what === 'empty' ? 'is empty' : `holds ${what}`}`);
  return {
    row: best.row,
    why: `${rowsAbove.join(', ')}; row ${best.row} holds ${best.headerLike} headers${best.known > 0 ? `, ${best.known} naming fields` : ''}, above ${best.withData} columns of data`,
  };
}

/** One candidate header row and the rows below it; `empty` for a blank row, `end` past the last row. */
async function readCandidate(
  file: string,
  sheet: string | undefined,
  row: number,
): Promise<HeaderRowCandidate | 'empty' | 'end'> {
  let opened;
  try {
    opened = await openSheet(file, { ...(sheet ? { sheet } : {}), headerRow: row });
  } catch (err) {
    // A blank row and (in a workbook) a row past the last one read alike: the search goes on to MAX_HEADER_ROW.
    if (err instanceof ProductSyncError && err.code === 'PS_ERR_FILE_HEADER')
      return /the file has fewer rows/.test(err.message) ? 'end' : 'empty';
    throw err;
  }
  const below: Cell[][] = [];
  for await (const r of opened.rows) {
    below.push(r.cells);
    if (below.length >= ROWS_BELOW) break;
  }
  return { row, headers: opened.headers, below };
}

/** A worksheet of a workbook as the choice saw it. */
export interface WorksheetScore {
  name: string;
  headerRow: HeaderRowChoice;
  /** Headers naming a field, and rows of data below the headers (of the first rows read). */
  known: number;
  rows: number;
}

/** The worksheet chosen, why, and the workbook's other visible worksheets (empty for a CSV or a single sheet). */
export interface WorksheetChoice {
  sheet?: string;
  /** The header row found on the chosen worksheet (when several were compared). */
  headerRow?: HeaderRowChoice;
  others: string[];
  why?: string;
}

/**
 * Without a worksheet named, the one whose table best matches product fields: most headers naming a field, then most
 * rows of data, then the first in the workbook's order. A CSV or a one-sheet workbook has nothing to choose.
 */
export async function chooseWorksheet(file: string, isKnown: (header: string) => boolean): Promise<WorksheetChoice> {
  const names = await visibleWorksheets(file);
  if (names.length <= 1) return { ...(names[0] !== undefined ? { sheet: names[0] } : {}), others: [] };
  const scored: WorksheetScore[] = [];
  for (const name of names) {
    const headerRow = await findHeaderRow(file, name, isKnown);
    const c = await readCandidate(file, name, headerRow.row);
    if (typeof c === 'string') {
      scored.push({ name, headerRow, known: 0, rows: 0 });
      continue;
    }
    const known = new Set(c.headers.filter((h) => h.trim() !== '' && isKnown(h)).map((h) => h.trim().toLowerCase()));
    scored.push({ name, headerRow, known: known.size, rows: c.below.length });
  }
  const best = scored.reduce((a, b) => (b.known > a.known || (b.known === a.known && b.rows > a.rows) ? b : a));
  const others = names.filter((n) => n !== best.name);
  const first = scored[0]!;
  const why =
    best === first
      ? `the first worksheet, whose headers name ${best.known} fields`
      : `its headers name ${best.known} fields (the first worksheet, "${first.name}", ${first.known === 0 ? 'names none' : `names ${first.known}`})`;
  return { sheet: best.name, headerRow: best.headerRow, others, why };
}

export { visibleWorksheets };
