// papaparse vs csv-parse for the CSV reader (DESIGN §9): correctness on split multibyte characters, encodings,
// csv-spectrum and backpressure, then speed and peak RSS on a generated 200 000-row sheet, each parser in its own
// process. `node --import tsx bench/csv-parsers.ts` (BENCH_PARSER_ROWS to change the size).
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { parse as csvParse } from 'csv-parse';
import iconv from 'iconv-lite';
import Papa from 'papaparse';
import { ensureCsv } from './product-rows.ts';

const ROWS = Number(process.env.BENCH_PARSER_ROWS ?? 200_000);
const dir = join(import.meta.dirname, '.data', 'csv-parsers');
mkdirSync(dir, { recursive: true });

type Candidate = 'csv-parse' | 'papaparse-stream' | 'papaparse-core-pull';
const CANDIDATES: Candidate[] = ['csv-parse', 'papaparse-stream', 'papaparse-core-pull'];
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
    } else {
      // The loop src/pipeline/read/read-csv.ts runs: papaparse's core parser over the text, pulled chunk by chunk.
      const parser = new Papa.Parser({ delimiter: input.delimiter, newline: input.newline ?? '\n' });
      let partial = '';
      for await (const chunk of text) {
        const s = partial + (typeof chunk === 'string' ? chunk : (chunk as Buffer).toString(nodeEnc));
        const res = parser.parse(s, 0, true) as { data: string[][]; meta: { cursor: number } };
        partial = s.slice(res.meta.cursor);
        yield* res.data;
      }
      if (partial) yield* (parser.parse(partial, 0, false) as { data: string[][] }).data;
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

if (process.argv[2]) {
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
}
