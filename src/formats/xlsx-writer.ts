import type { EventEmitter } from 'node:events';
import { createWriteStream, type WriteStream } from 'node:fs';
import { open, rm, type FileHandle } from 'node:fs/promises';
import { crc32, createDeflateRaw, deflateRawSync, type DeflateRaw, type ZlibOptions } from 'node:zlib';
import { ascii, ByteBatch, plainAscii, STREAM_BUFFER_BYTES } from './byte-batch.ts';
import { columnLetters } from './column-letters.ts';

/** Excel's sheet maximum is 1 048 576 rows, the header included. */
export const XLSX_MAX_DATA_ROWS = 1_048_575;
/** The worksheet part stays under this many bytes uncompressed: the zip then needs no Zip64 (4 GiB limit per entry). */
export const XLSX_MAX_SHEET_BYTES = 4_000_000_000;

/** Options of XlsxWriter. */
export interface XlsxWriterOptions {
  /** Data rows the sheet holds at most (default XLSX_MAX_DATA_ROWS); later rows are counted in rowsDropped. */
  maxRows?: number;
  /** Uncompressed bytes the worksheet part holds at most (default XLSX_MAX_SHEET_BYTES); rows past it are dropped. */
  maxSheetBytes?: number;
  /**
   * Deflate level of the worksheet part (default 1: a report sheet of repeated markup compresses about as well as at 6,
   * for much less CPU).
   */
  level?: number;
  /** Rows written above the header (a sheet whose header is not on row 1); the panes freeze them with the header. */
  preamble?: readonly (readonly string[])[];
  /** Columns (0-based) whose data values never need XML escaping (numbers, fixed words): written as they are. */
  plainColumns?: readonly number[];
  /**
   * Columns (0-based) whose data values are whole numbers written in decimal digits (row numbers): number cells, so
   * Excel sorts and filters them as numbers (as text, row 10 sorts before row 2), and fewer bytes than inline strings.
   * The caller guarantees the digits; an empty value leaves the cell empty.
   */
  numberColumns?: readonly number[];
  /**
   * A fixed table of shared strings (xl/sharedStrings.xml) and the columns (0-based) whose data values found in it are
   * written as references to it (`t="s"`, still string cells): a column of a few repeated words (outcomes) is
   * fewer bytes to build, encode and deflate than as inline strings.
   */
  sharedStrings?: { columns: readonly number[]; values: readonly string[] };
  /** Freezes the header row (and the preamble above it) so it stays in view while scrolling (default true). */
  freezeHeader?: boolean;
  /** An autofilter over the header and the data rows, as Excel's Filter button sets it (default false). */
  autoFilter?: boolean;
  /**
   * Column widths fitted to the header and the first this many data rows (default 0: the header alone). Widths come
   * before the rows in the worksheet part, so those rows are held back until the last of them (or close) arrives.
   */
  widthsFromRows?: number;
  /** Columns (0-based) of long text: a fixed wide column whose data cells wrap their text, aligned to the top. */
  wrapColumns?: readonly number[];
}

/** Width bounds of a fitted column, in characters: a narrow column still shows its filter button, a wide one fits. */
export const XLSX_MIN_WIDTH = 8;
export const XLSX_MAX_WIDTH = 60;
/** Width of a wrapped column (wrapColumns), in characters. */
export const XLSX_WRAP_WIDTH = 80;

