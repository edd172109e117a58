import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { describe, expect, it } from 'vitest';
import { neutralize } from '../src/pipeline/report/neutralize.ts';
import { createReportWriter } from '../src/pipeline/report/report.ts';
import { runSummary } from './helpers/summary.ts';

const summary = (runId: string) =>
  runSummary(
    { rows: 2, created: 1, invalid: 1 },
    {
      runId,
      source: { file: 'x.csv', sha256: 'abc', rows: 2 },
      startedAt: 'a',
      finishedAt: 'b',
      requests: { reference: 1, product: 2 },
      exitCode: 1,
    },
  );

describe('neutralize', () => {
  it('quotes text a spreadsheet would evaluate, keeps plain numbers readable', () => {
    expect(neutralize('=HYPERLINK("http://evil","x")')).toBe(`'=HYPERLINK("http://evil","x")`);
    expect(neutralize('+33 1 23')).toBe(`'+33 1 23`);
    expect(neutralize('@SUM(A1)')).toBe(`'@SUM(A1)`);
    expect(neutralize('\tcmd')).toBe(`'\tcmd`);
    expect(neutralize('\rcmd')).toBe(`'\rcmd`);
    expect(neutralize('a\0b')).toBe('ab');
    expect(neutralize('-12.5')).toBe('-12.5');
    expect(neutralize('Biscuits')).toBe('Biscuits');
  });
});

describe('report writer', () => {
  it('writes rows, rejected rows with the original headers, and summary last; identifiers stay text', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-report-'));
    const w = await createReportWriter(dir, { sourceHeaders: ['Code-barres', 'Désignation'] });
    await w.addRow({
      row: 2,
      key: '00012345678905',
      outcome: 'created',
      tradeItemId: 't1',
      manufacturedItemId: null,
      changedFields: ['gtin', 'tradeItemName'],
      issues: [],
    });
    const issue = {
      row: 3,
      column: 'Code-barres',
      field: 'gtin',
      value: '5601234567891',
      code: 'GTIN_CHECK_DIGIT',
      severity: 'error' as const,
      message: 'check digit should be 3',
    };
    await w.addRow({ row: 3, key: null, outcome: 'invalid', issues: [issue] });
    await w.addRejected(3, ['5601234567891', '=cmd|calc'], [issue]);
    expect(existsSync(join(dir, 'rows.csv'))).toBe(false);
    const { files } = await w.finish(summary('r1'));
    expect(files.at(-1)).toBe(join(dir, 'summary.json'));
    expect(readdirSync(dir).filter((f) => f.endsWith('.tmp'))).toEqual([]);

    const csv = readFileSync(join(dir, 'rows.csv'), 'utf8');
    expect(csv.startsWith('\uFEFFrow,key,outcome,tradeItemId,manufacturedItemId,changedFields,issues\r\n')).toBe(true);
    expect(csv).toContain('2,00012345678905,created,t1,,gtin; tradeItemName,');
    // rows.csv names a rejected row's issues (code and column); rejected.csv, the file to fix, tells them in full.
    expect(csv).toContain('3,,invalid,,,,ERROR GTIN_CHECK_DIGIT [Code-barres] (rule PS-GTIN-006)\r\n');

    const rejected = readFileSync(join(dir, 'rejected.csv'), 'utf8');
    expect(rejected.split('\r\n')[0]).toBe('\uFEFFCode-barres,Désignation,product-sync:row,issues');
    expect(rejected).toContain(
      `5601234567891,'=cmd|calc,3,"ERROR GTIN_CHECK_DIGIT [Code-barres] ""5601234567891"": check digit should be 3 (rule PS-GTIN-006)"`,
    );

    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(join(dir, 'rows.xlsx'));
    const ws = wb.worksheets[0]!;
    expect(ws.getRow(2).getCell(2).value).toBe('00012345678905');
    expect(ws.getRow(2).getCell(2).type).toBe(ExcelJS.ValueType.String);
    const rej = new ExcelJS.Workbook();
    await rej.xlsx.readFile(join(dir, 'rejected.xlsx'));
    // rejected.xlsx holds text cells, never evaluated: the value as it was, no prefix (it re-imports unchanged).
    expect(rej.worksheets[0]!.getRow(2).getCell(2).value).toBe('=cmd|calc');
    expect(rej.worksheets[0]!.getRow(2).getCell(2).type).toBe(ExcelJS.ValueType.String);
    expect(JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')).runId).toBe('r1');
  });

  it('leaves no file behind when aborted, and writes reconcile files for reconcile runs', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-report-'));
    const w = await createReportWriter(dir, { sourceHeaders: ['a'] });
    await w.addRow({ row: 2, key: 'k', outcome: 'created', issues: [] });
    await w.abort();
    expect(readdirSync(dir)).toEqual([]);

    const r = await createReportWriter(dir, { sourceHeaders: ['a'], reconcile: true });
    await r.addReconcile({ key: 'k', status: 'differs', field: 'tradeItemName', sheetValue: 'A', apiValue: 'B' });
    await r.addReconcile({ key: 'j', status: 'in_sync', field: '', sheetValue: '', apiValue: '' });
    await r.finish(summary('r2'));
    expect(JSON.parse(readFileSync(join(dir, 'reconcile.json'), 'utf8'))).toEqual([
      { key: 'k', status: 'differs', field: 'tradeItemName', sheetValue: 'A', apiValue: 'B' },
      { key: 'j', status: 'in_sync', field: '', sheetValue: '', apiValue: '' },
    ]);
    expect(readFileSync(join(dir, 'reconcile.csv'), 'utf8')).toContain('k,differs,tradeItemName,A,B');
  });
});
