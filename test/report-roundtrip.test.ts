import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { matchHeaders } from '../src/pipeline/map/headers.ts';
import { mapRow } from '../src/pipeline/map/map-row.ts';
import { parseMapping } from '../src/pipeline/map/mapping.ts';
import { openSheet } from '../src/pipeline/read/read-sheet.ts';
import { isRejectedHeader, neutralize, restoreRejectedSheet, unneutralize } from '../src/pipeline/report/neutralize.ts';
import { createReportWriter } from '../src/pipeline/report/report.ts';
import type { Cell, Draft, Issue, SheetRow } from '../src/pipeline/types.ts';
import { runSummary } from './helpers/summary.ts';

// Fix-and-reimport: a rejected file goes back through the same mapping and gives the original values, for any
// headerRow.

const summary = runSummary({ rows: 3, invalid: 3 }, { runId: 'run-rt', startedAt: 'a', finishedAt: 'b', exitCode: 1 });
const bad: Issue[] = [
  {
    row: 3,
    column: 'Désignation',
    field: 'tradeItemName',
    value: null,
    code: 'X',
    severity: 'error',
    message: 'fix me',
  },
];

const mappingText = (headerRow: number) => `target: tradeItem
language: fr-FR
headerRow: ${headerRow}
columns:
  - { column: GTIN, field: gtin }
  - { column: Désignation, field: tradeItemName }
  - { column: Remarque, field: "comments[0].value" }
  - { column: Poids net, field: "netContents[0].value", type: decimal }
`;
const headers = ['GTIN', 'Désignation', 'Remarque', 'Poids net'];
// Formula-like text, a phone number, a negative number, a value that starts with our quote already, a plain one.
const source: Cell[][] = [
  ['3017620422003', '=1+2', '+33 6 12 34 56 78', '-5'],
  ['3017620422010', "'=SUM(A1)", "'quoted already", '12,5'],
  ['3017620422027', '@cmd', 'Biscuits', '0,75'],
];

async function drafts(
  file: string,
  headerRow: number,
): Promise<{ drafts: Draft[]; rows: SheetRow[]; headers: string[] }> {
  const mapping = parseMapping(mappingText(headerRow), 'rt.yaml');
  const sheet = restoreRejectedSheet(await openSheet(file, { headerRow: mapping.headerRow }));
  const index = matchHeaders(sheet.headers, mapping);
  const rows: SheetRow[] = [];
  for await (const r of sheet.rows) rows.push({ ...r, cells: [...r.cells] });
  return { drafts: rows.map((r) => mapRow(r, sheet.headers, mapping, index)), rows, headers: sheet.headers };
}

async function writeRejected(
  dir: string,
  preamble?: string[][],
  headersIn: readonly string[] = headers,
  cells: Cell[][] = source,
  rows = [3, 4, 5],
): Promise<void> {
  const w = await createReportWriter(dir, { sourceHeaders: headersIn, ...(preamble ? { preamble } : {}) });
  for (let i = 0; i < cells.length; i++) {
    await w.addRow({ row: rows[i]!, key: null, outcome: 'invalid', issues: bad });
    await w.addRejected(rows[i]!, cells[i]!, bad);
  }
  await w.finish({ ...summary });
}

const fieldsOf = (d: Draft) => ({
  gtin: d.fields.gtin,
  name: d.fields.tradeItemName,
  comment: (d.fields.comments as { value: string }[] | undefined)?.[0]?.value,
  net: (d.fields.netContents as { value: number }[] | undefined)?.[0]?.value,
});

describe('neutralize / unneutralize', () => {
  it('are exact inverses, so only our own quote is ever removed', () => {
    for (const v of [
      '=1+2',
      '+33 6 12',
      '-5',
      '-12,5',
      '@x',
      '\tcmd',
      "'=x",
      "''=x",
      "'abc",
      "'-5",
      "'",
      '',
      'Biscuits',
      '- note',
    ]) {
      expect(unneutralize(neutralize(v)), v).toBe(v);
    }
    expect(neutralize("'=x")).toBe("''=x");
    expect(neutralize("'abc")).toBe("'abc");
    expect(unneutralize("'abc")).toBe("'abc");
    expect(unneutralize("'-5")).toBe("'-5");
  });
});

