// Generated product sheets for the read benchmarks: ~25 columns of the kind suppliers send (GTIN-14 with its check
// digit, names with quotes, accents and `;`, decimal commas, lists, a uuid, dates). Written once into bench/.data/.
import { createWriteStream, existsSync, mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { dirname } from 'node:path';
import ExcelJS from 'exceljs';

/** The 25 headers of the generated sheets (French, as suppliers write them). */
export const HEADERS = [
  'GTIN',
  'Désignation',
  'Marque',
  'Poids net',
  'Unité',
  'Pays',
  'Statut',
  'Code douanier',
  'Fournisseur',
  'Gamme',
  'Variante',
  'Nom fonctionnel',
  'Début saison',
  'Fin saison',
  'Commentaire',
  'Description',
  'Format',
  'Multipack',
  'Langue',
  'Réf. enseigne',
  'Catégorie',
  'Prix',
  'Note',
  'Température',
  'Allergènes',
];

/** A GTIN-14 (digits, with a valid mod-10 check digit) numbered `i`. */
export function gtin14(i: number): string {
  const body = `0350${String(i).padStart(9, '0')}`;
  let sum = 0;
  for (let k = 0; k < body.length; k++) sum += Number(body[body.length - 1 - k]) * (k % 2 === 0 ? 3 : 1);
  return body + ((10 - (sum % 10)) % 10);
}

/** Row `i` of the generated sheet, as text cells. */
export function productRow(i: number): string[] {
  return [
    gtin14(i),
    `Biscuits "pur beurre" n°${i}, sachet`,
    `Marque ${i % 300}`,
    `${(i % 900) + 100},5`,
    i % 3 ? 'g' : 'kg',
    i % 2 ? 'France' : 'IT',
    'Actif',
    '1905',
    '3f0c2b1e-9d0a-4c5e-8b7a-2f3d4e5a6b7c',
    'Épicerie sucrée',
    'Nature',
    'Biscuit sec',
    '2025-01-01',
    '2025-12-31',
    `Commentaire ${i}`,
    'Biscuits sablés au beurre frais, cuits au four',
    'Sachet',
    'non',
    'fr',
    `R${i}`,
    'Biscuiterie',
    `${(i % 50) + 1},99`,
    '',
    'Ambiante',
    'gluten; lait; œufs',
  ];
}

/** Writes a `;`-separated UTF-8 CSV of `rows` products at `file` unless it exists (RFC 4180 quoting). */
export async function ensureCsv(file: string, rows: number): Promise<void> {
  if (existsSync(file)) return;
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp`;
  const out = createWriteStream(tmp);
  const q = (v: string) => (/[;"\n]/.test(v) ? `"${v.replace(/"/g, '""')}"` : v);
  out.write(`${HEADERS.join(';')}\n`);
  for (let i = 0; i < rows; i++) if (!out.write(`${productRow(i).map(q).join(';')}\n`)) await once(out, 'drain');
  out.end();
  await once(out, 'finish');
  renameSync(tmp, file);
}

/**
 * Writes an XLSX of `rows` products at `file` unless it exists (GTINs as numbers, the way Excel keeps typed barcodes).
 */
export async function ensureXlsx(file: string, rows: number): Promise<void> {
  if (existsSync(file)) return;
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.tmp.xlsx`;
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: tmp, useSharedStrings: true });
  const ws = wb.addWorksheet('Produits');
  ws.addRow(HEADERS).commit();
  for (let i = 0; i < rows; i++) {
    const r: (string | number)[] = productRow(i);
    r[0] = Number(r[0]);
    ws.addRow(r).commit();
  }
  await wb.commit();
  renameSync(tmp, file);
}

// The 5-column sheet of the whole-process benches (bench/run.ts): GTIN;Désignation;Marque;Poids net;Unité, a `;` CSV
// with French decimals, every 7th name quoted, 40 brands (looked up, made beforehand in the sandbox).
export const BRANDS = 40;
const UNITS = ['g', 'kg', 'cl', 'ml', 'L'];

/** A GTIN-13 numbered `i` (up to 10^10 rows), with its mod-10 check digit. */
export function gtin13(i: number): string {
  const body = `20${String(i).padStart(10, '0')}`;
  let sum = 0;
  for (let k = 0; k < body.length; k++) sum += Number(body[body.length - 1 - k]) * (k % 2 === 0 ? 3 : 1);
  return body + ((10 - (sum % 10)) % 10);
}

/** Cells of row `i` of the 5-column sheet, as the import reads them (unquoted, decimal comma). */
export function scaleCells(i: number): { gtin: string; name: string; brand: string; weight: string; unit: string } {
  return {
    gtin: gtin13(i),
    name: i % 7 === 0 ? `Sablés "pur beurre"; n°${i}` : `Biscuits au beurre n°${i}`,
    brand: `Marque ${i % BRANDS}`,
    weight: i % 4 === 0 ? `${(i % 900) + 100},5` : String((i % 900) + 100),
    unit: UNITS[i % UNITS.length]!,
  };
}

/** Line `i` of the 5-column CSV. */
export function scaleLine(i: number): string {
  const c = scaleCells(i);
  const name = i % 7 === 0 ? `"${c.name.replace(/"/g, '""')}"` : c.name;
  return `${c.gtin};${name};${c.brand};${c.weight};${c.unit}\n`;
}

/** Mapping of the 5-column sheet for `owner`. */
export function scaleMapping(owner: string): string {
  return `name: bench-scale
target: tradeItem
ownerCompanyId: ${owner}
language: fr-FR
key: gtin
decimalSeparator: ","
columns:
  - { column: GTIN, field: gtin, type: gtin, required: true }
  - { column: Désignation, field: tradeItemName, required: true }
  - { column: Marque, field: brandId, lookup: { brand: { create: true } } }
  - { column: Poids net, field: "netContents[0].value", type: decimal }
  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit }
defaults:
  productLanguage: fr
`;
}

/**
 * Writes the 5-column CSV of `rows` rows at `file` and its mappings next to it, unless they exist: `mapping`, and
 * `fullMapping` for `--mode full`, which needs a scope (the whole catalogue here: docs/scopes.md).
 */
export async function ensureScaleSheet(
  file: string,
  rows: number,
  owner: string,
): Promise<{ file: string; mapping: string; fullMapping: string }> {
  const mapping = file.replace(/\.csv$/, '.yaml');
  const fullMapping = file.replace(/\.csv$/, '-full.yaml');
  mkdirSync(dirname(file), { recursive: true });
  if (!existsSync(mapping)) writeFileSync(mapping, scaleMapping(owner));
  if (!existsSync(fullMapping)) writeFileSync(fullMapping, `${scaleMapping(owner)}scope: owner\n`);
  if (existsSync(file)) return { file, mapping, fullMapping };
  const tmp = `${file}.tmp`;
  const out = createWriteStream(tmp);
  out.write('GTIN;Désignation;Marque;Poids net;Unité\n');
  let buf = '';
  for (let i = 0; i < rows; i++) {
    buf += scaleLine(i);
    if (buf.length > 1 << 16) {
      if (!out.write(buf)) await once(out, 'drain');
      buf = '';
    }
  }
  out.end(buf);
  await once(out, 'finish');
  renameSync(tmp, file);
  return { file, mapping, fullMapping };
}
