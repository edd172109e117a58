import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ProductSyncError } from '../src/errors.ts';
import { openSheet } from '../src/pipeline/read/read-sheet.ts';
import {
  expectReadFailure,
  fixtureDir,
  handZip,
  readAll,
  readError,
  RELS_XML,
  sheetXml,
  WORKBOOK_XML,
  WORKBOOKS,
  writeWorkbook,
} from './fixtures/sheets.ts';

const { dir, write } = fixtureDir('ps-read-xlsx-');

const expectFailure = expectReadFailure;

describe('XLSX reader', () => {
  it('reads values as the pipeline needs them: long ids exact, rich text joined, formulas cached, errors as issues, dates, booleans', async () => {
    const f = await writeWorkbook(dir, 'values.xlsx', WORKBOOKS.values);
    const { headers, rows, info, sheetName } = await readAll(f);
    expect(sheetName).toBe('Produits');
    expect(info).toMatchObject({ sheet: 'Produits', dateSystem: '1900' });
    expect(headers).toEqual(['Code-barres', 'Nom', 'Prix', 'Erreur', 'Date', 'Bio', ' Réf ']);
    expect(rows[0]!.cells).toEqual([
      5601234567891,
      'Pâte à tartiner',
      2,
      null,
      new Date(Date.UTC(2025, 3, 3)),
      true,
      'a\rb',
    ]);
    expect(rows[0]!.issues).toEqual([
      expect.objectContaining({ row: 2, code: 'CELL_ERROR', column: 'Erreur', value: '#N/A', severity: 'error' }),
    ]);
    expect(String(rows[1]!.cells[0])).toBe('9007199254740991');
    expect(rows[1]!.cells.slice(1, 4)).toEqual(['Lien', 3.5, null]);
    expect(rows[1]!.cells[6]).toBeNull();
    expect(rows[1]!.issues).toEqual([expect.objectContaining({ row: 3, code: 'CELL_ERROR', column: 'Erreur' })]);
  });

  it('honours the 1904 date system', async () => {
    const f = await writeWorkbook(dir, '1904.xlsx', WORKBOOKS.dates1904);
    const { rows, info } = await readAll(f);
    expect(info.dateSystem).toBe('1904');
    expect(rows[0]!.cells[0]).toEqual(new Date(Date.UTC(2025, 0, 31)));
  });

  it('picks a worksheet by name (case and spaces ignored) and a header on another row', async () => {
    const f = await writeWorkbook(dir, 'two.xlsx', WORKBOOKS.twoSheets);
    const { headers, rows } = await readAll(f, { sheet: ' catalogue', headerRow: 2 });
    expect(headers).toEqual(['EAN', 'Nom', 'Marque']);
    expect(rows).toEqual([{ row: 3, cells: ['3017620422003', 'Nutella', 'Ferrero'], issues: [] }]);
    await expectFailure(f, 'PS_ERR_FILE_HEADER', /no worksheet named "Nope".*A, Catalogue/, { sheet: 'Nope' });
    await expectFailure(f, 'PS_ERR_FILE_HEADER', /no header on row 5/, { sheet: 'Catalogue', headerRow: 5 });
  });

  it('applies the merged-cell and hidden-row policies with warnings', async () => {
    const f = await writeWorkbook(dir, 'merged.xlsx', WORKBOOKS.merged);
    const { headers, rows, info } = await readAll(f);
    expect(headers).toEqual(['GTIN', 'Nom', '', 'Marque']);
    expect(info).toMatchObject({ mergedRanges: 2, hiddenRows: 1 });
    expect(rows[0]!.issues.map((i) => [i.code, i.row, i.column])).toEqual([
      ['MERGED_HEADER', 1, 'Nom'],
      ['HIDDEN_COLUMN', 1, 'C'],
    ]);
    expect(rows[1]!.cells).toEqual(['2', 'Gaufre', null, null]);
    expect(rows[1]!.issues).toEqual([
      expect.objectContaining({ row: 3, code: 'MERGED_CELL', column: 'Marque', value: 'D2:D3', severity: 'warning' }),
    ]);
    expect(rows[2]!.issues).toEqual([expect.objectContaining({ row: 4, code: 'ROW_HIDDEN', severity: 'warning' })]);
  });

  it('keeps header names as strings in an array, never as object keys', async () => {
    const f = await writeWorkbook(dir, 'proto.xlsx', WORKBOOKS.protoHeaders);
    const { headers, rows } = await readAll(f);
    expect(headers).toEqual(['__proto__', 'constructor', '2025']);
    expect(rows[0]!.cells).toEqual(['a', 'b', 'c']);
  });

  it('refuses zip bombs, whether their sizes are declared or hidden, before holding them in memory', async () => {
    const zeros = Buffer.alloc(60 * 1024 * 1024);
    const parts = [
      { name: 'xl/workbook.xml', data: WORKBOOK_XML },
      { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
    ];
    await expectFailure(
      write('declared.xlsx', handZip([...parts, { name: 'xl/worksheets/sheet1.xml', data: zeros }])),
      'PS_ERR_FILE_TOO_LARGE',
      /zip bomb/,
    );
    await expectFailure(
      write('lying.xlsx', handZip([...parts, { name: 'xl/worksheets/sheet1.xml', data: zeros, declaredSize: 1000 }])),
      'PS_ERR_FILE_TOO_LARGE',
      /inflates past the size its zip entry declares/,
    );
    const ok = handZip([
      ...parts,
      {
        name: 'xl/worksheets/sheet1.xml',
        data: sheetXml('<row r="1"><c r="A1" t="inlineStr"><is><t>GTIN</t></is></c></row>'),
      },
    ]);
    await expectFailure(write('budget.xlsx', ok), 'PS_ERR_FILE_TOO_LARGE', /once unzipped/, {
      limits: { unzippedBytes: 300 },
    });
  });

  it('reads a minimal hand-made workbook (inline strings, no styles, no shared strings)', async () => {
    const f = write(
      'minimal.xlsx',
      handZip([
        { name: 'xl/workbook.xml', data: WORKBOOK_XML },
        { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
        {
          name: 'xl/worksheets/sheet1.xml',
          data: sheetXml(
            '<row r="1"><c r="A1" t="inlineStr"><is><t>GTIN</t></is></c><c r="B1" t="inlineStr"><is><t>Nom</t></is></c></row><row r="3"><c r="A3"><v>3017620422003</v></c><c r="B3" t="inlineStr"><is><t>Pâte</t></is></c></row>',
          ),
        },
      ]),
    );
    const { headers, rows } = await readAll(f);
    expect(headers).toEqual(['GTIN', 'Nom']);
    expect(rows).toEqual([{ row: 3, cells: [3017620422003, 'Pâte'], issues: [] }]);
  });

  it('refuses a truncated or incomplete workbook, entity declarations anywhere in a part, and zips that are not workbooks', async () => {
    const good = await writeWorkbook(dir, 'cut.xlsx', (wb) => wb.addWorksheet('S').addRow(['a']));
    const bytes = readFileSync(good);
    await expectFailure(
      write('truncated.xlsx', bytes.subarray(0, Math.floor(bytes.length / 2))),
      'PS_ERR_FILE_UNREADABLE',
      /truncated/,
    );
    await expectFailure(
      write('incomplete.xlsx', handZip([{ name: 'xl/worksheets/sheet1.xml', data: sheetXml('') }])),
      'PS_ERR_FILE_UNREADABLE',
      /workbook\.xml is missing/,
    );
    await expectFailure(
      write(
        'xxe.xlsx',
        handZip([
          { name: 'xl/workbook.xml', data: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY lol "lol">]><workbook/>' },
        ]),
      ),
      'PS_ERR_FILE_TYPE',
      /entities/,
    );
    const late = `<?xml version="1.0"?>${' '.repeat(3 * 1024 * 1024)}<!DOCTYPE sst [<!ENTITY a "aaaa">]><sst/>`;
    await expectFailure(
      write(
        'late-xxe.xlsx',
        handZip([
          { name: 'xl/workbook.xml', data: WORKBOOK_XML },
          { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
          { name: 'xl/sharedStrings.xml', data: late },
          { name: 'xl/worksheets/sheet1.xml', data: sheetXml('') },
        ]),
      ),
      'PS_ERR_FILE_TYPE',
      /sharedStrings\.xml declares XML entities/,
    );
    await expectFailure(
      write('doc.xlsx', handZip([{ name: 'word/document.xml', data: '<w:document/>' }])),
      'PS_ERR_FILE_TYPE',
      /Word document/,
    );
  });

  it('finds hidden rows, merged cells and entity declarations split between two of the 1 MB pieces a part inflates in', async () => {
    // ASCII text with `at` placed from byte `offset` on, spaces between (whitespace between elements).
    const placed = (start: string, parts: [number, string][], end: string) => {
      let xml = start;
      for (const [offset, at] of parts) {
        expect(offset).toBeGreaterThanOrEqual(xml.length);
        xml += ' '.repeat(offset - xml.length) + at;
      }
      return xml + end;
    };
    const MB = 1024 * 1024;
    const row = (r: number, hidden: boolean) =>
      `<row r="${r}"${hidden ? ' hidden="1"' : ''}><c r="A${r}"><v>${r}</v></c><c r="B${r}" t="inlineStr"><is><t>n${r}</t></is></c></row>`;
    const ws = placed(
      '<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="inlineStr"><is><t>GTIN</t></is></c><c r="B1" t="inlineStr"><is><t>Nom</t></is></c></row>',
      [
        [1000, row(2, true)],
        // ` hidden="` across the first boundary; the tag's `<` before the second, the rest after; ` hidden="` just
        // before the third, the tag's end after it.
        [MB - 4 - '<row r="3"'.length, row(3, true)],
        [2 * MB - 1, row(4, true)],
        [3 * MB - ' hidden="'.length - '<row r="5"'.length, row(5, true)],
        [4 * MB - 3, row(6, false)],
        [4 * MB + 100, row(7, false)],
        [4 * MB + 300, row(8, false)],
        [4 * MB + 500, '</sheetData><mergeCells count="2">'],
        // `mergeCell ` across the fifth boundary; the tag's `>` the first byte after the sixth.
        [5 * MB - 4, '<mergeCell ref="A7:B7"/>'],
        [6 * MB - '<mergeCell ref="A8:B8"/'.length, '<mergeCell ref="A8:B8"/>'],
      ],
      '</mergeCells></worksheet>',
    );
    const f = write(
      'seams.xlsx',
      handZip([
        { name: 'xl/workbook.xml', data: WORKBOOK_XML },
        { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
        { name: 'xl/worksheets/sheet1.xml', data: ws },
      ]),
    );
    const { rows, info } = await readAll(f);
    expect(info).toMatchObject({ hiddenRows: 4, mergedRanges: 2 });
    expect(rows.map((r) => [r.row, r.issues.map((i) => i.code)])).toEqual([
      [2, ['ROW_HIDDEN']],
      [3, ['ROW_HIDDEN']],
      [4, ['ROW_HIDDEN']],
      [5, ['ROW_HIDDEN']],
      [6, []],
      [7, ['MERGED_CELL']],
      [8, ['MERGED_CELL']],
    ]);

    // A declaration whose `<` ends a piece, one split inside its name, one starting a piece.
    for (const [name, offset] of [
      ['lt-last', MB - 1],
      ['split', MB - 5],
      ['first', MB],
    ] as const) {
      const app = placed(
        '<?xml version="1.0"?>',
        [[offset, name === 'split' ? '<!ENTITY a "a">' : '<!DOCTYPE x [<!ENTITY a "a">]>']],
        '<Properties/>',
      );
      const bad = write(
        `entity-${name}.xlsx`,
        handZip([
          { name: 'xl/workbook.xml', data: WORKBOOK_XML },
          { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
          { name: 'xl/worksheets/sheet1.xml', data: sheetXml('') },
          { name: 'docProps/app.xml', data: app },
        ]),
      );
      await expectFailure(bad, 'PS_ERR_FILE_TYPE', /docProps\/app\.xml declares XML entities/);
    }
  });

  it('opens lazily: rows come one by one', async () => {
    const f = await writeWorkbook(dir, 'lazy.xlsx', (wb) => {
      const ws = wb.addWorksheet('S');
      ws.addRow(['n']);
      for (let i = 0; i < 2000; i++) ws.addRow([i]);
    });
    const sheet = await openSheet(f);
    const it = sheet.rows[Symbol.asyncIterator]();
    expect((await it.next()).value).toEqual({ row: 2, cells: [0], issues: [] });
    await it.return?.();
    await expectFailure(f, 'PS_ERR_FILE_TOO_LARGE', /more than 100 data rows/, { limits: { rows: 100 } });
  });
});

// The shared workbooks sit beside the clone (../shared) on developer machines and in CI; skipped where they are absent.
const shared = new URL('../../shared/data/', import.meta.url);
describe.runIf(existsSync(shared))('shared real and edge-case sheets', () => {
  const path = (p: string) => new URL(p, shared).pathname;

  it('reads each edge workbook or refuses it with a clear file-level error — never a crash', async () => {
    for (const f of readdirSync(path('xlsx-edge/'))) {
      const file = path(`xlsx-edge/${f}`);
      const err = await readError(file);
      if (err !== null) {
        expect(err, f).toBeInstanceOf(ProductSyncError);
        expect((err as Error).message, f).toContain(file);
      }
    }
    await expectFailure(
      path('xlsx-edge/exceljs_missing-bits.xlsx'),
      'PS_ERR_FILE_UNREADABLE',
      /workbook\.xml is missing/,
    );
    await expectFailure(path('xlsx-edge/exceljs_invalid-xml.xlsx'), 'PS_ERR_FILE_UNREADABLE', /cannot be read/);
    const hidden = await readAll(path('xlsx-edge/exceljs_google-sheets.xlsx'));
    expect(hidden.rows.find((r) => r.row === 2)!.issues.map((i) => i.code)).toEqual(['HIDDEN_COLUMN', 'ROW_HIDDEN']);
    const errors = await readAll(path('xlsx-edge/sheetjs_ErrorTypes.xlsx'));
    expect(errors.rows.flatMap((r) => r.issues.filter((i) => i.code === 'CELL_ERROR').map((i) => i.value))).toEqual(
      expect.arrayContaining(['#N/A', '#REF!', '#DIV/0!', '#NAME?', '#NUM!', '#VALUE!', '#NULL!']),
    );
    expect((await readAll(path('xlsx-edge/exceljs_shared_string_with_escape.xlsx'))).headers).toEqual(['_x000D_']);
    const numbers = await readAll(path('xlsx-edge/sheetjs_LONumbers.xlsx'));
    expect(numbers.rows[0]!.cells.slice(1)).toEqual([
      1, -1.2, 12.3, -12.34, 123.45, -123.456, 1234.567, -1234.5678, 12345.6789,
    ]);
  });

  it('reads the real supplier sheets', async () => {
    const eco = await readAll(path('real-sheets/eco-score-template.xlsx'), { headerRow: 2 });
    expect(eco.headers.slice(0, 4)).toEqual(['EAN', 'Nom', 'Marque', 'Catégorie']);
    expect(eco.rows[0]!.row).toBe(3);
    const off = await readAll(path('real-sheets/off-producer-import-fr.xlsx'));
    expect(off.headers[0]).toBe('Code-barres');
    expect(String(off.rows[0]!.cells[0])).toBe('3270190128403');
    const su = await readAll(path('real-sheets/systemeu-akeneo-export.csv'));
    expect(su.info).toMatchObject({ delimiter: ';', encoding: 'utf-8' });
    expect(su.rows).toHaveLength(5);
    expect(su.rows[0]!.cells[su.headers.indexOf('UGC_ean')]).toBe('3368954957571');
    const tsv = await readAll(path('real-sheets/off-export-products.tsv'));
    expect(tsv.info.delimiter).toBe('tab');
    expect(tsv.headers).toHaveLength(127);
    expect(tsv.rows.every((r) => r.issues.every((i) => i.severity !== 'error'))).toBe(true);
  });
});

describe('XLSX part order', () => {
  it('reads a workbook whose worksheet comes before xl/workbook.xml in the zip (exceljs alone throws there)', async () => {
    const strings =
      '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="2" uniqueCount="2"><si><t>GTIN</t></si><si><t>3017620422003</t></si></sst>';
    const file = write(
      'late-workbook.xlsx',
      handZip([
        { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
        { name: 'xl/sharedStrings.xml', data: strings },
        {
          name: 'xl/worksheets/sheet1.xml',
          data: sheetXml('<row r="1"><c r="A1" t="s"><v>0</v></c></row><row r="2"><c r="A2" t="s"><v>1</v></c></row>'),
        },
        { name: 'xl/workbook.xml', data: WORKBOOK_XML },
      ]),
    );
    const { headers, rows } = await readAll(file);
    expect(headers).toEqual(['GTIN']);
    expect(rows.map((r) => r.cells)).toEqual([['3017620422003']]);
  });
});
