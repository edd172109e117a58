import { open, type FileHandle } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { createInflateRaw } from 'node:zlib';
import { ProductSyncError } from '../../errors.ts';
import type { ReadLimits } from './limits.ts';

interface ZipEntry {
  name: string;
  method: number;
  compressed: number;
  uncompressed: number;
  localHeader: number;
}

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

/** What the inspection of a workbook learnt before exceljs streams it. */
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
   * The shared strings, read here when xl/sharedStrings.xml comes after the target worksheet in the zip (null
   * otherwise): exceljs's streaming reader meets the worksheet first and, when the strings are the zip's last entry,
   * never reads them, leaving `{sharedString: n}` cells — readXlsx looks those up here.
   */
  sharedStrings: string[] | null;
}

const damaged = (file: string, why: string) =>
  new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: the workbook is damaged or truncated (${why}); ask for the file again, or open it in Excel and save it again as .xlsx`);

/** The entries of a zip from its central directory (read from the end of the file, before anything is inflated). */
async function centralDirectory(file: string, fh: FileHandle): Promise<ZipEntry[]> {
  const { size } = await fh.stat();
  const tailLen = Math.min(size, 65_557);
  const tail = Buffer.alloc(tailLen);
  await fh.read(tail, 0, tailLen, size - tailLen);
  const eocd = tail.lastIndexOf(Buffer.from([0x50, 0x4b, 0x05, 0x06]));
  if (eocd < 0 || eocd + 22 > tail.length) throw damaged(file, 'no zip directory at its end');
  let count = tail.readUInt16LE(eocd + 10);
  let cdSize = tail.readUInt32LE(eocd + 12);
  let cdOffset = tail.readUInt32LE(eocd + 16);
  if (count === 0xffff || cdSize === 0xffffffff || cdOffset === 0xffffffff) {
    // Zip64: the real values are in the zip64 end record, found through the locator just before the end record.
    const loc = eocd - 20;
    if (loc < 0 || tail.readUInt32LE(loc) !== 0x07064b50) throw damaged(file, 'zip64 directory locator missing');
    const recAt = Number(tail.readBigUInt64LE(loc + 8));
    const rec = Buffer.alloc(56);
    await fh.read(rec, 0, 56, recAt);
    if (rec.readUInt32LE(0) !== 0x06064b50) throw damaged(file, 'zip64 directory record missing');
    count = Number(rec.readBigUInt64LE(32));
    cdSize = Number(rec.readBigUInt64LE(40));
    cdOffset = Number(rec.readBigUInt64LE(48));
  }
  if (cdOffset + cdSize > size || cdSize > 64 * 1024 * 1024) throw damaged(file, 'zip directory out of the file');
  const cd = Buffer.alloc(cdSize);
  await fh.read(cd, 0, cdSize, cdOffset);
  const entries: ZipEntry[] = [];
  let p = 0;
  for (let i = 0; i < count; i++) {
    if (p + 46 > cd.length || cd.readUInt32LE(p) !== 0x02014b50) throw damaged(file, 'zip directory entry unreadable');
    const nameLen = cd.readUInt16LE(p + 28);
    const extraLen = cd.readUInt16LE(p + 30);
    const commentLen = cd.readUInt16LE(p + 32);
    const e: ZipEntry = {
      method: cd.readUInt16LE(p + 10),
      compressed: cd.readUInt32LE(p + 20),
      uncompressed: cd.readUInt32LE(p + 24),
      localHeader: cd.readUInt32LE(p + 42),
      name: cd.toString('utf8', p + 46, p + 46 + nameLen),
    };
    // Zip64 extra field (0x0001): the 64-bit values, in this order, of the fields that are 0xffffffff.
    for (let x = p + 46 + nameLen; x + 4 <= p + 46 + nameLen + extraLen; ) {
      const id = cd.readUInt16LE(x);
      const len = cd.readUInt16LE(x + 2);
      if (id === 0x0001) {
        let q = x + 4;
        const next = () => {
          const v = q + 8 <= x + 4 + len ? Number(cd.readBigUInt64LE(q)) : NaN;
          q += 8;
          return v;
        };
        if (e.uncompressed === 0xffffffff) e.uncompressed = next();
        if (e.compressed === 0xffffffff) e.compressed = next();
        if (e.localHeader === 0xffffffff) e.localHeader = next();
      }
      x += 4 + len;
    }
    if (![e.uncompressed, e.compressed, e.localHeader].every(Number.isFinite)) throw damaged(file, `zip entry ${e.name} unreadable`);
    if (e.localHeader + 30 + e.compressed > size) throw damaged(file, `${e.name} runs past the end of the file`);
    entries.push(e);
    p += 46 + nameLen + extraLen + commentLen;
  }
  return entries;
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

/** Column number (1-based) of letters `A`…`XFD`. */
function colNumber(letters: string): number {
  let n = 0;
  for (let i = 0; i < letters.length; i++) n = n * 26 + (letters.charCodeAt(i) - 64);
  return n;
}

/** A cell reference or range (`B2`, `A1:C3`) as a merged range; null when malformed. */
function parseRange(ref: string): MergedRange | null {
  const m = /^\$?([A-Z]{1,3})\$?(\d+)(?::\$?([A-Z]{1,3})\$?(\d+))?$/.exec(ref.toUpperCase());
  if (!m) return null;
  const left = colNumber(m[1]!);
  const top = Number(m[2]);
  const right = m[3] ? colNumber(m[3]) : left;
  const bottom = m[4] ? Number(m[4]) : top;
  return { ref, top: Math.min(top, bottom), left: Math.min(left, right), bottom: Math.max(top, bottom), right: Math.max(left, right) };
}

const XML_ENTITY = /&(amp|lt|gt|quot|apos|#x[0-9a-fA-F]+|#\d+);/g;
const decodeXml = (s: string): string =>
  !s.includes('&') ? s : s.replace(XML_ENTITY, (_, e: string) =>
    e === 'amp' ? '&' : e === 'lt' ? '<' : e === 'gt' ? '>' : e === 'quot' ? '"' : e === 'apos' ? "'" : String.fromCodePoint(e[1] === 'x' ? parseInt(e.slice(2), 16) : parseInt(e.slice(1), 10)));

const attr = (tag: string, name: string): string | null => {
  const m = new RegExp(`\\s${name}="([^"]*)"`).exec(tag);
  return m ? decodeXml(m[1]!) : null;
};

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
  const seam = Buffer.concat([prev.subarray(Math.max(0, prev.length - DOCTYPE.length)), chunk.subarray(0, DOCTYPE.length)]);
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

