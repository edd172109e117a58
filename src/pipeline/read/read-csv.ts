import iconv from 'iconv-lite';
import Papa from 'papaparse';
import { ProductSyncError } from '../../errors.ts';
import { decodeFile, detectFileEncoding, type TextEncoding } from './decode.ts';
import type { ReadLimits } from './limits.ts';
import { issue } from '../issue-codes.ts';
import type { Cell, Issue, Sheet, SheetRow } from '../types.ts';

export { detectEncoding, type TextEncoding } from './decode.ts';

/** Delimiters a header line is tested for, in the order that wins a tie (a header's labels hold commas more often than tabs or `;`). */
export const DELIMITERS = ['\t', ';', '|', ','] as const;

/** The delimiter the header line uses most, outside quotes (`,` when none appears). */
export function detectDelimiter(headerLine: string): string {
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const ch of headerLine) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best = ',';
  let n = 0;
  for (const [d, c] of counts) if (c > n) [best, n] = [d, c];
  return best;
}

/** The line break of the text: the first one outside quotes (`\r\n`, `\n` or a lone `\r`); `\n` when there is none. */
export function detectNewline(text: string): '\r\n' | '\n' | '\r' {
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const ch = text[i];
    if (ch === '"') quoted = !quoted;
    else if (!quoted && ch === '\n') return '\n';
    else if (!quoted && ch === '\r') return text[i + 1] === '\n' ? '\r\n' : i + 1 < text.length ? '\r' : '\n';
  }
  return '\n';
}

/** The `n`-th (1-based) line of a text prefix, quotes ignored; '' when the prefix is shorter. */
function lineOf(text: string, n: number): string {
  return text.split(/\r\n|\n|\r/, n)[n - 1] ?? '';
}

const CR = 13;
const LF = 10;
const QUOTE = 34;
const SPACE = 32;
const TAB = 9;

/**
 * A streaming line-end normaliser for CSV text: outside quoted cells, `\r\n`, a lone `\r` and a lone `\n` all become
 * `newline` (files mixing them — rows pasted from several sources, old Mac exports — are common, and papaparse splits
 * on one newline only); inside a quoted cell they stay as they are. The file's own newline is the usual target, so a
 * file that does not mix them goes through unchanged. Quotes are tracked as papaparse reads them: a quote opens a
 * quoted cell only at the start of a field, `""` inside is an escaped quote, and a quote closes the cell when only
 * spaces stand between it and a delimiter or a line end. State carries over between chunks, so a `\r\n` or a `""` cut
 * by a chunk boundary is read as one. Call with `end = true` after the last chunk (it may return a last `\n`).
 */
