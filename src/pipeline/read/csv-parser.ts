/**
 * The CSV core parser of read-csv.ts: the record-splitting rules of papaparse's core parser (5.x, `Papa.Parser` with a
 * one-character delimiter, `"` as quote and escape, one newline), written again for the reader's hot path — fields go
 * into one reused buffer handed to a callback per record (no array per record, no batch of records), a quoted cell is
 * unescaped only when it holds `""`, and the spaces-after-a-closing-quote test reads character codes instead of
 * cutting substrings. test/csv-parser.test.ts checks it against papaparse on generated texts, malformed ones included.
 *
 * The rules, as papaparse has them: a quote opens a quoted cell only at the start of a field; inside one, `""` is a
 * quote; a quote closes the cell when only whitespace stands between it and the next delimiter or newline (the
 * whitespace is dropped); any other quote is kept as text and the search goes on; a quoted cell never closed takes the
 * rest of the text (without its opening quote, `""` kept as typed). Line ends must already be the one `newline`
 * outside quoted cells (read-csv.ts's lineEndNormalizer sees to that).
 */

/** Receives each record: its fields are `fields[0..count-1]` (the buffer is reused: copy what you keep). */
export type OnRecord = (fields: readonly string[], count: number) => void;

const QUOTE = 34;
const LF = 10;
const ESCAPED_QUOTE = /""/g;

/** The number of whitespace characters from `from` to `to` (exclusive) when there are only such there, else 0 (papaparse's extraSpaces). */
function blankRun(input: string, from: number, to: number): number {
  if (to <= from) return 0;
  // Spaces are the usual case; anything else goes through trim() (JavaScript's whitespace, as papaparse tests it).
  for (let i = from; i < to; i++) if (input.charCodeAt(i) !== 32) return input.slice(from, to).trim() === '' ? to - from : 0;
  return to - from;
}

/** A pull parser of CSV text given in pieces: `parse` takes what it can, the caller keeps the rest and prepends it to the next piece. */
export class CsvParser {
  private readonly delim: string;
  private readonly delimCode: number;
  private readonly newline: string;
  private readonly newlineLen: number;
  private readonly newlineCode: number;
  private readonly fields: string[] = [];

  constructor(delimiter: string, newline: '\n' | '\r\n' | '\r') {
    if (delimiter.length !== 1 || delimiter === '"' || delimiter === '\n' || delimiter === '\r') throw new Error(`unsupported CSV delimiter ${JSON.stringify(delimiter)}`);
    this.delim = delimiter;
    this.delimCode = delimiter.charCodeAt(0);
    this.newline = newline;
    this.newlineLen = newline.length;
    this.newlineCode = newline.charCodeAt(0);
  }

  /**
   * Parses `input` from `from` (a record's start): calls `onRecord` for each record ended by a newline, and for the last
   * one too when `final`. Returns where the unparsed rest starts (input.length when `final`); the rest holds at most
   * one record. A record's fields never depend on text after its newline, so the records of a text come out the same
   * whether it is parsed whole or in pieces (each piece starting with the rest of the one before).
   */
  parse(input: string, final: boolean, onRecord: OnRecord, from = 0): number {
    const len = input.length;
    const D = this.delim;
    const DC = this.delimCode;
    const NL = this.newline;
    const NLC = this.newlineCode;
    const nlLen = this.newlineLen;
    const fields = this.fields;
    let count = 0;
    let cursor = from;
    let rowStart = from;
    if (from >= len) return len;
    // The next delimiter and newline at or after the cursor (-1: none left), searched again only once passed.
    let nextDelim = input.indexOf(D, from);
    let nextNewline = input.indexOf(NL, from);
    for (;;) {
      if (input.charCodeAt(cursor) === QUOTE) {
        let q = cursor;
        cursor++;
        let escaped = false;
        for (;;) {
          q = input.indexOf('"', q + 1);
          if (q === -1) {
            // Never closed: the rest of the text, as typed.
            return this.finish(input, final, onRecord, fields, count, rowStart, input.slice(cursor));
          }
          if (q === len - 1) {
            const v = input.slice(cursor, q);
            return this.finish(input, final, onRecord, fields, count, rowStart, escaped ? v.replace(ESCAPED_QUOTE, '"') : v);
          }
          const after = input.charCodeAt(q + 1);
          if (after === QUOTE) {
            q++;
            escaped = true;
            continue;
          }
          if (nextDelim !== -1 && nextDelim <= q) nextDelim = input.indexOf(D, q + 1);
          if (nextNewline !== -1 && nextNewline <= q) nextNewline = input.indexOf(NL, q + 1);
          // The quote closes the cell when only whitespace stands between it and the next delimiter or newline.
          let end: number;
          if (after === DC) end = q + 1;
          else {
            const upTo = nextNewline === -1 ? nextDelim : Math.min(nextDelim, nextNewline);
            end = q + 1 + blankRun(input, q + 1, upTo);
            if (input.charCodeAt(end) !== DC) {
              end = q + 1 + blankRun(input, q + 1, nextNewline);
              if (input.charCodeAt(end) !== NLC || (nlLen === 2 && input.charCodeAt(end + 1) !== LF)) {
                // A quote inside the cell that closes nothing: text.
                q++;
                continue;
              }
            }
          }
          const v = input.slice(cursor, q);
          fields[count++] = escaped ? v.replace(ESCAPED_QUOTE, '"') : v;
          if (input.charCodeAt(end) === DC) {
            cursor = end + 1;
            if (nextDelim !== -1 && nextDelim < cursor) nextDelim = input.indexOf(D, cursor);
            if (nextNewline !== -1 && nextNewline < cursor) nextNewline = input.indexOf(NL, cursor);
          } else {
            cursor = end + nlLen;
            onRecord(fields, count);
            count = 0;
            rowStart = cursor;
            nextNewline = input.indexOf(NL, cursor);
            if (nextDelim !== -1 && nextDelim < cursor) nextDelim = input.indexOf(D, cursor);
          }
          break;
        }
        continue;
      }
      if (nextDelim !== -1 && (nextDelim < nextNewline || nextNewline === -1)) {
        fields[count++] = input.slice(cursor, nextDelim);
        cursor = nextDelim + 1;
        nextDelim = input.indexOf(D, cursor);
        continue;
      }
      if (nextNewline !== -1) {
        fields[count++] = input.slice(cursor, nextNewline);
        cursor = nextNewline + nlLen;
        onRecord(fields, count);
        count = 0;
        rowStart = cursor;
        nextNewline = input.indexOf(NL, cursor);
        continue;
      }
      break;
    }
    return this.finish(input, final, onRecord, fields, count, rowStart, input.slice(cursor));
  }

  /** The record the text ends in: emitted when `final`, else left for the next piece (its start returned). */
  private finish(input: string, final: boolean, onRecord: OnRecord, fields: string[], count: number, rowStart: number, last: string): number {
    if (!final) return rowStart;
    fields[count] = last;
    onRecord(fields, count + 1);
    return input.length;
  }
}
