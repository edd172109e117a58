// Reading + mapping + validating a generated 1 000 000-row CSV and a 100 000-row XLSX, next to the bare parser on the
// same file: rows/s and peak RSS, each case in its own process (BENCH_CSV_ROWS, BENCH_XLSX_ROWS to change the sizes).
import { spawnSync } from 'node:child_process';
import { createReadStream, createWriteStream, existsSync, mkdirSync, statSync } from 'node:fs';
import { once } from 'node:events';
import { join } from 'node:path';
import { parse } from 'csv-parse';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { gtinCheckDigit } from '../src/pipeline/gtin.ts';
import { matchHeaders } from '../src/pipeline/headers.ts';
import { mapRow } from '../src/pipeline/map-row.ts';
import { parseMapping } from '../src/pipeline/mapping.ts';
import { openSheet } from '../src/pipeline/read-sheet.ts';
import { validateDraft } from '../src/pipeline/validate.ts';

const CSV_ROWS = Number(process.env.BENCH_CSV_ROWS ?? 1_000_000);
const XLSX_ROWS = Number(process.env.BENCH_XLSX_ROWS ?? 100_000);
const dir = join(import.meta.dirname, '.data', 'read');
mkdirSync(dir, { recursive: true });

const HEADERS = ['GTIN', 'Désignation', 'Marque', 'Poids net', 'Unité', 'Pays', 'Statut', 'Code douanier', 'Fournisseur', 'Gamme', 'Variante',
  'Nom fonctionnel', 'Début saison', 'Fin saison', 'Commentaire', 'Description', 'Format', 'Multipack', 'Langue', 'Réf. enseigne', 'Catégorie',
  'Prix', 'Note', 'Température', 'Allergènes'];
const gtin = (i: number) => {
  const b = `0350${String(i).padStart(9, '0')}`;
  return b + gtinCheckDigit(b);
};
function row(i: number): string[] {
  return [gtin(i), `Biscuits "pur beurre" n°${i}, sachet`, `Marque ${i % 300}`, `${(i % 900) + 100},5`, i % 3 ? 'g' : 'kg', i % 2 ? 'France' : 'IT',
    'Actif', '1905', '3f0c2b1e-9d0a-4c5e-8b7a-2f3d4e5a6b7c', 'Épicerie sucrée', 'Nature', 'Biscuit sec', '2025-01-01', '2025-12-31',
    `Commentaire ${i}`, 'Biscuits sablés au beurre frais, cuits au four', 'Sachet', 'non', 'fr', `R${i}`, 'Biscuiterie', `${(i % 50) + 1},99`, '', 'Ambiante', 'gluten; lait; œufs'];
}

const MAPPING = parseMapping(`name: bench-read
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
`, 'bench-read.yaml');

