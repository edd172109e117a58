// Reading a generated 1 000 000-row CSV and a 100 000-row XLSX (~25 product columns): the bare parser, openSheet(),
// and openSheet() + mapping + validation on the same files — rows/s and RSS over the run (peak, and at 25/50/75/100 %
// of the rows: flat means streaming), each case in its own process. BENCH_CSV_ROWS, BENCH_XLSX_ROWS change the sizes.
// A later stage plugs in as a Case: benchRead(file, stage) times openSheet() with `stage` called on every row.
import { spawnSync } from 'node:child_process';
import { createReadStream, statSync } from 'node:fs';
import { join, resolve } from 'node:path';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import Papa from 'papaparse';
import { matchHeaders } from '../src/pipeline/map/headers.ts';
import { mapRow } from '../src/pipeline/map/map-row.ts';
import { parseMapping } from '../src/pipeline/map/mapping.ts';
import { openSheet } from '../src/pipeline/read/read-sheet.ts';
import type { Sheet, SheetRow } from '../src/pipeline/types.ts';
import { validateDraft } from '../src/pipeline/map/validate.ts';
import { ensureCsv, ensureXlsx } from './product-rows.ts';

const CSV_ROWS = Number(process.env.BENCH_CSV_ROWS ?? 1_000_000);
const XLSX_ROWS = Number(process.env.BENCH_XLSX_ROWS ?? 100_000);
const dir = join(import.meta.dirname, '.data', 'read');

/** What one timed read measured. */
export interface ReadFigures {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  peakMB: number;
  /** RSS when 25, 50, 75 and 100 % of the expected rows were read. */
  rssAtQuartersMB: number[];
}

/** Per-row work plugged after the reader; `prepare` runs once the headers are known. */
export interface Stage {
  prepare?: (sheet: Sheet) => void;
  onRow: (row: SheetRow) => void;
}

/** Times `read` (which calls `tick` once per row) sampling RSS every 20 ms. */
async function timed(expected: number, read: (tick: () => void) => Promise<void>): Promise<ReadFigures> {
  let peak = 0;
  const marks: number[] = [];
  const sample = () => (peak = Math.max(peak, process.memoryUsage().rss));
  const timer = setInterval(sample, 50);
  const quarter = Math.max(1, Math.floor(expected / 4));
  let n = 0;
  const t0 = performance.now();
  await read(() => {
    if (++n % quarter === 0) marks.push(Math.round(process.memoryUsage().rss / 1e6));
  });
  const seconds = (performance.now() - t0) / 1000;
  clearInterval(timer);
  sample();
  return { rows: n, seconds, rowsPerSecond: Math.round(n / seconds), peakMB: Math.round(peak / 1e6), rssAtQuartersMB: marks };
}

/** openSheet() over `file`, `stage` called on every row (none: the reader alone). */
export async function benchRead(file: string, stage?: Stage, expected = 1): Promise<ReadFigures> {
  return timed(expected, async (tick) => {
    const sheet = await openSheet(file);
    stage?.prepare?.(sheet);
    for await (const r of sheet.rows) {
      stage?.onRow(r);
      tick();
    }
  });
}

/** The bare parsers, as BASELINES.md measures them: papaparse's Node stream with a step callback; exceljs streaming. */
async function benchBare(file: string, expected: number): Promise<ReadFigures> {
  if (file.endsWith('.csv')) {
    return timed(expected, (tick) => new Promise<void>((resolve, reject) => {
      const src = createReadStream(file).pipe(iconv.decodeStream('utf-8'));
      Papa.parse(src as unknown as NodeJS.ReadableStream, { delimiter: ';', step: () => tick(), complete: () => resolve(), error: reject });
    }));
  }
  return timed(expected, async (tick) => {
    const r = new ExcelJS.stream.xlsx.WorkbookReader(file, { worksheets: 'emit', sharedStrings: 'cache', styles: 'cache' });
    for await (const ws of r) for await (const _ of ws as unknown as AsyncIterable<unknown>) tick();
  });
}

