// Onboarding a supplier sheet (issue 11): `mapping init` writes a mapping that `import --sandbox` runs as is, for a
// sheet whose headers are all known aliases — the CLI as a user runs it, each command in its own directory
// (mappings/ and reports/ there).
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { writeWorkbook } from '../fixtures/sheets.ts';
import { cliIn, outcomesIn } from '../helpers/onboarding.ts';
import { testGtin } from '../helpers/sheets.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

const cli = cliIn;
const outcomes = outcomesIn;

type Stored = { fields: Record<string, unknown>; tradeItemId: string; supplierCompanyId?: string };

/** What the embedded sandbox holds after the run (kept in reports/.sandbox between runs). */
function store(cwd: string): { tradeItems: Stored[]; manufacturedItems: Stored[] } {
  return JSON.parse(readFileSync(join(cwd, 'reports', '.sandbox', 'store.json'), 'utf8')) as never;
}

describe('mapping init, then import --sandbox with the written mapping, without editing it', () => {
  it('a French CSV of trade items: every row created, labels resolved to ids, numbers and units read', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-onboard-fr-'));
    const g = Array.from({ length: 4 }, (_, i) => testGtin(i + 1, '376099'));
    writeFileSync(
      join(cwd, 'Catalogue Fromagerie.csv'),
      [
        'Code-barres;Désignation;Marque;Poids net;Unité;Statut;Nomenclature douanière;Emballage;Saisonnier;Début de saison;Commentaire',
        `${g[0]};Comté AOP 18 mois;Fromagerie des Monts;250;g;Actif;0406;Papier;Non;;Nouveau référencement`,
        `${g[1]};Galettes pur beurre;Biscuiterie de Pont-Aven;0,125;kg;Actif;1905;Carton;Oui;25/10/2025;`,
        `${g[2]};Côtes du Rhône rouge;Domaine des Garrigues;75;cl;Inactif;2204;Verre;Non;;`,
        `${g[3]};Madeleines;Maison Mulot;1 250;g;Actif;1905;Carton;Oui;03/11/2025;`,
      ].join('\n'),
    );

    const init = await cli(cwd, ['mapping', 'init', 'Catalogue Fromagerie.csv', '--sandbox']);
    expect(init.code, init.stderr + init.stdout).toBe(0);
    expect(init.stdout).toMatch(/Draft mapping mappings\/catalogue-fromagerie\.yaml: tradeItem, language fr-FR/);
    expect(init.stdout).toMatch(
      /^6 +Statut +tradeItemStatusId +alias "Statut" \(fr\); labels found in the list trade-item-status/m,
    );
    expect(init.stdout).toMatch(/list labels checked against the embedded sandbox/);
    // The hint runs against what the draft was checked against: the sandbox.
    expect(init.stdout).toMatch(
      /^Next: product-sync validate 'Catalogue Fromagerie\.csv' --mapping catalogue-fromagerie --preview --sandbox$/m,
    );
    expect(init.stdout).toMatch(
      /^ {6}product-sync import 'Catalogue Fromagerie\.csv' --mapping catalogue-fromagerie --sandbox$/m,
    );
    const text = readFileSync(join(cwd, 'mappings', 'catalogue-fromagerie.yaml'), 'utf8');
    expect(text.split('\n')[0]).toMatch(/^# yaml-language-server: \$schema=.*schemas\/mapping\.schema\.json$/);

    // Never over an existing mapping without --force.
    const again = await cli(cwd, ['mapping', 'init', 'Catalogue Fromagerie.csv']);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(
      /mappings\/catalogue-fromagerie\.yaml already exists: --force overwrites it.*\[PS_ERR_CLI_USAGE\]/,
    );
    expect(readFileSync(join(cwd, 'mappings', 'catalogue-fromagerie.yaml'), 'utf8')).toBe(text);

    const run = await cli(cwd, [
      'import',
      'Catalogue Fromagerie.csv',
      '--mapping',
      'catalogue-fromagerie',
      '--sandbox',
      '--report-dir',
      'reports',
    ]);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(run.stdout).toMatch(
      /rows 4: created 4, updated 0, unchanged 0, unarchived 0, archived 0, invalid 0, failed 0/,
    );
    expect(outcomes(cwd)).toEqual(['created', 'created', 'created', 'created']);

    const items = new Map(store(cwd).tradeItems.map((t) => [t.fields.gtin, t.fields]));
    const galettes = items.get(`0${g[1]}`)!;
    expect(galettes).toMatchObject({
      tradeItemName: 'Galettes pur beurre',
      harmonizedCode: '1905',
      isTradeItemSeasonal: 'true',
      seasonalAvailabilityStartDate: '2025-10-25',
    });
    expect(galettes.netContents).toEqual([{ value: '0.125', unitOfMeasure: 'KGM' }]);
    expect(items.get(`0${g[3]}`)!.netContents).toEqual([{ value: '1250', unitOfMeasure: 'GRM' }]);
    for (const t of items.values()) {
      expect(t.brandId).toMatch(UUID);
      expect(t.tradeItemStatusId).toMatch(UUID);
      expect(t.packagingFormat).toMatch(UUID);
    }
    expect(items.get(`0${g[0]}`)!.tradeItemStatusId).toBe(galettes.tradeItemStatusId);
    expect(items.get(`0${g[2]}`)!.tradeItemStatusId).not.toBe(galettes.tradeItemStatusId);
    expect(items.get(`0${g[0]}`)!.comments).toEqual([expect.objectContaining({ value: 'Nouveau référencement' })]);
  }, 120_000);

  it('a German workbook of manufactured items: supplier uuids and countries of origin read, every row created', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-onboard-de-'));
    const g = Array.from({ length: 3 }, (_, i) => testGtin(i + 1, '400199'));
    const supplier = 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f';
    await writeWorkbook(cwd, 'lieferant.xlsx', (wb) => {
      const ws = wb.addWorksheet('Artikel');
      ws.addRow([
        'EAN-Code',
        'Produktname',
        'Marke',
        'Nettogewicht',
        'Einheit',
        'Ursprungsland',
        'Lieferant',
        'Zolltarifnummer',
      ]);
      ws.addRow([g[0], 'Bergkäse', 'Alpenhof', 0.5, 'kg', 'Deutschland', supplier, '0406']);
      ws.addRow([g[1], 'Lebkuchen', 'Nürnberger', 200, 'g', 'Österreich;Deutschland', supplier, '1905']);
      ws.addRow([g[2], 'Riesling', 'Weingut Keller', 75, 'cl', 'Frankreich', supplier, '2204']);
    });

    // --out - prints the draft (the summary goes to stderr) and writes nothing.
    const printed = await cli(cwd, ['mapping', 'init', 'lieferant.xlsx', '--target', 'manufacturedItem', '--out', '-']);
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.stdout).toMatch(/^# yaml-language-server: \$schema=\.\.\/schemas\/mapping\.schema\.json\n/);
    expect(printed.stdout).toMatch(
      /^ {2}- \{ column: Ursprungsland, field: countriesOfOrigin, type: country, split: ";" \}/m,
    );
    expect(printed.stderr).toMatch(/Draft mapping \(printed\)/);
    expect(readdirSync(cwd)).toEqual(['lieferant.xlsx']);

    const init = await cli(cwd, [
      'mapping',
      'init',
      'lieferant.xlsx',
      '--target',
      'manufacturedItem',
      '--name',
      'lieferant-de',
    ]);
    expect(init.code, init.stderr + init.stdout).toBe(0);
    expect(init.stdout).toMatch(/manufacturedItem, language de-DE/);
    expect(init.stdout).toMatch(/note: list labels not checked: no reference API configured/);
    expect(init.stdout).toMatch(/^Next: product-sync validate lieferant\.xlsx --mapping lieferant-de --preview$/m);

    const run = await cli(cwd, [
      'import',
      'lieferant.xlsx',
      '--mapping',
      'lieferant-de',
      '--sandbox',
      '--report-dir',
      'reports',
    ]);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(outcomes(cwd)).toEqual(['created', 'created', 'created']);
    const s = store(cwd);
    expect(s.manufacturedItems).toHaveLength(3);
    const byName = new Map(s.tradeItems.map((t) => [t.fields.tradeItemName, t]));
    const lebkuchen = s.manufacturedItems.find((m) => m.tradeItemId === byName.get('Lebkuchen')!.tradeItemId)!;
    expect(lebkuchen.supplierCompanyId).toBe(supplier);
    expect(lebkuchen.fields.countriesOfOrigin).toEqual(['AT', 'DE']);
    expect(byName.get('Bergkäse')!.fields.netContents).toEqual([{ value: '0.5', unitOfMeasure: 'KGM' }]);
    expect(byName.get('Riesling')!.fields.harmonizedCode).toBe('2204');
  }, 120_000);
});

