import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { hasChromium, startConsoleStack, useChromium, type ConsoleStack } from '../helpers/console.ts';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { type Config } from '../../src/config.ts';
import { buildConsole } from '../../src/server/app.ts';
import { inIssueOrder } from '../../src/pipeline/report/issue-order.ts';

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

/**
 * epicerie-fine.csv with rows the import rejects (a non-decimal net content, a missing name), so that its run has an
 * issue breakdown and a rejected.xlsx; `tag` makes a sheet of its own (another sha256: another run).
 */
function sheetWithIssues(tag: string): Buffer {
  const lines = readFileSync(sample).toString('latin1').split(/\r?\n/);
  for (const i of [1, 2, 3]) {
    const cells = lines[i]!.split(';');
    cells[3] = 'beaucoup';
    lines[i] = cells.join(';');
  }
  const cells = lines[4]!.split(';');
  cells[1] = '';
  lines[4] = cells.join(';');
  lines[5] = lines[5]!.replace(/;[^;]*;/, `;${tag};`);
  return Buffer.from(lines.join('\r\n'), 'latin1');
}

interface ApiRun {
  id: string;
  fileName: string;
  status: string;
  queuedAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  counts: Record<string, number> | null;
  exitCode: number | null;
  issues: { code: string; severity: 'error' | 'warning'; column: string | null; rows: number }[];
  issueLines: number;
  files: string[];
  reportDir: string | null;
  rerun: string | null;
}

