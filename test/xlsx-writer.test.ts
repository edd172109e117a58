import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import ExcelJS from 'exceljs';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { openSheet } from '../src/pipeline/read/read-sheet.ts';
import { createReportWriter, type RunSummary } from '../src/pipeline/report/report.ts';
import { XlsxWriter, xmlText } from '../src/formats/xlsx-writer.ts';
import type { SheetRow } from '../src/pipeline/types.ts';
import { runCounts } from './helpers/summary.ts';

const tempFile = (name = 'out.xlsx') => join(mkdtempSync(join(tmpdir(), 'ps-xlsx-writer-')), name);

async function readExcelJs(file: string): Promise<ExcelJS.Worksheet> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  expect(wb.worksheets).toHaveLength(1);
  return wb.worksheets[0]!;
}
/** Rows as exceljs reads them, each padded to `width` with '' for empty cells. */
function excelJsRows(ws: ExcelJS.Worksheet, width: number): string[][] {
  const out: string[][] = [];
  ws.eachRow({ includeEmpty: true }, (r) => {
    const v = (r.values as unknown[]).slice(1);
    out.push(Array.from({ length: width }, (_, i) => (v[i] === undefined || v[i] === null ? '' : (v[i] as string))));
  });
  return out;
}
async function readOurs(file: string): Promise<{ headers: string[]; rows: SheetRow[] }> {
  const sheet = await openSheet(file);
  const rows: SheetRow[] = [];
  for await (const r of sheet.rows) rows.push(r);
  return { headers: sheet.headers, rows };
}
/** The entries of a workbook we write, in their order in the zip. */
const ENTRY_NAMES = [
  '[Content_Types].xml',
  '_rels/.rels',
  'xl/workbook.xml',
  'xl/_rels/workbook.xml.rels',
  'xl/styles.xml',
  'xl/worksheets/sheet1.xml',
];
/** `unzip -t` on the file, when unzip is installed. */
function unzipTest(file: string): void {
  const r = spawnSync('unzip', ['-t', file], { encoding: 'utf8' });
  if (r.error) return; // not installed
  expect(r.status, r.stdout + r.stderr).toBe(0);
  expect(r.stdout).toContain('No errors detected');
}
/** Closes `w`, tests its zip (unzip -t) and returns its sheet's XML; undefined when unzip is not installed. */
async function closedSheetXml(w: XlsxWriter, file: string): Promise<string | undefined> {
  await w.close();
  unzipTest(file);
  const unzipped = spawnSync('unzip', ['-p', file, 'xl/worksheets/sheet1.xml'], { encoding: 'utf8' });
  return unzipped.error ? undefined : unzipped.stdout;
}
/** The local headers of a zip in file order: name, flags, method and the sizes they declare (no data descriptors). */
function localHeaders(
  file: string,
): { name: string; flags: number; method: number; crc: number; compressed: number; uncompressed: number }[] {
  const b = readFileSync(file);
  const out = [];
  for (let p = 0; b.readUInt32LE(p) === 0x04034b50;) {
    const nameLen = b.readUInt16LE(p + 26);
    const extraLen = b.readUInt16LE(p + 28);
    const e = {
      name: b.toString('utf8', p + 30, p + 30 + nameLen),
      flags: b.readUInt16LE(p + 6),
      method: b.readUInt16LE(p + 8),
      crc: b.readUInt32LE(p + 14),
      compressed: b.readUInt32LE(p + 18),
      uncompressed: b.readUInt32LE(p + 22),
    };
    out.push(e);
    p += 30 + nameLen + extraLen + e.compressed;
  }
  return out;
}

