/**
 * The rows of a worksheet part (`xl/worksheets/sheetN.xml`), parsed from its XML text as it inflates: a streaming
 * parser that knows the few elements holding values (`sheetData`, `row`, `c`, `v`, `f`, `is`, `t`) and checks that
 * the rest is well-formed (one root, tags nested and closed, no text outside the root), without building anything for
 * the elements it skips. Namespace prefixes are ignored (`x:row` is a row), as are comments and processing
 * instructions; CDATA is text. Entity declarations never reach it: the inspection refuses them (zip-guard.ts).
 *
 * Values, as the OOXML cell types give them:
 * - `s`: the shared string (its text as stored; an index past the table is an error value);
 * - `str` (a formula's text), `inlineStr` (`<is>`: rich-text runs joined, phonetic runs left out): the text;
 * - `b`: a boolean; `e`: an error value (`#N/A`…); `d`: an ISO 8601 date (UTC when it names no zone);
 * - `n` or none: a number — a Date when the cell's format is a date or time format (the 1900 or 1904 system);
 * - a formula gives its cached value, typed the same way; one without a cached value is an error value (it was never
 *   calculated, or its result was not saved).
 * A cell without `r` follows the previous one; a row without `r` follows the previous row.
 */
import { refColumn } from './column-letters.ts';
import { decodeXml } from './xml-text.ts';

/** A cell's value as the worksheet gives it; `undefined` when empty. */
export type XlsxValue = string | number | boolean | Date | { error: string } | undefined;

/** A cell's value as the reader takes it: null or undefined when empty. */
export type RawValue = XlsxValue | null;

/** A worksheet row as it is read: its number and its values, 1-based (index 0 unused), empty cells undefined. */
export interface XlsxRow {
  number: number;
  values: readonly RawValue[];
}

/** The rows of the worksheet to read as its XML gives them, and how to stop reading them (closing the file). */
export interface WorksheetRows {
  rows: AsyncIterator<XlsxRow>;
  close(): Promise<void>;
}

/** What the values of a worksheet depend on outside it. */
export interface WorksheetContext {
  /** The part's name, for errors. */
  part: string;
  sharedStrings: readonly string[];
  /** By cell format index (a cell's `s`): whether its number format is a date or time. */
  dateStyles: readonly boolean[];
  date1904: boolean;
}

/** A worksheet part that is not well-formed XML (the reader words it as a file-level error). */
export class WorksheetXmlError extends Error {}

export const FORMULA_WITHOUT_RESULT = 'a formula without a usable result (an error, or never calculated)';

// What the text of an element is kept for.
const NONE = 0;
const V = 1;
const T = 2;

const MS_PER_DAY = 86_400_000;
// Day 0 of each date system as milliseconds since 1970 (Excel's serial 25569 is 1970-01-01 in the 1900 system, with
// its fictitious 29 February 1900 before it, as every reader counts it).
const EPOCH_1900 = -25_569 * MS_PER_DAY;
const EPOCH_1904 = -24_107 * MS_PER_DAY;

const isSpace = (c: number) => c === 32 || c === 10 || c === 13 || c === 9;

/** Line ends as an XML parser gives them: CR LF and a lone CR are LF (a CR written `&#13;` stays). */
const newlines = (text: string): string => (text.includes('\r') ? text.replace(/\r\n?/g, '\n') : text);

/** The local name of a qualified name (`x:row` → `row`). */
const localName = (name: string): string => {
  const colon = name.indexOf(':');
  return colon < 0 ? name : name.slice(colon + 1);
};

/**
 * Feed it the worksheet's text in pieces (`write`), then `end()`; each complete row is passed to `onRow` as it closes.
 * Not well-formed XML throws a WorksheetXmlError naming the part.
 */
export class WorksheetXml {
  private carry = '';
  // Inside a comment or a processing instruction that continues in the next piece: what ends it.
  private skipUntil: string | null = null;
  private readonly stack: string[] = [];
  private rootClosed = false;
  private inSheetData = false;
  // The row being read: its values (1-based, index 0 unused), its number; the last row's number.
  private values: XlsxValue[] | null = null;
  private rowNumber = 0;
  private lastRow = 0;
  // The cell being read.
  private inCell = false;
  private column = 0;
  private style = 0;
  private type = '';
  private formula = false;
  private v: string | null = null;
  private inline: string | null = null;
  private phonetic = 0;
  private capture = NONE;
  private text = '';

