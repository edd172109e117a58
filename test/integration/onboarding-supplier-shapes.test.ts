// Onboarding the sheets suppliers really send (issue 39): a title above the headers (merged or not, CSV or XLSX), a
// notice worksheet first, unit words in German, Spanish, Italian and Dutch, a draft that cannot work — on sheets made
// here. `mapping init` then `validate --sandbox` with the written mapping, without editing it.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { findUnit } from '../../src/api/units.ts';
import { mappingText, suggestMapping } from '../../src/onboarding/suggest.ts';
import { parseMapping } from '../../src/pipeline/map/mapping.ts';
import { toUnit } from '../../src/pipeline/map/transforms.ts';
import { writeWorkbook } from '../fixtures/sheets.ts';
import { cliIn, outcomesIn } from '../helpers/onboarding.ts';
import { testGtin } from '../helpers/sheets.ts';

const cli = cliIn;
const outcomes = outcomesIn;

const gtins = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => testGtin(i + 1, prefix));

/** The German workbook of the issue: a notice sheet first, then a title merged over A1:E1, an empty row, headers. */
async function germanWorkbook(cwd: string): Promise<string> {
  const g = gtins(4, '400638');
  return writeWorkbook(cwd, 'Lieferant Preisliste.xlsx', (wb) => {
    const notice = wb.addWorksheet('Hinweise');
    notice.addRow(['Bitte beachten Sie: alle Preise verstehen sich netto.']);
    notice.addRow(['Gültig ab 1. Januar 2027. Fragen an vertrieb@example.com']);
    const ws = wb.addWorksheet('Preisliste 2027');
    ws.getCell('A1').value = 'Katalog Feinkost Müller — Preisliste 2027';
    ws.mergeCells('A1:E1');
    // Row 2 empty; the headers on row 3; GTINs as text, as a supplier's export writes them.
    ws.getRow(3).values = ['EAN', 'Artikel', 'Marke', 'Inhalt', 'Einheit'];
    const rows: (string | number)[][] = [
      [g[0]!, 'Senf mittelscharf', 'Feinkost Müller', 6, 'Stk.'],
      [g[1]!, 'Gewürzgurken', 'Feinkost Müller', 1, 'Stück'],
      [g[2]!, 'Rapsöl', 'Ölmühle Nord', 750, 'ml'],
      [g[3]!, 'Sauerkraut', 'Feinkost Müller', 500, 'g'],
    ];
    rows.forEach((r, i) => (ws.getRow(4 + i).values = r));
    wb.addWorksheet('Listen', { state: 'hidden' }).addRow(['Stk.', 'g', 'ml']);
  });
}

