import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { openSheet } from '../src/pipeline/read/read-sheet.ts';
import {
  createReportWriter,
  type ReportWriter,
  type ReportWriterOptions,
  type RowOutcome,
} from '../src/pipeline/report/report.ts';
import { openReportThread } from '../src/pipeline/report/report-thread.ts';
import type { Cell, Issue } from '../src/pipeline/types.ts';
import { runSummary } from './helpers/summary.ts';

const tempDir = () => mkdtempSync(join(tmpdir(), 'ps-report-thread-'));
const summary = (rows: number) => runSummary({ rows }, { mode: 'validate', dryRun: true, exitCode: 1 });
const issue = (row: number, over: Partial<Issue> = {}): Issue => ({
  row,
  column: 'GTIN',
  field: 'gtin',
  value: `=${row}`,
  code: 'GTIN_CHECK_DIGIT',
  severity: 'error',
  message: 'check digit',
  ...over,
});

/**
 * Rows of every kind the assembler sends: valid, invalid with issues and source cells (a date, a number, formula-like
 * text), created.
 */
function* calls(n: number): Generator<{ row: RowOutcome } | { rejected: [number, Cell[], Issue[]] }> {
  for (let i = 0; i < n; i++) {
    const row = i + 2;
    if (i % 7 === 3) {
      // Rejected lines cross packed, split by NULs: a NUL in a cell or an issue must not shift the fields.
      const issues = [
        issue(row),
        issue(row, { severity: 'warning', code: 'X', message: 'Bearer abcdefghijkl leaked', value: 'a\u0000b' }),
      ];
      yield { row: { row, key: null, outcome: 'invalid', issues } };
      yield {
        rejected: [row, [`=cmd|${i}`, new Date(Date.UTC(2026, 0, 1 + (i % 28))), 12.5 + i, `n\u0000${i}`], issues],
      };
    } else if (i % 11 === 5) {
      // Text a line's fields carry across the thread as is: a NUL (dropped by neutralisation), quotes, line breaks,
      // accents.
      yield {
        row: {
          row,
          key: `"03\u0000é\n${i}"`,
          outcome: 'skipped',
          changedFields: ['a,b'],
          issues: [issue(row, { value: 'x\u0000y', message: 'ligne\r\nsuivante ; « ok »' })],
        },
      };
    } else {
      yield {
        row: {
          row,
          key: `0350000${String(i).padStart(7, '0')}`,
          outcome: i % 2 ? 'valid' : 'created',
          tradeItemId: i % 2 ? null : `id-${i}`,
          changedFields: i % 2 ? [] : ['gtin', 'tradeItemName'],
          issues: [],
        },
      };
    }
  }
}

async function write(w: ReportWriter, n: number): Promise<string[]> {
  for (const c of calls(n)) {
    if ('row' in c) await w.addRow(c.row);
    else await w.addRejected(...c.rejected);
  }
  const s = summary(n);
  const { files } = await w.finish(s);
  return [...files.map((f) => f.split('/').at(-1)!), ...(s.notes ?? [])];
}

async function cells(file: string): Promise<unknown[][]> {
  const sheet = await openSheet(file);
  const out: unknown[][] = [];
  for await (const r of sheet.rows) out.push(r.cells);
  return [sheet.headers, ...out];
}

describe('the report writer in a worker thread', () => {
  it('writes the same files as the one in the run thread (several batches, rejected rows, a row limit note)', async () => {
    const options: ReportWriterOptions = {
      sourceHeaders: ['GTIN', 'Début', 'Poids', 'Vide'],
      preamble: [['Catalogue', '', '', '']],
      decimalSeparator: ',',
      xlsxMaxRows: 2500,
    };
    const here = tempDir();
    const there = tempDir();
    const n = 3000;
    const filesHere = await write(await createReportWriter(here, options), n);
    const filesThere = await write(openReportThread(there, options), n);
    expect(filesThere).toEqual(filesHere);
    expect(filesHere).toContain('rejected.xlsx');
    expect(filesHere.some((f) => f.includes('holds the first 2 500 rows of 3 000'))).toBe(true);
    for (const f of ['rows.csv', 'rejected.csv'])
      expect(readFileSync(join(there, f), 'utf8')).toBe(readFileSync(join(here, f), 'utf8'));
    for (const f of ['rows.xlsx', 'rejected.xlsx'])
      expect(await cells(join(there, f))).toEqual(await cells(join(here, f)));
    expect(JSON.parse(readFileSync(join(there, 'summary.json'), 'utf8'))).toEqual(
      JSON.parse(readFileSync(join(here, 'summary.json'), 'utf8')),
    );
    expect(readdirSync(there).sort()).toEqual(readdirSync(here).sort());
  }, 60_000);

  it('reports a directory it cannot write with the error the run thread would give, and abort leaves no temp file', async () => {
    const dir = tempDir();
    const file = join(dir, 'not-a-dir');
    writeFileSync(file, 'x');
    const w = openReportThread(join(file, 'run'), { sourceHeaders: ['a'] });
    // The failure arrives from the thread: a later call (here finish) rejects with it.
    await Promise.resolve(w.addRow({ row: 2, key: 'k', outcome: 'valid', issues: [] })).catch(() => undefined);
    const inline = await createReportWriter(join(file, 'run'), { sourceHeaders: ['a'] }).catch((err: unknown) => err);
    expect(inline).toMatchObject({
      code: 'PS_ERR_FILE_WRITE',
      message: `cannot write the report to ${join(file, 'run')}: a part of the path is a file, not a directory`,
    });
    await expect(w.finish(summary(1))).rejects.toMatchObject({
      code: 'PS_ERR_FILE_WRITE',
      message: (inline as Error).message,
    });

    const ok = tempDir();
    const a = openReportThread(ok, { sourceHeaders: ['a'] });
    for (let i = 0; i < 1200; i++) await a.addRow({ row: i + 2, key: `k${i}`, outcome: 'valid', issues: [] });
    await a.abort();
    expect(readdirSync(ok)).toEqual([]);
    await expect(a.addRow({ row: 1, key: 'k', outcome: 'valid', issues: [] })).rejects.toThrow(/after finish or abort/);
  }, 60_000);
});
