// Re-running a feed run from the console: POST /runs/:id/rerun on a run a feed tick queued runs the same file and
// mapping again as a new run `<id>-r2`, listed under the feed's name like the first.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFeedsQueue } from '../../src/queue/queues.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startConsoleStack, type ConsoleStack } from '../helpers/console.ts';
import { writeProductSheet } from '../helpers/sheets.ts';

let stack: ConsoleStack;
let url: string;
let drop: string;

interface ApiRun {
  id: string;
  fileName: string;
  feed: string | null;
  origin: string;
  mapping: string;
  status: string;
  counts: Record<string, number> | null;
  reportDir: string | null;
  rerun: string | null;
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ps-feed-rerun-'));
  drop = join(dir, 'drop');
  const jobs = join(dir, 'jobs');
  mkdirSync(drop);
  mkdirSync(jobs);
  writeFileSync(
    join(jobs, 'nightly.yaml'),
    `schedule: "0 2 * * *"\nsource: { dir: ${drop}, pattern: "acme-*.csv", settleSeconds: 0 }\nmapping: ${join(drop, 'products.yaml')}\n`,
  );
  stack = await startConsoleStack('feed-rerun', {}, { jobsDir: jobs });
  url = stack.url;
});
afterAll(async () => {
  await stack?.close();
});

async function finished(id: string): Promise<ApiRun> {
  for (let i = 0; i < 300; i++) {
    const res = await fetch(`${url}/runs/${id}`);
    if (res.status === 200) {
      const s = (await res.json()) as ApiRun;
      if (s.status !== 'queued' && s.status !== 'running') return s;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`run ${id} did not finish`);
}

describe('re-running a feed run from the console', () => {
  it('runs the feed file and mapping again as <id>-r2, listed under the feed', async () => {
    writeProductSheet(drop, 12, { owner: DEMO_COMPANY_ID, file: 'acme-1.csv', prefix: '377001' });
    const feeds = openFeedsQueue(stack.config);
    try {
      await feeds.tick('nightly');
    } finally {
      await feeds.close();
    }
    // The tick queues the run: it appears in the list with the feed's file, under the feed.
    let id: string | undefined;
    for (let i = 0; i < 300 && !id; i++) {
      const { runs } = (await (await fetch(`${url}/runs`)).json()) as { runs: ApiRun[] };
      id = runs.find((r) => r.origin === 'feed')?.id;
      if (!id) await new Promise((r) => setTimeout(r, 100));
    }
    expect(id).toBeDefined();
    const first = await finished(id!);
    expect(first).toMatchObject({
      fileName: 'acme-1.csv',
      feed: 'nightly',
      origin: 'feed',
      mapping: 'products',
      status: 'done',
    });
    expect(first.counts).toMatchObject({ rows: 12, created: 12 });
    expect(first.rerun).toBe(`/runs/${id}/rerun`);

    const res = await fetch(`${url}${first.rerun}`, { method: 'POST' });
    expect(res.status).toBe(202);
    expect(await res.json()).toMatchObject({ id: `${id}-r2`, existed: false, rerunOf: id, status: 'queued' });
    const again = await finished(`${id}-r2`);
    // The same file and mapping: the items the first run created are unchanged now.
    expect(again).toMatchObject({
      id: `${id}-r2`,
      fileName: 'acme-1.csv',
      feed: 'nightly',
      origin: 'feed',
      mapping: 'products',
      status: 'done',
      reportDir: `${first.reportDir}-r2`,
    });
    expect(again.counts).toMatchObject({ rows: 12, created: 0, unchanged: 12 });
    const { runs } = (await (await fetch(`${url}/runs`)).json()) as { runs: ApiRun[] };
    expect(runs.map((r) => r.id)).toEqual([`${id}-r2`, id]);
    // The list filters by feed, mapping and file name.
    const list = async (q: string) =>
      ((await (await fetch(`${url}/runs?${q}`)).json()) as { runs: ApiRun[] }).runs.map((r) => r.id);
    expect(await list('feed=nightly')).toEqual([`${id}-r2`, id]);
    expect(await list('feed=weekly')).toEqual([]);
    expect(await list('mapping=products&file=ACME-1')).toEqual([`${id}-r2`, id]);
    expect(await list('file=other.csv')).toEqual([]);
  }, 60_000);
});