describe('mapping init on the shapes suppliers send', () => {
  it('a title merged above the headers, a notice sheet first and German units: the draft validates without an edit', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-shapes-de-'));
    await germanWorkbook(cwd);
    const init = await cli(cwd, ['mapping', 'init', 'Lieferant Preisliste.xlsx', '--sandbox']);
    expect(init.code, init.stderr + init.stdout).toBe(0);
    // The worksheet read is named, with the others (the hidden one is none of them), and the header row found.
    expect(init.stdout).toMatch(
      /^Worksheet "Preisliste 2027" \(of "Preisliste 2027", "Hinweise": --sheet <name> reads another\), headers on row 3$/m,
    );
    expect(init.stdout).toMatch(
      /note: worksheet "Preisliste 2027" read: its headers name 5 fields \(the first worksheet, "Hinweise", names none\)/,
    );
    expect(init.stdout).toMatch(
      /note: the headers are on row 3 \(row 1 holds one cell \("Katalog Feinkost Müller — Preisliste 2027"\), row 2 is empty; row 3 holds 5 headers, 5 naming fields, above 5 columns of data\): headerRow: 3/,
    );
    expect(init.stdout).toMatch(/^2 +Artikel +tradeItemName +alias "Artikel" \(de/m);
    expect(init.stdout).not.toMatch(/no unit product-sync knows/);
    const text = readFileSync(join(cwd, 'mappings', 'lieferant-preisliste.yaml'), 'utf8');
    expect(text).toMatch(/^sheet: Preisliste 2027$/m);
    expect(text).toMatch(/^headerRow: 3$/m);
    expect(text).toMatch(/^language: de-DE/m);
    expect(text).toMatch(/^ {2}- \{ column: EAN, field: gtin \}/m);
    expect(text).toMatch(/^ {2}- \{ column: Einheit, field: "netContents\[0\]\.unitOfMeasure"/m);

    const run = await cli(cwd, [
      'validate',
      'Lieferant Preisliste.xlsx',
      '--mapping',
      'lieferant-preisliste',
      '--sandbox',
      '--owner',
      '5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f',
    ]);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(outcomes(cwd)).toEqual(['valid', 'valid', 'valid', 'valid']);

    // validate --preview names the worksheet it read and the others.
    const preview = await cli(cwd, [
      'validate',
      'Lieferant Preisliste.xlsx',
      '--mapping',
      'lieferant-preisliste',
      '--preview',
      '2',
      '--sandbox',
      '--owner',
      '5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f',
    ]);
    expect(preview.code, preview.stderr + preview.stdout).toBe(0);
    expect(preview.stdout.replace(/\s+/g, ' ')).toContain(
      `worksheet "Preisliste 2027" was read (the mapping's sheet); the workbook also has "Hinweise": --sheet <name> or the mapping's sheet: reads another`,
    );
  });

  it('a CSV with a title, a note and empty lines above the headers: the header row is found, the title is no header', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-shapes-csv-'));
    const g = gtins(3, '376099');
    writeFileSync(
      join(cwd, 'tarif.csv'),
      [
        'Catalogue Fromagerie des Monts — tarif 2027;;;',
        'Prix HT, franco à partir de 300 €;;;',
        ';;;',
        'Code-barres;Désignation;Marque;Poids net',
        `${g[0]};Comté AOP;Fromagerie des Monts;250 g`,
        `${g[1]};Morbier;Fromagerie des Monts;400 g`,
        `${g[2]};Tomme;Fromagerie des Monts;1 kg`,
      ].join('\n'),
    );
    const d = await suggestMapping(join(cwd, 'tarif.csv'));
    expect(d.headerRow).toBe(4);
    expect(d.columns.map((c) => c.field)).toEqual(['gtin', 'tradeItemName', 'brandId', 'netContents[0]']);
    expect(d.notes.join('\n')).toMatch(
      /the headers are on row 4 \(row 1 holds one cell \("Catalogue Fromagerie des Monts — tarif 2027"\), row 2 holds one cell .*, row 3 is empty; row 4 holds 4 headers/,
    );
    expect(mappingText(d)).toMatch(/^headerRow: 4$/m);
  });

  it('--header-row and --sheet are taken as given', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-shapes-given-'));
    const file = await germanWorkbook(cwd);
    const d = await suggestMapping(file, { sheet: 'Preisliste 2027', headerRow: 3 });
    expect(d.sheet).toBe('Preisliste 2027');
    expect(d.otherSheets).toEqual(['Hinweise']);
    expect(d.notes.join('\n')).not.toMatch(/headers are on row/);
    expect(d.columns.map((c) => c.header)).toEqual(['EAN', 'Artikel', 'Marke', 'Inhalt', 'Einheit']);
  });

  it.each([
    ['de', ['Stk.', 'Stück', 'stk', 'Gramm', 'Liter'], 'Einheit'],
    ['es', ['uds', 'ud.', 'unidades', 'gramos', 'litros'], 'Unidad'],
    ['it', ['pz', 'pezzi', 'pz.', 'grammi', 'litri'], 'Unità'],
    ['nl', ['stuks', 'stuk', 'gram', 'kilogram', 'liter'], 'Eenheid'],
  ])('%s unit words are units, and a draft of them says nothing is unknown', async (lang, words, header) => {
    for (const w of words) {
      expect(findUnit(w), w).toBeDefined();
      expect(toUnit(w, { decimalSeparator: ',', language: lang })).toHaveProperty('value');
    }
    const cwd = mkdtempSync(join(tmpdir(), `ps-shapes-${lang}-`));
    const g = gtins(words.length, '800123');
    const file = join(cwd, `units-${lang}.csv`);
    writeFileSync(file, [`EAN;${header}`, ...words.map((w, i) => `${g[i]};${w}`)].join('\n'));
    const d = await suggestMapping(file);
    const unit = d.columns.find((c) => c.header === header)!;
    expect(unit.unknownUnits).toBeUndefined();
  });

  it('a unit word it cannot place: the draft flags it and suggests a values: map', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-shapes-unknown-'));
    const g = gtins(4, '400638');
    const file = join(cwd, 'einheiten.csv');
    writeFileSync(
      file,
      [
        'EAN;Artikel;Inhalt;Einheit',
        `${g[0]};Senf;6;Stk.`,
        `${g[1]};Bier;6;Fl.`,
        `${g[2]};Öl;1;Dose`,
        `${g[3]};Salz;500;g`,
      ].join('\n'),
    );
    const d = await suggestMapping(file);
    const unit = d.columns.find((c) => c.header === 'Einheit')!;
    expect(unit.field).toBe('netContents[0].unitOfMeasure');
    expect(unit.unknownUnits).toEqual(['Fl.', 'Dose']);
    expect(unit.warning).toMatch(/"Fl\.", "Dose" are no unit product-sync knows: add values: \{ <word>: <unit> \}/);
    expect(mappingText(d)).toMatch(/^ {2}# {3}values: \{ "Fl\.": \?, "Dose": \? \} {3}# to complete/m);
  });
});