  constructor(
    private readonly context: WorksheetContext,
    private readonly onRow: (row: XlsxRow) => void,
  ) {}

  private fail(why: string): never {
    throw new WorksheetXmlError(`${this.context.part} is not well-formed XML: ${why}`);
  }

  /** Parses the next piece of text. */
  write(piece: string): void {
    let s = this.carry.length > 0 ? this.carry + piece : piece;
    this.carry = '';
    if (this.skipUntil !== null) {
      const end = s.indexOf(this.skipUntil);
      if (end < 0) {
        this.skip(s, 0, this.skipUntil);
        return;
      }
      s = s.slice(end + this.skipUntil.length);
      this.skipUntil = null;
    }
    const n = s.length;
    let i = 0;
    while (i < n) {
      const lt = s.indexOf('<', i);
      if (lt < 0) {
        this.trailingText(s, i);
        return;
      }
      if (lt > i) this.characters(s, i, lt);
      if (lt + 1 >= n) {
        this.carry = s.slice(lt);
        return;
      }
      const c1 = s.charCodeAt(lt + 1);
      if (c1 === 47 /* / */) {
        const gt = s.indexOf('>', lt + 2);
        if (gt < 0) {
          this.carry = s.slice(lt);
          return;
        }
        let end = gt;
        while (end > lt + 2 && isSpace(s.charCodeAt(end - 1))) end--;
        this.close(s.slice(lt + 2, end));
        i = gt + 1;
      } else if (c1 === 33 /* ! */) {
        const next = this.declaration(s, lt);
        if (next < 0) {
          this.carry = s.slice(lt);
          return;
        }
        i = next;
      } else if (c1 === 63 /* ? */) {
        const end = s.indexOf('?>', lt + 2);
        if (end < 0) {
          this.skip(s, lt + 2, '?>');
          return;
        }
        i = end + 2;
      } else {
        const next = this.open(s, lt);
        if (next < 0) {
          this.carry = s.slice(lt);
          return;
        }
        i = next;
      }
    }
  }

  /** The rest of `s` is inside a comment or processing instruction that `until` ends, in a later piece. */
  private skip(s: string, from: number, until: string): void {
    this.skipUntil = until;
    this.carry = s.slice(Math.max(from, s.length - (until.length - 1)));
  }

  /** The end of the text: everything opened must be closed. */
  end(): void {
    if (this.skipUntil !== null)
      this.fail(`it ends inside a comment or processing instruction (the part is truncated)`);
    if (this.carry.trim().length > 0)
      this.fail(
        this.carry.startsWith('<') ? 'it ends inside a tag (the part is truncated)' : 'text after the root element',
      );
    if (this.stack.length > 0) this.fail(`it ends before </${this.stack.at(-1)}> (the part is truncated)`);
    if (!this.rootClosed) this.fail('no root element');
  }

  /** Text at the end of a piece: kept up to an entity that may continue in the next piece. */
  private trailingText(s: string, from: number): void {
    if (this.capture !== NONE) {
      const amp = s.lastIndexOf('&');
      let cut = amp >= from && s.indexOf(';', amp) < 0 ? amp : s.length;
      // A carriage return may be the first half of a CR LF.
      if (cut > from && s.charCodeAt(cut - 1) === 13) cut--;
      if (cut > from) this.characters(s, from, cut);
      this.carry = s.slice(cut);
    } else this.characters(s, from, s.length);
  }

  /** Character data between tags. */
  private characters(s: string, from: number, to: number): void {
    if (this.capture !== NONE) {
      if (this.phonetic === 0) this.text += decodeXml(newlines(s.slice(from, to)));
      return;
    }
    if (this.stack.length > 0) return;
    for (let k = from; k < to; k++) {
      const c = s.charCodeAt(k);
      if (!isSpace(c) && c !== 0xfeff)
        this.fail(this.rootClosed ? 'text after the root element' : 'text before the root element');
    }
  }