describe('mapping init on a Shopify product export, then import --sandbox as written', () => {
  it('Title, Vendor, Variant Barcode as the key, "400g" / "1,5 L" as the net content: every row created', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-onboard-shopify-'));
    const g = Array.from({ length: 3 }, (_, i) => testGtin(i + 1, '400638'));
    const header =
      'Handle,Title,Body (HTML),Vendor,Product Category,Type,Tags,Published,Option1 Name,Option1 Value,Variant SKU,' +
      'Variant Grams,Variant Inventory Tracker,Variant Inventory Qty,Variant Price,Variant Compare At Price,' +
      'Variant Requires Shipping,Variant Taxable,Variant Barcode,Image Src,SEO Title,SEO Description,Variant Weight Unit,Status';
    writeFileSync(
      join(cwd, 'products_export.csv'),
      [
        header,
        `oat-cookies,Oat cookies,<p>Crunchy</p>,Bakehouse,Food,Biscuits,"vegan,oat",TRUE,Size,400g,OAT-400,400,shopify,12,3.50,4.00,TRUE,TRUE,${g[0]},https://cdn.example/1.jpg,Oat cookies 400g,Crunchy oat cookies baked daily,g,active`,
        `rye-bread,Rye bread,<p>Dark</p>,Bakehouse,Food,Bread,rye,TRUE,Size,750g,RYE-750,750,shopify,5,2.90,,TRUE,TRUE,${g[1]},https://cdn.example/2.jpg,Rye bread,Dark rye bread with seeds,g,active`,
        `apple-juice,Apple juice,<p>Fresh</p>,Orchard Co,Drinks,Juice,,TRUE,Size,"1,5 L",APL-15,1500,shopify,30,1.99,,TRUE,TRUE,${g[2]},https://cdn.example/3.jpg,Apple juice,Cloudy apple juice,kg,draft`,
      ].join('\n'),
    );
    const init = await cli(cwd, ['mapping', 'init', 'products_export.csv', '--sandbox']);
    expect(init.code, init.stderr + init.stdout).toBe(0);
    expect(init.stdout).toMatch(/key gtin; 6 of 24 columns mapped/);
    expect(init.stdout).toMatch(
      /^Next: product-sync validate products_export\.csv --mapping products-export --preview --sandbox$/m,
    );

    const run = await cli(cwd, [
      'import',
      'products_export.csv',
      '--mapping',
      'products-export',
      '--sandbox',
      '--report-dir',
      'reports',
    ]);
    expect(run.code, run.stderr + run.stdout).toBe(0);
    expect(outcomes(cwd)).toEqual(['created', 'created', 'created']);
    const byName = new Map(store(cwd).tradeItems.map((t) => [t.fields.tradeItemName, t.fields]));
    expect(byName.get('Oat cookies')).toMatchObject({
      gtin: `0${g[0]}`,
      netContents: [{ value: '400', unitOfMeasure: 'GRM' }],
      retailerIdentifiers: ['OAT-400'],
    });
    expect(byName.get('Apple juice')!.netContents).toEqual([{ value: '1.5', unitOfMeasure: 'LTR' }]);
    expect(byName.get('Apple juice')!.brandId).toMatch(UUID);
  }, 120_000);
});

