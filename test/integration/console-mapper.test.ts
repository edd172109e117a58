// The console mapper (issue 11, part 4): upload a sheet, change the suggested fields, preview, save under a name, run
// it.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { hasChromium, startConsoleStack, withChromium, type ConsoleStack } from '../helpers/console.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config } from '../../src/config.ts';
import { loadMapping } from '../../src/pipeline/map/mapping.ts';
import type { MappingDraft } from '../../src/onboarding/suggest.ts';
import type { Preview } from '../../src/pipeline/run/preview.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { type RunningSandbox } from '../../src/sandbox/server.ts';
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
}

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
  it.runIf(hasChromium)(
    'uploads a sheet, changes a suggested field, sees the preview follow, saves the mapping and runs it',
    async () => {
      await withChromium({ viewport: { width: 1280, height: 900 } }, async (browser) => {
        const page = browser.pages()[0] ?? (await browser.newPage());
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
        mkdirSync(OUTPUT, { recursive: true });
        await page.screenshot({ path: join(OUTPUT, 'console-mapper.png'), fullPage: true });
      });
    },
    60_000,
  );
});