/** The bytes `[start, start + length)` of the file in pieces of up to 1 MB. */
async function* readRange(fh: FileHandle, start: number, length: number): AsyncGenerator<Buffer> {
  for (let pos = start, end = start + length; pos < end; ) {
    const buf = Buffer.allocUnsafe(Math.min(1 << 20, end - pos));
    const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
    if (bytesRead === 0) return;
    pos += bytesRead;
    yield bytesRead === buf.length ? buf : buf.subarray(0, bytesRead);
  }
}

interface EntryScan {
  /** Keep the inflated text (small parts: workbook.xml and its relationships). */
  keep: boolean;
  /** Look for hidden rows/columns and merged cells (the worksheet to read). */
  sheet: boolean;
  /** Collect the shared strings (xl/sharedStrings.xml), one `<si>` at a time. */
  strings?: boolean;
}

interface ScanResult {
  text: string | null;
  strings: string[] | null;
  hiddenRows: Set<number>;
  hiddenColumns: Map<string, { min: number; max: number }>;
  merges: Map<string, MergedRange>;
}

/**
 * Inflates one entry, counting what actually comes out (a zip may declare small sizes and inflate to gigabytes),
 * refusing entity declarations, and collecting what `scan` asks for.
 */
async function scanEntry(file: string, fh: FileHandle, e: ZipEntry, budget: { left: number }, limits: ReadLimits, scan: EntryScan): Promise<ScanResult> {
  const local = Buffer.alloc(30);
  await fh.read(local, 0, 30, e.localHeader);
  if (local.readUInt32LE(0) !== 0x04034b50) throw damaged(file, `no local header for ${e.name}`);
  const start = e.localHeader + 30 + local.readUInt16LE(26) + local.readUInt16LE(28);
  const result: ScanResult = { text: null, strings: scan.strings ? [] : null, hiddenRows: new Set(), hiddenColumns: new Map(), merges: new Map() };
  const stringsDecoder = scan.strings ? new StringDecoder('utf8') : null;
  let stringsPending = '';
  if (e.compressed === 0 && e.method !== 0) return result;
  if (e.method !== 0 && e.method !== 8) throw new ProductSyncError('PS_ERR_FILE_TYPE', `${file}: ${e.name} uses a zip compression method (${e.method}) that Excel does not write; save the sheet again as .xlsx`);
  const raw = Readable.from(readRange(fh, start, e.compressed));
  const source = e.method === 0 ? raw : raw.pipe(createInflateRaw({ chunkSize: 1 << 20 }));
  const xml = /\.(xml|rels|vml)$/i.test(e.name);
  const kept: Buffer[] = [];
  let out = 0;
  let prev: Buffer = Buffer.alloc(0);
  try {
    for await (const chunk of source as AsyncIterable<Buffer>) {
      out += chunk.length;
      budget.left -= chunk.length;
      if (out > e.uncompressed + 1024 || budget.left < 0) {
        throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', budget.left < 0
          ? `${file}: more than ${Math.round(limits.unzippedBytes / 1024 ** 2)} MB once unzipped: refused (a zip bomb, or a workbook too large to import)`
          : `${file}: ${e.name} inflates past the size its zip entry declares (${e.uncompressed} bytes): refused as a possible zip bomb`);
      }
      if (out > limits.ratioFloorBytes && out / Math.max(e.compressed, 1) > limits.compressionRatio) {
        throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: ${e.name} inflates more than ${limits.compressionRatio}× its compressed size: refused as a possible zip bomb`);
      }
      if (!xml) continue;
      // The tail of the previous chunk is searched again with this one, so a tag split between chunks is still found
      // whole (the results are keyed, so one seen twice counts once).
      const joined: Joined = { prev, chunk };
      if (declaresEntities(joined)) {
        throw new ProductSyncError('PS_ERR_FILE_TYPE', `${file}: ${e.name} declares XML entities (<!DOCTYPE/<!ENTITY); refused — a workbook saved by Excel never does`);
      }
      if (stringsDecoder) stringsPending = takeSharedStrings(stringsPending + stringsDecoder.write(chunk), result.strings!);
      if (scan.keep) {
        if (out > 32 * 1024 * 1024) throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: ${e.name} is larger than 32 MB`);
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
          if (result.merges.size >= limits.mergedRanges) throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: more than ${limits.mergedRanges} merged cell ranges`);
          result.merges.set(range.ref, range);
        }
      }
      prev = chunk.length >= OVERLAP ? chunk.subarray(chunk.length - OVERLAP) : Buffer.concat([prev, chunk]).subarray(-OVERLAP);
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

const SI = /<(?:\w+:)?si(?:\s[^>]*)?(?:\/>|>([\s\S]*?)<\/(?:\w+:)?si>)/g;
const PHONETIC = /<(?:\w+:)?rPh[\s>][\s\S]*?<\/(?:\w+:)?rPh>|<(?:\w+:)?phoneticPr[^>]*>/g;
const T = /<(?:\w+:)?t(?:\s[^>]*)?(?:\/>|>([\s\S]*?)<\/(?:\w+:)?t>)/g;

/**
 * Appends the text of every complete `<si>` of `xml` to `out` (rich-text runs joined, phonetic runs left out, XML
 * entities decoded; OOXML `_xHHHH_` escapes are left for the cell reader, as exceljs leaves them); returns the text
 * after the last complete one, to be continued by the next chunk.
 */
function takeSharedStrings(xml: string, out: string[]): string {
  let rest = 0;
  SI.lastIndex = 0;
  for (let m = SI.exec(xml); m !== null; m = SI.exec(xml)) {
    let text = '';
    const raw = m[1] ?? '';
    const body = raw.includes('rPh') || raw.includes('phoneticPr') ? raw.replace(PHONETIC, '') : raw;
    T.lastIndex = 0;
    for (let t = T.exec(body); t !== null; t = T.exec(body)) text += t[1] ?? '';
    out.push(decodeXml(text));
    rest = SI.lastIndex;
  }
  return xml.slice(rest);
}

/** The worksheets of workbook.xml in order, with their parts from its relationships. */
function parseSheets(workbookXml: string, relsXml: string): WorkbookSheet[] {
  const targets = new Map<string, string>();
  for (const m of relsXml.matchAll(/<(?:\w+:)?Relationship\s[^>]*>/g)) {
    const id = attr(m[0], 'Id');
    const target = attr(m[0], 'Target');
    if (!id || !target) continue;
    targets.set(id, target.startsWith('/') ? target.slice(1) : `xl/${target.replace(/^\.\//, '')}`);
  }
  const sheets: WorkbookSheet[] = [];
  for (const m of workbookXml.matchAll(/<(?:\w+:)?sheet\s[^>]*>/g)) {
    const name = attr(m[0], 'name');
    if (name === null) continue;
    const st = attr(m[0], 'state');
    const rid = attr(m[0], 'r:id') ?? /\s\w+:id="([^"]*)"/.exec(m[0])?.[1] ?? null;
    sheets.push({ name, state: st === 'hidden' || st === 'veryHidden' ? st : 'visible', path: rid ? targets.get(rid) ?? null : null });
  }
  return sheets;
}

