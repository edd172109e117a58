import { open, type FileHandle } from 'node:fs/promises';
import { ProductSyncError } from '../errors.ts';
import type { ReadLimits } from './limits.ts';
import { centralDirectory, damaged, entryStream, type ZipEntry } from './zip-entries.ts';
import { refColumn } from './column-letters.ts';
import { attr } from './xml-text.ts';

/** A worksheet as workbook.xml lists it. */
export interface WorkbookSheet {
  name: string;
  state: 'visible' | 'hidden' | 'veryHidden';
  /** Its part in the zip (`xl/worksheets/sheet1.xml`), when the relationships name one. */
  path: string | null;
}

/** A merged range of cells (1-based, inclusive). */
export interface MergedRange {
  ref: string;
  top: number;
  left: number;
  bottom: number;
  right: number;
}

/** Entries of the parts of a workbook that hold a worksheet's values. */
export interface WorkbookParts {
  worksheet: ZipEntry | null;
  sharedStrings: ZipEntry | null;
  styles: ZipEntry | null;
}

/** What the inspection of a workbook learnt before its worksheet is streamed. */
export interface WorkbookInspection {
  sheets: WorkbookSheet[];
  /** The worksheet to read: the one named, else the first visible one in the workbook's order. */
  target: WorkbookSheet;
  date1904: boolean;
  /** Rows of the target marked hidden. */
  hiddenRows: Set<number>;
  /** Column ranges of the target marked hidden. */
  hiddenColumns: { min: number; max: number }[];
  /** Merged ranges of the target, sorted by top row. */
  merges: MergedRange[];
  /**
   * The zip entries the worksheet reader reads: the target worksheet's, the shared strings', the styles' (null when
   * absent).
   */
  parts: WorkbookParts;
}

const DOCTYPE = Buffer.from('<!DOCTYPE');
const ENTITY = Buffer.from('<!ENTITY');
const HIDDEN = Buffer.from(' hidden="');
const MERGE = Buffer.from('mergeCell ');
/** Bytes of the previous chunk searched again with the next one, so a tag split between them is still found whole. */
const OVERLAP = 4096;
const LT = 0x3c;
const GT = 0x3e;
const BANG = 0x21;

/** A cell reference or range (`B2`, `A1:C3`) as a merged range; null when malformed. */
function parseRange(ref: string): MergedRange | null {
  const m = /^\$?([A-Z]{1,3})\$?(\d+)(?::\$?([A-Z]{1,3})\$?(\d+))?$/.exec(ref.toUpperCase());
  if (!m) return null;
  const left = refColumn(m[1]!);
  const top = Number(m[2]);
  const right = m[3] ? refColumn(m[3]) : left;
  const bottom = m[4] ? Number(m[4]) : top;
  return {
    ref,
    top: Math.min(top, bottom),
    left: Math.min(left, right),
    bottom: Math.max(top, bottom),
    right: Math.max(left, right),
  };
}

/**
 * The bytes `prev ++ chunk`, searched as one without copying `chunk` (joining them copied every 1 MB chunk for 4 KB
 * of overlap): `prev` is the tail of the previous chunk (at most OVERLAP bytes), searched again so that a tag or a
 * declaration split between two chunks is still found whole.
 */
interface Joined {
  prev: Buffer;
  chunk: Buffer;
}

/** Whether byte `at` of `buf` starts `needle`. */
function startsAt(buf: Buffer, at: number, needle: Buffer): boolean {
  if (at < 0 || at + needle.length > buf.length) return false;
  for (let k = 0; k < needle.length; k++) if (buf[at + k] !== needle[k]) return false;
  return true;
}

/**
 * Whether `prev ++ chunk` holds a `<!DOCTYPE` or `<!ENTITY` that `prev` alone does not (one there was seen with the
 * previous chunk). One memchr pass for the rare `!` instead of a string search per declaration.
 */
function declaresEntities({ prev, chunk }: Joined): boolean {
  for (let i = chunk.indexOf(BANG); i >= 0; i = chunk.indexOf(BANG, i + 1)) {
    if (startsAt(chunk, i - 1, DOCTYPE) || startsAt(chunk, i - 1, ENTITY)) return true;
  }
  if (prev.length === 0) return false;
  // Declarations that start in `prev` and end in `chunk` (or whose `<` is prev's last byte).
  const seam = Buffer.concat([
    prev.subarray(Math.max(0, prev.length - DOCTYPE.length)),
    chunk.subarray(0, DOCTYPE.length),
  ]);
  return seam.includes(DOCTYPE) || seam.includes(ENTITY);
}

