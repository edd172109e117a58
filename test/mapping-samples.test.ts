// The samples of samples/ through their mappings (header matching → mapRow → validateDraft → duplicates).
// The sheets are read here with csv-parse / exceljs directly so this test stands apart from the streaming readers.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import ExcelJS from 'exceljs';
import iconv from 'iconv-lite';
import { describe, expect, it } from 'vitest';
import { matchHeaders } from '../src/pipeline/map/headers.ts';
import { mapRow } from '../src/pipeline/map/map-row.ts';
import { loadMapping } from '../src/pipeline/map/mapping.ts';
import type { Cell, Draft, Issue } from '../src/pipeline/types.ts';
import { validateDraft } from '../src/pipeline/map/validate.ts';
import { duplicateIssues } from './helpers/duplicates.ts';

const root = join(import.meta.dirname, '..');

async function csvRows(file: string, encoding: string, delimiter: string): Promise<Cell[][]> {
  const text = iconv.decode(await readFile(join(root, 'samples', file)), encoding).replace(/^\uFEFF/, '');
  return (parse(text, { delimiter, relax_column_count: true }) as string[][]).map((r) =>
    r.map((c) => (c === '' ? null : c)),
  );
}

async function xlsxRows(file: string, sheet: string): Promise<Cell[][]> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(join(root, 'samples', file));
  const ws = wb.getWorksheet(sheet)!;
  const out: Cell[][] = [];
  ws.eachRow({ includeEmpty: false }, (row) => {
    const cells: Cell[] = [];
    for (let c = 1; c <= ws.columnCount; c++) cells.push((row.getCell(c).value as Cell | undefined) ?? null);
    out.push(cells);
  });
  return out;
}

async function run(name: string, rows: Cell[][]): Promise<{ drafts: Draft[]; issues: Issue[] }> {
  const mapping = await loadMapping(name, { mappingsDir: join(root, 'mappings') });
  const headers = rows[0]!.map((h) => String(h ?? ''));
  const index = matchHeaders(headers, mapping);
  const drafts = rows.slice(1).map((cells, i) => {
    const d = mapRow({ row: i + 2, cells, issues: [] }, headers, mapping, index);
    d.issues.push(...validateDraft(d));
    return d;
  });
  const dups = duplicateIssues(
    drafts.map((d) => [d.row, d.key] as const),
    { column: headers[index[0]!] ?? null, field: 'gtin' },
  );
  for (const d of drafts) if (dups.has(d.row)) d.issues.push(dups.get(d.row)!);
  return { drafts, issues: drafts.flatMap((d) => d.issues) };
}

describe('samples through their mappings', () => {
  it('fournisseur-produits.xlsx is clean, with lookups for brand, status, HS code and packaging', async () => {
    const { drafts, issues } = await run(
      'fournisseur-produits',
      await xlsxRows('fournisseur-produits.xlsx', 'Produits'),
    );
    expect(drafts.length).toBe(30);
    expect(issues).toEqual([]);
    expect(drafts[0]!.fields).toMatchObject({
      tradeItemName: 'Comté AOP 18 mois',
      netContents: [{ value: '250', unitOfMeasure: 'GRM' }],
      isTradeItemSeasonal: 'false',
    });
    expect(drafts[0]!.lookups?.map((l) => [l.field, l.values[0]])).toEqual([
      ['brandId', 'Fromagerie des Monts'],
      ['tradeItemStatusId', 'Actif'],
      ['harmonizedCode', '0406'],
      ['packagingFormat', 'Papier'],
    ]);
    expect(drafts[3]!.fields.seasonalAvailabilityStartDate).toBe('2025-10-01');
  });

  it('epicerie-fine.csv (Windows-1252, ";", decimal commas) is clean', async () => {
    const { drafts, issues } = await run('epicerie-fine', await csvRows('epicerie-fine.csv', 'win1252', ';'));
    expect(drafts.length).toBe(30);
    expect(issues).toEqual([]);
    const sardines = drafts.find((d) => String(d.fields.tradeItemName).startsWith('Sardines'))!;
    expect(sardines.fields.drainedNetWeight).toEqual({
      value: 82.5,
      unitOfMeasure: 'a2f53d16-59b8-5bde-b0bb-99e6f0755bc4',
    });
    expect(drafts[4]!.fields.netContents).toEqual([{ value: '0.125', unitOfMeasure: 'KGM' }]);
    expect(
      drafts.find((d) => d.lookups?.some((l) => l.field === 'tradeItemStatusId' && l.values[0] === 'Inactif')),
    ).toBeDefined();
  });

  it('excel-damaged.csv reports each damage on its row and column, and the other rows are clean', async () => {
    const { issues } = await run('excel-damaged', await csvRows('excel-damaged.csv', 'utf8', ';'));
    expect(issues.map((i) => [i.row, i.code, i.column])).toEqual([
      [3, 'GTIN_LEADING_ZEROS_RESTORED', 'GTIN'],
      [4, 'GTIN_LEADING_ZEROS_RESTORED', 'GTIN'],
      [6, 'GTIN_SCIENTIFIC_NOTATION', 'GTIN'],
      [8, 'GTIN_CHECK_DIGIT', 'GTIN'],
      [10, 'UNIT_UNKNOWN', 'Unité'],
      [12, 'DATE_AMBIGUOUS', 'Date de lancement'],
      [14, 'DUPLICATE_KEY', 'GTIN'],
      [18, 'DUPLICATE_KEY', 'GTIN'],
      [20, 'UNIT_WITH_VALUE', 'Unité'],
    ]);
  });

  it('cooperative-fabricants.csv makes manufactured item drafts with suppliers and alpha-2 countries', async () => {
    const { drafts, issues } = await run(
      'cooperative-fabricants',
      await csvRows('cooperative-fabricants.csv', 'utf8', ','),
    );
    expect(issues).toEqual([]);
    expect(drafts.map((d) => d.fields.countriesOfOrigin).slice(0, 8)).toEqual([
      ['FR'],
      ['IT'],
      ['ES'],
      ['ES'],
      ['DE'],
      ['FR', 'ES'],
      ['FR'],
      ['DE'],
    ]);
    expect(drafts[3]!.fields.supplierCompanyId).toBe('9a7e4c21-8b3d-4f6a-b1c2-7e8f9a0b1c2d');
  });
});