describe('better guesses and drafts that say they cannot work', () => {
  it('a column of GTIN-length numbers many of whose check digits fail is the GTIN when nothing better is, the share said', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-shapes-code-'));
    const good = gtins(4, '376012');
    // Six more with a wrong check digit (the last digit moved by one).
    const bad = gtins(6, '376013').map((x) => `${x.slice(0, -1)}${(Number(x.at(-1)) + 1) % 10}`);
    const file = join(cwd, 'export.csv');
    writeFileSync(
      file,
      ['code,product_name,brands', ...[...good, ...bad].map((c, i) => `${c},Product ${i},Brand`)].join('\n'),
    );
    const d = await suggestMapping(file);
    const code = d.columns.find((c) => c.header === 'code')!;
    expect(code.field).toBe('gtin');
    expect(code.reason).toMatch(/values are numbers of a GTIN length .*no better GTIN column/);
    expect(code.warning).toMatch(/^6 of 10 \(60 %\) fail their check digit/);
    expect(d.missingKey).toBeUndefined();
  });

  it.each([
    [' Item', 'en'],
    ['Article', 'fr'],
    ['Artikel', 'de'],
    ['Producto', 'es'],
    ['Articolo', 'it'],
  ])('names under %s are the name', async (header) => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-shapes-name-'));
    const g = gtins(3, '376012');
    const file = join(cwd, 'names.csv');
    writeFileSync(
      file,
      [
        `GTIN;${header};Calories`,
        `${g[0]};Original Recipe;320`,
        `${g[1]};Popcorn Chicken;400`,
        `${g[2]};Coleslaw;170`,
      ].join('\n'),
    );
    const d = await suggestMapping(file);
    expect(d.columns[1]!.field).toBe('tradeItemName');
    expect(d.missingRequired).toBeUndefined();
  });

  it('a manufactured item draft without a supplier column exits 1 with the line to add (docs/commands.md)', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-shapes-mi-'));
    const g = gtins(2, '376012');
    writeFileSync(
      join(cwd, 'usine.csv'),
      ['EAN;Désignation;Marque', `${g[0]};Comté;Monts`, `${g[1]};Morbier;Monts`].join('\n'),
    );
    const init = await cli(cwd, ['mapping', 'init', 'usine.csv', '--target', 'manufacturedItem']);
    expect(init.code, init.stderr + init.stdout).toBe(1);
    expect(init.stdout).toMatch(/^Required field missing: no column feeds supplierCompanyId \(a uuid\)/m);
    expect(init.stdout).toMatch(
      /The draft needs an edit before it can be used:\n- no column feeds supplierCompanyId .*add - \{ column: <header of the supplier ids>, field: supplierCompanyId \} under columns, or defaults: \{ supplierCompanyId: <uuid> \}/,
    );
    expect(init.stdout).not.toMatch(/^Next:/m);
    const text = readFileSync(join(cwd, 'mappings', 'usine.yaml'), 'utf8');
    expect(text).toMatch(/^ {2}# - \{ column: <header of its values>, field: supplierCompanyId \} {3}# REQUIRED/m);
    // The draft still parses: the edit is one line.
    expect(() => parseMapping(text, join(cwd, 'mappings', 'usine.yaml'))).not.toThrow();

    // Without a name column, a trade item draft says so too.
    writeFileSync(join(cwd, 'noname.csv'), ['EAN;Marque', `${g[0]};Monts`, `${g[1]};Monts`].join('\n'));
    const noName = await cli(cwd, ['mapping', 'init', 'noname.csv']);
    expect(noName.code).toBe(1);
    expect(noName.stdout).toMatch(/^Required field missing: no column feeds tradeItemName \(the name\)/m);
  });
});

describe('a label found only in a fallback language', () => {
  it('is said once per column in summary.json notes, not as a warning on every row', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-shapes-fallback-'));
    const g = gtins(3, '376012');
    writeFileSync(
      join(cwd, 'statuts.csv'),
      ['EAN;Désignation;Emballage', ...g.map((x, i) => `${x};Produit ${i};polymer evoh`)].join('\n'),
    );
    mkdirSync(join(cwd, 'mappings'));
    writeFileSync(
      join(cwd, 'mappings', 'statuts.yaml'),
      [
        'name: statuts',
        'target: tradeItem',
        'language: fr-FR',
        'key: gtin',
        'columns:',
        '  - { column: EAN, field: gtin }',
        '  - { column: Désignation, field: tradeItemName }',
        '  - { column: Emballage, field: packagingFormat, lookup: { list: packaging-materials } }',
      ].join('\n'),
    );
    const run = await cli(cwd, [
      'validate',
      'statuts.csv',
      '--mapping',
      'statuts',
      '--sandbox',
      '--owner',
      '5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f',
    ]);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    const runDir = join(cwd, 'reports', readdirSync(join(cwd, 'reports')).filter((d) => !d.startsWith('.'))[0]!);
    expect(readFileSync(join(runDir, 'rows.csv'), 'utf8')).not.toContain('REF_NO_TRANSLATION');
    const summary = JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8')) as {
      issues: { code: string }[];
      notes: string[];
    };
    expect(summary.issues.map((i) => i.code)).not.toContain('REF_NO_TRANSLATION');
    const notes = summary.notes.filter((n) => n.includes('REF_NO_TRANSLATION'));
    expect(notes).toHaveLength(1);
    expect(notes[0]).toMatch(
      /^REF_NO_TRANSLATION on column "Emballage" \(packagingFormat\): 3 row\(s\) resolved through a fallback language/,
    );
  });
});