/**
 * Each occurrence of `needle` in `prev ++ chunk`, in order, with the opening tag that contains it, as text: from the
 * last `<` at or before it to the first `>` at or after it, both within `prev ++ chunk`; null when either is missing.
 * (What searching `Buffer.concat([prev, chunk])` gives, without the copy. Occurrences wholly in `prev` come again: the
 * results are keyed, one seen twice counts once.)
 */
function* tagsWith({ prev, chunk }: Joined, needle: Buffer): Generator<string | null> {
  // Occurrences starting in `prev` (found in its tail and the head of `chunk`, a few bytes copied).
  if (prev.length > 0) {
    const seam = Buffer.concat([prev, chunk.subarray(0, needle.length - 1)]);
    for (let i = seam.indexOf(needle); i >= 0 && i < prev.length; i = seam.indexOf(needle, i + 1)) {
      const start = prev.lastIndexOf(LT, i);
      if (start < 0) {
        yield null;
        continue;
      }
      const end = prev.indexOf(GT, i);
      if (end >= 0) yield prev.toString('latin1', start, end + 1);
      else {
        const end2 = chunk.indexOf(GT);
        yield end2 < 0 ? null : prev.toString('latin1', start) + chunk.toString('latin1', 0, end2 + 1);
      }
    }
  }
  for (let i = chunk.indexOf(needle); i >= 0; i = chunk.indexOf(needle, i + 1)) {
    const end = chunk.indexOf(GT, i);
    if (end < 0) {
      yield null;
      continue;
    }
    const start = chunk.lastIndexOf(LT, i);
    if (start >= 0) yield chunk.toString('latin1', start, end + 1);
    else {
      const start2 = prev.lastIndexOf(LT);
      yield start2 < 0 ? null : prev.toString('latin1', start2) + chunk.toString('latin1', 0, end + 1);
    }
  }
}

interface EntryScan {
  /** Keep the inflated text (small parts: workbook.xml and its relationships). */
  keep: boolean;
  /** Look for hidden rows/columns and merged cells (the worksheet to read). */
  sheet: boolean;
}

interface ScanResult {
  text: string | null;
  hiddenRows: Set<number>;
  hiddenColumns: Map<string, { min: number; max: number }>;
  merges: Map<string, MergedRange>;
}

/**
 * Inflates one entry, counting what actually comes out (a zip may declare small sizes and inflate to gigabytes),
 * refusing entity declarations, and collecting what `scan` asks for.
 */