export function lineEndNormalizer(delimiter: string, newline: '\n' | '\r\n' | '\r' = '\n'): (chunk: string, end?: boolean) => string {
  const D = delimiter.charCodeAt(0);
  const isSep = (c: number) => c === D || c === LF || c === CR;
  let inQuote = false;
  // Inside a quoted cell: 0 normal, 1 right after a quote (which may close the cell or start a `""`), 2 after a quote and spaces.
  let afterQuote = 0;
  // Outside quotes, the next character starts a field (so a quote there opens a quoted cell).
  let fieldStart = true;
  // The previous chunk ended with a `\r` outside quotes (already written out as the target would have it but its `\n`).
  let pendingCr = false;
  return (chunk, end = false) => {
    const n = chunk.length;
    let out = '';
    let from = 0;
    let i = 0;
    if (pendingCr) {
      pendingCr = false;
      if (n > 0 && chunk.charCodeAt(0) === LF) {
        // The `\n` of a `\r\n` cut by the boundary: the `\r` already stood for the whole line end, except in CRLF.
        if (newline !== '\r\n') from = 1;
        i = 1;
      } else if (newline === '\r\n' && (n > 0 || end)) {
        out = '\n';
      } else if (n === 0 && !end) {
        pendingCr = true;
      }
    }
    let nextCr = -1;
    let nextLf = -1;
    let nextQuote = -1;
    while (i < n) {
      if (inQuote) {
        if (afterQuote === 0) {
          if (nextQuote < i) nextQuote = chunk.indexOf('"', i);
          if (nextQuote < 0) {
            nextQuote = n;
            i = n;
            break;
          }
          afterQuote = 1;
          i = nextQuote + 1;
          continue;
        }
        const c = chunk.charCodeAt(i);
        if (c === D || c === CR || c === LF) {
          // The quote closed the cell: this character is read outside quotes (below).
          inQuote = false;
          afterQuote = 0;
        } else {
          afterQuote = c === QUOTE ? (afterQuote === 1 ? 0 : 1) : c === SPACE || c === TAB ? 2 : 0;
          i++;
          continue;
        }
      }
      // Outside quotes: jump to the next line end or quote.
      if (nextCr < i) nextCr = chunk.indexOf('\r', i);
      if (nextCr < 0) nextCr = n;
      if (newline !== '\n') {
        if (nextLf < i) nextLf = chunk.indexOf('\n', i);
        if (nextLf < 0) nextLf = n;
      } else nextLf = n;
      if (nextQuote < i) nextQuote = chunk.indexOf('"', i);
      if (nextQuote < 0) nextQuote = n;
      const at = Math.min(nextCr, nextLf, nextQuote);
      if (at >= n) {
        i = n;
        break;
      }
      if (at === nextQuote) {
        if (at === 0 ? fieldStart : isSep(chunk.charCodeAt(at - 1))) {
          inQuote = true;
          afterQuote = 0;
        }
        i = at + 1;
        continue;
      }
      if (at === nextCr) {
        const lf = at + 1 < n && chunk.charCodeAt(at + 1) === LF;
        if (at + 1 >= n) pendingCr = true;
        if (newline === '\n') {
          out += `${chunk.slice(from, at)}\n`;
          from = lf ? at + 2 : at + 1;
        } else if (newline === '\r') {
          if (lf) {
            out += chunk.slice(from, at + 1);
            from = at + 2;
          }
        } else if (!lf && at + 1 < n) {
          out += `${chunk.slice(from, at + 1)}\n`;
          from = at + 1;
        }
        i = lf ? at + 2 : at + 1;
        continue;
      }
      // A lone `\n` (a `\r\n` was skipped whole above) in a CRLF or CR file.
      out += `${chunk.slice(from, at)}${newline}`;
      from = at + 1;
      i = at + 1;
    }
    if (!inQuote && n > 0) fieldStart = isSep(chunk.charCodeAt(n - 1));
    if (end && pendingCr) {
      pendingCr = false;
      if (newline === '\r\n') return `${from === 0 ? chunk : out + chunk.slice(from)}\n`;
    }
    return from === 0 && out === '' ? chunk : out + chunk.slice(from);
  };
}

/** The decoded text of a CSV file in chunks, line ends normalised to the file's newline outside quoted cells (lineEndNormalizer). */
async function* csvText(file: string, fmt: CsvFormat): AsyncGenerator<string> {
  const normalize = lineEndNormalizer(fmt.delimiter, fmt.newline);
  for await (const chunk of decodeFile(file, fmt.encoding)) {
    const s = normalize(chunk);
    if (s) yield s;
  }
  const last = normalize('', true);
  if (last) yield last;
}

interface CsvFormat {
  encoding: TextEncoding;
  delimiter: string;
  newline: '\r\n' | '\n' | '\r';
}

/** One parsed record: its fields and its record number (1-based, blank lines included — the row number Excel shows). */
interface RecordBatch {
  records: string[][];
  /** Record number of records[0]. */
  first: number;
  /** The decoded text holding these records had a U+FFFD (a byte that is not valid in the encoding). */
  replaced: boolean;
  /** The decoded text holding these records had a NUL character. */
  nul: boolean;
}

/**
 * Records of a CSV text in batches (one per decoded chunk), parsed by papaparse's core parser over text decoded before
 * parsing. A record still open after `limits.recordChars` characters stops the read with the line it started on: an
 * opening quote never closed would otherwise swallow the rest of the file.
 */
