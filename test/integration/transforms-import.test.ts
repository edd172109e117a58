import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { WEIGHT_UNITS } from '../../src/api/units.ts';
import { runImport, runValidate } from '../../src/pipeline/run/run.ts';
import { DEMO_COMPANY_ID, DEMO_SUPPLIER_ID } from '../../src/sandbox/defaults.ts';
import { writeWorkbook } from '../fixtures/sheets.ts';
import { testGtin } from '../helpers/sheets.ts';
import { useSandboxContext } from '../helpers/sandbox.ts';

// Each transform of the mapping language, end to end: a sheet imported into the embedded sandbox over HTTP, the report
// read back, and the items the API stores checked.

const owner = DEMO_COMPANY_ID;
const gramId = WEIGHT_UNITS.find((u) => u.symbol === 'g')!.id;
const setup = useSandboxContext('ps-transforms-');
const { sandbox } = setup;
beforeEach(() => sandbox.handle.reset());

const gtin14 = (i: number, prefix: string) => testGtin(i, prefix).padStart(14, '0');

/** Writes a sheet and its mapping (the `columns:` part and what goes above it) into the test directory. */
function write(name: string, sheet: string, mapping: string): { file: string; mapping: string } {
  writeFileSync(join(setup.dir, `${name}.csv`), sheet);
  // Reports in English (reportLanguage): these tests read the run's own detailed messages in rejected.* and rows.*.
  writeFileSync(
    join(setup.dir, `${name}.yaml`),
    `name: ${name}\nownerCompanyId: ${owner}\nlanguage: fr-FR\nreportLanguage: en\n${mapping}`,
  );
  return { file: join(setup.dir, `${name}.csv`), mapping: join(setup.dir, `${name}.yaml`) };
}

/** rows.csv of a report: the line of each sheet row, by row number. */
/**
 * rows.csv's lines by row number; a rejected row's line is followed by its rejected.csv line, which tells its issues
 * in full (rows.csv names them). The rejected lines come in the same order (their product-sync:row may be an earlier
 * sheet's).
 */
function reportLines(reportDir: string): Map<number, string> {
  const read = (name: string) =>
    existsSync(join(reportDir, name))
      ? readFileSync(join(reportDir, name), 'utf8')
          .replace(/^\uFEFF/, '')
          .trim()
          .split(/\r?\n/)
      : [];
  const all = read('rejected.csv');
  const rejected = all.slice(all.findIndex((h) => h.includes('product-sync:row')) + 1);
  let next = 0;
  return new Map(
    read('rows.csv')
      .slice(1)
      .map((l) => {
        const [row, , outcome] = l.split(',');
        const more = row !== '' && /^(invalid|failed|not_attempted)$/.test(outcome!) ? rejected[next++] : undefined;
        return [Number(row), more === undefined ? l : `${l} ${more}`];
      }),
  );
}

const tradeItem = (gtin: string) =>
  sandbox.handle.store.dump().tradeItems.find((t) => t.gtin === gtin && t.ownerCompanyId === owner) as
    Record<string, unknown> | undefined;