// Characters XML 1.0 cannot hold: C0 controls but tab/LF/CR, lone surrogates, U+FFFE/U+FFFF.
// eslint-disable-next-line no-control-regex
const MAYBE_FORBIDDEN = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;
const FORBIDDEN =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
const SPECIAL = /[&<>"]/;
const SPECIALS = /[&<>"]/g;
// In character data (a cell's <t>) `"` is no markup: issue texts quote every value, and leaving them saves a replace.
const TEXT_SPECIAL = /[&<>]/;
const TEXT_SPECIALS = /[&<>]/g;
const ENTITY: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' };
// Excel reads `_xHHHH_` in text as an escaped character; a literal one is written with its `_` escaped, as Excel does.
const OOXML_ESCAPE_LIKE = /_(?=x[0-9A-Fa-f]{4}_)/g;
// Anything xmlText may change, in one scan: most report text has none of it.
// eslint-disable-next-line no-control-regex
const MAYBE_CHANGED = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF&<>"]|_x/;
// eslint-disable-next-line no-control-regex
const TEXT_MAYBE_CHANGED = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uD800-\uDFFF\uFFFE\uFFFF&<>]|_x/;

/** Text as an XML attribute value (or character data): `& < > "` escaped, characters XML 1.0 forbids dropped. */
export function xmlText(s: string, attribute = true): string {
  if (!(attribute ? MAYBE_CHANGED : TEXT_MAYBE_CHANGED).test(s)) return s;
  if (MAYBE_FORBIDDEN.test(s)) s = s.replace(FORBIDDEN, '');
  if (s.includes('_x')) s = s.replace(OOXML_ESCAPE_LIKE, '_x005F_');
  if (!attribute) return TEXT_SPECIAL.test(s) ? s.replace(TEXT_SPECIALS, (c) => ENTITY[c]!) : s;
  return SPECIAL.test(s) ? s.replace(SPECIALS, (c) => ENTITY[c]!) : s;
}

/** ASCII a cell's text holds as it is (xmlText would change none of it): not `& < >`, no control character but tab, LF
 * and CR, and no `_` (it may start a `_xHHHH_` that needs its own escape). */
const XML_TEXT_PLAIN = plainAscii('&<>_', '\t\n\r');

// A row's markup around its cells and the cells' values.
const ROW_OPEN = ascii('<row r="');
const TAG_END = ascii('">');
const ROW_END = ascii('</row>');
const NUMBER_VALUE = ascii('"><v>');
const SHARED_VALUE = ascii('" t="s"><v>');
const VALUE_END = ascii('</v></c>');
const INLINE = ascii('" t="inlineStr"><is><t>');
const INLINE_PRESERVED = ascii('" t="inlineStr"><is><t xml:space="preserve">');
const INLINE_END = ascii('</t></is></c>');
// The cell style of wrapped columns: cellXfs entry 1 of styles.xml.
const WRAP_STYLE = ascii('" s="1');

/** True when a cell's text starts or ends with white space (a line break too): Excel keeps it only if told so. */
const preserved = (t: string): boolean => t.charCodeAt(0) <= 32 || t.charCodeAt(t.length - 1) <= 32;

/**
 * Characters a value takes in a column: its longest line (a cell's line breaks show once it wraps), up to the widest a
 * column is fitted to.
 */
function textWidth(v: string): number {
  if (!v.includes('\n')) return Math.min(v.length, XLSX_MAX_WIDTH);
  let w = 0;
  for (const line of v.split('\n')) w = Math.max(w, line.length);
  return Math.min(w, XLSX_MAX_WIDTH);
}

/** A worksheet name Excel accepts: no `[]:*?/\`, not blank, at most 31 characters. */
function sheetTitle(name: string): string {
  const t = name
    .replace(/[[\]:*?/\\]/g, ' ')
    .trim()
    .slice(0, 31);
  return t === '' ? 'Sheet1' : t;
}

const XML_HEAD = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n';
const NS_MAIN = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const NS_REL = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';
const SHEET_PART = 'xl/worksheets/sheet1.xml';
const SHEET_DATA_END = '</sheetData>';
const SHEET_END = '</worksheet>';
const WORKBOOK_PART = 'xl/workbook.xml';
// The workbook's defined names end here; what follows is padded to the length the largest range would take.
const DEFINED_NAMES_END = '</definedNames>';

/** A sheet title as a formula names it: quoted, its quotes doubled. */
const quotedTitle = (title: string): string => `'${title.replace(/'/g, "''")}'`;

/**
 * workbook.xml; `filter`: the range of the sheet's autofilter, which Excel also keeps as the hidden defined name
 * `_xlnm._FilterDatabase` (and `padTo`: the bytes the part is padded to with white space between elements, so the
 * range of the last row can replace a placeholder in place).
 */
function workbookXml(title: string, filter?: string, padTo = 0): string {
  const names =
    filter === undefined
      ? ''
      : `<definedNames><definedName name="_xlnm._FilterDatabase" localSheetId="0" hidden="1">${xmlText(`${quotedTitle(title)}!${filter}`, false)}</definedName>`;
  const head = `${XML_HEAD}<workbook xmlns="${NS_MAIN}" xmlns:r="${NS_REL}"><bookViews><workbookView/></bookViews><sheets><sheet name="${xmlText(title)}" sheetId="1" r:id="rId1"/></sheets>${names}`;
  const tail = `${filter === undefined ? '' : DEFINED_NAMES_END}</workbook>`;
  return head + ' '.repeat(Math.max(0, padTo - Buffer.byteLength(head + tail))) + tail;
}

/** An absolute range of a sheet, `$A$1:$G$100`, from 1-based corners. */
const absoluteRange = (row1: number, col2: number, row2: number): string =>
  `$A$${row1}:$${columnLetters(col2)}$${row2}`;

/** The parts before the worksheet; `shared`: the shared strings table, when the writer has one. */
const smallParts = (shared: readonly string[]): [string, string][] => [
  [
    '[Content_Types].xml',
    `${XML_HEAD}<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>${shared.length > 0 ? '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/>' : ''}<Override PartName="/${SHEET_PART}" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/></Types>`,
  ],
  [
    '_rels/.rels',
    `${XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${NS_REL}/officeDocument" Target="xl/workbook.xml"/></Relationships>`,
  ],
  [
    'xl/_rels/workbook.xml.rels',
    `${XML_HEAD}<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="${NS_REL}/worksheet" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Type="${NS_REL}/styles" Target="styles.xml"/>${shared.length > 0 ? `<Relationship Id="rId3" Type="${NS_REL}/sharedStrings" Target="sharedStrings.xml"/>` : ''}</Relationships>`,
  ],
  [
    'xl/styles.xml',
    `${XML_HEAD}<styleSheet xmlns="${NS_MAIN}"><fonts count="1"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts><fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills><borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders><cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs><cellXfs count="2"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0" applyAlignment="1"><alignment vertical="top" wrapText="1"/></xf></cellXfs><cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles></styleSheet>`,
  ],
  ...(shared.length > 0
    ? [
        [
          'xl/sharedStrings.xml',
          `${XML_HEAD}<sst xmlns="${NS_MAIN}" uniqueCount="${shared.length}">${shared.map((v) => `<si><t xml:space="preserve">${xmlText(v, false)}</t></si>`).join('')}</sst>`,
        ] as [string, string],
      ]
    : []),
];

interface ZipEntry {
  name: Buffer;
  method: 0 | 8;
  crc: number;
  compressed: number;
  uncompressed: number;
  offset: number;
}

const FLAG_UTF8 = 0x0800;

/** DOS time and date of a moment (local time, 2-second resolution, 1980 at the earliest). */
function dosDateTime(d: Date): { time: number; date: number } {
  const year = Math.max(1980, d.getFullYear());
  return {
    time: (d.getHours() << 11) | (d.getMinutes() << 5) | Math.floor(d.getSeconds() / 2),
    date: ((year - 1980) << 9) | ((d.getMonth() + 1) << 5) | d.getDate(),
  };
}

/**
 * The fields a local header and its central directory record share, in the same order: version needed … name length.
 */
function entryFields(b: Buffer, at: number, e: ZipEntry, when: { time: number; date: number }): void {
  b.writeUInt16LE(20, at);
  b.writeUInt16LE(FLAG_UTF8, at + 2);
  b.writeUInt16LE(e.method, at + 4);
  b.writeUInt16LE(when.time, at + 6);
  b.writeUInt16LE(when.date, at + 8);
  b.writeUInt32LE(e.crc >>> 0, at + 10);
  b.writeUInt32LE(e.compressed, at + 14);
  b.writeUInt32LE(e.uncompressed, at + 18);
  b.writeUInt16LE(e.name.length, at + 22);
}

function localHeader(e: ZipEntry, when: { time: number; date: number }): Buffer {
  const b = Buffer.alloc(30 + e.name.length);
  b.writeUInt32LE(0x04034b50, 0);
  entryFields(b, 4, e, when);
  b.writeUInt16LE(0, 28);
  e.name.copy(b, 30);
  return b;
}

function centralDirectory(
  entries: readonly ZipEntry[],
  when: { time: number; date: number },
  cdOffset: number,
): Buffer {
  const parts: Buffer[] = [];
  for (const e of entries) {
    const b = Buffer.alloc(46 + e.name.length);
    b.writeUInt32LE(0x02014b50, 0);
    b.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix, zip 2.0
    entryFields(b, 6, e, when);
    // extra, comment, disk number, internal attributes: 0
    b.writeUInt32LE((0o100644 << 16) >>> 0, 38); // external attributes: a regular file, rw-r--r--
    b.writeUInt32LE(e.offset, 42);
    e.name.copy(b, 46);
    parts.push(b);
  }
  const cd = Buffer.concat(parts);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(entries.length, 8);
  end.writeUInt16LE(entries.length, 10);
  end.writeUInt32LE(cd.length, 12);
  end.writeUInt32LE(cdOffset, 16);
  return Buffer.concat([cd, end]);
}

/**
 * A streaming XLSX writer of one worksheet of text cells (inline strings, so identifiers keep their leading zeros):
 * a frozen header row, column widths from the header (or its first rows, widthsFromRows), optionally an autofilter and
 * wrapped columns, rows written as they come. Memory stays flat whatever the row count: rows are deflated (node:zlib,
 * on the libuv threadpool) and written to the file with backpressure; only the first widthsFromRows rows are held.
 *
 * The zip is written in one pass, then the worksheet's local header is patched with its CRC and sizes (all other
 * entries are small and written whole; with an autofilter, workbook.xml is stored, not deflated, and its range and CRC
 * are patched in place too: Excel names the range in the workbook part, which comes before the worksheet). No data
 * descriptors (general-purpose flag bit 3): streaming zip readers such as unzipper, which exceljs's WorkbookReader
 * uses, find the end of such an entry by searching the compressed bytes for the descriptor's signature, which deflate
 * output can hold by chance. No Zip64: the worksheet part is kept under `maxSheetBytes` (4 GB), rows past it or past
 * `maxRows` are dropped and counted in `rowsDropped`.
 */
export class XlsxWriter {
  readonly #path: string;
  readonly #out: WriteStream;
  readonly #deflate: DeflateRaw;
  readonly #maxRows: number;
  readonly #maxSheetBytes: number;
  readonly #when = dosDateTime(new Date());
  readonly #entries: ZipEntry[] = [];
  readonly #sheet: ZipEntry;
  // Per column, `<c r="` and its letters: a cell's markup up to its row number.
  readonly #cellOpen: Uint8Array[] = [];
  readonly #plain: boolean[] = [];
  readonly #number: boolean[] = [];
  // Per column, the shared strings its values are looked up in (undefined: inline strings only).
  readonly #shared: (ReadonlyMap<string, number> | undefined)[] = [];
  readonly #wrap: boolean[] = [];
  readonly #header: readonly string[];
  readonly #preamble: readonly (readonly string[])[];
  readonly #title: string;
  readonly #freeze: boolean;
  // The workbook part when it names the autofilter's range: stored, so close() can write the range in place.
  readonly #workbook: ZipEntry | null = null;
  #workbookBytes = 0;
  // Per column, the characters its widest value so far takes (the header and the first widthsFromRows rows).
  readonly #widths: number[];
  readonly #widthRows: number;
  // The first widthsFromRows rows, held back (copies) until the widths are decided; null once the sheet has begun.
  #pending: string[][] | null = null;
  // Bytes the sheet's end (autoFilter included) takes at most: the size limit keeps room for it.
  readonly #tailBytes: number;
  readonly #waiters = new Set<(err: Error) => void>();
  #offset = 0;
  // Rows are collected as bytes (BATCH_BYTES) before they go to the deflate stream: one zlib call per row would cost a
  // threadpool round trip each.
  readonly #batch = new ByteBatch();
  #sheetBytes = 0;
  #rowNumber = 1;
  #rowsWritten = 0;
  #rowsDropped = 0;
  #full = false;
  #error: Error | null = null;
  #state: 'open' | 'closing' | 'closed' | 'aborted' = 'open';

  constructor(path: string, sheetName: string, header: readonly string[], opts: XlsxWriterOptions = {}) {
    this.#path = path;
    const preamble = opts.preamble ?? [];
    this.#header = header;
    this.#preamble = preamble;
    this.#title = sheetTitle(sheetName);
    this.#freeze = opts.freezeHeader ?? true;
    this.#widthRows = Math.max(0, opts.widthsFromRows ?? 0);
    this.#widths = header.map((h) => textWidth(h));
    for (const c of opts.wrapColumns ?? []) this.#wrap[c] = true;
    this.#maxRows = opts.maxRows ?? XLSX_MAX_DATA_ROWS - preamble.length;
    const filter = opts.autoFilter === true && header.length > 0;
    // The sheet's last row at most: the autofilter's range, not known before close, takes no more room than this one's.
    const maxLastRow = preamble.length + 1 + Math.max(this.#maxRows, XLSX_MAX_DATA_ROWS);
    this.#tailBytes = Buffer.byteLength(this.#sheetTail(filter ? maxLastRow : null));
    this.#maxSheetBytes = Math.min(opts.maxSheetBytes ?? XLSX_MAX_SHEET_BYTES, XLSX_MAX_SHEET_BYTES);
    this.#out = createWriteStream(path, { highWaterMark: STREAM_BUFFER_BYTES });
    // Stream options go through to the Transform underneath (ZlibOptions does not list them).
    this.#deflate = createDeflateRaw({
      level: opts.level ?? 1,
      writableHighWaterMark: STREAM_BUFFER_BYTES,
    } as ZlibOptions);
    this.#out.on('error', (err) => this.#fail(err));
    this.#deflate.on('error', (err) => this.#fail(err));
    this.#deflate.on('data', (chunk: Buffer) => {
      this.#offset += chunk.length;
      this.#sheet.compressed += chunk.length;
      if (!this.#out.write(chunk)) this.#deflate.pause();
    });
    this.#out.on('drain', () => this.#deflate.resume());

    const parts = smallParts(opts.sharedStrings?.values ?? []);
    // workbook.xml after the package's relationships, where it always was; its range is the largest until close().
    const maxFilter = absoluteRange(preamble.length + 1, header.length, maxLastRow);
    parts.splice(2, 0, [WORKBOOK_PART, workbookXml(this.#title, filter ? maxFilter : undefined)]);
    for (const [name, xml] of parts) {
      const data = Buffer.from(xml);
      if (name === WORKBOOK_PART && filter) {
        this.#workbookBytes = data.length;
        this.#workbook = {
          name: Buffer.from(name),
          method: 0,
          crc: crc32(data),
          compressed: data.length,
          uncompressed: data.length,
          offset: this.#offset,
        };
        this.#put(this.#workbook, data);
        continue;
      }
      const packed = deflateRawSync(data);
      this.#put(
        {
          name: Buffer.from(name),
          method: 8,
          crc: crc32(data),
          compressed: packed.length,
          uncompressed: data.length,
          offset: this.#offset,
        },
        packed,
      );
    }
    // The worksheet's header goes out with zero CRC and sizes; close() writes them in once known.
    this.#sheet = {
      name: Buffer.from(SHEET_PART),
      method: 8,
      crc: 0,
      compressed: 0,
      uncompressed: 0,
      offset: this.#offset,
    };
    this.#put(this.#sheet);

    for (const c of opts.plainColumns ?? []) this.#plain[c] = true;
    for (const c of opts.numberColumns ?? []) this.#number[c] = true;
    if (opts.sharedStrings) {
      const index = new Map(opts.sharedStrings.values.map((v, i) => [v, i]));
      for (const c of opts.sharedStrings.columns) this.#shared[c] = index;
    }
    if (this.#widthRows > 0) this.#pending = [];
    else this.#begin();
  }

  /**
   * Starts the worksheet part once the column widths are decided: sheet view, columns, the rows above the header, the
   * header, then the rows held back for the widths. The elements keep CT_Worksheet's order (sheetViews, sheetFormatPr,
   * cols, sheetData; autoFilter after sheetData), which Excel requires.
   */
  #begin(): void {
    const pending = this.#pending ?? [];
    this.#pending = null;
    const top = this.#preamble.length + 2;
    const cols = this.#widths
      .map((w, i) => {
        const wrap = this.#wrap[i] === true;
        const width = wrap ? XLSX_WRAP_WIDTH : Math.min(XLSX_MAX_WIDTH, Math.max(XLSX_MIN_WIDTH, w + 2));
        return `<col min="${i + 1}" max="${i + 1}" width="${width}"${wrap ? ' style="1"' : ''} customWidth="1"/>`;
      })
      .join('');
    const view = this.#freeze
      ? `<sheetView workbookViewId="0"><pane ySplit="${top - 1}" topLeftCell="A${top}" activePane="bottomLeft" state="frozen"/><selection pane="bottomLeft" activeCell="A${top}" sqref="A${top}"/></sheetView>`
      : '<sheetView workbookViewId="0"/>';
    this.#batch.text(
      `${XML_HEAD}<worksheet xmlns="${NS_MAIN}" xmlns:r="${NS_REL}">` +
        `<sheetViews>${view}</sheetViews>` +
        '<sheetFormatPr defaultRowHeight="15"/>' +
        (cols ? `<cols>${cols}</cols>` : '') +
        '<sheetData>',
    );
    for (const r of this.#preamble) this.#row(r);
    this.#row(this.#header);
    for (const values of pending) this.#append(values);
  }

  /** The end of the worksheet part; `lastRow`: the autofilter's last row (null: no autofilter). */
  #sheetTail(lastRow: number | null): string {
    if (lastRow === null) return SHEET_DATA_END + SHEET_END;
    const first = this.#preamble.length + 1;
    const ref = `A${first}:${columnLetters(this.#header.length)}${Math.max(first, lastRow)}`;
    return `${SHEET_DATA_END}<autoFilter ref="${ref}"/>${SHEET_END}`;
  }

  /** Data rows written to the sheet so far. */
  get rowsWritten(): number {
    return this.#rowsWritten;
  }

  /** Data rows not written because the sheet was full (row limit or size limit). */
  get rowsDropped(): number {
    return this.#rowsDropped;
  }

  /**
   * Adds a data row (every value a text cell; empty strings leave the cell empty). Resolves once the writer can take
   * more.
   */
  async line(values: readonly string[]): Promise<void> {
    await this.add(values);
  }

  /**
   * {@link line} for a caller writing many rows: returns a promise only when the writer must be waited for (a batch
   * went to zlib and its buffer is full), so most rows cost no promise. Throws when the writer is closed or failed.
   */
  add(values: readonly string[]): Promise<void> | undefined {
    this.#check('line');
    if (this.#pending) {
      // A copy: the caller may reuse its list for the next row.
      this.#pending.push(values.slice());
      for (let i = 0; i < values.length && i < this.#widths.length; i++) {
        const v = values[i];
        if (v && v.length > this.#widths[i]!) this.#widths[i] = Math.max(this.#widths[i]!, textWidth(v));
      }
      if (this.#pending.length < this.#widthRows) return undefined;
      this.#begin();
    } else this.#append(values);
    return this.#batch.full ? this.#flush() : undefined;
  }

  /** Appends a data row to the batch, or counts it dropped when the sheet is full. */
  #append(values: readonly string[]): void {
    if (this.#full || this.#rowsWritten >= this.#maxRows) {
      this.#rowsDropped++;
      return;
    }
    const start = this.#batch.length;
    this.#row(values, this.#plain, this.#shared, this.#number, this.#wrap);
    if (this.#over(this.#batch.length)) {
      this.#batch.truncate(start);
      this.#full = true;
      this.#rowsDropped++;
      return;
    }
    this.#rowsWritten++;
  }

  /** Ends the sheet and the zip; the file is complete once this resolves. Rejects with the first error of the file. */
  async close(): Promise<void> {
    if (this.#state !== 'open') throw this.#error ?? new Error(`${this.#path}: close after close or abort`);
    if (this.#error) {
      const err = this.#error;
      await this.abort();
      throw err;
    }
    this.#state = 'closing';
    try {
      if (this.#pending) this.#begin();
      const lastRow = this.#rowNumber - 1;
      this.#batch.text(this.#sheetTail(this.#workbook ? lastRow : null));
      await this.#flush();
      const ended = this.#until(this.#deflate, 'end');
      this.#deflate.end();
      await ended;
      this.#sheet.uncompressed = this.#sheetBytes;
      if (this.#sheet.compressed > 0xffffffff || this.#offset > 0xffffffff)
        throw new Error(`${this.#path}: the workbook outgrew 4 GiB`);
      if (this.#workbook) {
        // The directory is written now: it takes the CRC of the workbook part as close() rewrites it.
        this.#workbook.crc = crc32(this.#workbookData(lastRow));
      }
      this.#write(centralDirectory(this.#entries, this.#when, this.#offset));
      const closed = this.#until(this.#out, 'close');
      this.#out.end();
      await closed;
      const fh = await open(this.#path, 'r+');
      try {
        const sizes = Buffer.alloc(12);
        sizes.writeUInt32LE(this.#sheet.crc >>> 0, 0);
        sizes.writeUInt32LE(this.#sheet.compressed, 4);
        sizes.writeUInt32LE(this.#sheet.uncompressed, 8);
        await fh.write(sizes, 0, 12, this.#sheet.offset + 14);
        if (this.#workbook) await this.#patchWorkbook(fh, lastRow);
      } finally {
        await fh.close();
      }
      this.#state = 'closed';
    } catch (err) {
      this.#fail(err as Error);
      await this.abort();
      throw this.#error ?? err;
    }
  }

  /** workbook.xml naming the autofilter down to `lastRow`, as many bytes as the placeholder written first. */
  #workbookData(lastRow: number): Buffer {
    const range = absoluteRange(this.#preamble.length + 1, this.#header.length, lastRow);
    const data = Buffer.from(workbookXml(this.#title, range, this.#workbookBytes));
    if (data.length !== this.#workbookBytes) throw new Error(`${this.#path}: workbook part outgrew its placeholder`);
    return data;
  }

  /** Writes the autofilter's range in place of the placeholder of workbook.xml, and its CRC in the local header. */
  async #patchWorkbook(fh: FileHandle, lastRow: number): Promise<void> {
    const e = this.#workbook!;
    const data = this.#workbookData(lastRow);
    const crc = Buffer.alloc(4);
    crc.writeUInt32LE(e.crc >>> 0, 0);
    await fh.write(crc, 0, 4, e.offset + 14);
    await fh.write(data, 0, data.length, e.offset + 30 + e.name.length);
  }

  /** Stops writing and removes the partial file. */
  async abort(): Promise<void> {
    if (this.#state === 'aborted' || this.#state === 'closed') return;
    this.#state = 'aborted';
    this.#fail(new Error(`${this.#path}: writer aborted`));
    this.#deflate.destroy();
    if (!this.#out.closed) {
      const closed = new Promise<void>((resolve) => this.#out.once('close', () => resolve()));
      this.#out.destroy();
      await closed;
    }
    await rm(this.#path, { force: true });
  }

  #check(what: string): void {
    if (this.#error) throw this.#error;
    if (this.#state !== 'open') throw new Error(`${this.#path}: ${what} after close or abort`);
  }

  /** Appends the XML of the next row to the batch; cells of empty values are left out. */
  #row(
    values: readonly string[],
    plain: readonly boolean[] = [],
    shared: readonly (ReadonlyMap<string, number> | undefined)[] = [],
    numbers: readonly boolean[] = [],
    wrap: readonly boolean[] = [],
  ): void {
    const b = this.#batch;
    b.bytes(ROW_OPEN);
    // The row number, then again in every cell reference.
    const at = b.length;
    const digits = b.int(this.#rowNumber++);
    b.bytes(TAG_END);
    for (let i = 0; i < values.length; i++) {
      const v = values[i];
      if (!v) continue;
      const cell = b.length;
      b.bytes((this.#cellOpen[i] ??= ascii(`<c r="${columnLetters(i + 1)}`)));
      b.repeat(at, digits);
      if (wrap[i] === true) b.bytes(WRAP_STYLE);
      if (numbers[i] === true) {
        b.bytes(NUMBER_VALUE);
        b.text(v);
        b.bytes(VALUE_END);
        continue;
      }
      const s = shared[i]?.get(v);
      if (s !== undefined) {
        b.bytes(SHARED_VALUE);
        b.int(s);
        b.bytes(VALUE_END);
        continue;
      }
      // Text as it is when it needs no escape (a plain column, most report text: plain ASCII), else escaped first.
      const mark = b.length;
      b.bytes(preserved(v) ? INLINE_PRESERVED : INLINE);
      if (plain[i] === true) b.text(v);
      else if (!b.plain(v, XML_TEXT_PLAIN)) {
        const t = xmlText(v, false);
        if (t === '') {
          b.truncate(cell);
          continue;
        }
        b.truncate(mark);
        b.bytes(preserved(t) ? INLINE_PRESERVED : INLINE);
        b.text(t);
      }
      b.bytes(INLINE_END);
    }
    b.bytes(ROW_END);
  }

  /** True when `bytes` more than the sheet holds now would leave no room for its end under maxSheetBytes. */
  #over(bytes: number): boolean {
    return this.#sheetBytes + bytes + this.#tailBytes > this.#maxSheetBytes;
  }

  /** Sends the collected rows to the deflate stream, waiting for it to drain when it is full. */
  async #flush(): Promise<void> {
    if (this.#batch.length === 0) return;
    const data = this.#batch.take();
    this.#sheetBytes += data.length;
    this.#sheet.crc = crc32(data, this.#sheet.crc);
    if (!this.#deflate.write(data)) await this.#until(this.#deflate, 'drain');
    if (this.#error) throw this.#error;
  }

  /** Writes bytes of the zip itself (headers, small entries, directory) to the file. */
  #write(b: Buffer): void {
    this.#out.write(b);
    this.#offset += b.length;
  }

  #put(e: ZipEntry, data?: Buffer): void {
    this.#entries.push(e);
    this.#write(localHeader(e, this.#when));
    if (data) this.#write(data);
  }

  /** Resolves on `event`, rejects on the first error of the file or the deflate stream (before or meanwhile). */
  #until(emitter: EventEmitter, event: string): Promise<void> {
    if (this.#error) return Promise.reject(this.#error);
    return new Promise((resolve, reject) => {
      const done = (err?: Error) => {
        emitter.off(event, ok);
        this.#waiters.delete(done);
        if (err) reject(err);
        else resolve();
      };
      const ok = () => done();
      emitter.once(event, ok);
      this.#waiters.add(done);
    });
  }

  #fail(err: Error): void {
    this.#error ??= err;
    for (const w of [...this.#waiters]) w(this.#error);
  }
}