async function scanEntry(
  file: string,
  fh: FileHandle,
  e: ZipEntry,
  budget: { left: number },
  limits: ReadLimits,
  scan: EntryScan,
): Promise<ScanResult> {
  const result: ScanResult = { text: null, hiddenRows: new Set(), hiddenColumns: new Map(), merges: new Map() };
  if (e.compressed === 0 && e.method !== 0) return result;
  const { source, raw } = await entryStream(file, fh, e);
  const xml = /\.(xml|rels|vml)$/i.test(e.name);
  const kept: Buffer[] = [];
  let out = 0;
  let prev: Buffer = Buffer.alloc(0);
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      out += chunk.length;
      budget.left -= chunk.length;
      if (out > e.uncompressed + 1024 || budget.left < 0) {
        throw new ProductSyncError(
          'PS_ERR_FILE_TOO_LARGE',
          budget.left < 0
            ? `${file}: more than ${Math.round(limits.unzippedBytes / 1024 ** 2)} MB once unzipped: refused (a zip bomb, or a workbook too large to import)`
            : `${file}: ${e.name} inflates past the size its zip entry declares (${e.uncompressed} bytes): refused as a possible zip bomb`,
        );
      }
      if (out > limits.ratioFloorBytes && out / Math.max(e.compressed, 1) > limits.compressionRatio) {
        throw new ProductSyncError(
          'PS_ERR_FILE_TOO_LARGE',
          `${file}: ${e.name} inflates more than ${limits.compressionRatio}× its compressed size: refused as a possible zip bomb`,
        );
      }
      if (!xml) continue;
      // The tail of the previous chunk is searched again with this one, so a tag split between chunks is still found
      // whole (the results are keyed, so one seen twice counts once).
      const joined: Joined = { prev, chunk };
      if (declaresEntities(joined)) {
        throw new ProductSyncError(
          'PS_ERR_FILE_TYPE',
          `${file}: ${e.name} declares XML entities (<!DOCTYPE/<!ENTITY); refused — a workbook saved by Excel never does`,
        );
      }
      if (scan.keep) {
        if (out > 32 * 1024 * 1024)
          throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: ${e.name} is larger than 32 MB`);
        kept.push(chunk);
      }
      if (scan.sheet) {
        for (const tag of tagsWith(joined, HIDDEN)) {
          if (!tag || !/^<(\w+:)?(row|col)\s/.test(tag) || !/\shidden="(1|true)"/.test(tag)) continue;
          if (/^<(\w+:)?row\s/.test(tag)) {
            const r = Number(attr(tag, 'r'));
            if (Number.isInteger(r) && r > 0) result.hiddenRows.add(r);
          } else {
            const min = Number(attr(tag, 'min'));
            const max = Number(attr(tag, 'max'));
            if (min > 0 && max >= min) result.hiddenColumns.set(`${min}:${max}`, { min, max });
          }
        }
        for (const tag of tagsWith(joined, MERGE)) {
          const ref = tag && /^<(\w+:)?mergeCell\s/.test(tag) ? attr(tag, 'ref') : null;
          const range = ref ? parseRange(ref) : null;
          if (!range || result.merges.has(range.ref)) continue;
          if (result.merges.size >= limits.mergedRanges)
            throw new ProductSyncError(
              'PS_ERR_FILE_TOO_LARGE',
              `${file}: more than ${limits.mergedRanges} merged cell ranges`,
            );
          result.merges.set(range.ref, range);
        }
      }
      prev =
        chunk.length >= OVERLAP
          ? chunk.subarray(chunk.length - OVERLAP)
          : Buffer.concat([prev, chunk]).subarray(-OVERLAP);
    }
  } catch (err) {
    if (err instanceof ProductSyncError) throw err;
    throw damaged(file, `${e.name}: ${(err as Error).message}`);
  } finally {
    raw.destroy();
  }
  if (out < e.uncompressed) throw damaged(file, `${e.name} is shorter than its zip entry declares`);
  if (scan.keep) result.text = Buffer.concat(kept).toString('utf8');
  return result;
}

/**
 * The relationships of workbook.xml: id → part path, and the part of each relationship type (its last path segment).
 */
function parseRels(relsXml: string): { byId: Map<string, string>; byType: Map<string, string> } {
  const byId = new Map<string, string>();
  const byType = new Map<string, string>();
  for (const m of relsXml.matchAll(/<(?:\w+:)?Relationship\s[^>]*>/g)) {
    const id = attr(m[0], 'Id');
    const target = attr(m[0], 'Target');
    if (!id || !target) continue;
    const path = target.startsWith('/') ? target.slice(1) : `xl/${target.replace(/^\.\//, '')}`;
    byId.set(id, path);
    const type = attr(m[0], 'Type')?.split('/').at(-1);
    if (type && !byType.has(type)) byType.set(type, path);
  }
  return { byId, byType };
}

/** The worksheets of workbook.xml in order, with their parts from its relationships. */
function parseSheets(workbookXml: string, targets: Map<string, string>): WorkbookSheet[] {
  const sheets: WorkbookSheet[] = [];
  for (const m of workbookXml.matchAll(/<(?:\w+:)?sheet\s[^>]*>/g)) {
    const name = attr(m[0], 'name');
    if (name === null) continue;
    const st = attr(m[0], 'state');
    const rid = attr(m[0], 'r:id') ?? /\s\w+:id="([^"]*)"/.exec(m[0])?.[1] ?? null;
    sheets.push({
      name,
      state: st === 'hidden' || st === 'veryHidden' ? st : 'visible',
      path: rid ? (targets.get(rid) ?? null) : null,
    });
  }
  return sheets;
}

/**
 * What the first, fast part of the inspection learns (see startInspection): enough for the worksheet's parse to start.
 */
export type WorkbookHead = Pick<WorkbookInspection, 'sheets' | 'target' | 'date1904' | 'parts'>;

/** A workbook whose first part of the inspection passed: its head, and the second part to run. */
export interface InspectionStarted {
  head: WorkbookHead;
  /**
   * The full scan (see inspectWorkbook), the whole inspection once it passes. Call it once: it closes the file, and
   * until it is called the file stays open.
   */
  scan(): Promise<WorkbookInspection>;
}

/**
 * The first part of inspectWorkbook, reading little: the zip's central directory (it is a spreadsheet: xl/workbook.xml
 * present), every entry's declared size and ratio within the caps, workbook.xml and its relationships (inflated,
 * checked as every part is) → the worksheets, the one to read, the date system. The full scan — every other entry
 * inflated — is left to `scan()`.
 */