describe('rejected files re-import with the same mapping', () => {
  it('headerRow 1: rejected.csv and rejected.xlsx give back the original values (formula-like ones too) and carry the row number', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-rt-'));
    const original = join(dir, 'original.csv');
    writeFileSync(
      original,
      `${[headers, ...source].map((r) => r.map((c) => `"${String(c).replace(/"/g, '""')}"`).join(';')).join('\n')}\n`,
    );
    const expected = (await drafts(original, 1)).drafts.map(fieldsOf);
    expect(expected[0]).toEqual({ gtin: '03017620422003', name: '=1+2', comment: '+33 6 12 34 56 78', net: '-5' });
    await writeRejected(join(dir, 'run'));
    for (const name of ['rejected.csv', 'rejected.xlsx']) {
      const back = await drafts(join(dir, 'run', name), 1);
      expect(isRejectedHeader(back.headers), name).toBe(true);
      expect(back.headers.slice(-2)).toEqual(['product-sync:row', 'issues']);
      expect(back.drafts.map(fieldsOf), name).toEqual(expected);
      expect(
        back.rows.map((r) => r.cells[4]),
        name,
      ).toEqual(['3', '4', '5']);
    }
    // The CSV a spreadsheet opens still shows formulas as text.
    expect(readFileSync(join(dir, 'run', 'rejected.csv'), 'utf8')).toContain(
      `3017620422003,'=1+2,'+33 6 12 34 56 78,-5,3,`,
    );
  });

  it('headerRow 2: the rows above the header are written back, so the rejected file opens with the same mapping', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-rt-'));
    const original = join(dir, 'original.csv');
    writeFileSync(
      original,
      `Catalogue automne;;;\n${[headers, ...source].map((r) => r.map((c) => `"${String(c).replace(/"/g, '""')}"`).join(';')).join('\n')}\n`,
    );
    const expected = (await drafts(original, 2)).drafts.map(fieldsOf);
    await writeRejected(join(dir, 'run'), [['Catalogue automne', '', '', '']]);
    for (const name of ['rejected.csv', 'rejected.xlsx']) {
      const back = await drafts(join(dir, 'run', name), 2);
      expect(back.drafts.map(fieldsOf), name).toEqual(expected);
      expect(
        back.drafts.every((d) => d.issues.length === 0),
        name,
      ).toBe(true);
    }
    expect(readFileSync(join(dir, 'run', 'rejected.csv'), 'utf8').split('\r\n')[0]).toBe('\uFEFFCatalogue automne,,,');
  });

  it('a rejected file rejected again keeps one row column (the original row number) and one issues column', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-rt-'));
    await writeRejected(join(dir, 'first'));
    const first = await drafts(join(dir, 'first', 'rejected.csv'), 1);
    await writeRejected(
      join(dir, 'second'),
      undefined,
      first.headers,
      first.rows.map((r) => r.cells),
      [2, 3, 4],
    );
    const second = await drafts(join(dir, 'second', 'rejected.csv'), 1);
    expect(second.headers).toEqual([...headers, 'product-sync:row', 'issues']);
    expect(second.rows.map((r) => r.cells[4])).toEqual(['3', '4', '5']);
    expect(second.drafts.map(fieldsOf)).toEqual(first.drafts.map(fieldsOf));
  });

  it('leaves a supplier sheet that is not ours as it is: a leading quote there is data', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-rt-'));
    const file = join(dir, 'supplier.csv');
    writeFileSync(file, `GTIN;Désignation;Remarque;Poids net\n3017620422003;'=1+2;x;1\n`);
    expect((await drafts(file, 1)).drafts[0]!.fields.tradeItemName).toBe("'=1+2");
  });
});
