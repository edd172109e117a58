import { readdirSync, readFileSync } from 'node:fs';
import { basename } from 'node:path';
import { hasChromium, startConsoleStack, withChromium, type ConsoleStack } from '../helpers/console.ts';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Config } from '../../src/config.ts';
import { buildConsole } from '../../src/server/app.ts';

const sample = new URL('../../samples/epicerie-fine.csv', import.meta.url).pathname;
let stack: ConsoleStack;
let url: string;
let config: Config;

beforeAll(async () => {
  stack = await startConsoleStack('console');
  ({ url, config } = stack);
});
afterAll(async () => {
  await stack?.close();
});

async function upload(
  body: Buffer,
  name: string,
  mapping: string,
  fields: Record<string, string> = {},
): Promise<Response> {
  const form = new FormData();
  form.append('mapping', mapping);
  for (const [k, v] of Object.entries(fields)) form.append(k, v);
  form.append('file', new Blob([body]), name);
  return fetch(`${url}/uploads`, { method: 'POST', body: form });
}

async function finished(
  id: string,
): Promise<{ state: string; result: { runId: string; summary: { counts: Record<string, number> } } }> {
  for (let i = 0; i < 200; i++) {
    const s = (await (await fetch(`${url}/runs/${id}`)).json()) as {
      state: string;
      result: { runId: string; summary: { counts: Record<string, number> } };
    };
    if (s.state === 'completed' || s.state === 'failed') return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('run did not finish');
}

describe('web console', () => {
  it('takes an upload, runs it through the queue, serves its reports, and refuses what it must', async () => {
    const res = await upload(readFileSync(sample), '../../etc/passwd.csv', 'epicerie-fine');
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const run = await finished(id);
    expect(run.state).toBe('completed');
    expect(run.result.summary.counts.rows).toBe(30);
    const status = (await (await fetch(`${url}/runs/${id}`)).json()) as { fileName: string; file: string };
    // The client's name is shown (multipart strips its path), never used to store the file.
    expect(status.fileName).toBe('passwd.csv');
    expect(status.file).not.toContain('passwd');
    const rows = await fetch(`${url}/runs/${id}/files/rows.csv`);
    expect(rows.status).toBe(200);
    expect((await rows.text()).split('\n')[0]).toContain('row,key,outcome');
    expect((await fetch(`${url}/runs/${id}/files/state.json`)).status).toBe(404);
    expect((await fetch(`${url}/runs/${id}/files/..%2F..%2Fsummary.json`)).status).toBe(404);
    expect((await upload(readFileSync(sample), 'again.csv', 'epicerie-fine')).status).toBe(200);
    expect((await upload(Buffer.from('<html><body>x</body></html>'), 'x.xlsx', 'epicerie-fine')).status).toBe(400);
    expect((await upload(readFileSync(sample), 'y.csv', 'no-such-mapping')).status).toBe(400);
    expect((await upload(readFileSync(sample), 'y.csv', '../mappings/epicerie-fine')).status).toBe(400);
    expect((await upload(readFileSync(sample), 'y.csv', 'epicerie-fine', { owner: 'acme' })).status).toBe(400);
    expect((await upload(readFileSync(sample), 'y.csv', 'epicerie-fine', { mode: 'sometimes' })).status).toBe(400);
    expect((await upload(Buffer.alloc(2 * 1024 * 1024, 'a'), 'big.csv', 'epicerie-fine')).status).toBe(413);
    // Only the one accepted sheet is kept: refused uploads and a second copy of a queued sheet are deleted.
    expect(readdirSync(config.UPLOAD_DIR).filter((f) => !f.startsWith('.'))).toEqual([basename(status.file)]);
    expect(((await (await fetch(`${url}/mappings`)).json()) as { mappings: string[] }).mappings).toContain(
      'epicerie-fine',
    );
    expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: 'ok' });
    expect((await fetch(`${url}/admin/queues`)).status).toBe(200);
  });

  it('asks for the token when one is configured', async () => {
    const guarded = await buildConsole({ config, token: 's3cret' });
    try {
      expect((await guarded.inject({ url: '/runs' })).statusCode).toBe(401);
      expect((await guarded.inject({ url: '/runs', headers: { authorization: 'Bearer s3cret' } })).statusCode).toBe(
        200,
      );
      expect((await guarded.inject({ url: '/health' })).statusCode).toBe(200);
    } finally {
      await guarded.close();
    }
    const basic = await buildConsole({ config, basic: { user: 'steward', password: 'p:ss' } });
    const header = (user: string, password: string) => ({
      authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
    });
    try {
      const refused = await basic.inject({ url: '/' });
      expect(refused.statusCode).toBe(401);
      expect(refused.headers['www-authenticate']).toMatch(/^Basic /);
      expect((await basic.inject({ url: '/', headers: header('steward', 'wrong') })).statusCode).toBe(401);
      expect((await basic.inject({ url: '/', headers: header('steward', 'p:ss') })).statusCode).toBe(200);
      expect((await basic.inject({ url: '/admin/queues', headers: header('steward', 'p:ss') })).statusCode).toBe(200);
    } finally {
      await basic.close();
    }
  });

  it.runIf(hasChromium)(
    'lets a person upload a sheet, watch the run and download the report in a browser',
    async () => {
      await withChromium({ acceptDownloads: true }, async (browser) => {
        const page = browser.pages()[0] ?? (await browser.newPage());
        await page.goto(url);
        await page.waitForSelector('#mapping option', { state: 'attached' });
        await page.selectOption('#mapping', 'fournisseur-produits');
        await page.setInputFiles('#file', new URL('../../samples/fournisseur-produits.xlsx', import.meta.url).pathname);
        await page.click('#send');
        await page.waitForSelector('#message.ok');
        const cell = page.locator('tr', { hasText: 'fournisseur-produits.xlsx' }).locator('.outcome');
        await cell.getByText(/created \d+/).waitFor({ timeout: 30_000 });
        expect(await cell.textContent()).toMatch(/exit [01]/);
        expect(
          await page.locator('tr', { hasText: 'fournisseur-produits.xlsx' }).locator('.progress').textContent(),
        ).toMatch(/^done · \d+ rows/);
        const [download] = await Promise.all([
          page.waitForEvent('download'),
          page.locator('tr', { hasText: 'fournisseur-produits.xlsx' }).getByText('rows.csv').click(),
        ]);
        expect(download.suggestedFilename()).toMatch(/rows\.csv$/);
      });
    },
    60_000,
  );
});