async function makeCsv(file: string): Promise<void> {
  if (existsSync(file)) return;
  const out = createWriteStream(file);
  const q = (v: string) => (/[;"\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  out.write(`${HEADERS.join(';')}\n`);
  for (let i = 0; i < CSV_ROWS; i++) if (!out.write(`${row(i).map(q).join(';')}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
}

async function makeXlsx(file: string): Promise<void> {
  if (existsSync(file)) return;
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useSharedStrings: true });
  const ws = wb.addWorksheet('Produits');
  ws.addRow(HEADERS).commit();
  for (let i = 0; i < XLSX_ROWS; i++) {
    const r = row(i) as (string | number)[];
    r[0] = Number(gtin(i));
    ws.addRow(r).commit();
  }
  await wb.commit();
}

type Case = 'csv-bare' | 'csv-read' | 'csv-read-map-validate' | 'xlsx-bare' | 'xlsx-read' | 'xlsx-read-map-validate';

async function measure(kind: Case, file: string, total: number): Promise<void> {
  let peak = 0;
  const marks: number[] = [];
  const sample = () => (peak = Math.max(peak, process.memoryUsage().rss));
  const timer = setInterval(sample, 20);
  let n = 0;
  const tick = () => {
    if (++n % Math.floor(total / 4) === 0) marks.push(Math.round(process.memoryUsage().rss / 1e6));
  };
  const t0 = performance.now();
  if (kind === 'csv-bare') {
    const p = createReadStream(file).pipe(iconv.decodeStream('utf-8')).pipe(parse({ delimiter: ';', relax_column_count: true }));
    for await (const _ of p) tick();
  } else if (kind === 'xlsx-bare') {
    const r = new ExcelJS.stream.xlsx.WorkbookReader(file, { worksheets: 'emit', sharedStrings: 'cache', styles: 'cache' });
    for await (const ws of r) for await (const _ of ws as unknown as AsyncIterable<unknown>) tick();
  } else {
    const sheet = await openSheet(file);
    const idx = matchHeaders(sheet.headers, MAPPING);
    const full = kind.endsWith('map-validate');
    for await (const r of sheet.rows) {
      if (full) {
        const d = mapRow(r, sheet.headers, MAPPING, idx);
        d.issues.push(...validateDraft(d));
      }
      tick();
    }
  }
  const s = (performance.now() - t0) / 1000;
  clearInterval(timer);
  sample();
  console.log(JSON.stringify({ kind, rows: n, seconds: s, rowsPerSecond: Math.round(n / s), peakMB: Math.round(peak / 1e6), rssAtQuartersMB: marks }));
}

if (process.argv[2]) {
  const [kind, file, total] = process.argv.slice(2);
  await measure(kind as Case, file!, Number(total));
} else {
  const csv = join(dir, `products-${CSV_ROWS}.csv`);
  const xlsx = join(dir, `products-${XLSX_ROWS}.xlsx`);
  console.log(`generating ${CSV_ROWS} CSV rows and ${XLSX_ROWS} XLSX rows in ${dir} (kept for later runs)…`);
  await makeCsv(csv);
  await makeXlsx(xlsx);
  console.log(`CSV ${Math.round(statSync(csv).size / 1e6)} MB, XLSX ${Math.round(statSync(xlsx).size / 1e6)} MB`);
  const rows: string[][] = [['case', 'rows', 'rows/s', 'vs bare', 'peak RSS MB', 'RSS at 25/50/75/100 % MB']];
  const bare: Record<string, number> = {};
  for (const kind of ['csv-bare', 'csv-read', 'csv-read-map-validate', 'xlsx-bare', 'xlsx-read', 'xlsx-read-map-validate'] as Case[]) {
    const isCsv = kind.startsWith('csv');
    const r = spawnSync(process.execPath, ['--import', 'tsx', import.meta.filename, kind, isCsv ? csv : xlsx, String(isCsv ? CSV_ROWS : XLSX_ROWS)], { encoding: 'utf8', maxBuffer: 1e7 });
    const line = r.stdout.trim().split('\n').at(-1) ?? '';
    if (r.status !== 0 || !line.startsWith('{')) {
      console.log(`${kind}: failed\n${r.stderr}`);
      continue;
    }
    const m = JSON.parse(line) as { rows: number; rowsPerSecond: number; peakMB: number; rssAtQuartersMB: number[] };
    if (kind.endsWith('bare')) bare[isCsv ? 'csv' : 'xlsx'] = m.rowsPerSecond;
    const ref = bare[isCsv ? 'csv' : 'xlsx'] ?? m.rowsPerSecond;
    rows.push([kind, String(m.rows), String(m.rowsPerSecond), `${Math.round((m.rowsPerSecond / ref) * 100)} %`, String(m.peakMB), m.rssAtQuartersMB.join(' / ')]);
    console.log(rows.at(-1)!.join(' | '));
  }
  const w = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  console.log('');
  for (const r of rows) console.log(r.map((c, i) => c.padEnd(w[i]!)).join('  '));
}
