import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { hasChromium, startConsoleStack, withChromium, type ConsoleStack } from '../helpers/console.ts';

const sample = new URL('../../samples/epicerie-fine.csv', import.meta.url).pathname;
let stack: ConsoleStack;
let url: string;

beforeAll(async () => {
  stack = await startConsoleStack('undo');
  ({ url } = stack);
});
afterAll(async () => {
  await stack?.close();
});

async function upload(body: Buffer, name: string): Promise<string> {
  const form = new FormData();
  form.append('mapping', 'epicerie-fine');
  form.append('file', new Blob([body]), name);
  const res = await fetch(`${url}/uploads`, { method: 'POST', body: form });
  expect(res.status).toBe(202);
  return ((await res.json()) as { id: string }).id;
}

async function finished(id: string): Promise<{ status: string; counts: Record<string, number> }> {
  for (let i = 0; i < 300; i++) {
    const s = (await (await fetch(`${url}/runs/${id}`)).json()) as { status: string; counts: Record<string, number> };
    if (s.status !== 'queued' && s.status !== 'running') return s;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error('run did not finish');
}

/** The sample with two names and one customs code (a PUT) changed. */
function night2(): Buffer {
  const lines = readFileSync(sample).toString('latin1').split(/\r?\n/);
  for (const i of [1, 3]) {
    const cells = lines[i]!.split(';');
    cells[1] = `Nuit 2 ${i}`;
    lines[i] = cells.join(';');
  }
  const cells = lines[2]!.split(';');
  cells[6] = '0405';
  lines[2] = cells.join(';');
  return Buffer.from(lines.join('\r\n'), 'latin1');
}

const items = () =>
  new Map(
    stack.sandbox.handle.store
      .dump()
      .tradeItems.filter((t) => t.ownerCompanyId === DEMO_COMPANY_ID)
      .map((t) => [t.tradeItemId, { name: t.tradeItemName, code: t.harmonizedCode, archived: t.archived }]),
  );

describe('console: Undo', () => {
  it('shows the dry-run plan of a finished run, then undoes it; fits 390 px', async () => {
    const first = await upload(readFileSync(sample), 'nuit-1.csv');
    expect((await finished(first)).status).toBe('done');
    const before = items();
    const second = await upload(night2(), 'nuit-2.csv');
    expect((await finished(second)).counts).toMatchObject({ updated: 3, failed: 0 });
    expect(items()).not.toEqual(before);

    expect((await fetch(`${url}/runs/no-such-run/undo-plan`)).status).toBe(404);
    const writes = stack.sandbox.handle.counts().writes;
    const plan = (await (await fetch(`${url}/runs/${second}/undo-plan`)).json()) as {
      counts: Record<string, number>;
      items: { action: string }[];
    };
    expect(plan.counts).toEqual({ items: 3, restored: 3, conflict: 0, unchanged: 0, failed: 0 });
    expect(plan.items.map((i) => i.action).sort()).toEqual([
      'restore harmonizedCode',
      'restore tradeItemName',
      'restore tradeItemName',
    ]);
    expect(stack.sandbox.handle.counts().writes).toBe(writes);

    if (hasChromium) {
      await withChromium({ viewport: { width: 390, height: 844 } }, async (browser) => {
        const page = browser.pages()[0] ?? (await browser.newPage());
        await page.goto(`${url}/#run=${second}`);
        await page.locator('#run-detail .status', { hasText: 'done' }).waitFor({ timeout: 30_000 });
        await page.locator('#undo').click();
        await page.locator('#undo-box h2', { hasText: 'Undo plan' }).waitFor();
        expect(await page.locator('#undo-box li').count()).toBe(3);
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
        await page.locator('#undo-run').click();
        await page.locator('#undo-box h2', { hasText: 'Undo undo-' }).waitFor({ timeout: 30_000 });
        expect(await page.locator('#undo-box').textContent()).toContain('restored 3, conflicts 0');
        expect(await page.evaluate('document.documentElement.scrollWidth')).toBeLessThanOrEqual(390);
      });
    } else {
      expect((await fetch(`${url}/runs/${second}/undo`, { method: 'POST' })).status).toBe(202);
      for (let i = 0; i < 300; i++) {
        const s = (await (await fetch(`${url}/runs/${second}/undo`)).json()) as { status: string };
        if (s.status !== 'running') break;
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const done = (await (await fetch(`${url}/runs/${second}/undo`)).json()) as { status: string; exitCode: number };
    expect(done).toMatchObject({ status: 'done', exitCode: 0 });
    expect(items()).toEqual(before);
    // Three writes: two PATCHes, one PUT (harmonizedCode).
    expect(stack.sandbox.handle.counts().writes - writes).toBe(3);
    const rows = await fetch(`${url}/runs/${second}/undo/files/rows.csv`);
    expect(rows.status).toBe(200);
    expect(await rows.text()).toContain('restore harmonizedCode,restored');
  }, 60_000);
});
