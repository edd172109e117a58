// mapping init (issue 11): a draft mapping from a sheet's headers and first rows, on sheets written here (CSV and
// XLSX).
import { describe, expect, it } from 'vitest';
import { createApiClients } from '../src/api/clients.ts';
import { useSandboxClients } from './helpers/sandbox.ts';
import { COLUMN_TYPES } from '../src/pipeline/map/transforms.ts';
import { FIELD_ALIASES, HEADERS_WITHOUT_FIELD } from '../src/onboarding/header-aliases.ts';
import { matchHeaders, matchSheetHeaders } from '../src/pipeline/map/headers.ts';
import { mapRow } from '../src/pipeline/map/map-row.ts';
import { parseMapping, resolveFieldPath } from '../src/pipeline/map/mapping.ts';
import {
  fieldChoices,
  mappingText,
  nearestLabels,
  suggestMapping,
  type ColumnSuggestion,
  type MappingDraft,
} from '../src/onboarding/suggest.ts';
import { openSheet } from '../src/pipeline/read/read-sheet.ts';
import { referenceLabels } from '../src/pipeline/resolve/list-labels.ts';
import { fixtureDir, writeWorkbook } from './fixtures/sheets.ts';
import { testGtin } from './helpers/sheets.ts';

const { dir, write } = fixtureDir('ps-mapping-init-');
const csv = (name: string, rows: string[][], sep = ';') => write(name, `${rows.map((r) => r.join(sep)).join('\n')}\n`);
const gtins = (n: number, prefix = '376012') => Array.from({ length: n }, (_, i) => testGtin(i + 1, prefix));

/** Header → field of the draft (undefined for an unmatched header). */
const fields = (d: MappingDraft): Record<string, string | undefined> =>
  Object.fromEntries(d.columns.map((c) => [c.header, c.field]));
const column = (d: MappingDraft, header: string): ColumnSuggestion => d.columns.find((c) => c.header === header)!;
/** The draft as a mapping file, parsed as a run would read it. */
const parsed = (d: MappingDraft) => parseMapping(mappingText(d), `${dir}/${d.name}.yaml`);