/** What the first, fast part of the inspection learns (see startInspection): enough for exceljs to start. */
export type WorkbookHead = Pick<WorkbookInspection, 'sheets' | 'target' | 'date1904'>;

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
 * inflated — is left to `scan()`: the XLSX reader thread (xlsx-thread.ts) runs it while exceljs already parses.
 */
export async function startInspection(file: string, limits: ReadLimits, sheetName?: string): Promise<InspectionStarted> {
  const fh = await open(file, 'r');
  let head: WorkbookHead;
  let entries: ZipEntry[];
  let byName: Map<string, ZipEntry>;
  const budget = { left: limits.unzippedBytes };
  try {
    entries = await centralDirectory(file, fh);
    byName = new Map(entries.map((e) => [e.name, e]));
    if (!byName.has('xl/workbook.xml')) {
      if (entries.some((e) => e.name.startsWith('xl/'))) throw damaged(file, 'xl/workbook.xml is missing');
      const what = byName.has('word/document.xml') ? 'a Word document' : byName.has('ppt/presentation.xml') ? 'a PowerPoint file' : byName.has('content.xml') ? 'an OpenDocument file (.ods)' : 'a zip archive, not an Excel workbook';
      throw new ProductSyncError('PS_ERR_FILE_TYPE', `${file}: this is ${what}; save the sheet as .xlsx or CSV`);
    }
    let declared = 0;
    for (const e of entries) {
      declared += e.uncompressed;
      if (e.uncompressed > limits.ratioFloorBytes && e.uncompressed / Math.max(e.compressed, 1) > limits.compressionRatio) {
        throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: ${e.name} would inflate ${Math.round(e.uncompressed / Math.max(e.compressed, 1))}× (more than ${limits.compressionRatio}×): refused as a possible zip bomb`);
      }
    }
    if (declared > limits.unzippedBytes) {
      throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: ${Math.round(declared / 1024 ** 2)} MB once unzipped, more than the limit of ${Math.round(limits.unzippedBytes / 1024 ** 2)} MB`);
    }
    const small = async (name: string) => {
      const e = byName.get(name);
      return e ? (await scanEntry(file, fh, e, budget, limits, { keep: true, sheet: false })).text ?? '' : '';
    };
    const workbookXml = await small('xl/workbook.xml');
    const relsXml = await small('xl/_rels/workbook.xml.rels');
    const sheets = parseSheets(workbookXml, relsXml);
    const wanted = sheetName?.trim().toLowerCase();
    const target = wanted !== undefined ? sheets.find((s) => s.name.trim().toLowerCase() === wanted) : sheets.find((s) => s.state === 'visible');
    if (!target) {
      throw new ProductSyncError('PS_ERR_FILE_HEADER', sheetName !== undefined
        ? `${file}: no worksheet named "${sheetName}" (the workbook has: ${sheets.map((s) => s.name).join(', ') || 'none'})`
        : `${file}: the workbook has no visible worksheet`);
    }
    const date1904 = /<(?:\w+:)?workbookPr\s[^>]*\bdate1904="(1|true)"/.test(workbookXml);
    head = { sheets, target, date1904 };
  } catch (err) {
    await fh.close();
    throw err;
  }

  const scan = async (): Promise<WorkbookInspection> => {
    try {
      const { target } = head;
      let found: ScanResult | null = null;
      // Shared strings stored after the worksheet (zip order is local-header order) are collected while they are checked.
      const targetEntry = target.path ? byName.get(target.path) : undefined;
      const stringsEntry = byName.get('xl/sharedStrings.xml');
      const lateStrings = targetEntry !== undefined && stringsEntry !== undefined && stringsEntry.localHeader > targetEntry.localHeader;
      let sharedStrings: string[] | null = null;
      for (const e of entries) {
        if (e.name === 'xl/workbook.xml' || e.name === 'xl/_rels/workbook.xml.rels') continue;
        const isTarget = e.name === target.path;
        const isStrings = lateStrings && e === stringsEntry;
        const r = await scanEntry(file, fh, e, budget, limits, { keep: false, sheet: isTarget, strings: isStrings });
        if (isTarget) found = r;
        if (isStrings) sharedStrings = r.strings;
      }
      if (!found) throw damaged(file, `the part of worksheet "${target.name}" (${target.path ?? 'unnamed'}) is missing`);
      const merges = [...found.merges.values()].sort((a, b) => a.top - b.top);
      return { ...head, hiddenRows: found.hiddenRows, hiddenColumns: [...found.hiddenColumns.values()], merges, sharedStrings };
    } finally {
      await fh.close();
    }
  };
  return { head, scan };
}

/**
 * Checks and inspects a workbook before exceljs streams it: it is a spreadsheet (xl/workbook.xml present), every
 * entry's declared and actual inflated size within the caps (total and ratio: zip bombs — a lying header is caught as
 * it inflates), no XML part declares a DOCTYPE or entities (billion laughs, external entities); picks the worksheet
 * (by name, else the first visible one in the workbook's order) and collects its hidden rows/columns and merged cells.
 * Both parts of startInspection, one after the other.
 */
export async function inspectWorkbook(file: string, limits: ReadLimits, sheetName?: string): Promise<WorkbookInspection> {
  return (await startInspection(file, limits, sheetName)).scan();
}
