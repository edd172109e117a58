import { existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { openSheet } from '../src/pipeline/read/read-sheet.ts';
import { createReportWriter, type RowOutcome } from '../src/pipeline/report/report.ts';
import type { Cell, Issue, SheetRow } from '../src/pipeline/types.ts';
import { runSummary } from './helpers/summary.ts';

const summary = runSummary(
  { rows: 3, created: 1, updated: 1, invalid: 1 },
  { requests: { reference: 3, product: 4 }, exitCode: 1 },
);
const tempDir = () => mkdtempSync(join(tmpdir(), 'ps-report-files-'));
const issue = (over: Partial<Issue>): Issue => ({
  row: 2,
  column: null,
  field: null,
  value: null,
  code: 'X',
  severity: 'error',
  message: 'm',
  ...over,
});

async function readXlsx(file: string): Promise<ExcelJS.Worksheet> {
  const wb = new ExcelJS.Workbook();
  await wb.xlsx.readFile(file);
  return wb.worksheets[0]!;
}
const xlsxRows = (ws: ExcelJS.Worksheet): unknown[][] => {
  const out: unknown[][] = [];
  ws.eachRow((r) => out.push((r.values as unknown[]).slice(1)));
  return out;
};
function parseCsv(file: string): string[][] {
  const text = readFileSync(file, 'utf8');
  expect(text.charCodeAt(0)).toBe(0xfeff);
  const parsed = Papa.parse<string[]>(text.slice(1), { newline: '\r\n', skipEmptyLines: true });
  expect(parsed.errors).toEqual([]);
  return parsed.data;
}
async function readBack(file: string): Promise<{ headers: string[]; rows: SheetRow[] }> {
  const sheet = await openSheet(file);
  const rows: SheetRow[] = [];
  for await (const r of sheet.rows) rows.push(r);
  return { headers: sheet.headers, rows };
}

// Each value a spreadsheet would run or mangle, and what the report must show instead.
const NASTY: [string, string][] = [
  ['=HYPERLINK("http://evil.example","click")', `'=HYPERLINK("http://evil.example","click")`],
  ['+1', `'+1`],
  ['+33 1 23 45', `'+33 1 23 45`],
  ['@SUM(A1:A9)', `'@SUM(A1:A9)`],
  ['-2+3+cmd|calc!A0', `'-2+3+cmd|calc!A0`],
  ['\tTAB', `'\tTAB`],
  ['\rCR', `'\rCR`],
  ['-12.5', '-12.5'],
  ['-3,75', '-3,75'],
  ['-1e5', `'-1e5`],
  ['nul\0here', 'nulhere'],
  ['Pâte à tartiner, "bio"\nligne 2', 'Pâte à tartiner, "bio"\nligne 2'],
];

describe('rows.csv and rows.xlsx', () => {
  it('read back with a CSV parser and exceljs give the rows as added, formulas neutralised; in rows.xlsx every cell text but the row numbers', async () => {
    const dir = tempDir();
    const w = await createReportWriter(dir, { sourceHeaders: ['GTIN'] });
    const added: RowOutcome[] = [
      {
        row: 5,
        key: '00012345678905',
        outcome: 'updated',
        tradeItemId: 'a1b2',
        manufacturedItemId: null,
        changedFields: ['tradeItemName', 'netContents'],
        issues: [],
      },
      {
        row: 2,
        key: '05601234567893',
        outcome: 'created',
        tradeItemId: 'c3',
        manufacturedItemId: 'd4',
        issues: [
          issue({
            severity: 'warning',
            code: 'REF_NO_TRANSLATION',
            column: 'Pays',
            value: 'Espagne',
            message: 'resolved in en-US',
          }),
        ],
      },
      {
        row: 3,
        key: null,
        outcome: 'invalid',
        issues: [
          issue({
            row: 3,
            code: 'GTIN_CHECK_DIGIT',
            column: 'Code-barres',
            value: '5601234567890',
            message: 'check digit should be 3',
          }),
          issue({ row: 3, severity: 'warning', code: 'ROW_HIDDEN', message: 'row hidden' }),
        ],
      },
      ...NASTY.map(([v], i): RowOutcome => ({ row: 10 + i, key: v, outcome: 'failed', issues: [] })),
      { row: null, key: '00000000000017', outcome: 'archived', tradeItemId: 'e5', issues: [] },
    ];
    for (const o of added) await w.addRow(o);
    await w.finish(summary);

    const expected = [
      ['row', 'key', 'outcome', 'tradeItemId', 'manufacturedItemId', 'changedFields', 'issues'],
      ['5', '00012345678905', 'updated', 'a1b2', '', 'tradeItemName; netContents', ''],
      [
        '2',
        '05601234567893',
        'created',
        'c3',
        'd4',
        '',
        'WARNING REF_NO_TRANSLATION [Pays] "Espagne": resolved in en-US (rule PS-REF-003)',
      ],
      [
        '3',
        '',
        'invalid',
        '',
        '',
        '',
        'ERROR GTIN_CHECK_DIGIT [Code-barres] (rule PS-GTIN-006); WARNING ROW_HIDDEN (rule PS-SHT-007)',
      ],
      ...NASTY.map(([, shown], i) => [String(10 + i), shown, 'failed', '', '', '', '']),
      ['', '00000000000017', 'archived', 'e5', '', '', ''],
    ];
    expect(parseCsv(join(dir, 'rows.csv'))).toEqual(expected);

    const ws = await readXlsx(join(dir, 'rows.xlsx'));
    const cells = xlsxRows(ws).map((r) => Array.from({ length: 7 }, (_, i) => String(r[i] ?? '')));
    // XML parsers turn a lone CR into LF (XML end-of-line handling); the leading quote is what matters there.
    expect(cells).toEqual(expected.map((r) => r.map((v) => v.replace(/\r(?!\n)/g, '\n'))));
    ws.eachRow((r, n) =>
      r.eachCell((c, col) =>
        expect(c.type, `${n} ${col}`).toBe(col === 1 && n > 1 ? ExcelJS.ValueType.Number : ExcelJS.ValueType.String),
      ),
    );
  });

  it('writes a header-only rows.csv and a readable rows.xlsx for a run with no rows, and no rejected files', async () => {
    const dir = tempDir();
    const w = await createReportWriter(dir, { sourceHeaders: ['a'] });
    const { files } = await w.finish({ ...summary, counts: { ...summary.counts, rows: 0 } });
    expect(files.map((f) => f.slice(dir.length + 1))).toEqual(['rows.csv', 'rows.xlsx', 'summary.json']);
    expect(readdirSync(dir).sort()).toEqual(['rows.csv', 'rows.xlsx', 'summary.json']);
    expect(parseCsv(join(dir, 'rows.csv'))).toEqual([
      ['row', 'key', 'outcome', 'tradeItemId', 'manufacturedItemId', 'changedFields', 'issues'],
    ]);
    expect(xlsxRows(await readXlsx(join(dir, 'rows.xlsx')))).toHaveLength(1);
  });
});

describe('rejected.csv and rejected.xlsx', () => {
  const headers = ['Code-barres', 'Désignation', 'Poids net', 'Date', 'Bio', 'issues-like'];
  const source: Cell[] = [
    '00012345678905',
    'Crème brûlée; "maison"',
    12.5,
    new Date(Date.UTC(2026, 0, 31)),
    true,
    null,
  ];

  it('are read again by the sheet reader with the original headers, cells as they were, identifiers as text', async () => {
    const dir = tempDir();
    const w = await createReportWriter(dir, { sourceHeaders: headers });
    await w.addRow({ row: 2, key: null, outcome: 'invalid', issues: [] });
    await w.addRejected(2, source, [issue({ column: 'Poids net', value: '500 g', message: 'not a number' })]);
    await w.addRejected(
      7,
      ['12345678901234567890', '=1+1', '-3', null, null, 'x'],
      [issue({ row: 7, message: 'failed' })],
    );
    await w.finish(summary);

    for (const name of ['rejected.csv', 'rejected.xlsx']) {
      const { headers: read, rows } = await readBack(join(dir, name));
      expect(read, name).toEqual([...headers, 'product-sync:row', 'issues']);
      expect(
        rows.map((r) => r.cells.map((c) => (c === null ? '' : String(c)))),
        name,
      ).toEqual([
        [
          '00012345678905',
          'Crème brûlée; "maison"',
          '12.5',
          '2026-01-31',
          'true',
          '',
          '2',
          'ERROR X [Poids net] "500 g": not a number',
        ],
        // The CSV shows the formula as text behind our `'` (re-import removes it); the XLSX holds it as a text cell.
        ['12345678901234567890', name === 'rejected.csv' ? `'=1+1` : '=1+1', '-3', '', '', 'x', '7', 'ERROR X: failed'],
      ]);
    }
    const ws = await readXlsx(join(dir, 'rejected.xlsx'));
    expect(ws.getRow(2).getCell(1).value).toBe('00012345678905');
    expect(ws.getRow(3).getCell(1).value).toBe('12345678901234567890');
    ws.eachRow((r) => r.eachCell((c) => expect(c.type).toBe(ExcelJS.ValueType.String)));
  });
});

describe('atomicity', () => {
  it('shows no final file before finish, only hidden temp files, and writes summary.json last', async () => {
    const dir = tempDir();
    const w = await createReportWriter(dir, { sourceHeaders: ['a'], reconcile: true });
    for (let i = 0; i < 2000; i++) await w.addRow({ row: i + 2, key: `k${i}`, outcome: 'unchanged', issues: [] });
    await w.addRejected(2, ['x'], []);
    await w.addReconcile({ key: 'k', status: 'differs', field: 'f', sheetValue: '=1', apiValue: '2' });
    expect(readdirSync(dir).every((f) => f.startsWith('.') && f.endsWith('.tmp'))).toBe(true);
    const { files } = await w.finish(summary);
    const names = readdirSync(dir).sort();
    expect(names).toEqual([
      'reconcile.csv',
      'reconcile.json',
      'rejected.csv',
      'rejected.xlsx',
      'rows.csv',
      'rows.xlsx',
      'summary.json',
    ]);
    expect(files.at(-1)).toBe(join(dir, 'summary.json'));
    const mtime = (f: string) => statSync(join(dir, f), { bigint: true }).mtimeNs;
    for (const f of names) expect(mtime('summary.json') >= mtime(f), f).toBe(true);
    expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8'))).toEqual(summary);
    expect(JSON.parse(readFileSync(join(dir, 'reconcile.json'), 'utf8'))).toEqual([
      { key: 'k', status: 'differs', field: 'f', sheetValue: '=1', apiValue: '2' },
    ]);
    expect(parseCsv(join(dir, 'reconcile.csv'))[1]).toEqual(['k', 'differs', 'f', `'=1`, '2']);
    await expect(w.addRow({ row: 1, key: 'k', outcome: 'created', issues: [] })).rejects.toMatchObject({
      code: 'PS_ERR_REPORT',
    });
  });

  it('cleans its temp files on abort, rejected ones included', async () => {
    const dir = tempDir();
    const w = await createReportWriter(dir, { sourceHeaders: ['a'], reconcile: true });
    await w.addRow({ row: 2, key: 'k', outcome: 'failed', issues: [] });
    await w.addRejected(2, ['x'], []);
    await w.addReconcile({ key: 'k', status: 'in_sync', field: '', sheetValue: '', apiValue: '' });
    await w.abort();
    expect(readdirSync(dir)).toEqual([]);
  });

  it('replaces an earlier attempt: its summary never vouches for new files, and files this run did not write are gone', async () => {
    const dir = tempDir();
    mkdirSync(dir, { recursive: true });
    for (const f of ['rows.csv', 'rejected.csv', 'rejected.xlsx', 'summary.json', '.rejected.csv.tmp'])
      writeFileSync(join(dir, f), 'old');
    const w = await createReportWriter(dir, { sourceHeaders: ['a'] });
    await w.addRow({ row: 2, key: 'k', outcome: 'created', issues: [] });
    expect(existsSync(join(dir, 'summary.json'))).toBe(true);
    await w.finish(summary);
    expect(readdirSync(dir).sort()).toEqual(['rows.csv', 'rows.xlsx', 'summary.json']);
    expect(readFileSync(join(dir, 'rows.csv'), 'utf8')).toContain('2,k,created');
  });
});