async function finished(id: string): Promise<ApiRun> {
  for (let i = 0; i < 300; i++) {
    const s = (await (await fetch(`${url}/runs/${id}`)).json()) as ApiRun;
    if (s.status !== 'queued' && s.status !== 'running') return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('run did not finish');
}

describe('web console', () => {
  // One browser for the tests below that use it: a page of its own each.
  const inChromium = useChromium({ acceptDownloads: true, viewport: { width: 1280, height: 900 } });
  it('takes an upload, runs it through the queue, serves its reports, and refuses what it must', async () => {
    const res = await upload(readFileSync(sample), '../../etc/passwd.csv', 'epicerie-fine');
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const run = await finished(id);
    expect(run.status).toBe('done');
    expect(run.counts!.rows).toBe(30);
    // The client's name is shown (multipart strips its path), never used to store the file.
    expect(run.fileName).toBe('passwd.csv');
    expect(JSON.stringify(run)).not.toContain(config.UPLOAD_DIR);
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
    expect(readdirSync(config.UPLOAD_DIR).filter((f) => !f.startsWith('.'))).toHaveLength(1);
    expect(((await (await fetch(`${url}/mappings`)).json()) as { mappings: string[] }).mappings).toContain(
      'epicerie-fine',
    );
    expect(await (await fetch(`${url}/health`)).json()).toMatchObject({ status: 'ok' });
    expect((await fetch(`${url}/admin/queues`)).status).toBe(200);
  });

  it('lists runs newest first under one id from queued to done, shows their issues, and re-runs a sheet that ran', async () => {
    const sheet = sheetWithIssues('api');
    const res = await upload(sheet, 'épicerie à revoir.csv', 'epicerie-fine');
    expect(res.status).toBe(202);
    const { id } = (await res.json()) as { id: string };
    const listed = (await (await fetch(`${url}/runs?limit=5`)).json()) as { runs: ApiRun[] };
    expect(listed.runs[0]!.id).toBe(id);
    const run = await finished(id);
    // The id it was queued under is the id it ends with; the run directory's name is only reportDir.
    expect(run).toMatchObject({ id, fileName: 'épicerie à revoir.csv', status: 'done', exitCode: 1 });
    expect(run.counts!.invalid).toBe(4);
    expect(run.reportDir).toMatch(/^[0-9a-f]{12}-[0-9a-f]{8}$/);
    const iso = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/;
    for (const t of [run.queuedAt, run.startedAt, run.finishedAt]) expect(t).toMatch(iso);
    expect(run.queuedAt <= run.startedAt! && run.startedAt! <= run.finishedAt!).toBe(true);
    expect(run.issues.length).toBeGreaterThan(0);
    expect(run.issues.length).toBeLessThanOrEqual(5);
    // Errors first, each by rows.
    expect(run.issues).toEqual(inIssueOrder(run.issues));
    expect(run.issues[0]!.severity).toBe('error');
    expect(run.issues.map((i) => i.column)).toContain('Contenance');
    expect(run.files).toContain('rejected.xlsx');
    expect((await fetch(`${url}/runs/${id}/files/rejected.xlsx`)).status).toBe(200);
    expect(run.rerun).toBe(`/runs/${id}/rerun`);

    // The same sheet again: nothing runs, and the answer says why and how to run it again.
    const again = await upload(sheet, 'copie.csv', 'epicerie-fine');
    expect(again.status).toBe(200);
    const answer = (await again.json()) as { message: string };
    expect(answer).toMatchObject({ id, existed: true, status: 'done', rerun: `/runs/${id}/rerun` });
    expect(answer.message).toMatch(/already ran with this mapping/);

    const rerun = await fetch(`${url}/runs/${id}/rerun`, { method: 'POST' });
    expect(rerun.status).toBe(202);
    const { id: id2 } = (await rerun.json()) as { id: string };
    expect(id2).toBe(`${id}-r2`);
    const run2 = await finished(id2);
    expect(run2).toMatchObject({
      id: id2,
      fileName: 'épicerie à revoir.csv',
      status: 'done',
      reportDir: `${run.reportDir}-r2`,
    });
    // The same file and mapping, run again: the rows the first run wrote are unchanged now.
    expect(run2.counts).toMatchObject({ rows: 30, invalid: 4, created: 0, updated: 0, unchanged: 26 });
    expect((await fetch(`${url}/runs/${id}`)).status).toBe(200);
    // The same sheet once more: the answer names its latest run, the re-run.
    const third = await upload(sheet, 'copie.csv', 'epicerie-fine');
    expect(third.status).toBe(200);
    expect(await third.json()).toMatchObject({ id: id2, existed: true, status: 'done', rerun: `/runs/${id2}/rerun` });

    // Newest first, a page at a time: the cursor of a page leads to the next, the last page has none.
    const seen: ApiRun[] = [];
    let next: string | null = null;
    do {
      const page = (await (
        await fetch(`${url}/runs?limit=1${next ? `&before=${encodeURIComponent(next)}` : ''}`)
      ).json()) as { runs: ApiRun[]; next: string | null };
      expect(page.runs).toHaveLength(1);
      seen.push(...page.runs);
      next = page.next;
    } while (next !== null);
    expect(seen.slice(0, 2).map((r) => r.id)).toEqual([id2, id]);
    expect(new Set(seen.map((r) => r.id)).size).toBe(seen.length);
    expect(seen.map((r) => r.queuedAt)).toEqual(
      seen
        .map((r) => r.queuedAt)
        .sort()
        .reverse(),
    );
    const all = (await (await fetch(`${url}/runs`)).json()) as { runs: ApiRun[]; next: string | null };
    expect(all.runs.map((r) => r.id)).toEqual(seen.map((r) => r.id));
    expect(all.next).toBeNull();

    expect((await fetch(`${url}/runs/import-nope-r2/rerun`, { method: 'POST' })).status).toBe(404);
    expect((await fetch(`${url}/runs?limit=0`)).status).toBe(400);
    expect((await fetch(`${url}/runs?before=x`)).status).toBe(400);
  }, 60_000);

  it('shows a run no worker has taken as queued, under the id it keeps, and re-runs it only once it has ended', async () => {
    // A console on a queue of its own, with no worker: its run stays queued.
    const idle = {
      ...config,
      QUEUE_PREFIX: `${config.QUEUE_PREFIX}-idle`,
      UPLOAD_DIR: join(stack.dir, 'idle-uploads'),
    };
    const app = await buildConsole({ config: idle });
    try {
      await app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      const form = new FormData();
      form.append('mapping', 'epicerie-fine');
      form.append('file', new Blob([sheetWithIssues('idle')]), 'en attente.csv');
      const res = await fetch(`${base}/uploads`, { method: 'POST', body: form });
      expect(res.status).toBe(202);
      const { id } = (await res.json()) as { id: string };
      const { runs } = (await (await fetch(`${base}/runs`)).json()) as { runs: ApiRun[] };
      expect(runs).toHaveLength(1);
      expect(runs[0]).toMatchObject({ id, fileName: 'en attente.csv', status: 'queued', startedAt: null });
      expect(runs[0]).toMatchObject({ finishedAt: null, counts: null, issues: [], rerun: null });
      const rerun = await fetch(`${base}/runs/${id}/rerun`, { method: 'POST' });
      expect(rerun.status).toBe(409);
      expect(await rerun.json()).toMatchObject({ status: 'queued' });
    } finally {
      await app.close();
      const r = new Redis(inject('redisUrl'));
      const keys = await r.keys(`{${idle.QUEUE_PREFIX}}*`);
      if (keys.length > 0) await r.del(...keys);
      r.disconnect();
    }
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
      await inChromium(async (browser) => {
        const page = await browser.newPage();
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

  it.runIf(hasChromium)(
    'shows a run with its issue breakdown, re-runs it and serves its rejected rows; fits 1280 and 390 px wide',
    async () => {
      const file = join(stack.dir, 'épicerie-navigateur.csv');
      writeFileSync(file, sheetWithIssues('browser'));
      await inChromium(async (browser) => {
        const page = await browser.newPage();
        const noSideways = async (width: number) => {
          await page.setViewportSize({ width, height: 900 });
          expect(await page.evaluate('document.documentElement.scrollWidth'), `${width} px`).toBeLessThanOrEqual(width);
        };
        await page.goto(url);
        await page.waitForSelector('#mapping option', { state: 'attached' });
        await page.selectOption('#mapping', 'epicerie-fine');
        await page.setInputFiles('#file', file);
        await page.click('#send');
        await page.waitForSelector('#message.ok');
        // The upload opens its run: the breakdown appears once it is done, most rows first.
        const detail = page.locator('#run-detail');
        await detail.locator('.status', { hasText: 'done' }).waitFor({ timeout: 30_000 });
        const id = await detail.locator('dd code').textContent();
        await detail.locator('#issues').waitFor();
        expect(await detail.locator('#issues tbody tr').count()).toBeGreaterThan(0);
        expect(await detail.locator('#issues').textContent()).toContain('Contenance');
        const row = page.locator(`tr[data-run="${id}"]`);
        // The list follows on its own refresh.
        await row.locator('.status', { hasText: 'done' }).waitFor();
        expect(await row.textContent()).toContain('épicerie-navigateur.csv');
        await noSideways(1280);
        await noSideways(390);
        // Stacked on a narrow screen: every cell labelled, the breakdown still there.
        expect(await detail.locator('#issues').isVisible()).toBe(true);

        await detail.locator('#rerun').click();
        await page.locator('#message.ok', { hasText: 're-run' }).waitFor();
        expect(await page.locator('#message').textContent()).toBe(`re-run queued as ${id}-r2`);
        await page.waitForFunction(`location.hash === '#run=${id}-r2'`);
        await detail.locator('dd code', { hasText: `${id}-r2` }).waitFor();
        await detail.locator('.status', { hasText: 'done' }).waitFor({ timeout: 30_000 });
        await page.locator(`tr[data-run="${id}-r2"]`).waitFor();
        // Newest first: the re-run heads the list.
        expect(await page.locator('#runs tr').first().getAttribute('data-run')).toBe(`${id}-r2`);
        await noSideways(390);
        const [download] = await Promise.all([page.waitForEvent('download'), detail.locator('#rejected-link').click()]);
        expect(download.suggestedFilename()).toMatch(/-r2-rejected\.xlsx$/);
        await noSideways(1280);
      });
    },
    90_000,
  );
});
