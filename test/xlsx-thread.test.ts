// The XLSX reader thread (read/xlsx-thread.ts) against readXlsx on the calling thread: same sheet, same rows, same
// errors; the thread ends with the rows (to the end, on a failure, on a break) and leaves no file behind.
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProductSyncError } from '../src/errors.ts';
import { openSheet, XLSX_THREAD_BYTES, type OpenSheetOptions } from '../src/pipeline/read/read-sheet.ts';
import type { SheetRow } from '../src/pipeline/types.ts';
import { fixtureDir, handZip, readAll, RELS_XML, sheetXml, WORKBOOK_XML, WORKBOOKS, writeWorkbook } from './fixtures/sheets.ts';

const { dir, write } = fixtureDir('ps-xlsx-thread-');
// The temp directory before the tests below point TMPDIR elsewhere.
const systemTmp = tmpdir();

/** A hand-made workbook of one worksheet `S` whose sheetData is `rows` (inline strings). */
const handWorkbook = (name: string, rows: string, extra: { name: string; data: Buffer | string }[] = []) =>
  write(name, handZip([{ name: 'xl/workbook.xml', data: WORKBOOK_XML }, { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML }, { name: 'xl/worksheets/sheet1.xml', data: sheetXml(rows) }, ...extra]));
const inlineStr = (ref: string, s: string) => `<c r="${ref}" t="inlineStr"><is><t>${s}</t></is></c>`;
/** Rows 2…n+1 of a GTIN / name sheet, as worksheet XML. */
const dataRows = (n: number) => Array.from({ length: n }, (_, i) => `<row r="${i + 2}"><c r="A${i + 2}"><v>${3017620422003 + i}</v></c>${inlineStr(`B${i + 2}`, `Produit ${i}`)}</row>`).join('');

interface ErrorSeen {
  productSyncError: boolean;
  code: unknown;
  message: string;
}
const seen = (err: unknown): ErrorSeen => ({ productSyncError: err instanceof ProductSyncError, code: (err as { code?: unknown }).code, message: (err as Error).message });

/** Everything reading `file` gives: the error opening it, or the sheet, its rows and the error that ended them. */
async function outcome(file: string, opts: OpenSheetOptions): Promise<{ openError: ErrorSeen } | { sheet: Record<string, unknown>; rows: SheetRow[]; rowsError: ErrorSeen | null }> {
  let sheet;
  try {
    sheet = await openSheet(file, opts);
  } catch (err) {
    return { openError: seen(err) };
  }
  const rows: SheetRow[] = [];
  let rowsError: ErrorSeen | null = null;
  try {
    for await (const r of sheet.rows) rows.push(r);
  } catch (err) {
    rowsError = seen(err);
  }
  const { rows: _stream, ...rest } = sheet;
  return { sheet: rest, rows, rowsError };
}

/** Reads `file` on this thread and through the reader thread; asserts both give exactly the same; returns it. */
async function expectSame(file: string, opts: OpenSheetOptions = {}) {
  const inline = await outcome(file, { ...opts, thread: false });
  const thread = await outcome(file, { ...opts, thread: true });
  // toStrictEqual: classes (Date, not a string), undefined properties and array holes must match too.
  expect(thread, file).toStrictEqual(inline);
  return inline;
}

/** Rows of a read that opened; fails the test otherwise. */
function rowsOf(o: Awaited<ReturnType<typeof outcome>>): SheetRow[] {
  if (!('rows' in o)) throw new Error(`expected the sheet to open: ${o.openError.message}`);
  return o.rows;
}