describe('mapping init on a sheet it cannot draft from', () => {
  it('a header row of empty cells (",,,"): exit 2 naming the file and the row, no raw validation message', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-onboard-empty-'));
    writeFileSync(join(cwd, 'export.csv'), `,,,\n${testGtin(1, '376099')},Comté,Fromagerie,250 g\n`);
    const init = await cli(cwd, ['mapping', 'init', 'export.csv']);
    expect(init.code, init.stderr + init.stdout).toBe(2);
    expect(init.stderr).toMatch(
      /export\.csv: the header row \(row 1\) has no header in any of its 4 cells: --header-row/,
    );
    expect(init.stderr).toMatch(/\[PS_ERR_FILE_HEADER\]/);
    expect(init.stderr + init.stdout).not.toMatch(/expected array/);
    expect(readdirSync(cwd)).toEqual(['export.csv']);
  }, 60_000);

  it('a sheet with no GTIN column: the summary says so and what to do, the draft is written, exit 1', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'ps-onboard-nokey-'));
    writeFileSync(
      join(cwd, 'nokey.csv'),
      'Code,Product name,Brand\n12345,Oat cookies,Bakehouse\n12346,Rye bread,Bakehouse\n',
    );
    const init = await cli(cwd, ['mapping', 'init', 'nokey.csv']);
    expect(init.code, init.stderr + init.stdout).toBe(1);
    expect(init.stdout).toMatch(/key gtin \(NO GTIN COLUMN FOUND\)/);
    expect(init.stdout).toMatch(
      /^No GTIN column found: no header names one .* add the line - \{ column: <header of the GTINs>, field: gtin \}/m,
    );
    expect(init.stdout).toMatch(
      /The draft needs an edit before it can be used:\n[\s\S]*key gtin needs a column with field gtin/,
    );
    expect(init.stdout).not.toMatch(/^Next:/m);
    expect(readFileSync(join(cwd, 'mappings', 'nokey.yaml'), 'utf8')).toMatch(/^# NOTE: no GTIN column found: /m);
  }, 60_000);
});
