// The console mapper (issue 11, part 4): upload a sheet, change the suggested fields, preview, save under a name, run
// it.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasChromium, startConsoleStack, useChromium, type ConsoleStack } from '../helpers/console.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config } from '../../src/config.ts';
import { loadMapping } from '../../src/pipeline/map/mapping.ts';
import { mappingText, type MappingDraft } from '../../src/onboarding/suggest.ts';
import { writeWorkbook } from '../fixtures/sheets.ts';
import type { Preview } from '../../src/pipeline/run/preview.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { type RunningSandbox } from '../../src/sandbox/server.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { testGtin } from '../helpers/sheets.ts';

/** Where the browser test leaves its screenshot (test/.output/ is git-ignored). */
const OUTPUT = new URL('../.output/', import.meta.url).pathname;
let stack: ConsoleStack;
let sandbox: RunningSandbox;
let url: string;
let config: Config;
let dir: string;
let mappingsDir: string;
let sheet: string;

beforeAll(async () => {
  mappingsDir = mkdtempSync(join(tmpdir(), 'ps-mapper-mappings-'));
  stack = await startConsoleStack('mapper', { mappingsDir });
  ({ sandbox, url, config, dir } = stack);
  // French headers the suggestion knows, and one it does not ("Champ 7").
  sheet = join(dir, 'fromages.csv');
  writeFileSync(
    sheet,
    [
      'EAN;Désignation;Poids net;Unité;Statut;Champ 7',
      `${testGtin(1, '376098')};Comté AOP;250;g;Actif;lot A`,
      `${testGtin(2, '376098')};Roquefort;150;g;Actif;lot B`,
      `${testGtin(3, '376098')};Brie de Meaux;300;g;Inactif;lot C`,
    ].join('\n'),
  );
});
afterAll(async () => {
  await stack?.close();
});

/**
 * A workbook whose products are on its second visible sheet, under a title: the headers on row 2; a hidden sheet
 * between; a status the list does not know ("Actiff").
 */
const writeTarif = (): Promise<string> =>
  writeWorkbook(dir, 'tarif.xlsx', (wb) => {
    wb.addWorksheet('Lisez-moi').addRow(['Tarif 2025: voir la feuille Produits']);
    wb.addWorksheet('Brouillon', { state: 'hidden' }).addRow(['nope']);
    const ws = wb.addWorksheet('Produits');
    // A title band as wide as the table: the header row is found below it (mapping init reads a row as wide as it).
    ws.addRow(['Tarif fromages 2025', 'Fromagerie', 'Édition', 'Mars', 'Page 1']);
    ws.addRow(['EAN', 'Désignation', 'Poids net', 'Statut', 'Champ 7']);
    ws.addRow([testGtin(11, '376098'), 'Comté AOP', '1,5', 'Actiff', '01.03.2025']);
    ws.addRow([testGtin(12, '376098'), 'Roquefort', '0,25', 'Actif', '15.04.2025']);
  });

const mapperFiles = () => readdirSync(join(config.UPLOAD_DIR, '.mapper'));

async function uploadSheet(body: Buffer, name: string, fields: Record<string, string> = {}): Promise<Response> {
  const form = new FormData();
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([body]), name);
  return fetch(`${url}/mapper/sheets`, { method: 'POST', body: form });
}