  /** `<!--…-->` or `<![CDATA[…]]>` at `lt`; the index after it, -1 when it is not complete in `s`. */
  private declaration(s: string, lt: number): number {
    if (s.startsWith('<!--', lt)) {
      const end = s.indexOf('-->', lt + 4);
      if (end >= 0) return end + 3;
      this.skip(s, lt + 4, '-->');
      return s.length;
    }
    if (s.startsWith('<![CDATA[', lt)) {
      const end = s.indexOf(']]>', lt + 9);
      if (end < 0) return -1;
      if (this.capture !== NONE) {
        if (this.phonetic === 0) this.text += newlines(s.slice(lt + 9, end));
      } else if (this.stack.length === 0) this.fail('CDATA outside the root element');
      return end + 3;
    }
    if (s.length - lt < 9) return -1;
    return this.fail(`unexpected "${s.slice(lt, lt + 9)}"`);
  }

  /** The opening (or empty-element) tag at `lt`; the index after it, -1 when it is not complete in `s`. */
  private open(s: string, lt: number): number {
    const n = s.length;
    let j = lt + 1;
    for (; j < n; j++) {
      const c = s.charCodeAt(j);
      if (isSpace(c) || c === 62 /* > */ || c === 47 /* / */) break;
    }
    if (j >= n) return -1;
    const name = s.slice(lt + 1, j);
    if (name.length === 0) this.fail(`a "<" that opens no tag`);
    // Attributes: those of rows and cells are kept.
    const local = name.indexOf(':') < 0 ? name : localName(name);
    const wanted = (local === 'c' && this.values !== null) || (local === 'row' && this.inSheetData);
    let r: string | null = null;
    let sAttr: string | null = null;
    let tAttr: string | null = null;
    let selfClosing = false;
    for (;;) {
      while (j < n && isSpace(s.charCodeAt(j))) j++;
      if (j >= n) return -1;
      const c = s.charCodeAt(j);
      if (c === 62 /* > */) {
        j++;
        break;
      }
      if (c === 47 /* / */) {
        if (j + 1 >= n) return -1;
        if (s.charCodeAt(j + 1) !== 62) this.fail(`"/" inside <${name}>`);
        selfClosing = true;
        j += 2;
        break;
      }
      const eq = s.indexOf('=', j);
      if (eq < 0) return -1;
      for (let k = j; k < eq; k++) {
        const ch = s.charCodeAt(k);
        if (ch === 62 || ch === 60 || ch === 47) this.fail(`an attribute without a value in <${name}>`);
      }
      const q = s.charCodeAt(eq + 1);
      let valueStart = eq + 1;
      let quote = q;
      if (q !== 34 && q !== 39) {
        // Spaces around `=` are allowed.
        while (valueStart < n && isSpace(s.charCodeAt(valueStart))) valueStart++;
        if (valueStart >= n) return -1;
        quote = s.charCodeAt(valueStart);
        if (quote !== 34 && quote !== 39) this.fail(`an unquoted attribute value in <${name}>`);
      }
      const close = s.indexOf(quote === 34 ? '"' : "'", valueStart + 1);
      if (close < 0) return -1;
      if (wanted) {
        let an = eq;
        while (an > j && isSpace(s.charCodeAt(an - 1))) an--;
        const attrName = s.slice(j, an);
        if (attrName === 'r') r = s.slice(valueStart + 1, close);
        else if (attrName === 's') sAttr = s.slice(valueStart + 1, close);
        else if (attrName === 't') tAttr = s.slice(valueStart + 1, close);
      }
      j = close + 1;
    }
    if (this.rootClosed) this.fail(`<${name}> after the root element`);
    this.start(local, r, sAttr, tAttr, selfClosing);
    if (!selfClosing) this.stack.push(name);
    else if (this.stack.length === 0) this.rootClosed = true;
    return j;
  }