const HEADER = [
  'Code-barres',
  'Désignation',
  'Quantité',
  'Notes',
  'Une colonne au titre vraiment très très long pour la largeur',
];
const LONG = 'Lorem ipsum dolor sit amet, 😀 é à ü. '.repeat(800); // ~30 000 characters, under Excel's 32 767
// [written, read back]: XML parsers turn CR LF and a lone CR into LF (XML end-of-line handling).
const ROWS: [string[], string[]][] = [
  [
    ['00012345678905', 'Crème brûlée', '0', 'Ærøskøbing ß ç ñ 漢字', ''],
    ['00012345678905', 'Crème brûlée', '0', 'Ærøskøbing ß ç ñ 漢字', ''],
  ],
  [
    ['0001', 'emoji 😀👍🏽 and a flag 🇫🇷', '007', '', 'x'],
    ['0001', 'emoji 😀👍🏽 and a flag 🇫🇷', '007', '', 'x'],
  ],
  [
    [`a & b < c > d "e" 'f'`, '&amp; &lt; literally', '<t>not a tag</t>', ']]>', "'"],
    [`a & b < c > d "e" 'f'`, '&amp; &lt; literally', '<t>not a tag</t>', ']]>', "'"],
  ],
  [
    [
      'ctrl\u0000\u0001\u0008\u000B\u000C\u001F\u007F.',
      'tab\there',
      'lone \uD800 high, lone \uDC00 low, \uFFFE\uFFFF',
      'pair 𝄞 ok',
      '',
    ],
    ['ctrl\u007F.', 'tab\there', 'lone  high, lone  low, ', 'pair 𝄞 ok', ''],
  ],
  [
    ['', '', '', '', 'only the last'],
    ['', '', '', '', 'only the last'],
  ],
  [
    ['line 1\nline 2\r\nline 3\rline 4', '  leading and trailing spaces  ', '\n', ' ', 'end'],
    ['line 1\nline 2\nline 3\nline 4', '  leading and trailing spaces  ', '\n', ' ', 'end'],
  ],
  [
    ['long', LONG, '', '', ''],
    ['long', LONG, '', '', ''],
  ],
  [
    ['_x0041_ stays literal', '_x_ and _x12_', '', '', ''],
    ['_x0041_ stays literal', '_x_ and _x12_', '', '', ''],
  ],
];