const post = (path: string, body: unknown): Promise<Response> =>
  fetch(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

interface Suggested {
  sheet: string;
  fileName: string;
  draft: MappingDraft;
  choices: string[];
  settings: Record<string, { type?: string; lookup?: unknown }>;
  sheets?: string[];
  types: string[];
  fieldTypes: Record<string, string>;
  listFields: string[];
}

/** `product-sync mapping init <file> --sandbox --out -`: the draft it prints, as a user runs it. */
async function mappingInit(file: string): Promise<string> {
  const r = await cliInProcess(['mapping', 'init', file, '--sandbox', '--out', '-'], {
    cwd: dir,
    env: { LOG_LEVEL: 'error' },
    unset: ['PRODUCT_API_URL', 'REFERENCE_API_URL', 'API_TOKEN', 'REDIS_URL', 'OWNER_COMPANY_ID'],
  });
  expect(r.code, r.stderr).toBe(0);
  return r.stdout;
}

/** The `columns:` lines of a mapping file that map a column, without their comment (the why differs). */
const columnLines = (text: string): string[] =>
  text
    .split('\n')
    .filter((l) => l.startsWith('  - {'))
    .map((l) => l.replace(/ }\s+#.*$/, ' }'));

describe('console mapper over HTTP', () => {
  it('suggests a field for each header, previews a draft, saves it under a name only, and refuses paths and invalid mappings', async () => {
    const res = await uploadSheet(readFileSync(sheet), 'Fromages Été.csv');
    expect(res.status).toBe(201);
    const s = (await res.json()) as Suggested;
    expect(s.sheet).toMatch(/^[0-9a-f-]{36}\.csv$/);
    expect(s.fileName).toBe('Fromages Été.csv');
    expect(s.draft.name).toBe('fromages-ete');
    const fieldOf = (header: string) => s.draft.columns.find((c) => c.header === header)?.field;
    expect([fieldOf('EAN'), fieldOf('Désignation'), fieldOf('Statut'), fieldOf('Champ 7')]).toEqual([
      'gtin',
      'tradeItemName',
      'tradeItemStatusId',
      undefined,
    ]);
    expect(s.draft.columns.find((c) => c.header === 'Champ 7')!.samples).toEqual(['lot A', 'lot B', 'lot C']);
    expect(s.choices.slice(0, 2)).toEqual(['gtin', 'tradeItemName']);
    expect(s.choices).toContain('comments[0].value');
    // A field picked by hand is read as it usually is: a status column is a list lookup.
    expect(s.settings.tradeItemStatusId).toEqual({ lookup: { list: 'trade-item-status' } });
    expect(mapperFiles()).toEqual([s.sheet]);

    // The preview of the draft: labels resolved; a changed field changes it.
    const first = await post('/mapper/preview', { sheet: s.sheet, draft: s.draft, rows: 2 });
    expect(first.status).toBe(200);
    const p1 = (await first.json()) as { preview: Preview; text: string };
    expect(p1.preview).toMatchObject({ file: s.sheet, rowsRequested: 2, more: true, counts: { valid: 2, invalid: 0 } });
    expect(p1.preview.rows[0]!.fields.find((f) => f.field === 'tradeItemStatusId')!.resolved![0]).toMatchObject({
      value: 'Actif',
      label: 'Actif',
    });
    expect(p1.text).toContain('lookup: { list: trade-item-status }');
    const changed = {
      ...s.draft,
      columns: s.draft.columns.map((c) => (c.header === 'Champ 7' ? { ...c, field: 'comments[0].value' } : c)),
    };
    const p2 = (await (await post('/mapper/preview', { sheet: s.sheet, draft: changed, rows: 2 })).json()) as {
      preview: Preview;
    };
    expect(p2.preview.rows[1]!.fields.find((f) => f.field === 'comments[0].value')).toMatchObject({
      column: 'Champ 7',
      sheetValue: 'lot B',
      mapped: 'lot B',
    });

    // Never a path: neither for the sheet nor for the mapping's name.
    expect((await post('/mapper/preview', { sheet: '../../etc/passwd', draft: s.draft })).status).toBe(400);
    expect(
      (await post('/mapper/preview', { sheet: '00000000-0000-4000-8000-000000000000.csv', draft: s.draft })).status,
    ).toBe(404);
    for (const name of ['../x', 'a/b', '.hidden', '', 'x'.repeat(65), 'x.yaml']) {
      const refused = await post('/mapper/mappings', { name, draft: changed });
      expect(refused.status, name).toBe(400);
      expect(((await refused.json()) as { problems: { path: string }[] }).problems[0]!.path).toBe('name');
    }
    expect(existsSync(join(mappingsDir, '..', 'x.yaml'))).toBe(false);
    // Nor YAML of its own through what the file writes unquoted.
    const injected = {
      ...s.draft,
      columns: s.draft.columns.map((c) =>
        c.header === 'Champ 7' ? { ...c, field: 'comments[0].value', type: 'string }\nownerCompanyId: x' } : c,
      ),
    };
    const refusedType = await post('/mapper/mappings', { name: 'injected', draft: injected });
    expect(refusedType.status).toBe(400);
    expect(((await refusedType.json()) as { problems: { path: string }[] }).problems[0]!.path).toBe(
      'draft.columns.5.type',
    );

    // An invalid mapping (one field on two columns): 400 with the problems, in preview and save alike.
    const twice = {
      ...s.draft,
      columns: s.draft.columns.map((c) => (c.header === 'Champ 7' ? { ...c, field: 'gtin' } : c)),
    };
    for (const [path, body] of [
      ['/mapper/preview', { sheet: s.sheet, draft: twice }],
      ['/mapper/mappings', { name: 'twice', draft: twice }],
    ] as const) {
      const bad = await post(path, body);
      expect(bad.status, path).toBe(400);
      const out = (await bad.json()) as { error: string; problems: { line: number; path: string; message: string }[] };
      expect(out.error).toBe('invalid mapping');
      expect(out.problems).toEqual([
        expect.objectContaining({ path: 'columns[5].field', message: 'gtin is already fed by columns[0]' }),
      ]);
    }

    const saved = await post('/mapper/mappings', { name: 'fromages', draft: changed });
    expect(saved.status).toBe(201);
    expect(await saved.json()).toMatchObject({ name: 'fromages', file: 'fromages.yaml', replaced: false });
    const m = await loadMapping('fromages', { mappingsDir });
    expect(m.name).toBe('fromages');
    expect(m.columns.map((c) => c.field.path)).toContain('comments[0].value');
    // Not replaced unless asked.
    const again = await post('/mapper/mappings', { name: 'fromages', draft: s.draft });
    expect(again.status).toBe(409);
    expect(readFileSync(join(mappingsDir, 'fromages.yaml'), 'utf8')).toContain('comments[0].value');
    const replaced = await post('/mapper/mappings', { name: 'fromages', draft: s.draft, overwrite: true });
    expect(replaced.status).toBe(200);
    expect(readFileSync(join(mappingsDir, 'fromages.yaml'), 'utf8')).not.toContain('comments[0].value');
    expect(readdirSync(mappingsDir)).toEqual(['fromages.yaml']);
    expect(((await (await fetch(`${url}/mappings`)).json()) as { mappings: string[] }).mappings).toEqual(['fromages']);
  });

  it('lists the visible worksheets of a workbook, suggests for the sheet and header row chosen, and saves types, formats and value maps as mapping init writes them', async () => {
    const book = await writeTarif();
    // No choice yet: the first visible sheet is read, and the page is offered the visible ones (not the hidden one).
    const first = (await (await uploadSheet(readFileSync(book), 'Tarif.xlsx')).json()) as Suggested;
    expect(first.sheets).toEqual(['Lisez-moi', 'Produits']);
    expect(first.types).toContain('quantity');
    expect(first.fieldTypes).toMatchObject({ gtin: 'gtin', tradeItemName: 'string' });

    const res = await uploadSheet(readFileSync(book), 'Tarif.xlsx', { sheet: 'Produits', headerRow: '2' });
    expect(res.status).toBe(201);
    const s = (await res.json()) as Suggested;
    expect(s.sheets).toEqual(['Lisez-moi', 'Produits']);
    expect(s.draft).toMatchObject({ sheet: 'Produits', headerRow: 2 });
    const col = (header: string) => s.draft.columns.find((c) => c.header === header)!;
    expect([col('EAN').field, col('Désignation').field]).toEqual(['gtin', 'tradeItemName']);
    // "Actiff" is no label of the status list: listed with the nearest labels.
    expect(col('Statut').unresolved?.map((u) => u.value)).toEqual(['Actiff']);
    expect(s.draft.missingKey).toBeUndefined();

    // The choices a person makes on the page: a type and a date format, a decimal separator, a value map.
    const draft: MappingDraft = {
      ...s.draft,
      columns: s.draft.columns.map((c) => {
        if (c.header === 'Champ 7')
          return {
            ...c,
            field: 'seasonalAvailabilityStartDate',
            type: 'date',
            format: 'dd.mm.yyyy',
            reason: 'chosen here',
          };
        if (c.header === 'Poids net') return { ...c, field: 'netContents[0].value', type: 'decimal', decimal: ',' };
        if (c.header === 'Statut') return { ...c, values: { Actiff: 'Actif', 'Quote "x": y': 'Inactif' } };
        return c;
      }),
    };
    const preview = (await (await post('/mapper/preview', { sheet: s.sheet, draft })).json()) as { preview: Preview };
    const row1 = preview.preview.rows[0]!;
    expect(row1.fields.find((f) => f.field === 'seasonalAvailabilityStartDate')!.mapped).toBe('2025-03-01');
    expect(row1.fields.find((f) => f.field === 'netContents[0].value')!.mapped).toBe('1.5');
    expect(row1.fields.find((f) => f.field === 'tradeItemStatusId')!.resolved![0]).toMatchObject({ label: 'Actif' });

    const saved = await post('/mapper/mappings', { name: 'tarif', draft });
    expect(saved.status).toBe(201);
    // What is saved is what `mapping init` writes for the same choices: the same serializer, byte for byte.
    const text = readFileSync(join(mappingsDir, 'tarif.yaml'), 'utf8');
    expect(text).toBe(mappingText({ ...draft, name: 'tarif' }));
    expect(text).toContain('sheet: Produits');
    expect(text).toContain('headerRow: 2');
    expect(text).toContain('values: { "Actiff": "Actif", "Quote \\"x\\": y": "Inactif" }');
    const m = await loadMapping('tarif', { mappingsDir });
    expect(m).toMatchObject({ sheet: 'Produits', headerRow: 2 });
    const mc = (path: string) => m.columns.find((c) => c.field.path === path)!;
    expect(mc('seasonalAvailabilityStartDate')).toMatchObject({ type: 'date', format: 'dd.mm.yyyy' });
    expect(mc('netContents[0].value')).toMatchObject({ type: 'decimal', decimal: ',' });
    expect([...mc('tradeItemStatusId').values!.values()]).toEqual(['Actif', 'Inactif']);
    // A header row that is not a row number: 400.
    expect((await uploadSheet(readFileSync(book), 'Tarif.xlsx', { headerRow: 'x' })).status).toBe(400);
  });

  it('saves a column typed as a quantity, and a list column, as mapping init writes them for the same sheet', async () => {
    // "400g" / "1,5 L": mapping init reads the net content as a quantity (its unit split off, the Unit column left),
    // the item codes as a list split on "|".
    const file = join(dir, 'quantities.csv');
    writeFileSync(
      file,
      [
        'EAN;Product name;Net content;Unit;Item codes',
        `${testGtin(21, '400638')};Oat milk;1,5 L;L;A-1|B-2`,
        `${testGtin(22, '400638')};Rice;400g;g;R-9`,
        `${testGtin(23, '400638')};Flour;1 kg;kg;F-1|F-2`,
      ].join('\n'),
    );
    const init = await mappingInit(file);
    expect(init).toContain('{ column: Net content, field: "netContents[0]", type: quantity }');
    expect(init).toContain('{ column: Item codes, field: retailerIdentifiers, type: identifier, split: "|" }');

    const s = (await (await uploadSheet(readFileSync(file), 'quantities.csv')).json()) as Suggested;
    expect(s.listFields).toEqual(['retailerIdentifiers']);
    // The choices a person makes by hand: the net content picked as its value field, its unit column as the unit, the
    // item codes' field picked from the list (no separator yet); then the net content's type set to quantity.
    const byHand = (field: string) => ({ ...s.settings[field], field, reason: 'chosen here' });
    const strip = ({ header, position, samples }: MappingDraft['columns'][number]) => ({ header, position, samples });
    const picked: MappingDraft = {
      ...s.draft,
      columns: s.draft.columns.map((c) => {
        if (c.header === 'Net content') return { ...strip(c), field: 'netContents[0].value', type: 'quantity' };
        if (c.header === 'Unit') return { ...strip(c), field: 'netContents[0].unitOfMeasure', reason: 'chosen here' };
        if (c.header === 'Item codes') return { ...strip(c), ...byHand('retailerIdentifiers') };
        return c;
      }),
    };
    const preview = await post('/mapper/preview', { sheet: s.sheet, draft: picked });
    expect(preview.status).toBe(200);
    const p = (await preview.json()) as { preview: Preview; draft: MappingDraft; text: string };
    const col = (d: MappingDraft, header: string) => d.columns.find((c) => c.header === header)!;
    // The draft as the page now shows it: the net content field with its unit split, the unit column left unmapped.
    expect(col(p.draft, 'Net content')).toMatchObject({ field: 'netContents[0]', type: 'quantity' });
    expect(col(p.draft, 'Unit').field).toBeUndefined();
    expect(col(p.draft, 'Unit').reason).toMatch(/netContents\[0\]\.unitOfMeasure is given by column 3 "Net content"/);
    expect(col(p.draft, 'Item codes').split).toBe('|');
    const row2 = p.preview.rows.find((r) => r.row === 2)!;
    expect(row2.fields.find((f) => f.field === 'netContents[0].value')!.mapped).toBe('1.5');
    expect(row2.fields.find((f) => f.field === 'retailerIdentifiers')!.mapped).toEqual(['A-1', 'B-2']);

    const saved = await post('/mapper/mappings', { name: 'quantities', draft: picked });
    expect(saved.status).toBe(201);
    const text = readFileSync(join(mappingsDir, 'quantities.yaml'), 'utf8');
    expect(columnLines(text)).toEqual(columnLines(init));
    const [mine, theirs] = [text, init].map((t) =>
      t.split('\n').filter((l) => /^[a-zA-Z]/.test(l) && !/^name:/.test(l)),
    );
    expect(mine).toEqual(theirs);
    const m = await loadMapping('quantities', { mappingsDir });
    expect(m.columns.find((c) => c.columns[0] === 'Net content')!.field).toMatchObject({
      path: 'netContents[0]',
      unit: { path: 'netContents[0].unitOfMeasure' },
    });

    // Without the sheet-wide separator the column says its own; a quantity typed back as a number feeds the value;
    // a separator emptied by the person stays empty.
    const { decimalSeparator: _, ...own } = picked;
    const alone = (await (await post('/mapper/preview', { sheet: s.sheet, draft: own })).json()) as {
      draft: MappingDraft;
    };
    expect(col(alone.draft, 'Net content')).toMatchObject({ field: 'netContents[0]', decimal: ',' });
    const back = {
      ...p.draft,
      columns: p.draft.columns.map((c) => {
        if (c.header === 'Net content') return { ...c, type: 'decimal' };
        if (c.header === 'Item codes') return { ...c, split: '' };
        return c;
      }),
    };
    const again = (await (await post('/mapper/preview', { sheet: s.sheet, draft: back })).json()) as {
      draft: MappingDraft;
      text: string;
    };
    expect(col(again.draft, 'Net content')).toMatchObject({ field: 'netContents[0].value', type: 'decimal' });
    expect(again.text).toContain('{ column: Item codes, field: retailerIdentifiers, type: identifier }');
  });

  it('says when no GTIN key column was found', async () => {
    const res = await uploadSheet(Buffer.from('Désignation;Prix\nComté;12\nBrie;9\n'), 'sans-ean.csv');
    expect(res.status).toBe(201);
    const s = (await res.json()) as Suggested;
    expect(s.draft.missingKey).toMatch(/GTIN/);
    expect(s.sheets).toBeUndefined();
  });

  it('keeps no refused upload', async () => {
    const before = mapperFiles();
    // A file type `import` refuses: 400 with its message (the client's file name) and code, as every refused sheet.
    const html = await uploadSheet(Buffer.from('<html><body>x</body></html>'), 'x.xlsx');
    expect(html.status).toBe(400);
    expect(await html.json()).toEqual({
      error: expect.stringMatching(/^x\.xlsx: this is an HTML or XML page/),
      code: 'PS_ERR_FILE_TYPE',
    });
    expect((await uploadSheet(Buffer.alloc(2 * 1024 * 1024, 'a'), 'big.csv')).status).toBe(413);
    expect((await uploadSheet(readFileSync(sheet), 'ok.csv', { target: 'recipe' })).status).toBe(400);
    const headerless = await uploadSheet(Buffer.from('\n\n'), 'empty.csv');
    expect(headerless.status).toBe(400);
    expect(((await headerless.json()) as { error: string }).error).toContain('empty.csv');
    expect(mapperFiles()).toEqual(before);
  });

  it('forgets sheets older than a day at the next upload', async () => {
    const old = join(config.UPLOAD_DIR, '.mapper', '11111111-1111-4111-8111-111111111111.csv');
    writeFileSync(old, readFileSync(sheet));
    const twoDaysAgo = new Date(Date.now() - 2 * 24 * 3600_000);
    utimesSync(old, twoDaysAgo, twoDaysAgo);
    const res = await uploadSheet(readFileSync(sheet), 'fresh.csv');
    expect(res.status).toBe(201);
    expect(existsSync(old)).toBe(false);
    expect(mapperFiles()).toContain(((await res.json()) as Suggested).sheet);
  });
});

describe('console mapper in a browser', () => {
  // One browser for both tests: a page of its own each.
  const inChromium = useChromium({ viewport: { width: 1280, height: 900 } });
  it.runIf(hasChromium)(
    'uploads a sheet, changes a suggested field, sees the preview follow, saves the mapping and runs it',
    async () => {
      await inChromium(async (browser) => {
        const page = await browser.newPage();
        await page.goto(url);
        await page.click('#mapper-link');
        await page.setInputFiles('#mapper-file', sheet);
        await page.click('#suggest');
        await page.waitForSelector('#suggest-message.ok');
        const select = (header: string) => page.locator(`#columns tr[data-header="${header}"] select.field`);
        expect(await select('EAN').inputValue()).toBe('gtin');
        expect(await select('Désignation').inputValue()).toBe('tradeItemName');
        expect(await select('Champ 7').inputValue()).toBe('');
        expect(await page.locator('#columns tr[data-header="Champ 7"] .samples').textContent()).toBe(
          'lot A · lot B · lot C',
        );

        // The preview shows the labels resolved; mapping "Champ 7" adds its field to every row.
        const row2 = page.locator('#preview section[data-row="2"]');
        await row2
          .locator('tr[data-field="tradeItemStatusId"] .resolved')
          .getByText(/^Actif \[[0-9a-f]{8}\]$/)
          .waitFor();
        expect(await row2.locator('tr[data-field="comments[0].value"]').count()).toBe(0);
        await select('Champ 7').selectOption('comments[0].value');
        await row2.locator('tr[data-field="comments[0].value"] .mapped').getByText('lot A').waitFor();
        expect(await page.locator('#mapping-text').textContent()).toContain(
          '{ column: Champ 7, field: "comments[0].value" }',
        );
        expect(await page.locator('#preview-status').textContent()).toMatch(/^3 rows: 3 valid, 0 invalid/);

        // A type change (the net weight read as an integer, decimal separator offered) and a value map on the status.
        const settings = (header: string) => page.locator(`#columns tr[data-header="${header}"] .settings`);
        await settings('Poids net').locator('select.type').selectOption('integer');
        await settings('Poids net').locator('select.decimal').waitFor();
        await settings('Statut').locator('details.values summary').click();
        await settings('Statut').locator('button.add-pair').click();
        await settings('Statut').locator('input.vkey').fill('Inactif');
        await settings('Statut').locator('input.vval').fill('Actif');
        await settings('Statut').locator('input.vval').press('Tab');
        // The mapping file is in a closed <details>: its text is polled, not waited for as visible.
        await expect
          .poll(() => page.locator('#mapping-text').textContent())
          .toContain('values: { "Inactif": "Actif" }');
        expect(await page.locator('#mapping-text').textContent()).toMatch(
          /field: "netContents\[0\]\.value", type: integer/,
        );
        await page
          .locator('#preview section[data-row="4"] tr[data-field="tradeItemStatusId"] .mapped')
          .getByText('Actif', { exact: true })
          .waitFor();
        expect(await page.locator('#missing-key').isHidden()).toBe(true);

        // Saved under a name, then run through the queue with it.
        await page.fill('#mapping-name', 'fromages-e2e');
        await page.click('#save');
        await page.waitForSelector('#save-message.ok');
        expect(existsSync(join(mappingsDir, 'fromages-e2e.yaml'))).toBe(true);
        await page.click('#run');
        const outcome = page.locator('#run-outcome .outcome');
        await outcome.waitFor({ timeout: 30_000 });
        expect(await outcome.textContent()).toBe('created 3 · updated 0 · unchanged 0 · invalid 0 · failed 0 (exit 0)');
        const stored = sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === DEMO_COMPANY_ID);
        expect(stored.map((t) => (t.comments as { value?: string }[] | undefined)?.[0]?.value).sort()).toEqual([
          'lot A',
          'lot B',
          'lot C',
        ]);
        expect(readFileSync(join(mappingsDir, 'fromages-e2e.yaml'), 'utf8')).toContain(
          'values: { "Inactif": "Actif" }',
        );
        mkdirSync(OUTPUT, { recursive: true });
        await page.screenshot({ path: join(OUTPUT, 'console-mapper.png'), fullPage: true });

        // A string: the test's TypeScript has no DOM types.
        const scrollWidth = async () => Number(await page.evaluate('document.documentElement.scrollWidth'));
        // The page fits 1280 px and, its columns stacked, 390 px: no horizontal scrolling.
        expect(await scrollWidth()).toBeLessThanOrEqual(1280);
        await page.setViewportSize({ width: 390, height: 844 });
        expect(await scrollWidth()).toBeLessThanOrEqual(390);
        await page.screenshot({ path: join(OUTPUT, 'console-mapper-390.png'), fullPage: true });
      });
    },
    60_000,
  );

  it.runIf(hasChromium)(
    'picks the worksheet and header row of a workbook, shows the missing key and the unresolved values, maps one',
    async () => {
      const book = await writeTarif();
      await inChromium(async (browser) => {
        const page = await browser.newPage();
        await page.goto(`${url}/mapper`);
        await page.setInputFiles('#mapper-file', book);
        await page.click('#suggest');
        await page.waitForSelector('#suggest-message.ok');
        // The first visible sheet is a read-me: the products' sheet is taken (issue 39), its header row found (2), the
        // key column with it.
        expect(await page.locator('#sheet-choice option').allTextContents()).toEqual(['Lisez-moi', 'Produits']);
        await page.locator('#columns tr[data-header="EAN"]').waitFor();
        expect(await page.inputValue('#sheet-choice')).toBe('Produits');
        expect(await page.inputValue('#header-row')).toBe('2');
        expect(await page.locator('#missing-key').isHidden()).toBe(true);
        expect(await page.inputValue('#columns tr[data-header="EAN"] select.field')).toBe('gtin');

        // "Actiff" is no status label: listed with the nearest labels; mapped to the nearest one by its button.
        const status = page.locator('#columns tr[data-header="Statut"] .settings');
        expect(await status.locator('ul.unresolved').textContent()).toMatch(/^Actiff: nearest /);
        const use = status.locator('button.use-nearest');
        const label = (await use.getAttribute('data-label'))!;
        await use.click();
        await expect
          .poll(() => page.locator('#mapping-text').textContent())
          .toContain(`values: { "Actiff": ${JSON.stringify(label)} }`);
        expect(await page.locator('#mapping-text').textContent()).toContain('sheet: Produits');

        // The net weight typed as a quantity: the net content with its unit split, as mapping init writes one.
        const weight = page.locator('#columns tr[data-header="Poids net"]');
        await weight.locator('select.type').selectOption('quantity');
        await expect
          .poll(() => page.locator('#mapping-text').textContent())
          .toContain('{ column: Poids net, field: "netContents[0]", type: quantity');
        await expect.poll(() => weight.locator('select.field').inputValue()).toBe('netContents[0]');
        // A list field's column takes a list separator.
        const other = page.locator('#columns tr[data-header="Champ 7"]');
        await other.locator('select.field').selectOption('retailerIdentifiers');
        await other.locator('input.split').fill('|');
        await other.locator('input.split').press('Tab');
        await expect
          .poll(() => page.locator('#mapping-text').textContent())
          .toMatch(/field: retailerIdentifiers, .*split: "\|"/);

        // A header row typed by hand: the title row names no field, so no key either.
        await page.fill('#header-row', '1');
        await page.locator('#header-row').press('Enter');
        await page
          .locator('#missing-key')
          .getByText(/No GTIN key column found/)
          .waitFor();

        // The read-me chosen by hand: no GTIN column, said by the banner.
        await page.selectOption('#sheet-choice', 'Lisez-moi');
        await page
          .locator('#missing-key')
          .getByText(/No GTIN key column found/)
          .waitFor();
      });
    },
    60_000,
  );
});
