import { appendFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.ts';
import { startWorkers, type WorkerSet } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { hasChromium, withChromium } from '../helpers/console.ts';
import { startTestHttps, type TestHttps } from '../helpers/https-server.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { queueEnv } from '../helpers/env.ts';
import { feedSheet, feedWatch, itemNames } from '../helpers/feeds.ts';
import { until } from '../helpers/wait.ts';

const redisUrl = inject('redisUrl');
const prefix = `ps-feed-src-${process.pid}-${Date.now().toString(36)}`;
let sandbox: RunningSandbox;
let https: TestHttps;
const workers: WorkerSet[] = [];
let config: Config;
let redis: Redis;
let dir: string;
let mapping: string;
/** What the HTTPS server serves at /feed.csv, and its ETag. */
let served = { body: '', etag: '"v1"' };

const drop = (feed: string) => join(dir, 'drops', feed);
const sheet = (tag: string, rows = 5) => feedSheet(tag, rows);

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'ps-feed-sources-'));
  mapping = writeProductSheet(dir, 1, { owner: DEMO_COMPANY_ID }).mapping;
  https = await startTestHttps((req, res) => {
    if (req.url === '/feed.csv') {
      if (req.headers['if-none-match'] === served.etag) return res.writeHead(304).end();
      return res.writeHead(200, { etag: served.etag }).end(served.body);
    }
    res.writeHead(404).end();
  });
  const jobs = join(dir, 'jobs');
  mkdirSync(jobs);
  const feed = (id: string, source: string, extra = '') => {
    mkdirSync(drop(id), { recursive: true });
    writeFileSync(join(jobs, `${id}.yaml`), `schedule: "0 2 * * *"\nsource: ${source}\nmapping: ${mapping}\n${extra}`);
  };
  feed('deltas', `{ dir: ${drop('deltas')}, pattern: "delta-*.csv", settleSeconds: 0 }`);
  feed('growing', `{ dir: ${drop('growing')}, pattern: "g-*", settleSeconds: 5 }`);
  feed(
    'weekly',
    `{ dir: ${drop('weekly')}, pattern: "full-*.csv", settleSeconds: 0 }`,
    'mode: full\narchiveGuard: { allow: true }\n',
  );
  feed('moved', `{ dir: ${drop('moved')}, pattern: "*.csv", settleSeconds: 0 }`, 'afterImport: { move: done/ }\n');
  const remote = (url: string) =>
    `\n  https: { url: "${url}", ca: ${https.caFile}, headers: { X-Feed-Token: PS_TEST_FEED_TOKEN } }`;
  feed('remote', remote(`${https.url}/feed.csv`));
  feed('private', remote(`https://127.0.0.1:${https.port}/feed.csv`));
  feed('down', remote(`https://localhost:1/feed.csv`));
  process.env.PS_TEST_FEED_TOKEN = 'token-from-env';
  config = loadConfig({
    ...queueEnv(sandbox.url, redisUrl, prefix, dir),
    SOURCE_ALLOW_HOSTS: 'localhost',
    LOG_LEVEL: 'warn',
  });
  // Four workers on one Redis, as four processes would run: any of them takes any tick and any import.
  for (let i = 0; i < 4; i++) workers.push(await startWorkers(config, { jobsDir: jobs }));
  redis = new Redis(redisUrl);
}, 60_000);
afterAll(async () => {
  await Promise.all(workers.map((w) => w.close()));
  await https?.close();
  await sandbox?.close();
  const keys = await redis.keys(`{${prefix}}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis?.disconnect();
  delete process.env.PS_TEST_FEED_TOKEN;
});

const lastKey = (feed: string) => `{${prefix}}:feed:${feed}:last`;
const watch = () => feedWatch(redis, `{${prefix}}`);
/** Queues `n` ticks of `feed` at once; resolves once a tick recorded something new. */
const tick = (feed: string, n = 1) => watch().tick(feed, n);
const feedRuns = (feed: string) => watch().runs(feed);
const names = (tag: string) => itemNames(sandbox, tag);

/** The ledger's entries of `feed` once `count` of them are done and none is in flight. */
async function ledgerDone(feed: string, count: number): Promise<Record<string, { state: string; at: string }>> {
  let all: Record<string, { state: string; at: string }> = {};
  await until(
    `feed ${feed}: ${count} file(s) done`,
    async () => {
      const ledger = await redis.hgetall(`{${prefix}}:feed:${feed}:ledger`);
      all = Object.fromEntries(Object.entries(ledger).map(([k, v]) => [k, JSON.parse(v)]));
      const done = Object.values(all).filter((e) => e.state === 'done').length;
      return done >= count && (await redis.exists(`{${prefix}}:feed:${feed}:inflight`)) === 0;
    },
    60_000,
  );
  return all;
}
/** Once a feed's run ended, its end queued a tick: waits until that tick recorded it found nothing more to do. */
const settled = (feed: string) => watch().settled(feed, 0);

describe('feed sources: every file once, in order', () => {
  it('runs three deltas dropped at once one after the other, each once, across four workers and repeated ticks', async () => {
    sandbox.handle.reset();
    for (const n of [1, 2, 3]) writeFileSync(join(drop('deltas'), `delta-${n}.csv`), sheet(`delta${n}`));
    // Several ticks at once, on four workers: one lists and queues delta-1; the others wait or find it in flight.
    await tick('deltas', 4);
    const ledger = await ledgerDone('deltas', 3);
    // More ticks later: nothing new.
    expect((await tick('deltas', 3)).tick).toBe('nothing new');
    const runs = await feedRuns('deltas');
    expect(runs.map((r) => r.file)).toEqual(['delta-1.csv', 'delta-2.csv', 'delta-3.csv']);
    // In order: each import was queued only once the previous file was done (so no worker could take it earlier).
    const doneAt = new Map(Object.entries(ledger).map(([k, e]) => [JSON.parse(k)[0] as string, Date.parse(e.at)]));
    for (let i = 1; i < runs.length; i++)
      expect(runs[i]!.queuedAt).toBeGreaterThanOrEqual(doneAt.get(runs[i - 1]!.file)!);
    for (const r of runs) {
      expect(r.result?.exitCode).toBe(0);
      expect(existsSync(join(r.result!.reportDir, 'summary.json'))).toBe(true);
    }
    // The last delta wins.
    expect(names('delta')).toEqual([0, 1, 2, 3, 4].map((i) => `delta3 ${i}`));
    const last = await redis.hgetall(lastKey('deltas'));
    expect(last).toMatchObject({ seen: '3', done: '3', waiting: '0', source: `dir:${drop('deltas')}/delta-*.csv` });
  }, 90_000);

  it('leaves a file that is still being written, or named .part, for a later tick', async () => {
    const g1 = join(drop('growing'), 'g-1.csv');
    writeFileSync(g1, sheet('growing', 2));
    expect((await tick('growing')).tick).toMatch(/^g-1\.csv modified too recently/);
    appendFileSync(g1, `${testGtin(2)};growing 2;100;g\n`);
    expect((await tick('growing')).tick).toMatch(/^g-1\.csv changed since the previous listing/);
    // Unchanged since the previous listing, but changed less than settleSeconds ago: it still waits (issue 34).
    expect((await tick('growing')).tick).toMatch(
      /^g-1\.csv modified too recently \(still arriving\?\): it settles at /,
    );
    // The tick that comes back once it settled takes it (not the schedule, a day away).
    await ledgerDone('growing', 1);
    await settled('growing');
    expect(names('growing ')).toHaveLength(3);
    writeFileSync(join(drop('growing'), 'g-2.csv.part'), sheet('growing', 1));
    const last = await tick('growing');
    expect(last.tick).toMatch(/^g-2\.csv\.part has a \.part\/\.tmp name/);
    expect(last).toMatchObject({ seen: '2', done: '1', waiting: '1' });
    expect(await feedRuns('growing')).toHaveLength(1);
  }, 60_000);

  it('mode full takes the newest file only and says why the others were skipped', async () => {
    sandbox.handle.reset();
    for (const n of [1, 2, 3]) writeFileSync(join(drop('weekly'), `full-${n}.csv`), sheet(`full${n}`));
    const last = await tick('weekly');
    expect(last.tick).toMatch(
      /^queued import-\S+: .*full-3\.csv; skipped 2 older file\(s\) \(mode full imports the newest file only\): full-1\.csv, full-2\.csv$/,
    );
    await ledgerDone('weekly', 1);
    expect((await tick('weekly')).tick).toBe('nothing new');
    const runs = await feedRuns('weekly');
    expect(runs.map((r) => r.file)).toEqual(['full-3.csv']);
    // The run's report says it too.
    const summary = JSON.parse(readFileSync(join(runs[0]!.result!.reportDir, 'summary.json'), 'utf8')) as {
      notes?: string[];
    };
    expect(summary.notes).toEqual([
      'skipped 2 older file(s) of feed weekly (mode full imports the newest file only): full-1.csv, full-2.csv',
    ]);
    expect(names('full')).toEqual([0, 1, 2, 3, 4].map((i) => `full3 ${i}`));
  }, 60_000);

  it('afterImport moves a file into done/ once its run succeeded', async () => {
    writeFileSync(join(drop('moved'), 'm-1.csv'), sheet('moved', 1));
    await tick('moved');
    await ledgerDone('moved', 1);
    expect(readdirSync(drop('moved')).sort()).toEqual(['done']);
    expect(readdirSync(join(drop('moved'), 'done'))).toEqual(['m-1.csv']);
  }, 60_000);
});

describe('feed sources: https', () => {
  it('imports a new file (header from the environment), runs nothing for an unchanged one, and a changed one again', async () => {
    served = { body: sheet('remote1', 2), etag: '"v1"' };
    const first = await tick('remote');
    expect(first.tick).toMatch(new RegExp(`^queued import-\\S+: ${https.url}/feed\\.csv feed\\.csv$`));
    await ledgerDone('remote', 1);
    await settled('remote');
    expect(https.seen.at(-1)!.headers['x-feed-token']).toBe('token-from-env');
    // The copy the run read is gone once the run ended.
    expect(readdirSync(join(dir, 'uploads', 'feeds', 'remote'))).toEqual([]);
    const before = https.seen.length;
    expect((await tick('remote')).tick).toBe('nothing new');
    expect(https.seen.slice(before).map((s) => s.headers['if-none-match'])).toEqual(['"v1"']);
    expect(await feedRuns('remote')).toHaveLength(1);

    served = { body: sheet('remote2', 2), etag: '"v2"' };
    expect((await tick('remote')).tick).toMatch(/^queued /);
    await ledgerDone('remote', 2);
    expect(names('remote')).toEqual(['remote2 0', 'remote2 1']);
  }, 60_000);

  it('ends the tick of a source it may not or cannot reach with one line in lastTickError; the workers go on', async () => {
    const refused = await tick('private');
    expect(refused.lastTickError).toMatch(
      /127\.0\.0\.1 resolves to 127\.0\.0\.1.*loopback.*\[PS_ERR_SOURCE_REFUSED\]$/,
    );
    const down = await tick('down');
    expect(down.lastTickError).toMatch(/cannot be reached .*\[PS_ERR_SOURCE_UNAVAILABLE\]$/);
    expect(down.source).toBe('https://localhost:1/feed.csv');
    // Nothing of the credential in what the tick recorded.
    expect(JSON.stringify([refused, down])).not.toContain('token-from-env');
    // The workers still tick.
    expect((await tick('remote')).tick).toBe('nothing new');
  }, 30_000);
});

describe('feed sources in the console and feeds list', () => {
  it('shows each feed`s source (no secret), last listing and files seen / done / waiting', async () => {
    const { buildConsole } = await import('../../src/server/app.ts');
    const app = await buildConsole({ config, jobsDir: join(dir, 'jobs') });
    try {
      const res = await app.inject({ method: 'GET', url: '/feed-sources' });
      expect(res.statusCode).toBe(200);
      const feeds = (res.json() as { feeds: Record<string, unknown>[] }).feeds;
      const byId = new Map(feeds.map((f) => [f.id, f]));
      expect(byId.get('deltas')).toMatchObject({
        kind: 'dir',
        source: `dir:${drop('deltas')}/delta-*.csv`,
        seen: 3,
        done: 3,
        waiting: 0,
        lastListingAt: expect.stringMatching(/^\d{4}-/),
        lastTickError: null,
      });
      expect(byId.get('remote')).toMatchObject({ kind: 'https', source: `${https.url}/feed.csv`, seen: 1, done: 1 });
      expect(byId.get('down')).toMatchObject({ lastTickError: expect.stringMatching(/PS_ERR_SOURCE_UNAVAILABLE/) });
      expect(res.body).not.toContain('token-from-env');
      // One feed list on the page, fed by GET /feeds (schedule, overdue) and GET /feed-sources (source, files).
      if (hasChromium) {
        const address = await app.listen({ port: 0, host: '127.0.0.1' });
        await withChromium({ viewport: { width: 1280, height: 900 } }, async (browser) => {
          const page = browser.pages()[0] ?? (await browser.newPage());
          await page.goto(address);
          const row = page.locator('#feeds tr[data-feed="deltas"]');
          await row.locator('.overdue.ok').waitFor();
          await row.locator('.source code').waitFor();
          expect(await row.locator('.source').textContent()).toBe(`dir:${drop('deltas')}/delta-*.csv`);
          expect(await row.locator('.files').textContent()).toMatch(/^seen 3 · done 3 · waiting 0 \(listed .+\)$/);
          expect(await row.textContent()).toContain('0 2 * * *');
          const down = page.locator('#feeds tr[data-feed="down"] .tick');
          expect(await down.getAttribute('class')).toContain('err');
          expect(await down.textContent()).toContain('PS_ERR_SOURCE_UNAVAILABLE');
          expect(await page.locator('#feeds tr').count()).toBe(byId.size);
          expect(await page.locator('table').filter({ hasText: 'files seen' }).count()).toBe(0);
          for (const width of [1280, 390]) {
            await page.setViewportSize({ width, height: 900 });
            const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
            expect(scrollWidth, `${width} px`).toBeLessThanOrEqual(width);
          }
        });
      } else {
        const page = await app.inject({ method: 'GET', url: '/' });
        expect(page.body).toContain('id="feeds"');
      }
    } finally {
      await app.close();
    }
  }, 30_000);
});