describe('XlsxWriter', () => {
  it('writes a workbook exceljs and our sheet reader read back cell for cell', async () => {
    const file = tempFile();
    const w = new XlsxWriter(file, 'rows', HEADER);
    for (const [written] of ROWS) await w.line(written);
    await w.close();
    expect(w.rowsWritten).toBe(ROWS.length);
    expect(w.rowsDropped).toBe(0);
    unzipTest(file);

    const ws = await readExcelJs(file);
    expect(ws.name).toBe('rows');
    // exceljs leaves `_xHHHH_` escapes as they are; `_x005F_` is how Excel itself writes a literal `_x…_`.
    const excelJsShows = (v: string) => v.replace('_x0041_', '_x005F_x0041_');
    expect(excelJsRows(ws, HEADER.length)).toEqual([HEADER, ...ROWS.map(([, read]) => read.map(excelJsShows))]);
    ws.eachRow((r) => r.eachCell((c) => expect(c.type).toBe(ExcelJS.ValueType.String)));
    expect(ws.views).toMatchObject([{ state: 'frozen', ySplit: 1, topLeftCell: 'A2' }]);
    // Widths from the header alone (widthsFromRows 0): its characters + 2, clamped to [8, 60].
    expect(HEADER.map((_, i) => ws.getColumn(i + 1).width)).toEqual([13, 13, 10, 8, 60]);
    expect(ws.autoFilter).toBeUndefined();

    const { headers, rows } = await readOurs(file);
    expect(headers).toEqual(HEADER);
    // The sheet reader skips rows wholly empty and reads blank cells as null.
    const blankEmpty = (v: string) => (v.trim() === '' ? '' : v);
    expect(rows.map((r) => r.cells.map((c) => (c === null ? '' : c)))).toEqual(
      ROWS.map(([, read]) => read.map(blankEmpty)),
    );
    expect(rows.map((r) => r.row)).toEqual(ROWS.map((_, i) => i + 2));
    expect(rows.flatMap((r) => r.issues)).toEqual([]);
  });

  it('writes the values of a shared-strings column found in its table as references: exceljs and our reader read the same text', async () => {
    const file = tempFile();
    const header = ['row', 'outcome', 'note'];
    const table = ['valid', 'invalid', ' spaced '];
    const w = new XlsxWriter(file, 'rows', header, { sharedStrings: { columns: [1], values: table } });
    const lines = [
      ['2', 'valid', 'valid'],
      ['3', 'invalid', ''],
      ['4', 'other', 'x'],
      ['5', ' spaced ', 'invalid'],
      ['6', '', 'y'],
    ];
    for (const l of lines) await w.line(l);
    const xml = await closedSheetXml(w, file);
    if (xml !== undefined) {
      // References only in the shared column, for the values of its table.
      expect(xml).toContain('<c r="B2" t="s"><v>0</v></c>');
      expect(xml).toContain('<c r="B5" t="s"><v>2</v></c>');
      expect(xml).toContain('<c r="C2" t="inlineStr"><is><t>valid</t></is></c>');
      expect(xml).toContain('<c r="B4" t="inlineStr"><is><t>other</t></is></c>');
      expect(xml.match(/t="s"/g)).toHaveLength(3);
    }
    const ws = await readExcelJs(file);
    expect(excelJsRows(ws, header.length)).toEqual([header, ...lines]);
    ws.eachRow((r) => r.eachCell((c) => expect(c.type).toBe(ExcelJS.ValueType.String)));
    const { headers, rows } = await readOurs(file);
    expect(headers).toEqual(header);
    expect(rows.map((r) => r.cells.map((c) => (c === null ? '' : c)))).toEqual(
      lines.map((l) => l.map((v) => (v.trim() === '' ? '' : v))),
    );
  });

  it('writes the values of a number column as number cells: exceljs and our reader read numbers, the other cells stay text', async () => {
    const file = tempFile();
    const w = new XlsxWriter(file, 'rows', ['row', 'key'], { numberColumns: [0] });
    for (const l of [
      ['2', '0001'],
      ['10', '0002'],
      ['', '0003'],
    ])
      await w.line(l);
    const xml = await closedSheetXml(w, file);
    if (xml !== undefined) {
      expect(xml).toContain('<c r="A2"><v>2</v></c>');
      // The header row is text.
      expect(xml).toContain('<c r="A1" t="inlineStr"><is><t>row</t></is></c>');
    }
    const ws = await readExcelJs(file);
    expect(excelJsRows(ws, 2)).toEqual([
      ['row', 'key'],
      [2, '0001'],
      [10, '0002'],
      ['', '0003'],
    ]);
    const { rows } = await readOurs(file);
    expect(rows.map((r) => r.cells)).toEqual([
      [2, '0001'],
      [10, '0002'],
      [null, '0003'],
    ]);
  });

  it('writes a zip without data descriptors: every local header carries its CRC and sizes, names flagged UTF-8', async () => {
    const file = tempFile();
    const w = new XlsxWriter(file, 'x', ['a']);
    for (let i = 0; i < 5000; i++) await w.line([`value ${i}`]);
    await w.close();
    const entries = localHeaders(file);
    expect(entries.map((e) => e.name)).toEqual(ENTRY_NAMES);
    for (const e of entries) {
      expect(e.flags, e.name).toBe(0x0800);
      expect(e.method, e.name).toBe(8);
      expect(e.compressed, e.name).toBeGreaterThan(0);
      expect(e.uncompressed, e.name).toBeGreaterThan(e.compressed);
      expect(e.crc, e.name).not.toBe(0);
    }
    unzipTest(file);
  });

  it('writes a header-only sheet', async () => {
    const file = tempFile();
    const w = new XlsxWriter(file, 'empty', ['a', 'b']);
    await w.close();
    unzipTest(file);
    expect(excelJsRows(await readExcelJs(file), 2)).toEqual([['a', 'b']]);
    const { headers, rows } = await readOurs(file);
    expect(headers).toEqual(['a', 'b']);
    expect(rows).toEqual([]);
  });

  it('stops at maxRows: later rows are counted as dropped, the file holds the first rows', async () => {
    const file = tempFile();
    const w = new XlsxWriter(file, 'rows', ['n'], { maxRows: 3 });
    for (let i = 1; i <= 5; i++) await w.line([`r${i}`]);
    await w.close();
    expect([w.rowsWritten, w.rowsDropped]).toEqual([3, 2]);
    expect(excelJsRows(await readExcelJs(file), 1)).toEqual([['n'], ['r1'], ['r2'], ['r3']]);
    expect((await readOurs(file)).rows.map((r) => r.cells)).toEqual([['r1'], ['r2'], ['r3']]);
  });

  it('stops when the sheet part would outgrow maxSheetBytes, and writes no later row even a short one', async () => {
    const file = tempFile();
    const w = new XlsxWriter(file, 'rows', ['n'], { maxSheetBytes: 2000 });
    for (let i = 0; i < 100; i++) await w.line([i === 50 ? 'x' : `row number ${i} `.repeat(3)]);
    await w.close();
    expect(w.rowsWritten).toBeGreaterThan(5);
    expect(w.rowsWritten + w.rowsDropped).toBe(100);
    expect(w.rowsWritten).toBeLessThan(50);
    const rows = (await readOurs(file)).rows;
    expect(rows).toHaveLength(w.rowsWritten);
    expect(rows.at(-1)!.cells[0]).toBe(`row number ${w.rowsWritten - 1} `.repeat(3));
    expect(localHeaders(file).at(-1)!.uncompressed).toBeLessThanOrEqual(2000);
  });

  it('streams many rows through several deflate batches', async () => {
    const file = tempFile();
    const w = new XlsxWriter(file, 'rows', ['row', 'key', 'text']);
    const n = 12_000;
    for (let i = 0; i < n; i++) await w.line([String(i + 2), String(i).padStart(14, '0'), `Produit n°${i} — crème`]);
    await w.close();
    unzipTest(file);
    let count = 0;
    let last: SheetRow | undefined;
    for await (const r of (await openSheet(file)).rows) {
      count++;
      last = r;
    }
    expect(count).toBe(n);
    expect(last!.cells).toEqual([String(n + 1), String(n - 1).padStart(14, '0'), `Produit n°${n - 1} — crème`]);
  });

  it('surfaces errors of the file, and abort removes the partial file', async () => {
    const missing = join(tempFile(), 'no-such-dir', 'x.xlsx');
    const w = new XlsxWriter(missing, 'rows', ['a']);
    await expect(
      (async () => {
        for (let i = 0; i < 10; i++) await w.line(['x']);
        await w.close();
      })(),
    ).rejects.toMatchObject({ code: 'ENOENT' });

    const file = tempFile();
    const a = new XlsxWriter(file, 'rows', ['a']);
    await a.line(['x']);
    await a.abort();
    expect(existsSync(file)).toBe(false);
    await expect(a.line(['y'])).rejects.toThrow();
  });

  it('opens ready: frozen header, autofilter over the rows, widths from the first rows, a wrapped column', async () => {
    const file = tempFile();
    const header = ['row', 'key', 'x', 'issues'];
    const w = new XlsxWriter(file, 'rows', header, {
      numberColumns: [0],
      freezeHeader: true,
      autoFilter: true,
      widthsFromRows: 3,
      wrapColumns: [3],
    });
    const issues = 'ERROR GTIN_CHECK_DIGIT [Code-barres] "123": the check digit is wrong; '.repeat(3);
    const rows = [
      ['2', 'a-key-of-20-chars-xx', '', issues],
      ['3', 'k', 'line one\nand two', ''],
      ['4', 'k'.repeat(100), 'y', 'short'],
      // Past the first 3 rows: no bearing on the widths.
      ['5', 'k'.repeat(300), 'z'.repeat(50), ''],
    ];
    const reused: string[] = [];
    for (const r of rows) {
      // The writer holds the first rows back: it must copy them, as a caller may reuse its list.
      reused.splice(0, reused.length, ...r);
      await w.line(reused);
    }
    await w.close();
    expect([w.rowsWritten, w.rowsDropped]).toEqual([4, 0]);
    unzipTest(file);
    // workbook.xml is stored, its range and CRC patched at close; the entry order is as before.
    const book = localHeaders(file).find((e) => e.name === 'xl/workbook.xml')!;
    expect([book.method, book.compressed]).toEqual([0, book.uncompressed]);
    expect(localHeaders(file).map((e) => e.name)).toEqual(ENTRY_NAMES);

    const ws = await readExcelJs(file);
    expect(ws.views).toMatchObject([{ state: 'frozen', ySplit: 1, topLeftCell: 'A2' }]);
    expect(ws.autoFilter).toBe('A1:D5');
    // key: the 100-character value of row 4 clamped to 60; x: its longest line ("line one") + 2, up from 8.
    expect(header.map((_, i) => ws.getColumn(i + 1).width)).toEqual([8, 60, 10, 80]);
    expect(ws.getCell('D2').alignment).toMatchObject({ wrapText: true, vertical: 'top' });
    expect(ws.getCell('D4').alignment).toMatchObject({ wrapText: true });
    expect(ws.getCell('B2').alignment).toBeUndefined();
    expect(ws.getCell('A2').value).toBe(2);
    expect(excelJsRows(ws, 4).slice(1, 3)).toEqual(
      [
        ['2', 'a-key-of-20-chars-xx', '', issues],
        ['3', 'k', 'line one\nand two', ''],
      ].map((r) => [Number(r[0]), ...r.slice(1)]),
    );

    const ours = await readOurs(file);
    expect(ours.headers).toEqual(header);
    expect(ours.rows.map((r) => r.cells.map((c) => (c === null ? '' : String(c))))).toEqual(rows);

    const part = (name: string) => spawnSync('unzip', ['-p', file, name], { encoding: 'utf8' }).stdout;
    const sheet = part('xl/worksheets/sheet1.xml');
    if (sheet) {
      // CT_Worksheet's order, which Excel enforces.
      const at = ['<sheetViews>', '<sheetFormatPr', '<cols>', '<sheetData>', '</sheetData>', '<autoFilter '].map((t) =>
        sheet.indexOf(t),
      );
      expect(at.every((p) => p >= 0)).toBe(true);
      expect([...at].sort((x, y) => x - y)).toEqual(at);
      expect(sheet).toMatch(/<\/sheetData><autoFilter ref="A1:D5"\/><\/worksheet>$/);
      const bookXml = part('xl/workbook.xml');
      expect(crc32(Buffer.from(bookXml)) >>> 0).toBe(book.crc);
      expect(bookXml).toContain(
        `<definedNames><definedName name="_xlnm._FilterDatabase" localSheetId="0" hidden="1">'rows'!$A$1:$D$5</definedName>`,
      );
      expect(bookXml.trimEnd()).toMatch(/<\/definedNames><\/workbook>$/);
      expect(part('xl/styles.xml')).toContain('<alignment vertical="top" wrapText="1"/>');
    }
  });

  it('decides the widths at close when fewer rows came; freezes nothing when told not to', async () => {
    const file = tempFile();
    const w = new XlsxWriter(file, "it's", ['a', 'b'], { freezeHeader: false, autoFilter: true, widthsFromRows: 100 });
    await w.line(['a value of 24 characters', '']);
    await w.close();
    const ws = await readExcelJs(file);
    expect(ws.views.some((v) => v.state === 'frozen')).toBe(false);
    expect(ws.autoFilter).toBe('A1:B2');
    expect([ws.getColumn(1).width, ws.getColumn(2).width]).toEqual([26, 8]);
    expect((await readOurs(file)).rows.map((r) => r.cells)).toEqual([['a value of 24 characters', null]]);
    const book = spawnSync('unzip', ['-p', file, 'xl/workbook.xml'], { encoding: 'utf8' }).stdout;
    if (book) expect(book).toContain(`>'it''s'!$A$1:$B$2</definedName>`);

    // No data row: the filter covers the header alone.
    const empty = tempFile();
    const e = new XlsxWriter(empty, 'rows', ['a'], { autoFilter: true, widthsFromRows: 10, preamble: [['title']] });
    await e.close();
    unzipTest(empty);
    const ews = await readExcelJs(empty);
    expect(ews.autoFilter).toBe('A2:A2');
    expect(ews.views).toMatchObject([{ state: 'frozen', ySplit: 2, topLeftCell: 'A3' }]);
  });

  it('escapes text for XML', () => {
    expect(xmlText(`<a href="x">&'</a>`)).toBe(`&lt;a href=&quot;x&quot;&gt;&amp;'&lt;/a&gt;`);
    expect(xmlText('a\u0000b\u001Fc\td\ne\rf')).toBe('abc\td\ne\rf');
    expect(xmlText('\uD83D\uDE00 \uD83D \uDE00')).toBe('\uD83D\uDE00  ');
    expect(xmlText('_x000D_')).toBe('_x005F_x000D_');
    // In a cell's character data quotes stay as typed; the rest is escaped as in an attribute.
    expect(xmlText(`say "hi" & <b>\u0001`, false)).toBe('say "hi" &amp; &lt;b&gt;');
  });
});

