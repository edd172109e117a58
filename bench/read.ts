// Reading a generated 1 000 000-row CSV and a 100 000-row XLSX (~25 product columns): the bare parser, openSheet(), and
// openSheet() + mapping + validation on the same files — rows/s and RSS over the run (peak, and at 25/50/75/100 % of
// the rows: flat means streaming), each case in its own process, best of BENCH_READ_RUNS (2) runs taken in turns.
// BENCH_CSV_ROWS, BENCH_XLSX_ROWS change the sizes. A later stage plugs in as a Case: benchRead(file, stage) times
// openSheet() with `stage` called on every row. Then, as whole processes: `product-sync validate` of a 200 000-row
// 4-column CSV (BENCH_VALIDATE_ROWS; no API is reached: the mapping has no lookups) against a bare papaparse read of it
// in `node -e` (best of BENCH_PROCESS_RUNS (9) runs each, taken in turns: on a shared VM one run in three or four is
// slowed by a neighbour), and the CLI's start to its first row read, measured as `validate` of a 1-row sheet end to end
// (an upper bound: it also maps, validates and writes the report). And the report writer alone:
// createReportWriter().addRow (rows.csv + rows.xlsx), rows/s (BENCH_REPORT_ROWS). The issue 10 targets close the run,
// each PASS or FAIL.
import { spawnSync } from 'node:child_process';
import { createReadStream, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import Papa from 'papaparse';
import type * as HeadersModule from '../src/pipeline/map/headers.ts';
import type * as MapRowModule from '../src/pipeline/map/map-row.ts';
import type * as MappingModule from '../src/pipeline/map/mapping.ts';
import type * as ReadSheetModule from '../src/pipeline/read/read-sheet.ts';
import type { Sheet, SheetRow } from '../src/pipeline/types.ts';
import type * as ValidateModule from '../src/pipeline/map/validate.ts';
import type * as ReportModule from '../src/pipeline/report/report.ts';
import type { RowOutcome } from '../src/pipeline/report/report.ts';
import type * as IssueCodesModule from '../src/issue-codes.ts';
import { writeProductSheet } from '../test/helpers/sheets.ts';
import { ensureCsv, ensureXlsx } from './product-rows.ts';

// The product's code is the compiled JavaScript the CLI ships (dist/, brought up to date first), not src/ through tsx:
// tsx keeps function names (esbuild __name wrappers), which slows closure-heavy per-row code several times over.
// tsx leaves dist/*.js as they are. BENCH_FROM_SRC=1 measures src/ through tsx instead.
const fromSrc = process.env.BENCH_FROM_SRC === '1';
if (!fromSrc && !process.argv[2]) {
  const built = spawnSync(process.execPath, ['scripts/build.mjs'], {
    cwd: resolve(import.meta.dirname, '..'),
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (built.status !== 0) throw new Error(`node scripts/build.mjs exited with ${built.status}`);
}
const product = <T>(path: string): Promise<T> =>
  import(new URL(fromSrc ? `../src/${path}.ts` : `../dist/${path}.js`, import.meta.url).href) as Promise<T>;
const { matchHeaders } = await product<typeof HeadersModule>('pipeline/map/headers');
const { mapRow } = await product<typeof MapRowModule>('pipeline/map/map-row');
const { parseMapping } = await product<typeof MappingModule>('pipeline/map/mapping');
const { openSheet } = await product<typeof ReadSheetModule>('pipeline/read/read-sheet');
const { validateDraft } = await product<typeof ValidateModule>('pipeline/map/validate');
const { createReportWriter } = await product<typeof ReportModule>('pipeline/report/report');
const { issue } = await product<typeof IssueCodesModule>('issue-codes');

const CSV_ROWS = Number(process.env.BENCH_CSV_ROWS ?? 1_000_000);
const XLSX_ROWS = Number(process.env.BENCH_XLSX_ROWS ?? 100_000);
const VALIDATE_ROWS = Number(process.env.BENCH_VALIDATE_ROWS ?? 200_000);
const REPORT_ROWS = Number(process.env.BENCH_REPORT_ROWS ?? 200_000);
const root = resolve(import.meta.dirname, '..');
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
  return {
    rows: n,
    seconds,
    rowsPerSecond: Math.round(n / seconds),
    peakMB: Math.round(peak / 1e6),
    rssAtQuartersMB: marks,
  };
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

/** The bare parsers, the yardstick of our readers: papaparse's Node stream with a step callback; exceljs streaming. */
async function benchBare(file: string, expected: number): Promise<ReadFigures> {
  if (file.endsWith('.csv')) {
    return timed(
      expected,
      (tick) =>
        new Promise<void>((resolve, reject) => {
          const src = createReadStream(file).pipe(iconv.decodeStream('utf-8'));
          Papa.parse(src as unknown as NodeJS.ReadableStream, {
            delimiter: ';',
            step: () => tick(),
            complete: () => resolve(),
            error: reject,
          });
        }),
    );
  }
  return timed(expected, async (tick) => {
    const r = new ExcelJS.stream.xlsx.WorkbookReader(file, {
      worksheets: 'emit',
      sharedStrings: 'cache',
      styles: 'cache',
    });
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

/** createReportWriter().addRow for `rows` outcomes (1 in 10 invalid with two issues, as a validate run writes them). */
async function benchReport(rows: number): Promise<ReadFigures> {
  const out = mkdtempSync(join(tmpdir(), 'ps-bench-report-'));
  try {
    const w = await createReportWriter(out, { sourceHeaders: ['GTIN', 'Désignation', 'Poids net', 'Unité'] });
    const bad = [
      issue('GTIN_CHECK_DIGIT', {
        row: 0,
        column: 'GTIN',
        field: 'gtin',
        value: '3500000000001',
        message: 'check digit should be 7',
      }),
      issue('FIELD_REQUIRED', {
        row: 0,
        column: null,
        field: 'tradeItemName',
        value: null,
        message: 'tradeItemName is required',
      }),
    ];
    const figures = await timed(rows, async (tick) => {
      for (let i = 0; i < rows; i++) {
        const o: RowOutcome =
          i % 10 === 9
            ? { row: i + 2, key: null, outcome: 'invalid', issues: bad }
            : { row: i + 2, key: `0350000${String(i).padStart(7, '0')}`, outcome: 'valid', issues: [] };
        // As the run calls it: addRow returns a promise only when the caller must wait (an await per row costs ~0.1 s
        // in 200 000 rows).
        const wait = w.addRow(o);
        if (wait) await wait;
        tick();
      }
      await w.finish({
        runId: 'bench',
        source: { file: 'bench.csv', sha256: '', rows },
        mapping: 'bench',
        mode: 'validate',
        dryRun: true,
        startedAt: '',
        finishedAt: '',
        counts: {
          rows,
          created: 0,
          updated: 0,
          unchanged: 0,
          archived: 0,
          unarchived: 0,
          invalid: 0,
          failed: 0,
          skipped: 0,
          notAttempted: 0,
          valid: rows,
        },
        requests: { reference: 0, product: 0 },
        exitCode: 0,
      });
    });
    return figures;
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

const CASES = ['bare', 'read', 'read-map-validate'] as const;
type Case = (typeof CASES)[number] | 'report';

async function runCase(kind: Case, file: string, expected: number): Promise<ReadFigures> {
  if (kind === 'report') return benchReport(expected);
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
    const table: string[][] = [
      ['file', 'case', 'rows', 'rows/s', 'vs bare', 'peak RSS MB', 'RSS at 25/50/75/100 % MB'],
    ];
    const ratio: Record<string, number> = {};
    const inProcess = (label: string, kind: Case, file: string, expected: number): ReadFigures | null => {
      const r = spawnSync(process.execPath, ['--import', 'tsx', import.meta.filename, kind, file, String(expected)], {
        encoding: 'utf8',
        maxBuffer: 1e7,
        env: { ...process.env, LOG_LEVEL: 'warn' },
      });
      const line = r.stdout.trim().split('\n').at(-1) ?? '';
      if (r.status !== 0 || !line.startsWith('{')) {
        console.log(`${label} ${kind}: failed\n${r.stderr}`);
        return null;
      }
      return JSON.parse(line) as ReadFigures;
    };
    // Each case BENCH_READ_RUNS times, the cases taking turns, and the best of each kept: other processes on the
    // machine slow one run or another, and a ratio of two single runs would carry that noise.
    const readRuns = Math.max(1, Number(process.env.BENCH_READ_RUNS ?? 2));
    for (const [label, file, expected] of [
      ['csv', csv, CSV_ROWS],
      ['xlsx', xlsx, XLSX_ROWS],
    ] as const) {
      const best = new Map<Case, ReadFigures>();
      for (let run = 0; run < readRuns; run++) {
        for (const kind of CASES) {
          const m = inProcess(label, kind, file, expected);
          if (!m) continue;
          console.log(`${label}  ${kind}  run ${run + 1}/${readRuns}: ${m.rowsPerSecond} rows/s`);
          if (m.rowsPerSecond > (best.get(kind)?.rowsPerSecond ?? 0)) best.set(kind, m);
        }
      }
      const bare = best.get('bare')?.rowsPerSecond ?? 0;
      for (const kind of CASES) {
        const m = best.get(kind);
        if (!m) continue;
        if (kind !== 'bare' && bare) ratio[`${label} ${kind}`] = m.rowsPerSecond / bare;
        table.push([
          label,
          kind,
          String(m.rows),
          String(m.rowsPerSecond),
          bare ? `${Math.round((m.rowsPerSecond / bare) * 100)} %` : '',
          String(m.peakMB),
          m.rssAtQuartersMB.join(' / '),
        ]);
      }
    }
    const report = inProcess('report', 'report', '', REPORT_ROWS);
    if (report) {
      const row = [
        'report',
        'addRow (rows.csv + rows.xlsx)',
        String(report.rows),
        String(report.rowsPerSecond),
        '',
        String(report.peakMB),
        report.rssAtQuartersMB.join(' / '),
      ];
      table.push(row);
      console.log(row.join('  '));
    }
    const w = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
    console.log('');
    for (const r of table) console.log(r.map((c, i) => c.padEnd(w[i]!)).join('  '));

    // Whole processes: the CLI (dist/, as shipped) against `node -e` with papaparse alone, best of BENCH_PROCESS_RUNS,
    // the two taken in turns (a VM's speed drifts from minute to minute: both sides then see the same minutes).
    const runs = Number(process.env.BENCH_PROCESS_RUNS ?? 9);
    const vdir = join(dir, `validate-${VALIDATE_ROWS}`);
    mkdirSync(vdir, { recursive: true });
    const big = writeProductSheet(vdir, VALIDATE_ROWS, {
      owner: '5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f',
      file: `products-${VALIDATE_ROWS}.csv`,
    });
    const oneDir = join(dir, 'validate-1');
    mkdirSync(oneDir, { recursive: true });
    const one = writeProductSheet(oneDir, 1, { owner: '5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f', file: 'products-1.csv' });
    const reports = mkdtempSync(join(tmpdir(), 'ps-bench-validate-'));
    // validate sends nothing to the product API, and a mapping without lookups asks nothing of the reference API.
    const cliEnv = {
      ...process.env,
      PRODUCT_API_URL: 'http://127.0.0.1:9',
      REFERENCE_API_URL: 'http://127.0.0.1:9',
      API_TOKEN: 'bench',
      REPORT_DIR: reports,
      LOG_LEVEL: 'warn',
    };
    // Seconds of each run of `cmd`, in order of speed (the best first): other processes on the machine only slow runs
    // down.
    const timeOf = (cmd: string[], env: NodeJS.ProcessEnv, ok: (stdout: string) => boolean): number => {
      const t0 = performance.now();
      const r = spawnSync(process.execPath, cmd, { cwd: root, encoding: 'utf8', maxBuffer: 1e8, env });
      const s = (performance.now() - t0) / 1000;
      if (r.status !== 0 || !ok(r.stdout))
        throw new Error(`${cmd.join(' ')}: exit ${r.status}\n${r.stdout}\n${r.stderr}`);
      return s;
    };
    const timesOf = (cmd: string[], env: NodeJS.ProcessEnv, ok: (stdout: string) => boolean): number[] =>
      Array.from({ length: runs }, () => timeOf(cmd, env, ok)).sort((a, b) => a - b);
    const median = (sorted: number[]) => sorted[Math.floor((sorted.length - 1) / 2)]!;
    const bareScript = `const Papa=require('papaparse');let n=0;Papa.parse(require('fs').createReadStream(process.argv[1],'utf8'),{delimiter:';',step:()=>n++,complete:()=>console.log(n-1)});`;
    try {
      const cli = ['bin/product-sync.mjs'];
      const validateS: number[] = [];
      const bareS: number[] = [];
      for (let i = 0; i < runs; i++) {
        validateS.push(
          timeOf([...cli, 'validate', big.file, '--mapping', big.mapping], cliEnv, (o) =>
            o.includes(`valid ${VALIDATE_ROWS}`),
          ),
        );
        bareS.push(timeOf(['-e', bareScript, big.file], process.env, (o) => o.trim() === String(VALIDATE_ROWS)));
      }
      validateS.sort((a, b) => a - b);
      bareS.sort((a, b) => a - b);
      const startS = timesOf([...cli, 'validate', one.file, '--mapping', one.mapping], cliEnv, (o) =>
        o.includes('valid 1'),
      );
      ratio['validate process'] = bareS[0]! / validateS[0]!;
      ratio['cli start s'] = startS[0]!;
      const s = (t: number[]) => `best ${t[0]!.toFixed(2)} s, median ${median(t).toFixed(2)} s`;
      console.log(
        `\nwhole process, ${runs} runs each: validate of ${VALIDATE_ROWS} rows × 4 columns ${s(validateS)}; bare papaparse (node -e) ${s(bareS)}`,
      );
      console.log(
        `  validate vs bare papaparse: best ${(bareS[0]! / validateS[0]!).toFixed(3)}, median ${(median(bareS) / median(validateS)).toFixed(3)}`,
      );
      console.log(`CLI start to first row read (validate of a 1-row sheet, end to end): ${s(startS)}`);
    } finally {
      rmSync(reports, { recursive: true, force: true });
    }

    // The targets of issue 10.
    const targets: [string, number | undefined, (v: number) => boolean, string, (v: number) => string][] = [
      [
        'CSV read + map + validate vs bare papaparse (in process)',
        ratio['csv read-map-validate'],
        (v) => v >= 0.6,
        '≥ 0.6',
        (v) => v.toFixed(2),
      ],
      [
        'XLSX read + map + validate vs bare exceljs streaming',
        ratio['xlsx read-map-validate'],
        (v) => v >= 0.9,
        '≥ 0.9',
        (v) => v.toFixed(2),
      ],
      [
        `validate of ${VALIDATE_ROWS} rows vs bare papaparse (whole process)`,
        ratio['validate process'],
        (v) => v >= 0.25,
        '≥ 0.25',
        (v) => v.toFixed(2),
      ],
      [
        'CLI start to first row read (1-row validate end to end)',
        ratio['cli start s'],
        (v) => v <= 0.4,
        '≤ 0.4 s',
        (v) => `${v.toFixed(2)} s`,
      ],
      [
        'report rows (rows.csv + rows.xlsx) rows/s',
        report?.rowsPerSecond,
        (v) => v >= 300_000,
        '≥ 300000',
        (v) => String(v),
      ],
    ];
    console.log('\ntargets (issue 10):');
    for (const [what, v, ok, target, fmt] of targets) {
      console.log(
        `  ${v === undefined ? 'FAIL' : ok(v) ? 'PASS' : 'FAIL'}  ${what}: ${v === undefined ? 'not measured' : fmt(v)} (target ${target})`,
      );
    }
  }
}
