// Any text a report line may hold (ASCII, accents, emoji, lone surrogates, controls, markup, quotes, line breaks,
// `_xHHHH_` look-alikes, long values) reads back from rows.csv and rows.xlsx as written: the writers copy plain ASCII a
// byte at a time and escape the rest, and this checks the two paths meet.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { openSheet } from '../src/pipeline/read/read-sheet.ts';
import { neutralize } from '../src/pipeline/report/neutralize.ts';
import { createReportWriter } from '../src/pipeline/report/report.ts';
import { XlsxWriter } from '../src/formats/xlsx-writer.ts';
import { runSummary } from './helpers/summary.ts';

const PIECES = [
  'a',
  'Z',
  '0',
  '9',
  ' ',
  '\t',
  '\n',
  '\r',
  '\r\n',
  '&',
  '<',
  '>',
  '"',
  "'",
  ',',
  ';',
  '_',
  'x',
  '_x0041_',
  '_x',
  'é',
  'ß',
  '漢',
  '😀',
  '\uD800',
  '\uDC00',
  '\uFFFE',
  '\u0000',
  '\u0001',
  '\u001F',
  '\u007F',
  '=',
  '+',
  '-',
  '@',
  'x'.repeat(300),
  'é'.repeat(150),
];
const text = fc.array(fc.constantFrom(...PIECES), { maxLength: 6 }).map((p) => p.join(''));
const lines = fc.array(fc.array(text, { minLength: 3, maxLength: 3 }), { minLength: 1, maxLength: 15 });

const summary = (rows: number) =>
  runSummary(
    { rows, valid: rows },
    {
      runId: 'r',
      source: { file: 'x.csv', sha256: '', rows },
      mode: 'validate',
      dryRun: true,
      startedAt: '',
      finishedAt: '',
    },
  );

/** Text as an XML reader gives it back: characters XML 1.0 cannot hold dropped, line ends as LF. */
const asXmlReads = (v: string) =>
  v
    .replace(
      // eslint-disable-next-line no-control-regex
      /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g,
      '',
    )
    .replace(/\r\n?/g, '\n');

describe('report text', () => {
  it('rows.xlsx reads back every text as written (forbidden XML characters dropped, line ends as LF)', async () => {
    await fc.assert(
      fc.asyncProperty(lines, async (ls) => {
        const file = join(mkdtempSync(join(tmpdir(), 'ps-report-text-')), 'x.xlsx');
        const w = new XlsxWriter(file, 'rows', ['a', 'b', 'c'], { numberColumns: [0] });
        const written = ls.map((l, i) => [String(i + 2), l[1]!, l[2]!]);
        for (const l of written) await w.line(l);
        await w.close();
        const sheet = await openSheet(file);
        const back: unknown[][] = [];
        for await (const r of sheet.rows) back.push(r.cells.map((c) => c ?? ''));
        // The reader reads blank text as an empty cell.
        const expected = written.map((l) => [
          Number(l[0]),
          ...l.slice(1).map((v) => (asXmlReads(v).trim() === '' ? '' : asXmlReads(v))),
        ]);
        expect(back).toEqual(expected);
      }),
      { numRuns: 60 },
    );
  });

  it('rows.csv reads back every text as written, neutralised', async () => {
    await fc.assert(
      fc.asyncProperty(lines, async (ls) => {
        const dir = mkdtempSync(join(tmpdir(), 'ps-report-text-'));
        const w = await createReportWriter(dir, { sourceHeaders: ['x'] });
        for (const [i, l] of ls.entries()) {
          await w.addRow({
            row: i + 2,
            key: l[0]!,
            outcome: 'valid',
            tradeItemId: l[1]!,
            manufacturedItemId: null,
            changedFields: l[2] ? [l[2]] : [],
            issues: [],
          });
        }
        await w.finish(summary(ls.length));
        const csv = readFileSync(join(dir, 'rows.csv'), 'utf8').slice(1);
        const parsed = Papa.parse<string[]>(csv, { newline: '\r\n', delimiter: ',' });
        expect(parsed.errors).toEqual([]);
        const rows = parsed.data.slice(1, ls.length + 1);
        // UTF-8 has no lone surrogate: each is written as U+FFFD.
        const utf8 = (v: string) =>
          neutralize(v).replace(/[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g, '\uFFFD');
        expect(rows).toEqual(ls.map((l, i) => [String(i + 2), utf8(l[0]!), 'valid', utf8(l[1]!), '', utf8(l[2]!), '']));
        expect(parsed.data.slice(ls.length + 1)).toEqual([['']]);
      }),
      { numRuns: 60 },
    );
  });
});
