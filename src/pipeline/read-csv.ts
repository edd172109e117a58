import { createReadStream } from 'node:fs';
import { parse } from 'csv-parse';
import iconv from 'iconv-lite';
import { ProductSyncError } from '../errors.ts';
import type { ReadLimits } from './limits.ts';
import type { Cell, Issue, Sheet, SheetRow } from './types.ts';

/** The encodings CSV/TSV files are decoded from. */
export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

/**
 * Encoding from the first bytes: a BOM decides (UTF-8, UTF-16 LE/BE — Excel's "Unicode Text"); otherwise UTF-8 when the
 * prefix is valid UTF-8, else Windows-1252. Invalid UTF-8 further on becomes U+FFFD with a warning on the row.
 */
export function detectEncoding(head: Buffer): TextEncoding {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  // A multibyte character may be cut at the end of the prefix: leave out up to 3 trailing bytes.
  for (let cut = 0; cut <= 3 && cut < head.length; cut++) {
    try {
      new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, head.length - cut));
      return 'utf-8';
    } catch {
      // try a shorter prefix
    }
  }
  return 'windows-1252';
}

const DELIMITERS = [',', ';', '\t', '|'] as const;

/** The delimiter the header line uses most, outside quotes (`,` when none appears). */
export function detectDelimiter(firstLine: string): string {
  const counts = new Map<string, number>(DELIMITERS.map((d) => [d, 0]));
  let quoted = false;
  for (const ch of firstLine) {
    if (ch === '"') quoted = !quoted;
    else if (!quoted && counts.has(ch)) counts.set(ch, counts.get(ch)! + 1);
  }
  let best = ',';
  let n = 0;
  for (const [d, c] of counts) if (c > n) [best, n] = [d, c];
  return best;
}

const blank = (v: string) => v.trim() === '';

/** Opens a CSV/TSV sheet: decoded with iconv-lite before parsing (split multibyte characters survive), parsed by csv-parse with backpressure. */
export async function readCsv(file: string, head: Buffer, options: { headerRow: number; limits: ReadLimits }): Promise<Sheet> {
  const encoding = detectEncoding(head);
  const prefix = iconv.decode(head, encoding).replace(/^\uFEFF/, '');
  const lines = prefix.split(/\r\n|\n|\r/);
  const delimiter = detectDelimiter(lines[Math.max(0, options.headerRow - 1)] ?? lines[0] ?? '');
  const { limits } = options;

  const open = () =>
    createReadStream(file)
      .pipe(iconv.decodeStream(encoding))
      .pipe(
        parse({
          delimiter,
          bom: true,
          relax_column_count: true,
          relax_quotes: true,
          skip_empty_lines: true,
          max_record_size: limits.cellChars * 4,
          info: true,
        }),
      );

  const fail = (err: unknown): never => {
    const e = err as { code?: string; message: string; lines?: number };
    if (e.code === 'CSV_MAX_RECORD_SIZE') {
      throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: a record starting before line ${e.lines ?? '?'} exceeds ${limits.cellChars * 4} characters — most likely an opening quote (") that is never closed`, { cause: err });
    }
    throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: ${e.message}`, { cause: err });
  };

  // Read up to the header row to learn the headers; the rows are read by a second pass that skips them.
  let headers: string[] | null = null;
  const probe = open();
  try {
    let n = 0;
    for await (const rec of probe as AsyncIterable<{ record: string[] }>) {
      if (++n === options.headerRow) {
        headers = rec.record;
        break;
      }
    }
  } catch (err) {
    fail(err);
  } finally {
    probe.destroy();
  }
  if (!headers) throw new ProductSyncError('PS_ERR_FILE_HEADER', `${file}: no header row ${options.headerRow} (the file has fewer records)`);
  if (headers.length > limits.columns) throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: ${headers.length} columns, more than the limit of ${limits.columns}`);
  const width = headers.length;
  const hdr = headers;

  async function* rows(): AsyncGenerator<SheetRow> {
    const stream = open();
    let recordNo = 0;
    let dataRows = 0;
    try {
      for await (const { record } of stream as AsyncIterable<{ record: string[] }>) {
        recordNo++;
        if (recordNo <= options.headerRow) continue;
        if (record.every(blank)) continue;
        if (++dataRows > limits.rows) throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: more than ${limits.rows} rows`);
        const issues: Issue[] = [];
        const row = recordNo;
        if (record.length !== width) {
          const extra = record.slice(width).filter((v) => !blank(v));
          if (record.length < width || extra.length > 0) {
            issues.push({
              row, column: null, field: null, value: extra.length > 0 ? extra.join(delimiter) : null, code: 'ROW_RAGGED',
              severity: extra.length > 0 ? 'error' : 'warning',
              message: record.length < width ? `row has ${record.length} cells, the header ${width}: the missing ones are read as empty` : `row has ${record.length} cells, the header ${width}: the extra cells would be lost (a delimiter inside an unquoted cell?)`,
            });
          }
        }
        const cells: Cell[] = new Array(width);
        for (let i = 0; i < width; i++) {
          const v = record[i];
          if (v === undefined || blank(v)) {
            cells[i] = null;
            continue;
          }
          if (v.length > limits.cellChars) {
            issues.push({ row, column: hdr[i] ?? null, field: null, value: `${v.slice(0, 40)}…`, code: 'CELL_TOO_LONG', severity: 'error', message: `cell has ${v.length} characters, more than ${limits.cellChars}` });
            cells[i] = null;
            continue;
          }
          if (v.includes('\uFFFD')) {
            issues.push({ row, column: hdr[i] ?? null, field: null, value: v, code: 'ENCODING_REPLACED', severity: 'warning', message: `bytes that are not valid ${encoding} were replaced by �: save the file as UTF-8` });
          }
          cells[i] = v;
        }
        yield { row, cells, issues };
      }
    } catch (err) {
      if (err instanceof ProductSyncError) throw err;
      fail(err);
    } finally {
      stream.destroy();
    }
  }

  return { file, format: 'csv', headerRow: options.headerRow, headers, rows: rows(), info: { encoding, delimiter: delimiter === '\t' ? 'tab' : delimiter } };
}