export async function startInspection(
  file: string,
  limits: ReadLimits,
  sheetName?: string,
): Promise<InspectionStarted> {
  const fh = await open(file, 'r');
  let head: WorkbookHead;
  let entries: ZipEntry[];
  let byName: Map<string, ZipEntry>;
  const budget = { left: limits.unzippedBytes };
  try {
    entries = await centralDirectory(file, fh, limits.zipEntries);
    byName = new Map(entries.map((e) => [e.name, e]));
    if (!byName.has('xl/workbook.xml')) {
      if (entries.some((e) => e.name.startsWith('xl/'))) throw damaged(file, 'xl/workbook.xml is missing');
      const what = byName.has('word/document.xml')
        ? 'a Word document'
        : byName.has('ppt/presentation.xml')
          ? 'a PowerPoint file'
          : byName.has('content.xml')
            ? 'an OpenDocument file (.ods)'
            : 'a zip archive, not an Excel workbook';
      throw new ProductSyncError('PS_ERR_FILE_TYPE', `${file}: this is ${what}; save the sheet as .xlsx or CSV`);
    }
    let declared = 0;
    for (const e of entries) {
      declared += e.uncompressed;
      if (
        e.uncompressed > limits.ratioFloorBytes &&
        e.uncompressed / Math.max(e.compressed, 1) > limits.compressionRatio
      ) {
        throw new ProductSyncError(
          'PS_ERR_FILE_TOO_LARGE',
          `${file}: ${e.name} would inflate ${Math.round(e.uncompressed / Math.max(e.compressed, 1))}× (more than ${limits.compressionRatio}×): refused as a possible zip bomb`,
        );
      }
    }
    if (declared > limits.unzippedBytes) {
      throw new ProductSyncError(
        'PS_ERR_FILE_TOO_LARGE',
        `${file}: ${Math.round(declared / 1024 ** 2)} MB once unzipped, more than the limit of ${Math.round(limits.unzippedBytes / 1024 ** 2)} MB`,
      );
    }
    const small = async (name: string) => {
      const e = byName.get(name);
      return e ? ((await scanEntry(file, fh, e, budget, limits, { keep: true, sheet: false })).text ?? '') : '';
    };
    const workbookXml = await small('xl/workbook.xml');
    const relsXml = await small('xl/_rels/workbook.xml.rels');
    const rels = parseRels(relsXml);
    const sheets = parseSheets(workbookXml, rels.byId);
    const wanted = sheetName?.trim().toLowerCase();
    const target =
      wanted !== undefined
        ? sheets.find((s) => s.name.trim().toLowerCase() === wanted)
        : sheets.find((s) => s.state === 'visible');
    if (!target) {
      throw new ProductSyncError(
        'PS_ERR_FILE_HEADER',
        sheetName !== undefined
          ? `${file}: no worksheet named "${sheetName}" (the workbook has: ${sheets.map((s) => s.name).join(', ') || 'none'})`
          : `${file}: the workbook has no visible worksheet`,
      );
    }
    const date1904 = /<(?:\w+:)?workbookPr\s[^>]*\bdate1904="(1|true)"/.test(workbookXml);
    const part = (type: string, usual: string) =>
      byName.get(rels.byType.get(type) ?? usual) ?? byName.get(usual) ?? null;
    const parts: WorkbookParts = {
      worksheet: target.path ? (byName.get(target.path) ?? null) : null,
      sharedStrings: part('sharedStrings', 'xl/sharedStrings.xml'),
      styles: part('styles', 'xl/styles.xml'),
    };
    head = { sheets, target, date1904, parts };
  } catch (err) {
    await fh.close();
    throw err;
  }

  const scan = async (): Promise<WorkbookInspection> => {
    try {
      const { target } = head;
      let found: ScanResult | null = null;
      for (const e of entries) {
        if (e.name === 'xl/workbook.xml' || e.name === 'xl/_rels/workbook.xml.rels') continue;
        const isTarget = e.name === target.path;
        const r = await scanEntry(file, fh, e, budget, limits, { keep: false, sheet: isTarget });
        if (isTarget) found = r;
      }
      if (!found)
        throw damaged(file, `the part of worksheet "${target.name}" (${target.path ?? 'unnamed'}) is missing`);
      const merges = [...found.merges.values()].sort((a, b) => a.top - b.top);
      return { ...head, hiddenRows: found.hiddenRows, hiddenColumns: [...found.hiddenColumns.values()], merges };
    } finally {
      await fh.close();
    }
  };
  return { head, scan };
}

/**
 * Checks and inspects a workbook before its worksheet is streamed: it is a spreadsheet (xl/workbook.xml present), every
 * entry's declared and actual inflated size within the caps (total and ratio: zip bombs — a lying header is caught as
 * it inflates), no XML part declares a DOCTYPE or entities (billion laughs, external entities); picks the worksheet
 * (by name, else the first visible one in the workbook's order) and collects its hidden rows/columns and merged cells.
 * Both parts of startInspection, one after the other.
 */
export async function inspectWorkbook(
  file: string,
  limits: ReadLimits,
  sheetName?: string,
): Promise<WorkbookInspection> {
  return (await startInspection(file, limits, sheetName)).scan();
}