describe('mapping init proposes the fields of French, English and German headers', () => {
  it('French CSV: aliases, types, lookups, language fr-FR and its decimal comma, a date format from the values', async () => {
    const g = gtins(4);
    const file = csv('Fiche fournisseur.csv', [
      [
        'Code-barres',
        'Désignation',
        'Marque',
        'Poids net',
        'Unité',
        'Statut',
        'Nomenclature douanière',
        'Emballage',
        'Saisonnier',
        'Début de saison',
        'Commentaire',
        'Allergènes',
      ],
      [
        g[0]!,
        'Comté AOP 18 mois',
        'Fromagerie des Monts',
        '250',
        'g',
        'Actif',
        '0406',
        'Papier',
        'Non',
        '',
        'Nouveau',
        'Lait',
      ],
      [
        g[1]!,
        'Galettes pur beurre',
        'Biscuiterie',
        '0,125',
        'kg',
        'Actif',
        '1905',
        'Carton',
        'Oui',
        '25/10/2025',
        '',
        'Gluten, Lait',
      ],
      [g[2]!, 'Côtes du Rhône', 'Domaine', '75', 'cl', 'Inactif', '2204', 'Verre', 'Non', '', '', ''],
      [g[3]!, 'Madeleines', 'Maison Mulot', '1 250,5', 'g', 'Actif', '1905', 'Carton', 'Oui', '03/11/2025', '', 'Œufs'],
    ]);
    const d = await suggestMapping(file);
    expect(fields(d)).toEqual({
      'Code-barres': 'gtin',
      Désignation: 'tradeItemName',
      Marque: 'brandId',
      'Poids net': 'netContents[0].value',
      Unité: 'netContents[0].unitOfMeasure',
      Statut: 'tradeItemStatusId',
      'Nomenclature douanière': 'harmonizedCode',
      Emballage: 'packagingFormat',
      Saisonnier: 'isTradeItemSeasonal',
      'Début de saison': 'seasonalAvailabilityStartDate',
      Commentaire: 'comments[0].value',
      Allergènes: undefined,
    });
    expect(d).toMatchObject({
      name: 'fiche-fournisseur',
      target: 'tradeItem',
      language: 'fr-FR',
      key: 'gtin',
      headerRow: 1,
    });
    expect(d.decimalSeparator).toBeUndefined();
    expect(column(d, 'Marque').lookup).toEqual({ brand: { create: true } });
    expect(column(d, 'Statut').lookup).toEqual({ list: 'trade-item-status' });
    expect(column(d, 'Nomenclature douanière').lookup).toBe('harmonized-code');
    expect(column(d, 'Emballage').lookup).toEqual({ list: 'packaging-materials' });
    expect(column(d, 'Poids net').type).toBe('decimal');
    expect(column(d, 'Unité').type).toBe('unit');
    expect(column(d, 'Saisonnier').type).toBe('boolean');
    expect(column(d, 'Début de saison')).toMatchObject({ type: 'date', format: 'dd/mm/yyyy' });
    expect(column(d, 'Code-barres').reason).toMatch(/alias "Code-barres" \(fr\)/);
    expect(column(d, 'Allergènes').reason).toMatch(/no field of the product API takes allergens/);
    expect(column(d, 'Allergènes').samples).toEqual(['Lait', 'Gluten, Lait', 'Œufs']);
    expect(d.notes.join('\n')).toMatch(/list labels not checked/);

    const m = parsed(d);
    expect(m.language).toBe('fr-FR');
    expect(m.decimalSeparator).toBe(',');
    expect(m.columns.map((c) => [c.columns[0], c.field.path, c.type])).toContainEqual([
      'Poids net',
      'netContents[0].value',
      'decimal',
    ]);
    expect(m.columns.find((c) => c.field.path === 'seasonalAvailabilityStartDate')?.format).toBe('dd/mm/yyyy');
  });

  it('English XLSX (numbers as numbers) for manufactured items: supplier uuids, countries split on ";", language en-US', async () => {
    const g = gtins(3, '501234');
    const file = await writeWorkbook(dir, 'supplier-list.xlsx', (wb) => {
      const ws = wb.addWorksheet('Products');
      ws.addRow([
        'GTIN',
        'Product name',
        'Brand',
        'Net weight',
        'Unit of measure',
        'Status',
        'HS code',
        'Country of origin',
        'Supplier',
        'Notes',
      ]);
      ws.addRow([
        g[0],
        'Cheddar',
        'Dairy Co',
        0.25,
        'kg',
        'Active',
        '0406',
        'United Kingdom',
        'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
        'new',
      ]);
      ws.addRow([
        g[1],
        'Shortbread',
        'Bakery Ltd',
        150,
        'g',
        'Active',
        '1905',
        'UK;Ireland',
        'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
        null,
      ]);
      ws.addRow([
        g[2],
        'Stout',
        'Brewery',
        50,
        'cl',
        'Inactive',
        '2203',
        'IE',
        '9a7e4c21-8b3d-4f6a-b1c2-7e8f9a0b1c2d',
        null,
      ]);
    });
    const d = await suggestMapping(file, { target: 'manufacturedItem' });
    expect(fields(d)).toEqual({
      GTIN: 'gtin',
      'Product name': 'tradeItemName',
      Brand: 'brandId',
      'Net weight': 'netContents[0].value',
      'Unit of measure': 'netContents[0].unitOfMeasure',
      Status: 'tradeItemStatusId',
      'HS code': 'harmonizedCode',
      'Country of origin': 'countriesOfOrigin',
      Supplier: 'supplierCompanyId',
      Notes: 'comments[0].value',
    });
    expect(d).toMatchObject({ language: 'en-US', target: 'manufacturedItem' });
    expect(column(d, 'Country of origin')).toMatchObject({ type: 'country', split: ';' });
    expect(column(d, 'Supplier').type).toBeUndefined(); // uuid is the field's default type
    expect(column(d, 'Supplier').reason).toMatch(/values are uuids/);
    const m = parsed(d);
    expect(m.decimalSeparator).toBe('.');
    expect(m.columns.find((c) => c.field.path === 'supplierCompanyId')?.type).toBe('uuid');
  });

  it('German CSV: Strichcode, Produktname, Nettogewicht, Ursprungsland, Zolltarifnummer; language de-DE', async () => {
    const g = gtins(3, '400123');
    const file = csv('lieferant.csv', [
      [
        'Strichcode',
        'Produktname',
        'Marke',
        'Nettogewicht',
        'Einheit',
        'Ursprungsland',
        'Zolltarifnummer',
        'Bemerkung',
        'Preis',
      ],
      [g[0]!, 'Bergkäse', 'Alpenhof', '0,5', 'kg', 'Deutschland', '0406', 'neu', '4,99'],
      [g[1]!, 'Lebkuchen', 'Nürnberger', '200', 'g', 'Österreich', '1905', '', '2,49'],
      [g[2]!, 'Riesling', 'Weingut', '75', 'cl', 'Frankreich', '2204', '', '8,90'],
    ]);
    const d = await suggestMapping(file, { target: 'manufacturedItem' });
    expect(fields(d)).toEqual({
      Strichcode: 'gtin',
      Produktname: 'tradeItemName',
      Marke: 'brandId',
      Nettogewicht: 'netContents[0].value',
      Einheit: 'netContents[0].unitOfMeasure',
      Ursprungsland: 'countriesOfOrigin',
      Zolltarifnummer: 'harmonizedCode',
      Bemerkung: 'comments[0].value',
      Preis: undefined,
    });
    expect(d.language).toBe('de-DE');
    expect(column(d, 'Preis').reason).toMatch(/no field of the product API takes prices/);
    expect(parsed(d).decimalSeparator).toBe(',');
  });

  it('--language wins over the guess and sets the decimal separator; a French sheet written with decimal points says so', async () => {
    const g = gtins(3);
    const file = csv('points.csv', [
      ['EAN', 'Libellé', 'Poids net', 'Unité'],
      [g[0]!, 'A', '0.125', 'kg'],
      [g[1]!, 'B', '1.5', 'kg'],
      [g[2]!, 'C', '500', 'g'],
    ]);
    const guessed = await suggestMapping(file);
    expect(guessed.language).toBe('fr-FR');
    expect(guessed.decimalSeparator).toBe('.');
    expect(mappingText(guessed)).toMatch(/^decimalSeparator: "\."/m);
    expect(parsed(guessed).decimalSeparator).toBe('.');
    const given = await suggestMapping(file, { language: 'en-GB' });
    expect(given).toMatchObject({ language: 'en-GB', languageReason: 'given (--language)' });
    expect(given.decimalSeparator).toBeUndefined();
  });
});

