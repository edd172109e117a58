// The XLSX reader (readXlsx) holds the workbook open while its rows are read and closes it when they end — read to the
// end, left by a break or return(), or failed — not when the process exits (a long-running queue worker would run out
// of descriptors). It writes nothing to the temp directory, even for worksheets stored before the shared strings (every
// workbook Excel saves), which a streaming reader that reads the zip in order must copy somewhere.
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

const WORKBOOK_XML =
  '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>';
const RELS_XML =
  '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>';
const STRINGS_XML =
  '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="2" uniqueCount="2"><si><t>GTIN</t></si><si><t>Nom</t></si></sst>';

// Files this process holds open.
const openFiles = () =>
  readdirSync('/proc/self/fd').map((fd) => {
    try {
      return readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return '';
    }
  });

describe.runIf(process.platform === 'linux')(
  'the inline XLSX reader closes the workbook with its rows and writes no temp file',
  () => {
    let tmp: string;
    let one: string;
    let three: string;
    let damaged: string;
    beforeAll(async () => {
      one = await streamed('one.xlsx', [{ name: 'S', rows: 3000 }]);
      three = await streamed('three.xlsx', [
        { name: 'A', rows: 10 },
        { name: 'B', rows: 2000 },
        { name: 'C', rows: 10 },
      ]);
      const rows = Array.from(
        { length: 2000 },
        (_, i) => `<row r="${i + 2}"><c r="A${i + 2}"><v>${i}</v></c><c r="B${i + 2}" t="s"><v>1</v></c></row>`,
      ).join('');
      damaged = write(
        'damaged.xlsx',
        handZip([
          { name: 'xl/workbook.xml', data: WORKBOOK_XML },
          { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
          {
            name: 'xl/worksheets/sheet1.xml',
            data: `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>${rows}<row r="2002"><c r="A2002"><v>1</v></c></rowx></sheetData></worksheet>`,
          },
          { name: 'xl/sharedStrings.xml', data: STRINGS_XML },
          { name: 'docProps/app.xml', data: '<Properties/>' },
        ]),
      );
      tmp = mkdtempSync(join(systemTmp, 'ps-xlsx-temp-tmp-'));
      process.env.TMPDIR = tmp;
    }, 60_000);
    afterAll(() => {
      process.env.TMPDIR = systemTmp;
      rmSync(tmp, { recursive: true, force: true });
    });

    const workbooks = () => openFiles().filter((f) => f === one || f === three || f === damaged);
    const expectClosed = () => {
      // Closed when the rows' close resolved.
      expect(workbooks()).toEqual([]);
      expect(readdirSync(tmp)).toEqual([]);
    };

    it('read to the end, left by a break, left before the first row', async () => {
      const all = await openSheet(one);
      // What the test is about: the reader holds the workbook open while its rows are read.
      expect(workbooks()).toEqual([one]);
      let n = 0;
      for await (const _ of all.rows) n++;
      expect(n).toBe(3000);
      expectClosed();

      const some = await openSheet(one);
      n = 0;
      for await (const _ of some.rows) if (++n === 10) break;
      expectClosed();

      const none = await openSheet(one);
      await none.rows[Symbol.asyncIterator]().return?.();
      expectClosed();
    });

    it('a worksheet among others, read whole or left after its first row', async () => {
      const all = await readAll(three, { sheet: 'B' });
      expect(all.rows).toHaveLength(2000);
      expectClosed();
      const sheet = await openSheet(three, { sheet: 'B' });
      for await (const _ of sheet.rows) break;
      expectClosed();
      // Another sheet of the same workbook still reads.
      expect((await readAll(three, { sheet: 'C' })).rows).toHaveLength(10);
      expectClosed();
    });

    it('rows ending in an error (damaged XML in the worksheet): the rows before it, then the error', async () => {
      const sheet = await openSheet(damaged);
      let n = 0;
      const err = await (async () => {
        for await (const _ of sheet.rows) n++;
      })().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toMatchObject({ code: 'PS_ERR_FILE_UNREADABLE' });
      expect(n).toBe(2000);
      expectClosed();
    });

    it('a header that cannot be read ends the sheet before it opens', async () => {
      await expect(openSheet(one, { headerRow: 5000 })).rejects.toMatchObject({ code: 'PS_ERR_FILE_HEADER' });
      expectClosed();
    });
  },
);