  /** An element opens (and closes at once when `empty`). */
  private start(local: string, r: string | null, s: string | null, t: string | null, empty: boolean): void {
    if (this.inCell) {
      if (local === 'v') {
        this.v = '';
        if (!empty) this.begin(V);
      } else if (local === 'f') this.formula = true;
      else if (local === 'is') this.inline = '';
      else if (local === 't' && this.inline !== null && this.phonetic === 0) {
        if (!empty) this.begin(T);
      } else if (local === 'rPh' && !empty) this.phonetic++;
      return;
    }
    if (local === 'c' && this.values !== null) {
      const col = r === null ? 0 : refColumn(r);
      this.column = col > 0 ? col : this.column + 1;
      this.style = s === null ? 0 : Number(s) | 0;
      this.type = t ?? '';
      this.formula = false;
      this.v = null;
      this.inline = null;
      this.inCell = !empty;
      // An empty cell (`<c r="B2" s="3"/>`, formatted but empty) is a hole in the row: nothing to set.
    } else if (local === 'row' && this.inSheetData) {
      const at = r === null ? NaN : Number(r);
      this.rowNumber = Number.isInteger(at) && at > 0 ? at : this.lastRow + 1;
      this.values = [undefined];
      this.column = 0;
      if (empty) this.endRow();
    } else if (local === 'sheetData' && !empty) this.inSheetData = true;
  }

  private begin(capture: number): void {
    this.capture = capture;
    this.text = '';
  }

  /** `</name>`: it must close the innermost open element. */
  private close(name: string): void {
    const open = this.stack.pop();
    if (open !== name)
      this.fail(open === undefined ? `</${name}> closes nothing` : `</${name}> where </${open}> was expected`);
    if (this.stack.length === 0) this.rootClosed = true;
    const local = name.indexOf(':') < 0 ? name : localName(name);
    if (this.inCell) {
      if (local === 'v' && this.capture === V) {
        this.v = this.text;
        this.capture = NONE;
      } else if (local === 't' && this.capture === T) {
        this.inline += this.text;
        this.capture = NONE;
      } else if (local === 'rPh' && this.phonetic > 0) this.phonetic--;
      else if (local === 'c') {
        this.inCell = false;
        this.setCell(this.cellValue());
      }
    } else if (local === 'row' && this.values !== null) this.endRow();
    else if (local === 'sheetData') this.inSheetData = false;
  }

  private setCell(value: XlsxValue): void {
    const values = this.values!;
    const col = this.column;
    if (col < values.length) values[col] = value;
    else if (value !== undefined) {
      while (values.length < col) values.push(undefined);
      values.push(value);
    }
  }

  private endRow(): void {
    this.lastRow = this.rowNumber;
    const values = this.values!;
    this.values = null;
    this.onRow({ number: this.rowNumber, values });
  }

  /** The value of the cell that just closed. */
  private cellValue(): XlsxValue {
    const v = this.v;
    const type = this.type;
    if (type === 'inlineStr' && this.inline !== null) return this.inline;
    if (v === null)
      return this.formula
        ? { error: FORMULA_WITHOUT_RESULT }
        : type === 'inlineStr'
          ? (this.inline ?? undefined)
          : undefined;
    switch (type) {
      case 's': {
        const text = this.context.sharedStrings[Number(v)];
        return text ?? { error: 'a missing shared string' };
      }
      case 'str':
      case 'inlineStr':
        return v;
      case 'e':
        return { error: v.trim() };
      case 'b': {
        const b = v.trim();
        return b === '1' || b === 'true'
          ? true
          : b === '0' || b === 'false'
            ? false
            : { error: `a boolean that reads "${b}"` };
      }
      case 'd': {
        const iso = v.trim();
        const date = new Date(/(Z|[+-]\d\d:?\d\d)$/.test(iso) || !iso.includes('T') ? iso : `${iso}Z`);
        return Number.isNaN(date.getTime()) ? { error: `a date that reads "${iso}"` } : date;
      }
      default: {
        const text = v.trim();
        if (text.length === 0) return this.formula ? { error: FORMULA_WITHOUT_RESULT } : undefined;
        const num = Number(text);
        if (this.context.dateStyles[this.style] === true && Number.isFinite(num)) {
          return new Date(Math.round(num * MS_PER_DAY + (this.context.date1904 ? EPOCH_1904 : EPOCH_1900)));
        }
        return num;
      }
    }
  }
}
