import { ProductSyncError } from '../errors.ts';
import { CsvRecords } from './csv-records.ts';
import { decodeFile, detectFileEncoding, textDecoder, type DecodeFlags, type TextEncoding } from './decode.ts';
import type { ReadLimits } from './limits.ts';
import { issue, type Issue } from '../issue-codes.ts';
import type { Cell, Sheet, SheetRow } from './sheet.ts';

export { detectEncoding, type TextEncoding } from './decode.ts';

/**
 * Delimiters a header line is tested for, in the order that wins a tie (a header's labels hold commas more often than
 * tabs or `;`).
 */
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
export function lineEndNormalizer(
  delimiter: string,
  newline: '\n' | '\r\n' | '\r' = '\n',
): (chunk: string, end?: boolean) => string {
  const D = delimiter.charCodeAt(0);
  const isSep = (c: number) => c === D || c === LF || c === CR;
  let inQuote = false;
  // Inside a quoted cell: 0 normal, 1 right after a quote (which may close the cell or start a `""`), 2 after a quote
  // and spaces.
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

/**
 * The decoded text of a CSV file in chunks, line ends normalised to the file's newline outside quoted cells
 * (lineEndNormalizer).
 */
async function* csvText(file: string, fmt: CsvFormat, flags?: DecodeFlags): AsyncGenerator<string> {
  const normalize = lineEndNormalizer(fmt.delimiter, fmt.newline);
  for await (const chunk of decodeFile(file, fmt.encoding, undefined, flags)) {
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

/**
 * What the text read so far holds; once true a flag stays so (the file is refused at its first NUL, and a U+FFFD is
 * looked for cell by cell from the chunk that had one on), so per-cell checks run only in files that need them.
 */
interface TextFlags {
  /** A U+FFFD (a byte that is not valid in the encoding, or the character itself). */
  replaced: boolean;
  /** A NUL character. */
  nul: boolean;
}

/**
 * Turns one record into what the caller keeps (null: nothing). `fields` are its fields, `recordNo` its record number
 * (1-based, blank lines included — the row number Excel shows).
 */
type RecordFn<T> = (fields: string[], recordNo: number, flags: TextFlags) => T | null;

/**
 * Records of a CSV text, turned by `convert` and yielded in batches (one per decoded chunk), split by papaparse
 * (CsvRecords, csv-records.ts) over text decoded before parsing. A record is held up to `limits.recordChars`
 * characters; past that the read stops with the line it started on, so an opening quote never closed cannot swallow
 * the rest of the file (papaparse would keep it, and parse it again with every chunk). A quoted cell longer than
 * `limits.cellChars` is read on while its record fits (its row then gets CELL_TOO_LONG, as any cell over the limit);
 * one longer still is told apart from a quote never closed by reading on to its closing quote without keeping it
 * (overlongQuotedCell). `columns`: the header, to name a cell's column.
 */
async function* csvRecords<T>(
  file: string,
  fmt: CsvFormat,
  limits: ReadLimits,
  convert: RecordFn<T>,
  columns: readonly string[] = [],
): AsyncGenerator<T[]> {
  // Line ends come normalised to the file's newline (csvText): a file mixing CRLF, LF and CR still has one record per
  // line.
  const records = new CsvRecords(fmt.delimiter, fmt.newline);
  // Characters of decoded text so far (the record being read starts at records.consumed).
  let seen = 0;
  // The chunks that hold the unfinished record (the first starts at character tailStart): looked at only past a limit.
  const tail: string[] = [];
  let tailStart = 0;
  const partial = (): string => tail.join('').slice(records.consumed - tailStart);
  let recordNo = 1;
  const flags: TextFlags = { replaced: false, nul: false };
  const converted = (batch: readonly string[][]): T[] => {
    const out: T[] = [];
    for (const fields of batch) {
      const r = convert(fields, recordNo++, flags);
      if (r !== null) out.push(r);
    }
    return out;
  };
  const text = csvText(file, fmt, flags);
  for await (const chunk of text) {
    if (!flags.replaced) flags.replaced = chunk.includes('\uFFFD');
    seen += chunk.length;
    const out = converted(records.push(chunk));
    tail.push(chunk);
    while (tail.length > 1 && tailStart + tail[0]!.length <= records.consumed) tailStart += tail.shift()!.length;
    const consumed = records.consumed;
    if (seen - consumed > limits.recordChars) {
      const rest = partial();
      const open = openQuote(rest, fmt.delimiter);
      if (open.at >= 0 && rest.length - open.at > limits.cellChars) {
        const cell = { row: recordNo, column: columns[open.field] || `#${open.field + 1}`, start: consumed + open.at };
        throw await overlongQuotedCell(file, fmt, limits, cell, rest.slice(open.at + 1), text);
      }
      const line = await lineAtChar(file, fmt, consumed);
      throw new ProductSyncError(
        'PS_ERR_FILE_TOO_LARGE',
        `${file}: the record starting on line ${line} is longer than ${limits.recordChars} characters`,
      );
    }
    if (out.length > 0) yield out;
  }
  if (seen - records.consumed > limits.cellChars) {
    // A quote still open at the end of the file, a cell's worth of characters or more after it: never closed (papaparse
    // would end the record there and give the rest of the file as one cell).
    const rest = partial();
    const open = openQuote(rest, fmt.delimiter);
    if (open.at >= 0 && rest.length - open.at > limits.cellChars) {
      throw await unclosedQuote(file, fmt, limits, records.consumed + open.at);
    }
  }
  const out = converted(records.end());
  if (out.length > 0) yield out;
}

/**
 * The quoted field still open at the end of `s` (an unfinished record): where its quote is (`at`, -1 when no field is
 * open) and which field of the record it is (0-based).
 */
function openQuote(s: string, delimiter: string): { at: number; field: number } {
  let fieldStart = true;
  let open = -1;
  let field = 0;
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
      if (ch === delimiter) field++;
      else if (ch === '\n' || ch === '\r') field = 0;
      fieldStart = ch === delimiter || ch === '\n' || ch === '\r';
    }
  }
  return { at: open, field };
}

/** A quote opened at character `at` of the decoded text and never closed (the end of the file came first). */
async function unclosedQuote(file: string, fmt: CsvFormat, limits: ReadLimits, at: number): Promise<ProductSyncError> {
  const line = await lineAtChar(file, fmt, at);
  return new ProductSyncError(
    'PS_ERR_FILE_UNREADABLE',
    `${file}: the quote (") opened on line ${line} is still open ${limits.cellChars} characters later — it is most likely never closed; fix that cell and export again`,
  );
}

const isBlankCode = (c: number): boolean =>
  c === SPACE || c === TAB || c === 0x0b || c === 0x0c || c === 0xa0 || c === 0xfeff;

/**
 * A quoted cell too long for its record to be held (over `limits.recordChars`): the rest of the text is read on, not
 * kept, to its closing quote (papaparse's rule: a quote followed by blanks only, then a delimiter, a line end or the
 * end of the text; `""` is a quote in the cell). Closed: the cell is over the size limit — PS_ERR_FILE_TOO_LARGE naming
 * its row, column, size and the limit (the lines it spans tell a quote closed far below, by another cell's quote).
 * Never closed: the unclosed quote it is. `rest`: the cell's text read so far (after its opening quote); `more`: the
 * text after.
 */
async function overlongQuotedCell(
  file: string,
  fmt: CsvFormat,
  limits: ReadLimits,
  cell: { row: number; column: string; start: number },
  rest: string,
  more: AsyncIterator<string>,
): Promise<ProductSyncError> {
  const D = fmt.delimiter.charCodeAt(0);
  let chars = 0;
  let breaks = 0;
  // 0: in the cell; 1: right after a quote (closing, or the first of `""`); 2: after a quote and blanks.
  let state = 0;
  let blanks = 0;
  let prevCr = false;
  let closed = false;
  scan: for (let piece: string | null = rest; piece !== null;) {
    for (let i = 0; i < piece.length; i++) {
      const c = piece.charCodeAt(i);
      if (state === 1 && c === QUOTE) {
        // `""`: one quote of the cell (counted with the first).
        state = 0;
        continue;
      }
      if (state !== 0) {
        if (c === D || c === LF || c === CR) {
          closed = true;
          break scan;
        }
        if (isBlankCode(c)) {
          state = 2;
          blanks++;
          continue;
        }
        // A quote that closes nothing is text, and so are the blanks after it.
        state = 0;
        chars += blanks;
        blanks = 0;
      }
      if (c === QUOTE) {
        state = 1;
        chars++;
        blanks = 0;
        continue;
      }
      chars++;
      if (c === LF) {
        if (!prevCr) breaks++;
      } else if (c === CR) breaks++;
      prevCr = c === CR;
    }
    const next = await more.next();
    piece = next.done === true ? null : next.value;
  }
  // The end of the text right after a quote closes the cell too.
  if (!closed && state === 0) return unclosedQuote(file, fmt, limits, cell.start);
  // The closing quote was counted as the cell's while it was not known to close.
  const line = await lineAtChar(file, fmt, cell.start);
  const lines =
    breaks === 0
      ? `on line ${line}`
      : `from line ${line} to line ${line + breaks}: if it is not meant to span lines, its quote is never closed`;
  return new ProductSyncError(
    'PS_ERR_FILE_TOO_LARGE',
    `${file}: row ${cell.row}, column ${cell.column}: a cell of ${chars - 1} characters (${lines}), more than the limit of ${limits.cellChars} characters a cell (a record is read up to ${limits.recordChars}); shorten that cell and export again`,
  );
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
function refuseNul(file: string, record: readonly string[], count: number, row: number, hdr: readonly string[]): void {
  let i = 0;
  while (i < count && !record[i]!.includes('\0')) i++;
  if (i === count) return;
  const name = hdr[i];
  const column = name && !name.includes('\0') ? name : `#${i + 1}`;
  throw new ProductSyncError(
    'PS_ERR_FILE_UNREADABLE',
    `${file}: a NUL character (byte 0) on row ${row}, column ${column}: the file is damaged or not a text export; export the sheet again as CSV`,
  );
}

/**
 * The items of batches one at a time, `check` run before each (it may throw: the batches are then closed), or a batch
 * at a time (`nextBatch`, see BatchedRows). A plain async iterator rather than an async generator: a row costs about
 * half as much to hand over.
 */
function eachOf<T>(
  batches: AsyncGenerator<T[]>,
  check: () => void,
): AsyncIterableIterator<T> & { nextBatch(): Promise<readonly T[] | null> } {
  let batch: T[] = [];
  let k = 0;
  // A check that failed after some rows of a batch went out with it: thrown by the next call.
  let failed: { err: unknown } | null = null;
  const done = { done: true, value: undefined } as const;
  const fill = async (): Promise<boolean> => {
    if (failed) {
      await it.return!();
      throw failed.err;
    }
    while (k >= batch.length) {
      const r = await batches.next();
      if (r.done === true) return false;
      batch = r.value;
      k = 0;
    }
    return true;
  };
  const it = {
    [Symbol.asyncIterator]: () => it,
    async next(): Promise<IteratorResult<T>> {
      if (!(await fill())) return done;
      try {
        check();
      } catch (err) {
        await it.return();
        throw err;
      }
      return { done: false, value: batch[k++]! };
    },
    async nextBatch(): Promise<readonly T[] | null> {
      if (!(await fill())) return null;
      const from = k;
      try {
        for (; k < batch.length; k++) check();
      } catch (err) {
        if (k === from) {
          await it.return();
          throw err;
        }
        failed = { err };
      }
      return from === 0 && k === batch.length ? batch : batch.slice(from, k);
    },
    async return(): Promise<IteratorReturnResult<undefined>> {
      batch = [];
      k = 0;
      await batches.return([]);
      return done;
    },
  };
  return it;
}

// Cheap blank test: only trims when the value starts with whitespace.
const isBlank = (v: string): boolean => v.length === 0 || (v.charCodeAt(0) <= 32 && v.trim() === '');

/**
 * Opens a CSV/TSV sheet. Encoding detected and decoded (textDecoder) before parsing; delimiter from the header line;
 * RFC 4180 quoting (embedded newlines, `""`) by papaparse (csv-records.ts), fed pull-wise (the file is read only as
 * fast as rows are consumed). Line ends may be mixed: CRLF, LF and a lone CR each end a line outside quoted cells
 * (inside one they are kept as typed). Row numbers are record numbers — what Excel shows when it opens the file —
 * blank lines counted but not yielded. A NUL character anywhere refuses the file (refuseNul). Empty
 * or blank cells are null; other cells are returned raw (not trimmed). Ragged rows: missing cells are null with a
 * ROW_RAGGED warning, non-empty extra cells a ROW_RAGGED error (they would be lost).
 */
export async function readCsv(
  file: string,
  head: Buffer,
  options: { headerRow: number; limits: ReadLimits; decimalSeparator?: string },
): Promise<Sheet> {
  const { limits, headerRow } = options;
  const encoding = await detectFileEncoding(file, head);
  // The head may end inside a multibyte character: the decoder keeps it for later, so the prefix stays clean.
  const prefix = textDecoder(encoding).write(head);
  const delimiter = detectDelimiter(lineOf(prefix, headerRow) || lineOf(prefix, 1));
  const fmt: CsvFormat = { encoding, delimiter, newline: detectNewline(prefix) };

  let headers: string[] | null = null;
  const preamble: string[][] = [];
  // The rows up to the header, as text (the rest of the first chunk is parsed but not kept).
  const probe = csvRecords(file, fmt, limits, (fields, no) => (no <= headerRow ? fields : null));
  let seen = 0;
  try {
    for await (const batch of probe) {
      for (const record of batch) {
        if (++seen < headerRow) preamble.push(record);
        else headers = record;
      }
      if (headers) break;
    }
  } finally {
    await probe.return(undefined);
  }
  if (!headers || (headers.length === 1 && headers[0] === '')) {
    throw new ProductSyncError(
      'PS_ERR_FILE_HEADER',
      `${file}: no header on row ${headerRow} (${headers ? 'the row is empty' : 'the file has fewer rows'})`,
    );
  }
  if (headers.length > limits.columns)
    throw new ProductSyncError(
      'PS_ERR_FILE_TOO_LARGE',
      `${file}: ${headers.length} columns, more than the limit of ${limits.columns}`,
    );
  const hdr = headers;
  const width = hdr.length;
  // A NUL in the header (past the head the sniffer checks) is refused like one in a data row.
  refuseNul(file, hdr, width, headerRow, hdr);

  /** A data record as a row (null: a blank line, or a record at or above the header). */
  function toRow(record: readonly string[], row: number, flags: TextFlags): SheetRow | null {
    const n = record.length;
    if (row <= headerRow) return null;
    if (flags.nul) refuseNul(file, record, n, row, hdr);
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
        (issues ??= []).push(
          issue('CELL_TOO_LONG', {
            row,
            column: hdr[i] ?? null,
            value: `${v.slice(0, 40)}…`,
            message: `cell has ${v.length} characters, more than ${limits.cellChars}`,
          }),
        );
        cells[i] = null;
        continue;
      }
      if (flags.replaced && v.includes('\uFFFD')) {
        (issues ??= []).push(
          issue('ENCODING_REPLACED', {
            row,
            column: hdr[i] ?? null,
            value: v,
            message: `the cell holds � where bytes were not valid ${encoding} text (in this file or in an earlier conversion): save the sheet as CSV UTF-8 and export again`,
          }),
        );
      }
      cells[i] = v;
    }
    let extra: string[] | null = null;
    for (let i = width; i < n; i++) if (!isBlank(record[i]!)) (extra ??= []).push(record[i]!);
    if (!any && !extra) return null;
    if (n < width) {
      (issues ??= []).push(
        issue(
          'ROW_RAGGED',
          { row, message: `row has ${n} cells, the header ${width}: the missing ones are read as empty` },
          'warning',
        ),
      );
    } else if (extra) {
      (issues ??= []).push(
        issue(
          'ROW_RAGGED',
          {
            row,
            value: extra.join(delimiter),
            message: `row has ${n} cells, the header ${width}: the extra cells would be lost (a delimiter inside an unquoted cell?)`,
          },
          'error',
        ),
      );
    }
    return { row, cells, issues: issues ?? [] };
  }

  let dataRows = 0;
  const rows = eachOf(csvRecords(file, fmt, limits, toRow, hdr), () => {
    if (++dataRows > limits.rows)
      throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: more than ${limits.rows} data rows`);
  });

  const info: Record<string, string | number | boolean> = {
    encoding,
    delimiter: delimiter === '\t' ? 'tab' : delimiter,
    newline: JSON.stringify(fmt.newline).slice(1, -1),
  };
  if (options.decimalSeparator) info.decimalSeparator = options.decimalSeparator;
  return { file, format: 'csv', headerRow, headers, preamble, rows, info };
}