// Threads of this process (Linux): a worker thread adds two while it runs (its own and its V8 platform's).
const threads = () => readdirSync('/proc/self/task').length;
// Files this process holds open.
const openFiles = () => readdirSync('/proc/self/fd').map((fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`); } catch { return ''; } });

describe('the XLSX reader thread gives what the inline reader gives', () => {
  it('values, dates, formulas, error cells, a named sheet with a header on row 2, merged cells, hidden rows and columns', async () => {
    const values = await writeWorkbook(dir, 'values.xlsx', WORKBOOKS.values);
    const v = rowsOf(await expectSame(values));
    // What the comparison covers: a Date cell and CELL_ERROR issues crossed the thread.
    expect(v[0]!.cells[4]).toStrictEqual(new Date(Date.UTC(2025, 3, 3)));
    expect(v.flatMap((r) => r.issues.map((i) => i.code))).toEqual(['CELL_ERROR', 'CELL_ERROR']);

    const d1904 = await writeWorkbook(dir, '1904.xlsx', WORKBOOKS.dates1904);
    const o1904 = await expectSame(d1904);
    expect('sheet' in o1904 && o1904.sheet.info).toMatchObject({ dateSystem: '1904' });

    const two = await writeWorkbook(dir, 'two.xlsx', WORKBOOKS.twoSheets);
    const named = await expectSame(two, { sheet: ' catalogue', headerRow: 2 });
    expect('sheet' in named && named.sheet).toMatchObject({ sheetName: 'Catalogue', preamble: [['Groupe']], headers: ['EAN', 'Nom', 'Marque'] });

    const merged = await writeWorkbook(dir, 'merged.xlsx', WORKBOOKS.merged);
    const m = rowsOf(await expectSame(merged));
    expect(m.flatMap((r) => r.issues.map((i) => i.code))).toEqual(['MERGED_HEADER', 'HIDDEN_COLUMN', 'MERGED_CELL', 'ROW_HIDDEN']);

    const proto = await writeWorkbook(dir, 'proto.xlsx', WORKBOOKS.protoHeaders);
    await expectSame(proto);
  }, 60_000);

  it('hand-made workbooks: inline strings, shared strings stored last, a worksheet before xl/workbook.xml', async () => {
    await expectSame(handWorkbook('minimal.xlsx', `<row r="1">${inlineStr('A1', 'GTIN')}${inlineStr('B1', 'Nom')}</row><row r="3"><c r="A3"><v>3017620422003</v></c>${inlineStr('B3', 'Pâte')}</row>`));
    const strings = '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="3" uniqueCount="3"><si><t>GTIN</t></si><si><t>Nom</t></si><si><t>a_x000D_b</t></si></sst>';
    const ws = sheetXml('<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row><row r="2"><c r="A2"><v>3017620422003</v></c><c r="B2" t="s"><v>2</v></c></row>');
    const last = rowsOf(await expectSame(write('strings-last.xlsx', handZip([{ name: 'xl/workbook.xml', data: WORKBOOK_XML }, { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML }, { name: 'xl/worksheets/sheet1.xml', data: ws }, { name: 'xl/sharedStrings.xml', data: strings }]))));
    expect(last.map((r) => r.cells)).toEqual([[3017620422003, 'a\rb']]);
    await expectSame(write('late-workbook.xlsx', handZip([{ name: 'xl/_rels/workbook.xml.rels', data: RELS_XML }, { name: 'xl/sharedStrings.xml', data: strings }, { name: 'xl/worksheets/sheet1.xml', data: ws }, { name: 'xl/workbook.xml', data: WORKBOOK_XML }])));
  }, 60_000);

  it('a workbook of several batches of rows, dates and merged cells among them', async () => {
    const n = 4500;
    const f = await writeWorkbook(dir, 'batches.xlsx', (wb) => {
      const ws = wb.addWorksheet('S');
      ws.addRow(['GTIN', 'Nom', 'Date', 'Poids', 'Actif']);
      for (let i = 0; i < n; i++) ws.addRow([3017620422003 + i, `Produit ${i}`, i % 7 === 0 ? new Date(Date.UTC(2025, i % 12, 1 + (i % 28))) : null, i % 3 === 0 ? 0.5 + i : `${i},5`, i % 2 === 0]);
      ws.mergeCells('B3000:B3002');
      ws.getRow(4000).hidden = true;
    });
    const rows = rowsOf(await expectSame(f));
    expect(rows).toHaveLength(n);
    expect(rows.at(-1)!.row).toBe(n + 1);
    expect(rows.filter((r) => r.cells[2] instanceof Date)).toHaveLength(Math.ceil(n / 7));
  }, 60_000);
});

describe('the XLSX reader thread fails as the inline reader does', () => {
  it('at open: a truncated workbook, a sheet not found, no header, too many columns, damaged XML before the header', async () => {
    const good = await writeWorkbook(dir, 'cut.xlsx', (wb) => wb.addWorksheet('S').addRow(['a', 'b', 'c']));
    const bytes = readFileSync(good);
    const cases: [string, OpenSheetOptions, string][] = [
      [write('truncated.xlsx', bytes.subarray(0, Math.floor(bytes.length / 2))), {}, 'PS_ERR_FILE_UNREADABLE'],
      [good, { sheet: 'Nope' }, 'PS_ERR_FILE_HEADER'],
      [good, { headerRow: 5 }, 'PS_ERR_FILE_HEADER'],
      [good, { limits: { columns: 2 } }, 'PS_ERR_FILE_TOO_LARGE'],
      // The parse's own error, raised in the thread and worded on this one.
      [handWorkbook('bad-xml.xlsx', `<row r="1">${inlineStr('A1', 'GTIN')}</rowx>`), {}, 'PS_ERR_FILE_UNREADABLE'],
    ];
    for (const [file, opts, code] of cases) {
      const o = await expectSame(file, opts);
      expect('openError' in o && o.openError, `${file} ${JSON.stringify(opts)}`).toMatchObject({ productSyncError: true, code });
    }
  }, 60_000);

  it('in the rows: damaged XML after a few batches, the row limit — after the same rows', async () => {
    const damaged = handWorkbook('bad-later.xlsx', `<row r="1">${inlineStr('A1', 'GTIN')}${inlineStr('B1', 'Nom')}</row>${dataRows(2500)}<row r="2502"><c r="A2502"><v>1</v></c></rowx>`);
    const o = await expectSame(damaged);
    // Every row before the damage comes first.
    expect('rows' in o && o.rows.length).toBe(2500);
    expect('rows' in o && o.rowsError).toMatchObject({ productSyncError: true, code: 'PS_ERR_FILE_UNREADABLE', message: expect.stringContaining('the workbook cannot be read') });

    const long = handWorkbook('long.xlsx', `<row r="1">${inlineStr('A1', 'GTIN')}${inlineStr('B1', 'Nom')}</row>${dataRows(2500)}`);
    const limited = await expectSame(long, { limits: { rows: 1500 } });
    expect('rows' in limited && limited.rows).toHaveLength(1500);
    expect('rows' in limited && limited.rowsError).toMatchObject({ productSyncError: true, code: 'PS_ERR_FILE_TOO_LARGE', message: expect.stringContaining('more than 1500 data rows') });
  }, 60_000);
});

// The shared workbooks sit beside the clone (../shared) on developer machines and in CI; skipped where they are absent.
const shared = new URL('../../shared/data/', import.meta.url);
describe.runIf(existsSync(shared))('shared real and edge-case workbooks', () => {
  it('gives the same sheet, rows or error for each', async () => {
    const path = (p: string) => new URL(p, shared).pathname;
    for (const f of readdirSync(path('xlsx-edge/'))) await expectSame(path(`xlsx-edge/${f}`));
    await expectSame(path('real-sheets/eco-score-template.xlsx'), { headerRow: 2 });
    await expectSame(path('real-sheets/off-producer-import-fr.xlsx'));
  }, 120_000);
});

describe.runIf(existsSync('/proc/self/task'))('the reader thread ends with its rows', () => {
  let big: string;
  let base: number;
  const tmp = mkdtempSync(join(systemTmp, 'ps-xlsx-thread-tmp-'));
  beforeAll(async () => {
    // Written as the bench's workbooks are (streaming, shared strings last).
    big = join(dir, 'streamed.xlsx');
    const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: big, useSharedStrings: true });
    const ws = wb.addWorksheet('S');
    ws.addRow(['GTIN', 'Nom']).commit();
    // Far more rows than the thread sends ahead (a few batches of 1 000): a break leaves it in the middle of the file.
    for (let i = 0; i < 20_000; i++) ws.addRow([3017620422003 + i, `Produit ${i}`]).commit();
    await wb.commit();
    // libuv's pool threads start with the first read: counted in the base.
    await readAll(handWorkbook('warm-up.xlsx', `<row r="1">${inlineStr('A1', 'GTIN')}</row>${dataRows(3)}`), { thread: false });
    base = threads();
    // The thread inherits this TMPDIR: the reader writes nothing there.
    process.env.TMPDIR = tmp;
  }, 60_000);
  afterAll(() => rmSync(tmp, { recursive: true, force: true }));

  const expectEnded = async (file = big) => {
    await expect.poll(threads).toBe(base);
    expect(openFiles().filter((f) => f === file || f.startsWith(tmp))).toEqual([]);
    // Nothing written to the temp directory (tsx, which runs the thread's TypeScript in tests, keeps its cache there).
    expect(readdirSync(tmp).filter((f) => !f.startsWith('tsx-'))).toEqual([]);
  };

  it('on a break: no thread, no open file, no temp file left', async () => {
    const sheet = await openSheet(big, { thread: true });
    let n = 0;
    for await (const _ of sheet.rows) {
      if (n++ === 0) expect(threads()).toBe(base + 2);
      if (n === 1500) {
        // The thread is still reading the workbook.
        expect(openFiles()).toContain(big);
        break;
      }
    }
    await expectEnded();
  }, 30_000);

  it('on return() before the first row, at the end of the rows, and when opening fails', async () => {
    const sheet = await openSheet(big, { thread: true });
    await sheet.rows[Symbol.asyncIterator]().return?.();
    await expectEnded();
    expect((await readAll(big, { thread: true })).rows).toHaveLength(20_000);
    await expectEnded();
    await expect(openSheet(big, { thread: true, headerRow: 30_000 })).rejects.toMatchObject({ code: 'PS_ERR_FILE_HEADER' });
    await expectEnded();
  }, 30_000);

  it('a process that leaves the rows unread still exits', () => {
    const script = `const { openSheet } = await import(${JSON.stringify(new URL('../src/pipeline/read/read-sheet.ts', import.meta.url).href)});
      const sheet = await openSheet(${JSON.stringify(big)}, { thread: true });
      const first = await sheet.rows[Symbol.asyncIterator]().next();
      console.log(first.value.row);`;
    const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
    expect(r.stderr).toBe('');
    expect([r.status, r.stdout.trim()]).toEqual([0, '2']);
  }, 40_000);

  it('a zip that fails the scan run beside the parse (a lying size, an entity declaration, a damaged part): the error of the inline reader, no thread, no file left', async () => {
    // The parse starts as soon as the head of the workbook is read, the rest of the zip being scanned meanwhile: each
    // failure sits after the worksheet (a large one: the thread is parsing it, rows are already on their way, when the
    // scan fails) or in it, and is past what the head reads.
    const header = `<row r="1">${inlineStr('A1', 'GTIN')}${inlineStr('B1', 'Nom')}</row>`;
    const many = dataRows(30_000);
    const head = [{ name: 'xl/workbook.xml', data: WORKBOOK_XML }, { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML }];
    const sheet = { name: 'xl/worksheets/sheet1.xml', data: sheetXml(header + many) };
    const bombLater = write('bomb-later.xlsx', handZip([...head, sheet, { name: 'xl/media/image1.bin', data: Buffer.alloc(64 * 1024 * 1024), declaredSize: 4096 }]));
    const bombSheet = write('bomb-sheet.xlsx', handZip([...head, { ...sheet, declaredSize: 100_000 }]));
    const entityLater = write('entity-later.xlsx', handZip([...head, sheet, { name: 'docProps/app.xml', data: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><Properties>&a;</Properties>' }]));
    // The worksheet's deflated bytes overwritten in their middle: inflating them fails, or gives other sizes.
    const damagedSheet = handZip([...head, sheet, { name: 'docProps/app.xml', data: '<Properties/>' }]);
    const at = damagedSheet.indexOf('xl/worksheets/sheet1.xml') + 'xl/worksheets/sheet1.xml'.length;
    const packed = damagedSheet.readUInt32LE(at - 'xl/worksheets/sheet1.xml'.length - 30 + 18);
    damagedSheet.fill(0xff, at + Math.floor(packed / 2), at + Math.floor(packed / 2) + 64);
    const damaged = write('damaged-sheet.xlsx', damagedSheet);
    const cases: [string, string, RegExp][] = [
      [bombLater, 'PS_ERR_FILE_TOO_LARGE', /xl\/media\/image1\.bin inflates past the size its zip entry declares/],
      [bombSheet, 'PS_ERR_FILE_TOO_LARGE', /sheet1\.xml inflates past the size its zip entry declares/],
      [entityLater, 'PS_ERR_FILE_TYPE', /docProps\/app\.xml declares XML entities/],
      [damaged, 'PS_ERR_FILE_UNREADABLE', /the workbook is damaged or truncated \(xl\/worksheets\/sheet1\.xml/],
    ];
    for (const [file, code, message] of cases) {
      const o = await expectSame(file);
      expect('openError' in o && o.openError, file).toMatchObject({ productSyncError: true, code, message: expect.stringMatching(message) });
      await expectEnded(file);
    }
  }, 60_000);

  it('openSheet reads a workbook in the thread from XLSX_THREAD_BYTES on, unless told otherwise', async () => {
    const small = handWorkbook('small.xlsx', `<row r="1">${inlineStr('A1', 'GTIN')}</row>${dataRows(3)}`);
    // Padded past the threshold with an entry the reader skips (random bytes do not compress).
    const large = handWorkbook('padded.xlsx', `<row r="1">${inlineStr('A1', 'GTIN')}</row>${dataRows(3)}`, [{ name: 'xl/media/image1.bin', data: randomBytes(XLSX_THREAD_BYTES) }]);
    expect(statSync(large).size).toBeGreaterThanOrEqual(XLSX_THREAD_BYTES);
    const tmpDir = process.env.TMPDIR;
    const inline = mkdtempSync(join(systemTmp, 'ps-xlsx-thread-inline-'));
    process.env.TMPDIR = inline;
    try {
      for (const [file, opts, thread] of [[small, {}, false], [large, {}, true], [large, { thread: false }, false], [small, { thread: true }, true]] as const) {
        const sheet = await openSheet(file, opts);
        expect(threads(), `${file} ${JSON.stringify(opts)}`).toBe(base + (thread ? 2 : 0));
        expect((await readAll(file, opts)).rows).toHaveLength(3);
        for await (const _ of sheet.rows) void _;
        await expect.poll(threads).toBe(base);
      }
    } finally {
      process.env.TMPDIR = tmpDir;
      rmSync(inline, { recursive: true, force: true });
    }
  }, 30_000);
});