describe('report XLSX past the row limit', () => {
  const summary = (): RunSummary => ({
    runId: 'run-1',
    source: { file: 'in.csv', sha256: 'abc', rows: 5 },
    mapping: 'm',
    mode: 'upsert',
    dryRun: false,
    startedAt: 'a',
    finishedAt: 'b',
    counts: runCounts({ rows: 5, invalid: 5 }),
    requests: { reference: 0, product: 0 },
    exitCode: 1,
  });

  it('keeps the CSVs complete, the XLSXs to the limit, and says so in summary.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-xlsx-report-'));
    const w = await createReportWriter(dir, { sourceHeaders: ['GTIN'], xlsxMaxRows: 3 });
    for (let i = 0; i < 1200; i++) await w.addRow({ row: i + 2, key: `k${i}`, outcome: 'invalid', issues: [] });
    for (let i = 0; i < 4; i++) await w.addRejected(i + 2, [`0${i}`], []);
    const s = summary();
    await w.finish(s);
    const notes = [
      'rows.xlsx holds the first 3 rows of 1 200; rows.csv holds them all',
      'rejected.xlsx holds the first 3 rows of 4; rejected.csv holds them all',
    ];
    expect(s.notes).toEqual(notes);
    expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).notes).toEqual(notes);
    const csv = Papa.parse<string[]>(readFileSync(join(dir, 'rows.csv'), 'utf8').slice(1), {
      newline: '\r\n',
      skipEmptyLines: true,
    }).data;
    expect(csv).toHaveLength(1201);
    expect((await readOurs(join(dir, 'rows.xlsx'))).rows.map((r) => r.cells[1])).toEqual(['k0', 'k1', 'k2']);
    expect((await readOurs(join(dir, 'rejected.xlsx'))).rows.map((r) => r.cells[0])).toEqual(['00', '01', '02']);
  });

  it('writes rows.xlsx and rejected.xlsx ready to work in: header frozen, filtered, fitted, issues wrapped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-xlsx-report-'));
    const w = await createReportWriter(dir, {
      sourceHeaders: ['GTIN', 'Désignation'],
      preamble: [['Catalogue fournisseur']],
    });
    const issue = {
      row: 3,
      column: 'GTIN',
      field: 'gtin',
      value: '123',
      code: 'GTIN_CHECK_DIGIT',
      severity: 'error' as const,
      message: 'the check digit is wrong',
    };
    await w.addRow({ row: 3, key: '00012345678905', outcome: 'invalid', issues: [issue] });
    await w.addRow({ row: 4, key: 'k', outcome: 'created', tradeItemId: 'ti-1', issues: [] });
    await w.addRejected(3, ['123', 'Crème brûlée au caramel'], [issue]);
    await w.finish(summary());

    const rowsWs = await readExcelJs(join(dir, 'rows.xlsx'));
    expect(rowsWs.views).toMatchObject([{ state: 'frozen', ySplit: 1, topLeftCell: 'A2' }]);
    expect(rowsWs.autoFilter).toBe('A1:G3');
    // row, key (14 digits), outcome, tradeItemId, manufacturedItemId (its header), changedFields, issues (wrapped).
    expect([1, 2, 3, 4, 5, 6, 7].map((c) => rowsWs.getColumn(c).width)).toEqual([8, 16, 9, 13, 20, 15, 80]);
    expect(rowsWs.getCell('G2').alignment).toMatchObject({ wrapText: true, vertical: 'top' });
    // A rejected row's issues are named in rows.*, told in full in rejected.*.
    expect(rowsWs.getCell('G2').value).toBe('ERROR GTIN_CHECK_DIGIT [GTIN] (rule PS-GTIN-006)');

    const rejected = join(dir, 'rejected.xlsx');
    unzipTest(rejected);
    const rejWs = await readExcelJs(rejected);
    // The preamble row is frozen with the header; the filter starts at the header.
    expect(rejWs.views).toMatchObject([{ state: 'frozen', ySplit: 2, topLeftCell: 'A3' }]);
    expect(rejWs.autoFilter).toBe('A2:D3');
    expect([1, 2, 3, 4].map((c) => rejWs.getColumn(c).width)).toEqual([8, 25, 18, 80]);
    expect(rejWs.getCell('D3').alignment).toMatchObject({ wrapText: true, vertical: 'top' });
    expect(rejWs.getCell('A3').value).toBe('123');
    const back = await openSheet(rejected, { headerRow: 2 });
    expect(back.headers).toEqual(['GTIN', 'Désignation', 'product-sync:row', 'issues']);
    const cells: unknown[] = [];
    for await (const r of back.rows) cells.push(r.cells);
    expect(cells).toEqual([
      [
        '123',
        'Crème brûlée au caramel',
        '3',
        'ERROR GTIN_CHECK_DIGIT [GTIN] "123": the check digit is wrong (rule PS-GTIN-006)',
      ],
    ]);
  });

  it('adds no notes when nothing was dropped', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-xlsx-report-'));
    const w = await createReportWriter(dir, { sourceHeaders: ['GTIN'] });
    await w.addRow({ row: 2, key: 'k', outcome: 'invalid', issues: [] });
    const s = summary();
    await w.finish(s);
    expect(s.notes).toBeUndefined();
    expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))).not.toHaveProperty('notes');
  });
});