describe('the values decide where headers do not, and contradict headers that are wrong', () => {
  it('a column of GTINs with valid check digits is the GTIN whatever its header ("Code")', async () => {
    const g = gtins(5, '761234');
    const file = csv('odd.csv', [['Code', 'Nom'], ...g.map((x, i) => [x, `Produit ${i}`])]);
    const d = await suggestMapping(file);
    expect(column(d, 'Code').field).toBe('gtin');
    expect(column(d, 'Code').reason).toMatch(/values are GTINs \(5 of 5 with valid check digits/);
    expect(d.key).toBe('gtin');
    expect(parsed(d).columns[0]!.field.path).toBe('gtin');
  });

  it('numbers with wrong check digits under a header that says nothing are not taken for GTINs', async () => {
    const file = csv('not-gtins.csv', [
      ['Code', 'Nom'],
      ['3760123451001', 'A'],
      ['3760123451012', 'B'],
      ['3760123451023', 'C'],
    ]);
    const d = await suggestMapping(file);
    expect(column(d, 'Code').field).toBeUndefined();
    expect(d.notes.join('\n')).toMatch(/no column holds GTINs/);
    expect(() => parsed(d)).toThrow(/key gtin needs a column with field gtin/);
  });

  it('a header its values contradict is not taken, and the draft says why', async () => {
    const g = gtins(3);
    const file = csv('contradicted.csv', [
      ['EAN', 'Code article', 'Poids net', 'Fournisseur', 'Désignation'],
      ['Comté', g[0]!, 'lourd', 'Fromagerie A', 'Comté'],
      ['Brie', g[1]!, 'léger', 'Fromagerie B', 'Brie'],
      ['Roquefort', g[2]!, 'moyen', 'Fromagerie C', 'Roquefort'],
    ]);
    const d = await suggestMapping(file, { target: 'manufacturedItem' });
    expect(column(d, 'EAN').field).toBeUndefined();
    expect(column(d, 'EAN').reason).toMatch(
      /alias "EAN" \(en\) of gtin, but only 0 of 3 values are GTINs \("Comté", "Brie", "Roquefort"\)/,
    );
    // The GTINs are in "Code article" (an alias of retailerIdentifiers): its values make it the key.
    expect(column(d, 'Code article').field).toBe('gtin');
    expect(column(d, 'Poids net').field).toBeUndefined();
    expect(column(d, 'Poids net').reason).toMatch(/0 of 3 values are numbers/);
    expect(column(d, 'Fournisseur').field).toBeUndefined();
    expect(column(d, 'Fournisseur').reason).toMatch(/supplierCompanyId, but only 0 of 3 values are uuids/);
    const text = mappingText(d);
    expect(text).toMatch(
      /^ {2}# - \{ column: EAN, field: \? \} +# column 1; samples: "Comté", "Brie", "Roquefort"; alias "EAN"/m,
    );
    expect(parsed(d).columns.map((c) => c.field.path)).toEqual(['gtin', 'tradeItemName']);
  });

  it('a value column whose cells hold their unit ("500 g") becomes a quantity column', async () => {
    expect(COLUMN_TYPES).toContain('quantity');
    const g = gtins(3);
    const file = csv('quantities.csv', [
      ['Code-barres', 'Nom', 'Poids net'],
      [g[0]!, 'A', '500 g'],
      [g[1]!, 'B', '0,5 kg'],
      [g[2]!, 'C', '75 cl'],
    ]);
    const d = await suggestMapping(file);
    expect(column(d, 'Poids net')).toMatchObject({ field: 'netContents[0]', type: 'quantity' });
    const m = parsed(d);
    expect(m.columns.find((c) => c.type === 'quantity')?.field.unit?.path).toBe('netContents[0].unitOfMeasure');
  });

  it('"400g" / "1,5 L" under a header of the quantity as text ("Quantity", "Pack size") is the net content, unit split', async () => {
    for (const header of ['Quantity', 'Pack size']) {
      const g = gtins(3);
      const rows = [
        ['EAN', 'Product name', header],
        [g[0]!, 'Oat cookies', '400g'],
        [g[1]!, 'Apple juice', '"1,5 L"'],
        [g[2]!, 'Cola', '330 ml'],
      ];
      const d = await suggestMapping(csv(`quantity-${header}.csv`, rows, ','));
      expect(column(d, header)).toMatchObject({ field: 'netContents[0]', type: 'quantity' });
      expect(column(d, header).reason).toMatch(/values are quantities with their unit .*: the net content/);
      expect(d.decimalSeparator ?? column(d, header).decimal).toBe(',');
      const m = parsed(d);
      const headers = rows[0]!;
      const drafts = rows
        .slice(1)
        .map((cells, i) =>
          mapRow(
            { row: i + 2, cells: cells.map((c) => c.replace(/"/g, '')), issues: [] },
            headers,
            m,
            matchHeaders(headers, m),
          ),
        );
      expect(drafts.map((x) => x.fields.netContents)).toEqual([
        [{ value: '400', unitOfMeasure: 'GRM' }],
        [{ value: '1.5', unitOfMeasure: 'LTR' }],
        [{ value: '330', unitOfMeasure: 'MLT' }],
      ]);
    }
  });

  it('quantities under "Quantity" stay its text when another column gives the net content', async () => {
    const g = gtins(2);
    const d = await suggestMapping(
      csv(
        'quantity-text.csv',
        [
          ['EAN', 'Product name', 'Net weight', 'Unit', 'Quantity'],
          [g[0]!, 'Oat cookies', '400', 'g', '400g'],
          [g[1]!, 'Rye bread', '750', 'g', '750g'],
        ],
        ',',
      ),
    );
    expect(fields(d)).toMatchObject({
      'Net weight': 'netContents[0].value',
      Unit: 'netContents[0].unitOfMeasure',
      Quantity: 'packagingNetContentDescription',
    });
  });

  it('a unit in a header (“Poids égoutté (g)”) becomes the default unit of that weight', async () => {
    const g = gtins(2);
    const file = csv('drained.csv', [
      ['EAN', 'Nom', 'Poids égoutté (g)'],
      [g[0]!, 'Olives', '120'],
      [g[1]!, 'Câpres', '60'],
    ]);
    const d = await suggestMapping(file);
    expect(column(d, 'Poids égoutté (g)').field).toBe('drainedNetWeight.value');
    expect(d.defaults).toEqual({ 'drainedNetWeight.unitOfMeasure': 'a2f53d16-59b8-5bde-b0bb-99e6f0755bc4' });
    expect(parsed(d).defaults.map((x) => x.field.path)).toEqual(['drainedNetWeight.unitOfMeasure']);
  });
});

describe('never one field on two columns', () => {
  it('the better match wins; the other column is listed unmatched, naming the column that took the field', async () => {
    const g = gtins(3);
    const other = gtins(3, '761234');
    const file = csv('twice.csv', [
      ['Désignation', 'GTIN', 'Libellé', 'Code', 'Marque', 'Marque commerciale'],
      ...g.map((x, i) => [`Produit ${i}`, x, `Libellé ${i}`, other[i]!, 'A', 'B']),
    ]);
    const d = await suggestMapping(file);
    expect(fields(d)).toEqual({
      Désignation: 'tradeItemName',
      GTIN: 'gtin',
      Libellé: undefined,
      Code: undefined,
      Marque: 'brandId',
      'Marque commerciale': undefined,
    });
    expect(column(d, 'Libellé').reason).toMatch(/tradeItemName, but that field is fed by column 1 "Désignation"/);
    expect(column(d, 'Code').reason).toMatch(/gtin, but that field is fed by column 2 "GTIN"/);
    expect(column(d, 'Marque commerciale').reason).toMatch(/brandId, but that field is fed by column 5 "Marque"/);
    const used = d.columns.filter((c) => c.field).map((c) => c.field);
    expect(new Set(used).size).toBe(used.length);
    parsed(d);
  });

  it("of names in several languages (`Nom [EN]`, `Nom [FR]`), the one in the sheet's language wins", async () => {
    const g = gtins(2);
    const file = csv('languages.csv', [
      ['Nom [EN]', 'Nom [FR]', 'Code-barres', 'Marque', 'Poids net'],
      ['Butter', 'Beurre', g[0]!, 'X', '1'],
      ['Cheese', 'Fromage', g[1]!, 'Y', '2'],
    ]);
    const d = await suggestMapping(file);
    expect(d.language).toBe('fr-FR');
    expect(fields(d)).toMatchObject({ 'Nom [EN]': undefined, 'Nom [FR]': 'tradeItemName' });
    const en = await suggestMapping(file, { language: 'en-US' });
    expect(fields(en)).toMatchObject({ 'Nom [EN]': 'tradeItemName', 'Nom [FR]': undefined });
  });

  it('a header found twice in the sheet is not mapped (a mapping could not name it), with its positions', async () => {
    const g = gtins(2);
    const file = csv('dup.csv', [
      ['EAN', 'Nom', 'Nom'],
      [g[0]!, 'A', 'a'],
      [g[1]!, 'B', 'b'],
    ]);
    const d = await suggestMapping(file);
    expect(d.columns.map((c) => c.field)).toEqual(['gtin', undefined, undefined]);
    expect(column(d, 'Nom').reason).toMatch(/on 2 columns \(2, 3\)/);
  });
});

describe('the draft reads back as a mapping', () => {
  it('headers that YAML would misread are quoted: the parsed mapping names each header exactly', async () => {
    const headers = [
      'GTIN',
      'Nom: court',
      '# code',
      '- tiret',
      '2024',
      'yes',
      'Poids "net"',
      'Désignation [fr]',
      '@at',
      'a, b',
    ];
    const g = gtins(2);
    const file = csv(
      'quoting.csv',
      [
        headers,
        [g[0]!, 'a', 'x', 'A', '1', 'y', '2', 'n', 'p', 'q'],
        [g[1]!, 'b', 'y', 'B', '2', 'n', '3', 'm', 'p', 'q'],
      ],
      '\t',
    );
    const d = await suggestMapping(file);
    // Map every header (the draft's own choices aside), then read the file back.
    const all: MappingDraft = {
      ...d,
      columns: d.columns.map((c, i) => ({
        ...c,
        field: i === 0 ? 'gtin' : `retailerCustomizedAttributes[${i}].retailerLabel`,
        type: undefined,
        lookup: undefined,
        split: undefined,
      })),
    };
    const m = parsed(all);
    expect(m.columns.map((c) => c.columns[0])).toEqual(headers);
  });

  it('the first line names the JSON Schema; unmatched headers are comments with their samples', async () => {
    const g = gtins(2);
    const file = csv('comments.csv', [
      ['EAN', 'Nom', 'Prix'],
      [g[0]!, 'A', '1,50'],
      [g[1]!, 'B', '2,00'],
    ]);
    const text = mappingText(await suggestMapping(file), { schemaRef: '../schemas/mapping.schema.json' });
    expect(text.split('\n')[0]).toBe('# yaml-language-server: $schema=../schemas/mapping.schema.json');
    expect(text).toMatch(
      /^ {2}# - \{ column: Prix, field: \? \} +# column 3; samples: "1,50", "2,00"; no field of the product API takes prices/m,
    );
  });

  it('finds the header row under group titles', async () => {
    const g = gtins(2);
    const file = await writeWorkbook(dir, 'grouped.xlsx', (wb) => {
      const ws = wb.addWorksheet('Fiche');
      ws.addRow(['Informations produit', null, null, 'Logistique']);
      ws.addRow(['EAN', 'Nom', 'Marque', 'Poids net']);
      ws.addRow([g[0], 'A', 'X', 1]);
      ws.addRow([g[1], 'B', 'Y', 2]);
    });
    const d = await suggestMapping(file);
    expect(d.headerRow).toBe(2);
    expect(fields(d)).toEqual({
      EAN: 'gtin',
      Nom: 'tradeItemName',
      Marque: 'brandId',
      'Poids net': 'netContents[0].value',
    });
    expect(d.notes.join('\n')).toMatch(/headers are on row 2/);
    expect(parsed(d).headerRow).toBe(2);
  });
});

describe('repeated headers: named by the title above them, else by occurrence', () => {
  it('group titles over repeated Valeur / Unité: the title and the header together give the field, the draft names them by group', async () => {
    const g = gtins(2);
    const file = csv('poids-groupes.csv', [
      ['', '', 'Poids net', '', 'Poids égoutté', ''],
      ['EAN', 'Désignation', 'Valeur', 'Unité', 'Valeur', 'Unité'],
      [g[0]!, 'Olives vertes', '350', 'g', '200', 'g'],
      [g[1]!, 'Cornichons', '0,5', 'kg', '300', 'g'],
    ]);
    const d = await suggestMapping(file);
    expect(d.headerRow).toBe(2);
    expect(d.columns.map((c) => [c.column ?? c.header, c.field])).toEqual([
      ['EAN', 'gtin'],
      ['Désignation', 'tradeItemName'],
      [{ header: 'Valeur', group: 'Poids net' }, 'netContents[0].value'],
      [{ header: 'Unité', group: 'Poids net' }, 'netContents[0].unitOfMeasure'],
      [{ header: 'Valeur', group: 'Poids égoutté' }, 'drainedNetWeight.value'],
      [{ header: 'Unité', group: 'Poids égoutté' }, 'drainedNetWeight.unitOfMeasure'],
    ]);
    const text = mappingText(d);
    expect(text).toMatch(
      /^ {2}- \{ column: \{ header: Valeur, group: Poids égoutté \}, field: drainedNetWeight\.value/m,
    );
    const m = parsed(d);
    expect(m.headerRow).toBe(2);
    const sheet = await openSheet(file, { headerRow: m.headerRow });
    expect(matchSheetHeaders(sheet, m)).toEqual([0, 1, 2, 3, 4, 5]);
  });

  it('without titles: a repeated header is named by occurrence when its values say its field, else left as a comment with that form', async () => {
    const g = gtins(3);
    const file = csv('repetes.csv', [
      ['EAN', 'Nom', 'Info', 'Info'],
      [g[0]!, 'A', 'France', 'x1'],
      [g[1]!, 'B', 'Italie', 'x2'],
      [g[2]!, 'C', 'Espagne', 'x3'],
    ]);
    const d = await suggestMapping(file, { target: 'manufacturedItem' });
    expect(d.columns[2]).toMatchObject({ column: { header: 'Info', occurrence: 1 }, field: 'countriesOfOrigin' });
    expect(d.columns[3]).toMatchObject({ column: { header: 'Info', occurrence: 2 } });
    expect(d.columns[3]!.field).toBeUndefined();
    const text = mappingText(d);
    expect(text).toMatch(/^ {2}- \{ column: \{ header: Info, occurrence: 1 \}, field: countriesOfOrigin/m);
    expect(text).toMatch(/^ {2}# - \{ column: \{ header: Info, occurrence: 2 \}, field: \? \}/m);
    const m = parsed(d);
    const sheet = await openSheet(file, {});
    expect(matchSheetHeaders(sheet, m)).toEqual([0, 1, 2]);
  });
});

describe('list labels from the reference API (the sandbox over HTTP)', () => {
  const { clients } = useSandboxClients();

  it('a column of labels found in a list gets that lookup, whatever its header; labels not found are flagged', async () => {
    const g = gtins(3);
    const file = csv('labels.csv', [
      ['EAN', 'Nom', 'Cycle de vie', 'Statut', 'Matière'],
      [g[0]!, 'A', 'Actif', 'A', 'Verre'],
      [g[1]!, 'B', 'Inactif', 'I', 'Papier'],
      [g[2]!, 'C', 'Brouillon', 'A', 'Carton'],
    ]);
    const d = await suggestMapping(file, { labels: referenceLabels(clients.reference) });
    expect(column(d, 'Cycle de vie')).toMatchObject({
      field: 'tradeItemStatusId',
      lookup: { list: 'trade-item-status' },
    });
    expect(column(d, 'Cycle de vie').reason).toMatch(/values are labels of the list trade-item-status/);
    expect(column(d, 'Matière')).toMatchObject({ field: 'packagingFormat', lookup: { list: 'packaging-materials' } });
    // "Statut" is the status by its header, but its A / I are no labels: taken after "Cycle de vie", so unmatched.
    expect(column(d, 'Statut').field).toBeUndefined();
    expect(column(d, 'Statut').reason).toMatch(/tradeItemStatusId, but that field is fed by column 3 "Cycle de vie"/);
    expect(d.notes.join('\n')).not.toMatch(/not checked/);
    parsed(d);
  });

  it('a status column by its header whose values are no labels is kept, with what to add', async () => {
    const g = gtins(2);
    const file = csv('codes.csv', [
      ['EAN', 'Nom', 'Statut'],
      [g[0]!, 'A', 'A'],
      [g[1]!, 'B', 'I'],
    ]);
    const d = await suggestMapping(file, { labels: referenceLabels(clients.reference) });
    expect(column(d, 'Statut')).toMatchObject({ field: 'tradeItemStatusId', lookup: { list: 'trade-item-status' } });
    expect(column(d, 'Statut').warning).toMatch(
      /"A", "I" are no label or code of the list trade-item-status in fr-FR, fr, en-US: add values:/,
    );
    expect(mappingText(d)).toMatch(/^ {2}# CHECK: "A", "I" are no label/m);
  });

  it('list values that will not resolve are listed in the draft with the nearest labels of the list', async () => {
    const g = gtins(6);
    const file = csv(
      'status-typos.csv',
      [
        ['EAN', 'Product name', 'Status'],
        [g[0]!, 'Oat cookies', 'active'],
        [g[1]!, 'Rye bread', 'active'],
        [g[2]!, 'Apple juice', 'draft'],
        [g[3]!, 'Cola', 'Actve'],
        [g[4]!, 'Tea', 'Inactive'],
        [g[5]!, 'Coffee', 'archived'],
      ],
      ',',
    );
    const d = await suggestMapping(file, { labels: referenceLabels(clients.reference) });
    const status = column(d, 'Status');
    expect(status).toMatchObject({ field: 'tradeItemStatusId', lookup: { list: 'trade-item-status' } });
    expect(status.warning).toMatch(/"Actve", "archived" are no label or code of the list trade-item-status in en-US/);
    expect(status.unresolved?.map((u) => u.value)).toEqual(['Actve', 'archived']);
    expect(status.unresolved).toEqual([
      { value: 'Actve', nearest: ['Active'] },
      { value: 'archived', nearest: [] },
    ]);
    const text = mappingText(d);
    expect(text).toMatch(/^ {2}# CHECK: "Actve", "archived" are no label/m);
    expect(text).toMatch(/^ {2}# {3}values no label of the list matches \(the run would reject their rows\):$/m);
    expect(text).toMatch(/^ {2}# {5}"Actve": nearest labels "Active"/m);
    expect(text).toMatch(/^ {2}# {5}"archived": no label close$/m);
    expect(text).toMatch(/^ {2}# {3}values: \{ "Actve": Active \} {3}# to check, then add to the column's line$/m);
    parsed(d);
  });

  it('nearest labels: a label the value begins or that begins it, then by edit distance, accents and case ignored', () => {
    const names = ['Active', 'Inactive', 'Discontinued', 'Draft', 'Arrêté'];
    expect(nearestLabels('Discont.', names)).toEqual(['Discontinued']);
    expect(nearestLabels('ARRETE', names)).toEqual(['Arrêté']);
    expect(nearestLabels('inactve', names)).toEqual(['Inactive']);
    expect(nearestLabels('zzz', names)).toEqual([]);
  });

  it('an API that does not answer: the check is skipped and the draft says so', async () => {
    const dead = createApiClients({
      productApiUrl: 'http://127.0.0.1:9',
      referenceApiUrl: 'http://127.0.0.1:9',
      credentials: { token: 't' },
      retry: { retries: 0 },
    });
    try {
      const g = gtins(2);
      const file = csv('dead.csv', [
        ['EAN', 'Nom', 'Statut'],
        [g[0]!, 'A', 'Actif'],
        [g[1]!, 'B', 'Inactif'],
      ]);
      const d = await suggestMapping(file, { labels: referenceLabels(dead.reference) });
      expect(column(d, 'Statut').field).toBe('tradeItemStatusId');
      expect(d.notes.join('\n')).toMatch(/list labels not checked: the reference API did not answer/);
    } finally {
      await dead.close();
    }
  });
});

/** A Shopify product export's header (Products → Export, CSV for Excel). */
const SHOPIFY_HEADER = [
  'Handle',
  'Title',
  'Body (HTML)',
  'Vendor',
  'Product Category',
  'Type',
  'Tags',
  'Published',
  'Option1 Name',
  'Option1 Value',
  'Variant SKU',
  'Variant Grams',
  'Variant Inventory Tracker',
  'Variant Inventory Qty',
  'Variant Price',
  'Variant Compare At Price',
  'Variant Requires Shipping',
  'Variant Taxable',
  'Variant Barcode',
  'Image Src',
  'SEO Title',
  'SEO Description',
  'Variant Weight Unit',
  'Status',
];

/** Rows of a Shopify export: `sku` and `barcode` per row, the rest as a shop writes it. */
function shopifyRows(skus: readonly string[], barcodes: readonly string[]): string[][] {
  const names = ['Oat cookies', 'Rye bread', 'Apple juice'];
  const sizes = ['400g', '750g', '"1,5 L"'];
  return names.map((name, i) => [
    name.toLowerCase().replace(' ', '-'),
    name,
    `<p>${name}</p>`,
    i === 2 ? 'Orchard Co' : 'Bakehouse',
    'Food',
    'Biscuits',
    '"vegan,oat"',
    'TRUE',
    'Size',
    sizes[i]!,
    skus[i]!,
    '400',
    'shopify',
    '12',
    '3.50',
    '4.00',
    'TRUE',
    'TRUE',
    barcodes[i]!,
    `https://cdn.example/${i}.jpg`,
    `${name} | Bakehouse`,
    `Buy ${name.toLowerCase()} baked fresh every morning`,
    'g',
    'active',
  ]);
}

describe('a Shopify product export', () => {
  it('Title is the name, Vendor the brand, Variant Barcode the GTIN key; SEO texts and shipping weights are no field', async () => {
    const file = csv(
      'products_export.csv',
      [SHOPIFY_HEADER, ...shopifyRows(['OAT-400', 'RYE-750', 'APL-15'], gtins(3))],
      ',',
    );
    const d = await suggestMapping(file);
    expect(d.language).toBe('en-US');
    expect(d.key).toBe('gtin');
    expect(fields(d)).toMatchObject({
      Title: 'tradeItemName',
      Vendor: 'brandId',
      'Variant Barcode': 'gtin',
      'Variant SKU': 'retailerIdentifiers',
      'SEO Title': undefined,
      'SEO Description': undefined,
      'Variant Taxable': undefined,
      'Variant Grams': undefined,
      'Variant Weight Unit': undefined,
    });
    expect(column(d, 'Vendor').lookup).toEqual({ brand: { create: true } });
    expect(column(d, 'Variant Barcode').reason).toMatch(/alias "Barcode" after "Variant"/);
    expect(column(d, 'SEO Description').reason).toMatch(/no field of the product API takes search engine texts/);
    expect(column(d, 'Variant Grams').reason).toMatch(/shipping weights/);
    const m = parsed(d);
    expect(m.columns.find((c) => c.field.path === 'gtin')?.columns).toEqual(['Variant Barcode']);
  });

  it('SKUs that pass a GTIN check digit do not take the key from the barcode column', async () => {
    const file = csv('products_export_skus.csv', [SHOPIFY_HEADER, ...shopifyRows(gtins(3, '400638'), gtins(3))], ',');
    const d = await suggestMapping(file);
    expect(fields(d)).toMatchObject({ 'Variant Barcode': 'gtin', 'Variant SKU': 'retailerIdentifiers' });
    expect(d.key).toBe('gtin');
  });
});

describe('what a header is not', () => {
  it('"Sale", "On sale", "Sale price" in an English sheet are no nutrition values (Italian "Sale" is salt)', async () => {
    const g = gtins(3);
    const file = csv(
      'sale.csv',
      [
        ['EAN', 'Product name', 'Sale', 'On sale', 'Sale price', 'Salt'],
        [g[0]!, 'Oat cookies', 'yes', 'no', '3.50', '0.4'],
        [g[1]!, 'Rye bread', 'no', 'yes', '2.50', '1.1'],
        [g[2]!, 'Apple juice', 'no', 'no', '1.99', '0'],
      ],
      ',',
    );
    const d = await suggestMapping(file);
    expect(d.language).toBe('en-US');
    for (const h of ['Sale', 'On sale', 'Sale price']) expect(column(d, h).reason).not.toMatch(/nutrition/);
    expect(column(d, 'Sale price').reason).toMatch(/prices/);
    expect(column(d, 'Salt').reason).toMatch(/no field of the product API takes nutrition values/);
  });

  it('in an Italian sheet "Sale" is still the salt of the nutrition values', async () => {
    const g = gtins(2);
    const file = csv('sale-it.csv', [
      ['Codice EAN', 'Nome prodotto', 'Marchio', 'Sale'],
      [g[0]!, 'Grissini', 'Forno', '1,2'],
      [g[1]!, 'Taralli', 'Forno', '0,9'],
    ]);
    const d = await suggestMapping(file);
    expect(d.language).toBe('it-IT');
    expect(column(d, 'Sale').reason).toMatch(/no field of the product API takes nutrition values/);
  });

  it('a typo is one letter in a long word, never in a short one or the first letter', async () => {
    const g = gtins(2);
    const file = csv('typos.csv', [
      ['Strichcod', 'Produt name', 'Brnd', 'Sizes', 'Rand'],
      [g[0]!, 'Oat cookies', 'Bakehouse', 'L', 'x'],
      [g[1]!, 'Rye bread', 'Bakehouse', 'M', 'y'],
    ]);
    const d = await suggestMapping(file);
    expect(column(d, 'Strichcod')).toMatchObject({ field: 'gtin' });
    expect(column(d, 'Produt name')).toMatchObject({ field: 'tradeItemName' });
    expect(column(d, 'Produt name').reason).toMatch(/header close to "Product name" \(a typo\?\)/);
    for (const h of ['Brnd', 'Rand']) expect(column(d, h).field).toBeUndefined();
  });
});

describe('a sheet without a GTIN column', () => {
  it('the draft says no GTIN column was found, which columns come close, and the line to add', async () => {
    const file = csv(
      'nokey.csv',
      [
        ['Code', 'Product name', 'Brand', 'Ref'],
        ['12345', 'Oat cookies', 'Bakehouse', '4006381333932'],
        ['12346', 'Rye bread', 'Bakehouse', '5000112637923'],
        ['12347', 'Apple juice', 'Orchard Co', '4006381333949'],
      ],
      ',',
    );
    const d = await suggestMapping(file);
    expect(d.key).toBe('gtin');
    expect(d.missingKey).toMatch(
      /^no GTIN column found: no header names one .* no column holds GTINs with valid check digits/,
    );
    expect(d.missingKey).toMatch(
      /"Ref" \(column 4: "4006381333932", "5000112637923"\) holds numbers of a GTIN length whose check digits fail/,
    );
    expect(d.missingKey).toMatch(/add the line - \{ column: <header of the GTINs>, field: gtin \} under columns/);
    expect(d.notes[0]).toBe(d.missingKey);
    const text = mappingText(d);
    expect(text).toMatch(/^# NOTE: no GTIN column found: /m);
    expect(text).toMatch(/^key: gtin {3}# no GTIN column found: see the NOTE above$/m);
    expect(text).toMatch(
      /^ {2}# - \{ column: <header of the GTINs>, field: gtin \} {3}# NO GTIN COLUMN FOUND: add this line/m,
    );
    expect(() => parsed(d)).toThrow(/key gtin needs a column with field gtin/);
  });
});

describe('the alias table and the field choices', () => {
  it('every field of the alias table is a field path of a manufactured item mapping; no header names two fields', () => {
    for (const a of FIELD_ALIASES)
      expect(typeof resolveFieldPath('manufacturedItem', a.field), a.field).not.toBe('string');
    const fold = (s: string) =>
      s
        .normalize('NFKD')
        .replace(/\p{M}/gu, '')
        .toLowerCase()
        .replace(/[^\p{L}\p{N}]+/gu, '');
    const owner = new Map<string, string>();
    const tables = [
      ...FIELD_ALIASES.map((a) => ({ id: a.field, aliases: a.aliases })),
      ...HEADERS_WITHOUT_FIELD.map((h) => ({ id: h.what, aliases: h.aliases })),
    ];
    for (const t of tables) {
      for (const names of Object.values(t.aliases)) {
        for (const n of names ?? []) {
          const prev = owner.get(fold(n));
          expect(prev === undefined || prev === t.id, `"${n}" names ${prev} and ${t.id}`).toBe(true);
          owner.set(fold(n), t.id);
        }
      }
    }
  });

  it('fieldChoices: the paths a target takes, common ones first, deprecated ones last, never the owner', () => {
    const trade = fieldChoices('tradeItem');
    const manu = fieldChoices('manufacturedItem');
    expect(trade.slice(0, 3)).toEqual(['gtin', 'tradeItemName', 'brandId']);
    for (const p of manu) expect(typeof resolveFieldPath('manufacturedItem', p), p).not.toBe('string');
    for (const p of trade) expect(typeof resolveFieldPath('tradeItem', p), p).not.toBe('string');
    expect(trade).not.toContain('countriesOfOrigin');
    expect(manu).toContain('countriesOfOrigin');
    expect(manu).not.toContain('ownerCompanyId');
    expect(manu).not.toContain('createdBy');
    expect(trade.indexOf('netContentValue')).toBeGreaterThan(trade.indexOf('variableWeight.unitOfMeasure'));
  });
});
