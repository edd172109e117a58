// `validate --preview` (issue 11, part 2): the first rows of a sheet as they would be sent, against the sandbox over
// HTTP.
import { appendFileSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { formatPreview } from '../../src/commands/preview.ts';
import { parseMapping } from '../../src/pipeline/map/mapping.ts';
import { previewSheet, type Preview, type PreviewField } from '../../src/pipeline/run/preview.ts';
import { runImport, runValidate } from '../../src/pipeline/run/run.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { testGtin } from '../helpers/sheets.ts';
import { useSandboxContext } from '../helpers/sandbox.ts';

const owner = DEMO_COMPANY_ID;
const HEADER = 'EAN;Nom;Marque;Poids;Unité;Statut;Douane';
const MAPPING = `name: preview-test
target: tradeItem
ownerCompanyId: ${owner}
language: fr-FR
columns:
  - { column: EAN, field: gtin }
  - { column: Nom, field: tradeItemName }
  - { column: Marque, field: brandId, lookup: { brand: { create: true } } }
  - { column: Poids, field: "netContents[0].value", type: decimal }
  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit }
  - { column: Statut, field: tradeItemStatusId, lookup: { list: trade-item-status }, values: { A: Actif, I: Inactif } }
  - { column: Douane, field: harmonizedCode, lookup: harmonized-code }
defaults: { productLanguage: fr }
`;

const setup = useSandboxContext('ps-preview-');
const { sandbox } = setup;
let mapping: string;
beforeAll(() => {
  mapping = join(setup.dir, 'preview-test.yaml');
  writeFileSync(mapping, MAPPING);
});

function sheet(name: string, lines: string[]): string {
  const file = join(setup.dir, name);
  writeFileSync(file, `${[HEADER, ...lines].join('\n')}\n`);
  return file;
}

const field = (p: Preview, row: number, path: string): PreviewField => {
  const f = p.rows.find((r) => r.row === row)?.fields.find((x) => x.field === path);
  if (!f) throw new Error(`no ${path} on row ${row}`);
  return f;
};

describe('validate --preview', () => {
  it('shows each field with its column, cell, mapped value and resolved label — the ids an import then sends — and sends nothing', async () => {
    sandbox.handle.reset();
    const file = sheet('three.csv', [
      `${testGtin(1)};Comté AOP;Fromagerie des Monts;0,5;kg;A;0406`,
      `${testGtin(2)};Roquefort;Caves du Larzac;150;g;I;04.06`,
      `${testGtin(3)};Manchego;La Mancha;300;g;A;0406`,
    ]);
    const before = sandbox.handle.counts().writes;
    const p = await previewSheet({ file, mapping, rows: 2 }, setup.cc.ctx);
    expect(p).toMatchObject({
      version: 1,
      mapping: 'preview-test',
      target: 'tradeItem',
      rowsRequested: 2,
      more: true,
      duplicateKeys: 'previewed-rows',
      counts: { rows: 2, valid: 2, invalid: 0 },
    });
    expect(p.rows.map((r) => r.row)).toEqual([2, 3]);
    expect(p.notes.join(' ')).toMatch(
      /more rows than the 2 shown: duplicate keys \(DUPLICATE_KEY\) were looked for among the rows shown only/,
    );
    expect(field(p, 2, 'gtin')).toEqual({
      field: 'gtin',
      column: 'EAN',
      sheetValue: testGtin(1),
      mapped: `0${testGtin(1)}`,
    });
    expect(field(p, 2, 'netContents[0].value')).toMatchObject({ column: 'Poids', sheetValue: '0,5', mapped: '0.5' });
    expect(field(p, 2, 'netContents[0].unitOfMeasure')).toMatchObject({ sheetValue: 'kg', mapped: 'KGM' });
    const status = field(p, 2, 'tradeItemStatusId');
    expect(status).toMatchObject({
      column: 'Statut',
      sheetValue: 'A',
      mapped: 'Actif',
      resolved: [{ value: 'Actif', label: 'Actif' }],
    });
    expect(status.resolved![0]!.id).toMatch(/^[0-9a-f-]{36}$/);
    expect(field(p, 3, 'tradeItemStatusId').resolved![0]).toMatchObject({ label: 'Inactif' });
    expect(field(p, 3, 'harmonizedCode')).toMatchObject({
      sheetValue: '04.06',
      mapped: '04.06',
      resolved: [{ id: '0406' }],
    });
    expect(field(p, 2, 'productLanguage')).toEqual({
      field: 'productLanguage',
      column: null,
      sheetValue: null,
      mapped: 'fr',
    });
    // The brand does not exist: the preview says it would be created, and creates nothing.
    expect(field(p, 2, 'brandId').resolved).toEqual([
      { value: 'Fromagerie des Monts', id: null, label: 'Fromagerie des Monts', problem: 'BRAND_WOULD_CREATE' },
    ]);
    expect(p.rows[0]!.issues.map((i) => i.code)).toEqual(['BRAND_WOULD_CREATE']);
    expect(sandbox.handle.counts().writes).toBe(before);
    expect(sandbox.handle.store.dump().brands).toHaveLength(0);

    // What the import sends is what the preview showed.
    const run = await runImport({ file, mapping }, setup.cc.ctx);
    expect(run.summary.counts).toMatchObject({ created: 3 });
    const stored = sandbox.handle.store.dump().tradeItems.find((t) => t.gtin === `0${testGtin(1)}`)!;
    expect(stored.tradeItemStatusId).toBe(status.resolved![0]!.id);
    const again = await previewSheet({ file, mapping, rows: 1 }, setup.cc.ctx);
    expect(field(again, 2, 'brandId').resolved).toEqual([
      { value: 'Fromagerie des Monts', id: stored.brandId, label: 'Fromagerie des Monts' },
    ]);
    expect(again.rows[0]!.issues).toEqual([]);
  });

  it('gives each row its issues and outcome, duplicate keys over the whole sheet when it saw all of it', async () => {
    const file = sheet('bad.csv', [
      `${testGtin(10)};Comté;;250;g;A;0406`,
      `3760987652002;Roquefort;;150;g;A;0406`,
      `${testGtin(10)};Comté bis;;1.500;g;Zombie;0406`,
      `${testGtin(11)};Manchego;;300;g;Zombie;0406`,
    ]);
    const p = await previewSheet({ file, mapping }, setup.cc.ctx);
    expect(p).toMatchObject({
      rowsRequested: 10,
      more: false,
      duplicateKeys: 'whole-sheet',
      counts: { rows: 4, valid: 0, invalid: 4 },
    });
    const codes = (row: number) => p.rows.find((r) => r.row === row)!.issues.map((i) => i.code);
    expect(codes(2)).toEqual(['DUPLICATE_KEY']);
    expect(codes(3)).toEqual(['GTIN_CHECK_DIGIT']);
    expect(codes(4)).toEqual(['DECIMAL_SEPARATOR', 'DUPLICATE_KEY', 'REF_UNKNOWN']);
    expect(codes(5)).toEqual(['REF_UNKNOWN']);
    expect(p.rows.find((r) => r.row === 5)!.issues[0]).toMatchObject({
      severity: 'error',
      column: 'Statut',
      field: 'tradeItemStatusId',
      value: 'Zombie',
    });
    // A refused cell has no mapped value; an unknown label says why it has no id, on a row already invalid too (and is
    // among its issues: a row's issues come all at once).
    expect(field(p, 4, 'netContents[0].value')).toMatchObject({ sheetValue: '1.500', mapped: null });
    expect(field(p, 4, 'tradeItemStatusId').resolved).toEqual([
      { value: 'Zombie', id: null, label: null, problem: 'REF_UNKNOWN' },
    ]);
    expect(p.rows.every((r) => r.outcome === 'invalid')).toBe(true);
  });

  it('reports every issue of a row at once (a bad GTIN and an unknown label), sends nothing for it, creates no brand for it', async () => {
    sandbox.handle.reset();
    const file = sheet('all-issues.csv', [
      `3760987652002;Roquefort;Nouvelle Marque;150;g;Zombie;0406`,
      `${testGtin(20)};Comté;;250;g;A;0406`,
    ]);
    const run = await runImport({ file, mapping }, setup.cc.ctx);
    expect(run.summary.counts).toMatchObject({ created: 1, invalid: 1 });
    const rows = readFileSync(join(run.reportDir, 'rows.csv'), 'utf8');
    const bad = rows.split(/\r?\n/).find((l) => l.startsWith('2,'))!;
    expect(bad).toMatch(/,invalid,/);
    expect(bad).toContain('GTIN_CHECK_DIGIT');
    expect(bad).toContain('REF_UNKNOWN');
    // The brand of a rejected row is looked up only: said to be created once the row is valid, not created.
    expect(bad).toContain('BRAND_WOULD_CREATE');
    expect(sandbox.handle.store.dump().brands).toHaveLength(0);
    const rejected = readFileSync(join(run.reportDir, 'rejected.csv'), 'utf8');
    expect(rejected).toContain('GTIN_CHECK_DIGIT');
    expect(rejected).toContain('REF_UNKNOWN');
  });

  it('shows both fields a quantity column feeds, and the column a fallback took the value from', async () => {
    const file = join(setup.dir, 'quantity.csv');
    writeFileSync(
      file,
      `EAN;Nom FR;Nom EN;Contenance\n${testGtin(1)};Comté;Comte cheese;0,5 kg\n${testGtin(2)};;Blue cheese;75 cl\n`,
    );
    const m = parseMapping(
      `name: q\ntarget: tradeItem\nownerCompanyId: ${owner}\nlanguage: fr-FR\ncolumns:
  - { column: EAN, field: gtin }
  - { column: Nom FR, fallback: Nom EN, field: tradeItemName }
  - { column: Contenance, field: "netContents[0]", type: quantity }
`,
      'q.yaml',
    );
    const p = await previewSheet({ file, mapping: m }, setup.cc.ctx);
    expect(field(p, 2, 'netContents[0].value')).toMatchObject({
      column: 'Contenance',
      sheetValue: '0,5 kg',
      mapped: '0.5',
    });
    expect(field(p, 2, 'netContents[0].unitOfMeasure')).toMatchObject({
      column: 'Contenance',
      sheetValue: '0,5 kg',
      mapped: 'KGM',
    });
    expect(field(p, 3, 'netContents[0].unitOfMeasure')).toMatchObject({ mapped: 'CLT' });
    expect(field(p, 2, 'tradeItemName')).toMatchObject({ column: 'Nom FR', mapped: 'Comté' });
    expect(field(p, 3, 'tradeItemName')).toMatchObject({ column: 'Nom EN', mapped: 'Blue cheese' });
  });

  it('reads no further than the rows it shows', async () => {
    const lines = Array.from({ length: 20_000 }, (_, i) => `${testGtin(100 + i)};Produit ${i};;100;g;A;0406`);
    const file = sheet('long.csv', lines);
    // A NUL byte far below refuses the whole file in a run: the preview never gets there.
    appendFileSync(file, `${testGtin(99_999)};Cass\u0000é;;1;g;A;0406\n`);
    const p = await previewSheet({ file, mapping, rows: 5 }, setup.cc.ctx);
    expect(p.rows.map((r) => r.row)).toEqual([2, 3, 4, 5, 6]);
    expect(p.more).toBe(true);
    expect(p.counts.valid).toBe(5);
    await expect(runValidate({ file, mapping }, setup.cc.ctx)).rejects.toMatchObject({
      code: 'PS_ERR_FILE_UNREADABLE',
    });
  });

  it('refuses a row count out of range and a mapped column missing from the sheet', async () => {
    const file = sheet('one.csv', [`${testGtin(1)};Comté;;250;g;A;0406`]);
    await expect(previewSheet({ file, mapping, rows: 0 }, setup.cc.ctx)).rejects.toMatchObject({
      code: 'PS_ERR_CLI_USAGE',
    });
    await expect(previewSheet({ file, mapping, rows: 1001 }, setup.cc.ctx)).rejects.toMatchObject({
      code: 'PS_ERR_CLI_USAGE',
    });
    const other = parseMapping(MAPPING.replace('column: Nom,', 'column: Désignation,'), 'inline.yaml');
    await expect(previewSheet({ file, mapping: other }, setup.cc.ctx)).rejects.toMatchObject({
      code: 'PS_ERR_FILE_HEADER',
      message: expect.stringContaining('"Désignation"'),
    });
  });

  it('prints a table that fits 100 columns, field paths whole, long cells cut', async () => {
    const long = 'Biscuits sablés pur beurre de baratte aux pépites de chocolat noir 70 % et fleur de sel de Guérande';
    const file = sheet('wide.csv', [`${testGtin(1)};${long};;250;g;A;0406`]);
    const text = formatPreview(await previewSheet({ file, mapping }, setup.cc.ctx), 100);
    const lines = text.split('\n');
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThanOrEqual(100);
    expect(text).toContain('netContents[0].unitOfMeasure');
    expect(text).toMatch(/tradeItemName +Nom +Biscuits sabl\S* .*…/);
    expect(text).toMatch(/tradeItemStatusId +Statut +A +Actif +Actif \[[0-9a-f]{8}\]/);
    expect(text).toContain('row 2 · key');
  });
});

/** The CLI (in-process) against its embedded sandbox (no Redis): stdout, stderr and exit code. */
const cli = (args: string[]) => cliInProcess(args, { unset: ['REDIS_URL'], env: { LOG_LEVEL: 'error' } });

describe('product-sync validate --preview', () => {
  it('prints the rows as JSON or a table, exits 0 when they are valid and 1 when one is not, and writes no report', async () => {
    const reports = join(setup.dir, 'cli-reports');
    const good = sheet('cli-good.csv', [`${testGtin(1)};Comté;;250;g;A;0406`, `${testGtin(2)};Brie;;250;g;A;0406`]);
    const json = await cli([
      'validate',
      good,
      '-m',
      mapping,
      '--preview',
      '1',
      '--json',
      '--sandbox',
      '--report-dir',
      reports,
    ]);
    expect(json.code, json.stderr).toBe(0);
    const p = JSON.parse(json.stdout) as Preview;
    expect(p).toMatchObject({ rowsRequested: 1, more: true, counts: { rows: 1, valid: 1 } });
    expect(p.rows[0]!.fields.find((f) => f.field === 'tradeItemStatusId')!.resolved![0]!.label).toBe('Actif');

    const bad = sheet('cli-bad.csv', [`${testGtin(1)};Comté;;250;g;A;0406`, `${testGtin(2)};Brie;;250;g;Zombie;0406`]);
    const table = await cli(['validate', bad, '-m', mapping, '--preview', '--sandbox', '--report-dir', reports]);
    expect(table.code, table.stderr).toBe(1);
    expect(table.stdout).toMatch(/row 3 · key \d{14} · INVALID \(1 error\)/);
    expect(table.stdout).toContain('error REF_UNKNOWN Statut "Zombie"');
    expect(table.stdout).toContain('2 rows previewed: 1 valid, 1 invalid');
    // Only the embedded sandbox's store: no run directory.
    expect(readdirSync(reports)).toEqual(['.sandbox']);

    const usage = await cli(['validate', good, '-m', mapping, '--json', '--sandbox', '--report-dir', reports]);
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain('--json goes with --preview');
    expect((await cli(['validate', good, '-m', mapping, '--preview', '0'])).code).toBe(2);
  }, 60_000);
});