async function* csvRecords(file: string, fmt: CsvFormat, limits: ReadLimits): AsyncGenerator<RecordBatch> {
  // Line ends come normalised to the file's newline (csvText): a file mixing CRLF, LF and CR still has one record per line.
  const parser = new Papa.Parser({ delimiter: fmt.delimiter, newline: fmt.newline, quoteChar: '"' });
  let partial = '';
  let consumed = 0;
  let recordNo = 1;
  for await (const chunk of csvText(file, fmt)) {
    const input = partial.length > 0 ? partial + chunk : chunk;
    const res = parser.parse(input, 0, true) as { data: string[][]; meta: { cursor: number } };
    const cursor = res.meta.cursor;
    partial = cursor === 0 ? input : input.slice(cursor);
    consumed += cursor;
    if (partial.length > limits.cellChars) {
      const open = openQuote(partial, fmt.delimiter);
      if (open >= 0 && partial.length - open > limits.cellChars) {
        const line = await lineAtChar(file, fmt, consumed + open);
        throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: the quote (") opened on line ${line} is still open ${limits.cellChars} characters later — it is most likely never closed; fix that cell and export again`);
      }
      if (partial.length > limits.recordChars) {
        const line = await lineAtChar(file, fmt, consumed);
        throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: the record starting on line ${line} is longer than ${limits.recordChars} characters`);
      }
    }
    if (res.data.length > 0) {
      // The records may start in the partial record carried over from earlier chunks: look at all of their text.
      const text = input.slice(0, cursor);
      yield { records: res.data, first: recordNo, replaced: text.includes('\uFFFD'), nul: text.includes('\0') };
      recordNo += res.data.length;
    }
  }
  if (partial.length > 0) {
    const res = parser.parse(partial, 0, false) as { data: string[][]; errors: { code: string }[] };
    if (res.data.length > 0) yield { records: res.data, first: recordNo, replaced: partial.includes('\uFFFD'), nul: partial.includes('\0') };
  }
}

/** Where the quoted field still open at the end of `s` (an unfinished record) starts, or -1 when no field is open. */
function openQuote(s: string, delimiter: string): number {
  let fieldStart = true;
  let open = -1;
  for (let i = 0; i < s.length; i++) {
    const ch = s[i];
    if (open >= 0) {
      if (ch === '"') {
        if (s[i + 1] === '"') i++;
        else open = -1;
      }
    } else if (fieldStart && ch === '"') {
      open = i;
    } else {
      fieldStart = ch === delimiter || ch === '\n' || ch === '\r';
    }
  }
  return open;
}

/** The 1-based line of the character at `offset` of the decoded text (only computed when a read fails). */
async function lineAtChar(file: string, fmt: CsvFormat, offset: number): Promise<number> {
  const nl = fmt.newline === '\r' ? '\r' : '\n';
  let line = 1;
  let seen = 0;
  for await (const chunk of csvText(file, fmt)) {
    const part = seen + chunk.length > offset ? chunk.slice(0, offset - seen) : chunk;
    for (let i = part.indexOf(nl); i !== -1; i = part.indexOf(nl, i + 1)) line++;
    seen += chunk.length;
    if (seen >= offset) break;
  }
  return line;
}

/**
 * A NUL character is never text a supplier typed: it is a binary or damaged file (the sniffer refuses one in the head
 * of the file; this finds one anywhere after it). The whole file is refused (PS_ERR_FILE_UNREADABLE, exit 2) rather
 * than the row, so a file is accepted or refused the same wherever its NUL sits; the message names row and column.
 */
function refuseNul(file: string, record: readonly string[], row: number, hdr: readonly string[]): void {
  const i = record.findIndex((v) => v.includes('\0'));
  if (i < 0) return;
  const name = hdr[i];
  const column = name && !name.includes('\0') ? name : `#${i + 1}`;
  throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: a NUL character (byte 0) on row ${row}, column ${column}: the file is damaged or not a text export; export the sheet again as CSV`);
}

// Cheap blank test: only trims when the value starts with whitespace.
const isBlank = (v: string): boolean => v.length === 0 || (v.charCodeAt(0) <= 32 && v.trim() === '');

/**
 * Opens a CSV/TSV sheet. Encoding detected and decoded with iconv-lite before parsing; delimiter from the header line;
 * RFC 4180 quoting (embedded newlines, `""`) by papaparse's core parser, fed pull-wise (the file is read only as fast as
 * rows are consumed). Line ends may be mixed: CRLF, LF and a lone CR each end a line outside quoted cells (inside one
 * they are kept as typed). Row numbers are record numbers — what Excel shows when it opens the file — blank lines
 * counted but not yielded. A NUL character anywhere refuses the file (refuseNul). Empty or blank cells are null; other cells are returned raw (not trimmed). Ragged rows: missing
 * cells are null with a ROW_RAGGED warning, non-empty extra cells a ROW_RAGGED error (they would be lost).
 */
export async function readCsv(file: string, head: Buffer, options: { headerRow: number; limits: ReadLimits; decimalSeparator?: string }): Promise<Sheet> {
  const { limits, headerRow } = options;
  const encoding = await detectFileEncoding(file, head);
  // The head may end inside a multibyte character: the decoder keeps it for later, so the prefix stays clean.
  const prefix = iconv.getDecoder(encoding, { stripBOM: true }).write(head);
  const delimiter = detectDelimiter(lineOf(prefix, headerRow) || lineOf(prefix, 1));
  const fmt: CsvFormat = { encoding, delimiter, newline: detectNewline(prefix) };

  let headers: string[] | null = null;
  const preamble: string[][] = [];
  const probe = csvRecords(file, fmt, limits);
  try {
    for await (const b of probe) {
      for (let i = 0; i < b.records.length && b.first + i < headerRow; i++) preamble.push(b.records[i]!);
      if (b.first + b.records.length > headerRow) {
        headers = b.records[headerRow - b.first]!;
        break;
      }
    }
  } finally {
    await probe.return(undefined);
  }
  if (!headers || (headers.length === 1 && headers[0] === '')) {
    throw new ProductSyncError('PS_ERR_FILE_HEADER', `${file}: no header on row ${headerRow} (${headers ? 'the row is empty' : 'the file has fewer rows'})`);
  }
  if (headers.length > limits.columns) throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: ${headers.length} columns, more than the limit of ${limits.columns}`);
  const hdr = headers;
  const width = hdr.length;
  // A NUL in the header (past the head the sniffer checks) is refused like one in a data row.
  refuseNul(file, hdr, headerRow, hdr);

  function toRow(record: string[], row: number, replaced: boolean, nul: boolean): SheetRow | null {
    const n = record.length;
    if (nul) refuseNul(file, record, row, hdr);
    let issues: Issue[] | null = null;
    const cells: Cell[] = new Array<Cell>(width);
    let any = false;
    for (let i = 0; i < width; i++) {
      const v = i < n ? record[i]! : '';
      if (isBlank(v)) {
        cells[i] = null;
        continue;
      }
      any = true;
      if (v.length > limits.cellChars) {
        (issues ??= []).push(issue('CELL_TOO_LONG', { row, column: hdr[i] ?? null, value: `${v.slice(0, 40)}…`, message: `cell has ${v.length} characters, more than ${limits.cellChars}` }));
        cells[i] = null;
        continue;
      }
      if (replaced && v.includes('\uFFFD')) {
        (issues ??= []).push(issue('ENCODING_REPLACED', { row, column: hdr[i] ?? null, value: v, message: `the cell holds � where bytes were not valid ${encoding} text (in this file or in an earlier conversion): save the sheet as CSV UTF-8 and export again` }));
      }
      cells[i] = v;
    }
    let extra: string[] | null = null;
    for (let i = width; i < n; i++) if (!isBlank(record[i]!)) (extra ??= []).push(record[i]!);
    if (!any && !extra) return null;
    if (n < width) {
      (issues ??= []).push(issue('ROW_RAGGED', { row, message: `row has ${n} cells, the header ${width}: the missing ones are read as empty` }, 'warning'));
    } else if (extra) {
      (issues ??= []).push(issue('ROW_RAGGED', { row, value: extra.join(delimiter), message: `row has ${n} cells, the header ${width}: the extra cells would be lost (a delimiter inside an unquoted cell?)` }, 'error'));
    }
    return { row, cells, issues: issues ?? [] };
  }

  async function* rows(): AsyncGenerator<SheetRow> {
    let dataRows = 0;
    for await (const b of csvRecords(file, fmt, limits)) {
      const recs = b.records;
      for (let k = 0; k < recs.length; k++) {
        const row = b.first + k;
        if (row <= headerRow) continue;
        const r = toRow(recs[k]!, row, b.replaced, b.nul);
        if (!r) continue;
        if (++dataRows > limits.rows) throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: more than ${limits.rows} data rows`);
        yield r;
      }
    }
  }

  const info: Record<string, string | number | boolean> = { encoding, delimiter: delimiter === '\t' ? 'tab' : delimiter, newline: JSON.stringify(fmt.newline).slice(1, -1) };
  if (options.decimalSeparator) info.decimalSeparator = options.decimalSeparator;
  return { file, format: 'csv', headerRow, headers, preamble, rows: rows(), info };
}
