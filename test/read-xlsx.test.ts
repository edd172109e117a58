import { existsSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { ProductSyncError } from '../src/errors.ts';
import { openSheet } from '../src/pipeline/read-sheet.ts';
import type { SheetRow } from '../src/pipeline/types.ts';

const require = createRequire(import.meta.url);
const dir = mkdtempSync(join(tmpdir(), 'ps-read-'));
const write = (name: string, data: string | Buffer) => {
  const f = join(dir, name);
  writeFileSync(f, data);
  return f;
};
async function all(file: string, opts = {}): Promise<{ headers: string[]; rows: SheetRow[]; info: Record<string, unknown> }> {
  const s = await openSheet(file, opts);
  const rows: SheetRow[] = [];
  for await (const r of s.rows) rows.push(r);
  return { headers: s.headers, rows, info: s.info };
}
async function fails(file: string, code: string, text: RegExp): Promise<void> {
  const err = await openSheet(file).then(async (s) => { for await (const _ of s.rows) void _; return null; }, (e: unknown) => e);
  expect(err).toBeInstanceOf(ProductSyncError);
  expect((err as ProductSyncError).code).toBe(code);
  expect((err as Error).message).toMatch(text);
}

describe('XLSX reader', () => {
  async function workbook(name: string, build: (wb: ExcelJS.Workbook) => void): Promise<string> {
    const wb = new ExcelJS.Workbook();
    build(wb);
    const f = join(dir, name);
    await wb.xlsx.writeFile(f);
    return f;
  }

  it('reads values as the pipeline needs them: long ids exact, rich text joined, formulas cached, errors as issues, dates', async () => {
    const f = await workbook('values.xlsx', (wb) => {
      wb.addWorksheet('Hidden', { state: 'hidden' }).addRow(['nope']);
      const ws = wb.addWorksheet('Produits');
      ws.addRow(['Code-barres', 'Nom', 'Prix', 'Erreur', 'Date']);
      ws.addRow([5601234567891, { richText: [{ text: 'Pâte ' }, { text: 'à tartiner', font: { bold: true } }] }, { formula: '1+1', result: 2 }, { error: '#N/A' }, new Date(Date.UTC(2025, 3, 3))]);
      ws.addRow([12345678901234, { text: 'Lien', hyperlink: 'https://example.org' }, 3.5, null, null]);
    });
    const { headers, rows, info } = await all(f);
    expect(info.sheet).toBe('Produits');
    expect(headers).toEqual(['Code-barres', 'Nom', 'Prix', 'Erreur', 'Date']);
    expect(rows[0]!.cells.slice(0, 3)).toEqual([5601234567891, 'Pâte à tartiner', 2]);
    expect(rows[0]!.issues).toEqual([expect.objectContaining({ code: 'CELL_ERROR', column: 'Erreur', value: '#N/A' })]);
    expect((rows[0]!.cells[4] as Date).toISOString().slice(0, 10)).toBe('2025-04-03');
    expect(String(rows[1]!.cells[0])).toBe('12345678901234');
    expect(rows[1]!.cells[1]).toBe('Lien');
  });

  it('picks a worksheet by name and a header on another row', async () => {
    const f = await workbook('two.xlsx', (wb) => {
      wb.addWorksheet('A').addRow(['x']);
      const b = wb.addWorksheet('Catalogue');
      b.addRow(['Groupe', '', '']);
      b.addRow(['EAN', 'Nom', 'Marque']);
      b.addRow(['3017620422003', 'Nutella', 'Ferrero']);
    });
    const { headers, rows } = await all(f, { sheet: 'catalogue', headerRow: 2 });
    expect(headers).toEqual(['EAN', 'Nom', 'Marque']);
    expect(rows).toHaveLength(1);
    expect(rows[0]!.row).toBe(3);
    await expect(openSheet(f, { sheet: 'Nope' })).rejects.toThrow(/no worksheet named "Nope".*A, Catalogue/);
  });

  it('refuses a zip bomb, a truncated workbook and entity declarations', async () => {
    const JSZip = require('jszip');
    const bomb = new JSZip();
    bomb.file('xl/workbook.xml', '<workbook/>');
    bomb.file('xl/worksheets/sheet1.xml', Buffer.alloc(60 * 1024 * 1024));
    writeFileSync(join(dir, 'bomb.xlsx'), await bomb.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }));
    await fails(join(dir, 'bomb.xlsx'), 'PS_ERR_FILE_TOO_LARGE', /zip bomb/);

    const good = await workbook('cut.xlsx', (wb) => wb.addWorksheet('S').addRow(['a']));
    const bytes = require('node:fs').readFileSync(good) as Buffer;
    await fails(write('truncated.xlsx', bytes.subarray(0, Math.floor(bytes.length / 2))), 'PS_ERR_FILE_UNREADABLE', /truncated/);

    const xxe = new JSZip();
    xxe.file('xl/workbook.xml', '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY lol "lol">]><workbook/>');
    writeFileSync(join(dir, 'xxe.xlsx'), await xxe.generateAsync({ type: 'nodebuffer', compression: 'DEFLATE' }));
    await fails(join(dir, 'xxe.xlsx'), 'PS_ERR_FILE_TYPE', /entities/);
  });
});

// The shared edge-case workbooks sit beside the clone (../shared) on developer machines and in CI.
const edgeDir = new URL('../../shared/data/xlsx-edge/', import.meta.url);
describe.runIf(existsSync(edgeDir))('shared xlsx edge cases', () => {
  it('reads each workbook or refuses it with a clear file-level error — never a crash', async () => {
    for (const f of readdirSync(edgeDir)) {
      const file = new URL(f, edgeDir).pathname;
      try {
        const { rows } = await all(file);
        expect(Array.isArray(rows)).toBe(true);
      } catch (err) {
        expect(err, f).toBeInstanceOf(ProductSyncError);
        expect((err as Error).message, f).toContain(f);
      }
    }
  });
});
