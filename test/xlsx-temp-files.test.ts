// exceljs copies a worksheet stored before the shared strings (every worksheet of a workbook saved by Excel) to a temp
// file and parses the copy; on the calling thread (readXlsx, workbooks under XLSX_THREAD_BYTES) the copy and its file
// descriptor go when the sheet's rows end — read to the end, left by a break or return(), or failed — not when the
// process exits (a long-running queue worker would fill the temp directory).
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSheet } from '../src/pipeline/read/read-sheet.ts';
import { fixtureDir, handZip, readAll } from './fixtures/sheets.ts';

const { dir, write } = fixtureDir('ps-xlsx-temp-');
const systemTmp = tmpdir();

/** A workbook written as exceljs's streaming writer writes them: each worksheet, then the shared strings. */
async function streamed(name: string, sheets: { name: string; rows: number }[]): Promise<string> {
  const file = join(dir, name);
  const wb = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: file, useSharedStrings: true });
  for (const s of sheets) {
    const ws = wb.addWorksheet(s.name);
    ws.addRow(['GTIN', 'Nom']).commit();
    for (let i = 0; i < s.rows; i++) ws.addRow([3017620422003 + i, `${s.name} ${i}`]).commit();
  }
  await wb.commit();
  return file;
}

const WORKBOOK_XML = '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>';
const RELS_XML = '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>';
const STRINGS_XML = '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="2" uniqueCount="2"><si><t>GTIN</t></si><si><t>Nom</t></si></sst>';

// Files this process holds open.
const openFiles = () => readdirSync('/proc/self/fd').map((fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`); } catch { return ''; } });

describe.runIf(process.platform === 'linux')('the inline XLSX reader leaves no copy of a worksheet behind', () => {
  let tmp: string;
  let one: string;
  let three: string;
  let damaged: string;
  beforeAll(async () => {
    one = await streamed('one.xlsx', [{ name: 'S', rows: 3000 }]);
    three = await streamed('three.xlsx', [{ name: 'A', rows: 10 }, { name: 'B', rows: 2000 }, { name: 'C', rows: 10 }]);
    const rows = Array.from({ length: 2000 }, (_, i) => `<row r="${i + 2}"><c r="A${i + 2}"><v>${i}</v></c><c r="B${i + 2}" t="s"><v>1</v></c></row>`).join('');
    damaged = write('damaged.xlsx', handZip([
      { name: 'xl/workbook.xml', data: WORKBOOK_XML },
      { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
      { name: 'xl/worksheets/sheet1.xml', data: `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>${rows}<row r="2002"><c r="A2002"><v>1</v></c></rowx></sheetData></worksheet>` },
      { name: 'xl/sharedStrings.xml', data: STRINGS_XML },
      { name: 'docProps/app.xml', data: '<Properties/>' },
    ]));
    // exceljs's temp files (`tmp`) go to os.tmpdir(), read when each is made.
    tmp = mkdtempSync(join(systemTmp, 'ps-xlsx-temp-tmp-'));
    process.env.TMPDIR = tmp;
  }, 60_000);
  afterAll(() => {
    process.env.TMPDIR = systemTmp;
    rmSync(tmp, { recursive: true, force: true });
  });

  const copies = () => readdirSync(tmp);
  const expectNoCopy = async () => {
    // Gone when the rows' close resolved; exceljs closes its descriptor just before removing the file.
    expect(copies()).toEqual([]);
    await expect.poll(() => openFiles().filter((f) => f.startsWith(tmp))).toEqual([]);
  };

  it('read to the end, left by a break, left before the first row', async () => {
    const all = await openSheet(one, { thread: false });
    // What the test is about: exceljs copied the worksheet, and holds the copy open.
    expect(copies()).toHaveLength(1);
    expect(openFiles().filter((f) => f.startsWith(tmp)).length).toBeGreaterThan(0);
    let n = 0;
    for await (const _ of all.rows) n++;
    expect(n).toBe(3000);
    await expectNoCopy();

    const some = await openSheet(one, { thread: false });
    n = 0;
    for await (const _ of some.rows) if (++n === 10) break;
    await expectNoCopy();

    const none = await openSheet(one, { thread: false });
    await none.rows[Symbol.asyncIterator]().return?.();
    await expectNoCopy();
  });

  it('a worksheet among others: the copies of the ones before and after it go too', async () => {
    const all = await readAll(three, { thread: false, sheet: 'B' });
    expect(all.rows).toHaveLength(2000);
    await expectNoCopy();
    const sheet = await openSheet(three, { thread: false, sheet: 'B' });
    for await (const _ of sheet.rows) break;
    await expectNoCopy();
    // Another sheet read in the same process still reads (exceljs's state is per workbook reader).
    expect((await readAll(three, { thread: false, sheet: 'C' })).rows).toHaveLength(10);
    await expectNoCopy();
  });

  it('rows ending in an error of exceljs (damaged XML in the copy)', async () => {
    const sheet = await openSheet(damaged, { thread: false });
    let n = 0;
    const err = await (async () => {
      for await (const _ of sheet.rows) n++;
    })().then(() => null, (e: unknown) => e);
    expect(err).toMatchObject({ code: 'PS_ERR_FILE_UNREADABLE' });
    expect(n).toBeGreaterThan(0);
    await expectNoCopy();
  });

  it('a header that cannot be read ends the sheet before it opens', async () => {
    await expect(openSheet(one, { thread: false, headerRow: 5000 })).rejects.toMatchObject({ code: 'PS_ERR_FILE_HEADER' });
    await expectNoCopy();
  });
});
