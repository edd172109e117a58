// The XLSX reader thread (read/xlsx-thread.ts) starts parsing the worksheet as soon as the head of the workbook is read
// and the rest of the zip is scanned meanwhile. Here the scan is held back (startInspection wrapped) until the thread
// has parsed well ahead, its early window full: the rows still come whole and in order once the scan passes, and a scan
// that fails still throws its own error — not the parse's, not a row — ends the thread and leaves no file.
import { mkdtempSync, readdirSync, readlinkSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { ProductSyncError } from '../src/errors.ts';
import { openSheet, type OpenSheetOptions } from '../src/pipeline/read/read-sheet.ts';
import { XLSX_THREAD_EARLY_WINDOW, XLSX_THREAD_WINDOW } from '../src/pipeline/read/xlsx-thread-messages.ts';
import type * as ZipGuard from '../src/pipeline/read/zip-guard.ts';
import type { SheetRow } from '../src/pipeline/types.ts';
import { fixtureDir, handZip, readAll } from './fixtures/sheets.ts';

// How long the scan waits before it runs (0: as in production).
const hold = vi.hoisted(() => ({ ms: 0 }));
vi.mock('../src/pipeline/read/zip-guard.ts', async (importOriginal) => {
  const real = await importOriginal<typeof ZipGuard>();
  return {
    ...real,
    startInspection: async (...args: Parameters<typeof real.startInspection>) => {
      const started = await real.startInspection(...args);
      return { head: started.head, scan: async () => {
        await new Promise((resolve) => setTimeout(resolve, hold.ms));
        return started.scan();
      } };
    },
  };
});

const { write } = fixtureDir('ps-xlsx-overlap-');
const systemTmp = tmpdir();

const WORKBOOK_XML = '<?xml version="1.0" encoding="UTF-8"?><workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" sheetId="1" r:id="rId1"/></sheets></workbook>';
const RELS_XML = '<?xml version="1.0" encoding="UTF-8"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/></Relationships>';
const STRINGS_XML = '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="2" uniqueCount="2"><si><t>GTIN</t></si><si><t>Nom</t></si></sst>';
const ROWS = 30_000;
const zipOf = (rowsXml: string, after: { name: string; data: Buffer | string; declaredSize?: number }[] = [], sheet: { declaredSize?: number } = {}) => handZip([
  { name: 'xl/workbook.xml', data: WORKBOOK_XML },
  { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
  { name: 'xl/sharedStrings.xml', data: STRINGS_XML },
  { name: 'xl/worksheets/sheet1.xml', data: `<?xml version="1.0" encoding="UTF-8"?><worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>${rowsXml}</sheetData></worksheet>`, ...sheet },
  ...after,
]);
const dataRows = (n: number) => Array.from({ length: n }, (_, i) => `<row r="${i + 2}"><c r="A${i + 2}"><v>${3017620422003 + i}</v></c><c r="B${i + 2}" t="inlineStr"><is><t>Produit ${i}</t></is></c></row>`).join('');

const threads = () => readdirSync('/proc/self/task').length;
const openFiles = () => readdirSync('/proc/self/fd').map((fd) => { try { return readlinkSync(`/proc/self/fd/${fd}`); } catch { return ''; } });

/** The error opening `file` or reading its rows ends with, as seen (null when it reads), and the rows before it. */
async function outcome(file: string, opts: OpenSheetOptions): Promise<{ error: { productSyncError: boolean; code: unknown; message: string } | null; rows: SheetRow[] }> {
  const rows: SheetRow[] = [];
  try {
    const sheet = await openSheet(file, opts);
    for await (const r of sheet.rows) rows.push(r);
    return { error: null, rows };
  } catch (err) {
    return { error: { productSyncError: err instanceof ProductSyncError, code: (err as { code?: unknown }).code, message: (err as Error).message }, rows };
  }
}

describe.runIf(process.platform === 'linux')('the worksheet is parsed while the zip is scanned', () => {
  let tmp: string;
  let base: number;
  let good: string;
  let acks: () => number;
  beforeAll(async () => {
    good = write('good.xlsx', zipOf(dataRows(ROWS)));
    await readAll(good, { thread: false });
    base = threads();
    tmp = mkdtempSync(join(systemTmp, 'ps-xlsx-overlap-tmp-'));
    process.env.TMPDIR = tmp;
    // The acks this thread sends the reader thread (one per batch taken, but for those taken while it was ahead).
    const post = vi.spyOn(Worker.prototype, 'postMessage');
    acks = () => post.mock.calls.filter(([m]) => (m as { ack?: unknown }).ack === true).length;
  }, 60_000);
  afterEach(() => {
    hold.ms = 0;
    vi.mocked(Worker.prototype.postMessage).mockClear();
  });
  afterAll(() => {
    process.env.TMPDIR = systemTmp;
    vi.restoreAllMocks();
    rmSync(tmp, { recursive: true, force: true });
  });

  const expectEnded = async (file: string) => {
    await expect.poll(threads).toBe(base);
    expect(openFiles().filter((f) => f === file || f.startsWith(tmp))).toEqual([]);
    // Nothing written to the temp directory (tsx, which runs the thread's TypeScript in tests, keeps its cache there).
    expect(readdirSync(tmp).filter((f) => !f.startsWith('tsx-'))).toEqual([]);
  };

  it('the rows parsed ahead while the scan ran come whole and in order, the thread back to its normal window after', async () => {
    hold.ms = 1500;
    const thread = await outcome(good, { thread: true });
    hold.ms = 0;
    const inline = await outcome(good, { thread: false });
    expect(thread.error).toBeNull();
    expect(thread.rows).toHaveLength(ROWS);
    expect(thread).toStrictEqual(inline);
    // Batches of 1 000 rows, the header's row included: the first EARLY − WINDOW taken are not acknowledged.
    expect(acks()).toBe(Math.ceil((ROWS + 1) / 1000) - (XLSX_THREAD_EARLY_WINDOW - XLSX_THREAD_WINDOW));
    await expectEnded(good);
  }, 60_000);

  it('a scan failing once the parse is well ahead (a lying size, an entity, a damaged worksheet): its error, no row, no thread, no file', async () => {
    const rows = dataRows(ROWS);
    const bomb = write('bomb.xlsx', zipOf(rows, [{ name: 'xl/media/image1.bin', data: Buffer.alloc(32 * 1024 * 1024), declaredSize: 4096 }]));
    const entity = write('entity.xlsx', zipOf(rows, [{ name: 'docProps/app.xml', data: '<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><Properties>&a;</Properties>' }]));
    // Declared longer than it is: the thread reads the worksheet, the scan finds it short.
    const short = write('short.xlsx', zipOf(rows, [], { declaredSize: 10 * 1024 * 1024 }));
    // Damaged XML at the end of the worksheet (the parse fails after its rows) and a lying entry after it: the scan's
    // error, not the parse's.
    const both = write('both.xlsx', zipOf(`${rows}<row r="${ROWS + 2}"></rowx>`, [{ name: 'xl/media/image1.bin', data: Buffer.alloc(32 * 1024 * 1024), declaredSize: 4096 }]));
    for (const [file, code, message] of [
      [bomb, 'PS_ERR_FILE_TOO_LARGE', /image1\.bin inflates past the size its zip entry declares/],
      [entity, 'PS_ERR_FILE_TYPE', /docProps\/app\.xml declares XML entities/],
      [short, 'PS_ERR_FILE_UNREADABLE', /sheet1\.xml is shorter than its zip entry declares/],
      [both, 'PS_ERR_FILE_TOO_LARGE', /image1\.bin inflates past the size its zip entry declares/],
    ] as const) {
      hold.ms = 1500;
      const thread = await outcome(file, { thread: true });
      expect(thread.error, file).toMatchObject({ productSyncError: true, code, message: expect.stringMatching(message) });
      expect(thread.rows).toEqual([]);
      expect(acks()).toBe(0);
      await expectEnded(file);
      hold.ms = 0;
      expect(await outcome(file, { thread: false })).toStrictEqual(thread);
    }
  }, 60_000);
});