const MAPPING = `name: bench-read
target: tradeItem
ownerCompanyId: 5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f
language: fr-FR
decimalSeparator: ","
columns:
  - { column: GTIN, field: gtin, type: gtin }
  - { column: Désignation, field: tradeItemName }
  - { column: Poids net, field: "netContents[0].value", type: decimal }
  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit }
  - { column: Gamme, field: productRange }
  - { column: Variante, field: variant }
  - { column: Nom fonctionnel, field: functionalName }
  - { column: Début saison, field: seasonalAvailabilityStartDate, type: date }
  - { column: Fin saison, field: seasonalAvailabilityEndDate, type: date }
  - { column: Commentaire, field: "comments[0].value" }
  - { column: Format, field: packagingFormat }
  - { column: Multipack, field: multipack, type: boolean }
  - { column: Langue, field: productLanguage }
  - { column: Réf. enseigne, field: retailerIdentifiers, split: ";" }
`;

/** Mapping + validation of each row (the next stages of the pipeline), as a plugged stage. */
function mapValidateStage(): Stage {
  const mapping = parseMapping(MAPPING, 'bench-read.yaml');
  let headers: string[] = [];
  let idx: number[] = [];
  return {
    prepare: (sheet) => {
      headers = sheet.headers;
      idx = matchHeaders(sheet.headers, mapping);
    },
    onRow: (r) => {
      const d = mapRow(r, headers, mapping, idx);
      d.issues.push(...validateDraft(d));
    },
  };
}

const CASES = ['bare', 'read', 'read-map-validate'] as const;
type Case = (typeof CASES)[number];

async function runCase(kind: Case, file: string, expected: number): Promise<ReadFigures> {
  if (kind === 'bare') return benchBare(file, expected);
  return benchRead(file, kind === 'read-map-validate' ? mapValidateStage() : undefined, expected);
}

// Runs only as a script, so other benches can import benchRead.
if (process.argv[1] !== undefined && resolve(process.argv[1]) === import.meta.filename) {
  if (process.argv[2]) {
    const [kind, file, expected] = process.argv.slice(2);
    console.log(JSON.stringify(await runCase(kind as Case, file!, Number(expected))));
  } else {
    const csv = join(dir, `products-${CSV_ROWS}.csv`);
    const xlsx = join(dir, `products-${XLSX_ROWS}.xlsx`);
    console.log(`generating (once, kept in ${dir}): ${CSV_ROWS} CSV rows, ${XLSX_ROWS} XLSX rows…`);
    await ensureCsv(csv, CSV_ROWS);
    await ensureXlsx(xlsx, XLSX_ROWS);
    console.log(`CSV ${Math.round(statSync(csv).size / 1e6)} MB, XLSX ${Math.round(statSync(xlsx).size / 1e6)} MB\n`);
    const table: string[][] = [['file', 'case', 'rows', 'rows/s', 'vs bare', 'peak RSS MB', 'RSS at 25/50/75/100 % MB']];
    for (const [label, file, expected] of [['csv', csv, CSV_ROWS], ['xlsx', xlsx, XLSX_ROWS]] as const) {
      let bare = 0;
      for (const kind of CASES) {
        const r = spawnSync(process.execPath, ['--import', 'tsx', import.meta.filename, kind, file, String(expected)], { encoding: 'utf8', maxBuffer: 1e7, env: { ...process.env, LOG_LEVEL: 'warn' } });
        const line = r.stdout.trim().split('\n').at(-1) ?? '';
        if (r.status !== 0 || !line.startsWith('{')) {
          console.log(`${label} ${kind}: failed\n${r.stderr}`);
          continue;
        }
        const m = JSON.parse(line) as ReadFigures;
        if (kind === 'bare') bare = m.rowsPerSecond;
        const row = [label, kind, String(m.rows), String(m.rowsPerSecond), bare ? `${Math.round((m.rowsPerSecond / bare) * 100)} %` : '', String(m.peakMB), m.rssAtQuartersMB.join(' / ')];
        table.push(row);
        console.log(row.join('  '));
      }
    }
    const w = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
    console.log('');
    for (const r of table) console.log(r.map((c, i) => c.padEnd(w[i]!)).join('  '));
  }
}