describe('transforms of the mapping language, imported into the sandbox', () => {
  it('quantity: "75 cl" and "0,4 kg" reach the API as value and unit; a pack of several is an issue on its cell', async () => {
    const p = '036001';
    const s = write(
      'quantity',
      `GTIN;Désignation;Contenance;Poids égoutté
${testGtin(0, p)};Jus d'orange;75 cl;
${testGtin(1, p)};Haricots verts;0,8 kg;0,4 kg
${testGtin(2, p)};Bière;6 x 33 cl;
${testGtin(3, p)};Pois;400;
`,
      `target: tradeItem
columns:
  - { column: GTIN, field: gtin }
  - { column: Désignation, field: tradeItemName }
  - { column: Contenance, field: "netContents[0]", type: quantity }
  - { column: Poids égoutté, field: drainedNetWeight, type: quantity }
`,
    );
    const r = await runImport(s, setup.cc.ctx);
    expect(r.summary.counts).toMatchObject({ rows: 4, created: 2, invalid: 2 });
    expect(tradeItem(gtin14(0, p))?.netContents).toEqual([{ value: '75', unitOfMeasure: 'CLT' }]);
    expect(tradeItem(gtin14(1, p))).toMatchObject({
      netContents: [{ value: '0.8', unitOfMeasure: 'KGM' }],
      drainedNetWeight: { value: 0.4, unitOfMeasure: WEIGHT_UNITS.find((u) => u.symbol === 'kg')!.id },
    });
    const lines = reportLines(r.reportDir);
    expect(lines.get(4)).toMatch(/,invalid,.*QUANTITY_INVALID \[Contenance\] ""6 x 33 cl""/);
    expect(lines.get(5)).toMatch(/,invalid,.*QUANTITY_NO_UNIT \[Contenance\] ""400""/);
    expect(tradeItem(gtin14(2, p))).toBeUndefined();
  });

  it('fallback: the English name where the French one is empty, and issues name the column read', async () => {
    const p = '036002';
    const s = write(
      'fallback',
      `GTIN;Nom FR;Name EN;Début;Start
${testGtin(0, p)};Biscuits au beurre;Butter biscuits;;
${testGtin(1, p)};;Shortbread;;2025-02-30
${testGtin(2, p)};;;;
`,
      `target: tradeItem
columns:
  - { column: GTIN, field: gtin }
  - { column: Nom FR, fallback: Name EN, field: tradeItemName, required: true }
  - { column: Début, fallback: Start, field: seasonalAvailabilityStartDate, type: date }
`,
    );
    const r = await runImport(s, setup.cc.ctx);
    expect(r.summary.counts).toMatchObject({ rows: 3, created: 1, invalid: 2 });
    expect(tradeItem(gtin14(0, p))?.tradeItemName).toBe('Biscuits au beurre');
    const lines = reportLines(r.reportDir);
    expect(lines.get(3)).toMatch(/,invalid,.*DATE_INVALID \[Start\] ""2025-02-30""/);
    expect(lines.get(4)).toMatch(/,invalid,.*REQUIRED_EMPTY \[Nom FR\].*and so is its fallback Name EN/);

    // The fixed row goes in with the English name.
    writeFileSync(s.file, `GTIN;Nom FR;Name EN;Début;Start\n${testGtin(1, p)};;Shortbread;;2025-02-28\n`);
    const again = await runImport(s, setup.cc.ctx);
    expect(again.summary.counts).toMatchObject({ created: 1 });
    expect(tradeItem(gtin14(1, p))).toMatchObject({
      tradeItemName: 'Shortbread',
      seasonalAvailabilityStartDate: '2025-02-28',
    });
  });

  it('a repeated header addressed by the merged group title above it; rejected.csv re-imports with the same mapping', async () => {
    const p = '036003';
    const file = await writeWorkbook(setup.dir, 'grouped.xlsx', (wb) => {
      const ws = wb.addWorksheet('Produits');
      ws.getCell('C1').value = 'Poids net';
      ws.mergeCells('C1:D1');
      ws.getCell('E1').value = 'Poids égoutté';
      ws.mergeCells('E1:F1');
      ws.addRow(['GTIN', 'Désignation', 'Valeur', 'Unité', 'Valeur', 'Unité']);
      ws.addRow([testGtin(0, p), 'Haricots verts', 800, 'g', 400, 'g']);
      ws.addRow([testGtin(1, p), 'Petits pois', 800, 'g', 0.5, 'cl']);
    });
    const mapping = join(setup.dir, 'grouped.yaml');
    writeFileSync(
      mapping,
      `name: grouped
target: tradeItem
ownerCompanyId: ${owner}
language: fr-FR
headerRow: 2
columns:
  - { column: GTIN, field: gtin }
  - { column: Désignation, field: tradeItemName }
  - { column: { header: Valeur, group: Poids net }, field: "netContents[0].value", type: decimal }
  - { column: { header: Unité, group: Poids net }, field: "netContents[0].unitOfMeasure", type: unit }
  - { column: { header: Valeur, group: Poids égoutté }, field: drainedNetWeight.value }
  - { column: { header: Unité, group: Poids égoutté }, field: drainedNetWeight.unitOfMeasure }
`,
    );
    const r = await runImport({ file, mapping }, setup.cc.ctx);
    expect(r.summary.counts).toMatchObject({ rows: 2, created: 1, invalid: 1 });
    expect(tradeItem(gtin14(0, p))).toMatchObject({
      netContents: [{ value: '800', unitOfMeasure: 'GRM' }],
      drainedNetWeight: { value: 400, unitOfMeasure: gramId },
    });
    expect(reportLines(r.reportDir).get(4)).toMatch(
      /,invalid,.*UNIT_WRONG_FAMILY \[Unité \(Poids égoutté, column F\)\] ""cl""/,
    );

    // rejected.xlsx keeps the group titles above the header: it validates with the same mapping, the same issue found.
    const back = await runValidate({ file: join(r.reportDir, 'rejected.xlsx'), mapping }, setup.cc.ctx);
    expect(reportLines(back.reportDir).get(3)).toMatch(
      /,invalid,.*UNIT_WRONG_FAMILY \[Unité \(Poids égoutté, column F\)\] ""cl""/,
    );
    // rejected.csv, fixed, imports.
    const rejected = readFileSync(join(r.reportDir, 'rejected.csv'), 'utf8');
    expect(rejected.split('\r\n')[0]).toBe('\uFEFF,,Poids net,,Poids égoutté');
    const fixed = join(setup.dir, 'grouped-fixed.csv');
    // XLSX numbers are written with the mapping's decimal separator, so the cell reads back as the sheet showed it.
    expect(rejected).toContain(',800,g,"0,5",cl,4,');
    writeFileSync(fixed, rejected.replace(',"0,5",cl,', ',500,g,'));
    const again = await runImport({ file: fixed, mapping }, setup.cc.ctx);
    expect(
      again.summary.counts,
      [...reportLines(again.reportDir).values(), readFileSync(fixed, 'utf8')].join('\n'),
    ).toMatchObject({ rows: 1, created: 1 });
    expect(tradeItem(gtin14(1, p))).toMatchObject({ drainedNetWeight: { value: 500, unitOfMeasure: gramId } });
  });

  it('onInvalid: drop-field: the damaged optional cell is left out with a warning and the row is created', async () => {
    const p = '036004';
    const s = write(
      'drop',
      `GTIN;Désignation;Début saison;Catégorie;Fin saison
${testGtin(0, p)};Biscuits;31/02/2025;;30/04/2025
${testGtin(1, p)};Gaufres;01/03/2025;Gâteaux secs;
${testGtin(2, p)};Crêpes;;;31/04/2025
`,
      `target: tradeItem
dateFormat: dd/mm/yyyy
columns:
  - { column: GTIN, field: gtin }
  - { column: Désignation, field: tradeItemName }
  - { column: Début saison, field: seasonalAvailabilityStartDate, type: date, onInvalid: drop-field }
  - { column: Catégorie, field: "productCategories[0].categoryId", type: string, onInvalid: drop-field }
  - { column: Fin saison, field: seasonalAvailabilityEndDate, type: date }
`,
    );
    const r = await runImport(s, setup.cc.ctx);
    expect(r.summary.counts).toMatchObject({ rows: 3, created: 2, invalid: 1 });
    const lines = reportLines(r.reportDir);
    expect(lines.get(2)).toMatch(/,created,.*WARNING FIELD_DROPPED \[Début saison\] ""31\/02\/2025"": DATE_INVALID: /);
    expect(lines.get(3)).toMatch(/,created,.*WARNING FIELD_DROPPED \[Catégorie\] ""Gâteaux secs"": FIELD_FORMAT: /);
    // reject-row (the default) still rejects.
    expect(lines.get(4)).toMatch(/,invalid,.*ERROR DATE_INVALID \[Fin saison\]/);
    const first = tradeItem(gtin14(0, p))!;
    expect(first).toMatchObject({ tradeItemName: 'Biscuits', seasonalAvailabilityEndDate: '2025-04-30' });
    expect(first.seasonalAvailabilityStartDate ?? null).toBeNull();
    const second = tradeItem(gtin14(1, p))!;
    expect(second).toMatchObject({ seasonalAvailabilityStartDate: '2025-03-01' });
    expect(second.productCategories ?? null).toBeNull();
  });

  it('country names in Dutch and Polish in a French mapping; a name two languages give different countries is refused', async () => {
    const p = '036005';
    const s = write(
      'countries',
      `GTIN;Désignation;Pays d'origine
${testGtin(0, p)};Kaas;Nederland; Włochy
${testGtin(1, p)};Ser;Niemcy
${testGtin(2, p)};Café;Kongo
`,
      `target: manufacturedItem
columns:
  - { column: GTIN, field: gtin }
  - { column: Désignation, field: tradeItemName }
  - { column: Pays d'origine, field: countriesOfOrigin, split: ";", type: country }
defaults: { supplierCompanyId: ${DEMO_SUPPLIER_ID} }
`,
    );
    // The CSV's delimiter is ";" and so is the list's: quote the cell that holds two countries.
    writeFileSync(s.file, readFileSync(s.file, 'utf8').replace('Nederland; Włochy', '"Nederland; Włochy"'));
    const r = await runImport(s, setup.cc.ctx);
    expect(r.summary.counts).toMatchObject({ rows: 3, created: 2, invalid: 1 });
    const made = sandbox.handle.store.dump().manufacturedItems;
    const byGtin = (i: number) =>
      made.find((m) => m.tradeItemId === tradeItem(gtin14(i, p))?.tradeItemId) as Record<string, unknown> | undefined;
    expect(byGtin(0)?.countriesOfOrigin).toEqual(['NL', 'IT']);
    expect(byGtin(1)?.countriesOfOrigin).toEqual(['DE']);
    expect(reportLines(r.reportDir).get(4)).toMatch(
      /,invalid,.*COUNTRY_AMBIGUOUS \[Pays d'origine\] ""Kongo"": .*CG in .*pl.*CD in de/,
    );
  });
});
