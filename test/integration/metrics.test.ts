// /metrics after real runs (issue 25 items 3-5): a worker imports a feed's sheet and an enqueued one, each with several
// outcomes and issue codes; the page, scraped over HTTP from the worker's metrics server and from the console, parses
// strictly (and with promtool where installed), its counters agree with the runs' summary.json, the feed's gauges with
// its Redis bookkeeping, the events' gauges with the `events` queue; the console lists the feed (GET /feeds and the
// page, at 1280 and 390 px).
import { spawn, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.ts';
import type { RunSummary } from '../../src/pipeline/report/report.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { fleetMetrics } from '../../src/queue/metrics-fleet.ts';
import { ProcessMetrics, ROW_OUTCOMES } from '../../src/metrics/metrics.ts';
import { openFeedsQueue } from '../../src/queue/queues.ts';
import { startWorkers, type WorkerSet } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { buildConsole } from '../../src/server/app.ts';
import { startMetricsServer, type MetricsServer } from '../../src/server/metrics-server.ts';
import { hasChromium, withChromium } from '../helpers/console.ts';
import { parsePromStrict, promtoolCheck, sampleValue, type PromFamily } from '../helpers/prom-check.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { queueEnv, apiEnv } from '../helpers/env.ts';
import { usePrefixes } from '../helpers/prefixes.ts';

const owner = DEMO_COMPANY_ID;
const redisUrl = inject('redisUrl');
const prefix = usePrefixes('metrics')();
const OUTPUT = new URL('../.output/', import.meta.url).pathname;
let sandbox: RunningSandbox;
let dir: string;
let config: Config;
let workers: WorkerSet;
let own: ProcessMetrics;
let stopObserving: () => void;

/** A sheet: `valid` rows (names from `name`), then a GTIN too short, a bad check digit, a missing name. */
function sheet(file: string, rows: number[], name: (i: number) => string): void {
  const lines = ['GTIN;Désignation;Poids net;Unité'];
  for (const i of rows) lines.push(`${testGtin(i)};${name(i)};${100 + i};g`);
  const g = testGtin(90);
  lines.push(`123;Trop court;100;g`, `${g.slice(0, -1)}${(Number(g.at(-1)) + 1) % 10};Mauvaise clé;100;g`);
  lines.push(`${testGtin(91)};;100;g`);
  writeFileSync(file, `${lines.join('\n')}\n`);
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'ps-metrics-'));
  const { mapping } = writeProductSheet(dir, 1, { owner, file: 'unused.csv' });
  mkdirSync(join(dir, 'drop'));
  mkdirSync(join(dir, 'jobs'));
  writeFileSync(
    join(dir, 'jobs', 'nightly.yaml'),
    `schedule: "0 2 * * *"\ntimezone: Europe/Paris\nsource: { dir: ${join(dir, 'drop')}, pattern: "*.csv", settleSeconds: 0 }\nmapping: ${mapping}\nowner: ${owner}\n`,
  );
  // The feed's file: 10 new rows and 3 invalid ones.
  sheet(join(dir, 'drop', 'acme.csv'), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9], (i) => `Sablés ${i}`);
  // An enqueued sheet: 5 rows unchanged, 3 renamed (updated), 4 new, and the same 3 invalid ones.
  sheet(join(dir, 'second.csv'), [0, 1, 2, 3, 4, 5, 6, 7, 20, 21, 22, 23], (i) =>
    i >= 5 && i <= 7 ? `Sablés ${i} (nouveau)` : `Sablés ${i}`,
  );
  config = loadConfig({
    ...queueEnv(sandbox.url, redisUrl, prefix, dir),
    API_CONCURRENCY: '4',
    LOG_LEVEL: 'warn',
    WORKER_LOCK_MS: '5000',
  });
  own = new ProcessMetrics();
  stopObserving = own.observeApiRequests();
  workers = await startWorkers(config, { jobsDir: join(dir, 'jobs'), chunkSize: 4, metrics: own });
});
afterAll(async () => {
  stopObserving?.();
  await workers?.close();
  await sandbox?.close();
});

const summaryOf = (runId: string): RunSummary =>
  JSON.parse(readFileSync(join(config.REPORT_DIR, runId, 'summary.json'), 'utf8')) as RunSummary;

async function scrape(url: string, headers: Record<string, string> = {}): Promise<Map<string, PromFamily>> {
  const res = await fetch(url, { headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  const families = parsePromStrict(text);
  const promtool = promtoolCheck(text);
  if (promtool !== null) expect(promtool).toBe('');
  return families;
}

describe('/metrics after runs through the worker', () => {
  it('agrees with the summaries of the runs, the feed bookkeeping and the events queue; the console lists the feed', async () => {
    const redis = new Redis(redisUrl);
    const feeds = openFeedsQueue(config);
    const client = importQueueClient(config);
    // The events queue (the events half of issue 25 fills it): one event delivered later, one given up.
    const events = new Queue('events', { connection: redis, prefix: `{${prefix}}` });
    await events.add('event', { n: 1 }, { delay: 3_600_000 });
    await events.add('event', { n: 2 }, { attempts: 1 });
    const failing = new Worker(
      'events',
      async () => {
        throw new Error('endpoint refused');
      },
      { connection: new Redis(redisUrl, { maxRetriesPerRequest: null }), prefix: `{${prefix}}` },
    );
    let server: MetricsServer | undefined;
    try {
      // The feed's tick, and its run to the end.
      await feeds.tick('nightly');
      let last: Record<string, string> = {};
      for (let i = 0; i < 300 && !last.finishedAt; i++) {
        await new Promise((r) => setTimeout(r, 100));
        last = await feeds.last('nightly');
      }
      expect(last.finishedAt).toBeDefined();
      const { jobId } = await client.enqueue({
        request: { file: join(dir, 'second.csv'), mapping: join(dir, 'products.yaml'), owner },
        origin: 'cli',
        step: 'prepare',
      });
      const second = await client.wait(jobId, 60_000);
      for (let i = 0; i < 100 && (await events.getJobCounts('failed')).failed === 0; i++)
        await new Promise((r) => setTimeout(r, 50));

      const first = summaryOf(last.runId!);
      const enqueued = summaryOf(second.runId);
      expect(first.counts).toMatchObject({ created: 10, invalid: 3, failed: 0 });
      expect(enqueued.counts).toMatchObject({ unchanged: 5, updated: 3, created: 4, invalid: 3 });
      expect(new Set(first.issues!.map((e) => e.code)).size).toBeGreaterThanOrEqual(3);
      // A feed run with invalid rows but no failed one is a success.
      expect(Date.parse(last.lastSuccessAt!)).toBeLessThanOrEqual(Date.parse(last.finishedAt!));

      server = await startMetricsServer({
        host: '127.0.0.1',
        port: 0,
        access: { token: 'scrape-me' },
        own,
        fleet: fleetMetrics(config),
      });
      expect((await fetch(server.url)).status).toBe(401);
      const m = await scrape(server.url, { authorization: 'Bearer scrape-me' });

      for (const outcome of ROW_OUTCOMES) {
        expect(sampleValue(m, 'product_sync_rows_total', { feed: 'nightly', outcome }), outcome).toBe(
          first.counts[outcome],
        );
        expect(sampleValue(m, 'product_sync_rows_total', { feed: '', outcome }), outcome).toBe(
          enqueued.counts[outcome],
        );
      }
      const issueRows = new Map<string, number>();
      for (const e of [...first.issues!, ...enqueued.issues!])
        issueRows.set(e.code, (issueRows.get(e.code) ?? 0) + e.rows);
      const issueSamples = m.get('product_sync_issues_total')!.samples;
      expect(Object.fromEntries(issueSamples.map((s) => [s.labels.code, s.value]))).toEqual(
        Object.fromEntries(issueRows),
      );
      // Every request the runs sent (and only those: the worker sends none of its own here) is counted and timed.
      const sum = (name: string, api: string) =>
        m
          .get(name.replace(/_count$/, ''))!
          .samples.filter((s) => s.name === name && s.labels.api === api)
          .reduce((n, s) => n + s.value, 0);
      for (const api of ['product', 'reference'] as const) {
        const sent = first.requests[api] + enqueued.requests[api];
        expect(sum('product_sync_api_requests_total', api), api).toBe(sent);
        expect(sum('product_sync_api_request_duration_seconds_count', api), api).toBe(sent);
      }
      expect(sampleValue(m, 'product_sync_run_duration_seconds_count', { status: 'rows_failed' })).toBe(2);

      // Redis's part: BullMQ's queues (its completed counter collected by the workers), the feed, the events.
      expect(sampleValue(m, 'bullmq_job_count', { queue: 'import', state: 'completed' })).toBe(2);
      expect(sampleValue(m, 'bullmq_job_completed_total', { queue: 'import' })).toBe(2);
      expect(sampleValue(m, 'bullmq_job_count', { queue: 'push', state: 'completed' })).toBeGreaterThan(0);
      expect(sampleValue(m, 'product_sync_feed_last_success_timestamp_seconds', { feed: 'nightly' })).toBe(
        Date.parse(last.lastSuccessAt!) / 1000,
      );
      expect(sampleValue(m, 'product_sync_feed_overdue', { feed: 'nightly' })).toBe(0);
      expect(sampleValue(m, 'product_sync_events_pending')).toBe(1);
      expect(sampleValue(m, 'product_sync_events_dead')).toBe(1);
      expect(sampleValue(m, 'product_sync_redis_up')).toBe(1);

      // The overdue mark the feed deadlines set is read as it is written.
      await redis.hset(`{${prefix}}:feed:nightly:last`, 'overdue', '1');

      // The console: the same page behind its credentials, and the feed list.
      const app = await buildConsole({ config, token: 'console-token' });
      await app.listen({ port: 0, host: '127.0.0.1' });
      const url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
      try {
        expect((await fetch(`${url}/metrics`)).status).toBe(401);
        const auth = { authorization: 'Bearer console-token' };
        const c = await scrape(`${url}/metrics`, auth);
        expect(sampleValue(c, 'product_sync_feed_overdue', { feed: 'nightly' })).toBe(1);
        expect(sampleValue(c, 'bullmq_job_completed_total', { queue: 'import' })).toBe(2);
        // The console finished no run: its own counters have no series yet.
        expect(c.get('product_sync_rows_total')?.samples ?? []).toEqual([]);

        const listed = (await (await fetch(`${url}/feeds`, { headers: auth })).json()) as {
          feeds: {
            id: string;
            schedule: string;
            timezone: string;
            nextTick: string;
            lastSuccessAt: string;
            overdue: boolean;
          }[];
        };
        expect(listed.feeds).toHaveLength(1);
        const feed = listed.feeds[0]!;
        expect(feed).toMatchObject({
          id: 'nightly',
          schedule: '0 2 * * *',
          timezone: 'Europe/Paris',
          lastSuccessAt: last.lastSuccessAt,
          overdue: true,
        });
        // The scheduler's next tick: 02:00 in Paris, within a day.
        const next = Date.parse(feed.nextTick);
        expect(next).toBeGreaterThan(Date.now());
        expect(next - Date.now()).toBeLessThanOrEqual(24 * 3600_000);
        expect(new Intl.DateTimeFormat('en-GB', { timeZone: 'Europe/Paris', timeStyle: 'short' }).format(next)).toBe(
          '02:00',
        );

        if (hasChromium) {
          await withChromium(
            { viewport: { width: 1280, height: 900 }, ...({ extraHTTPHeaders: auth } as object) },
            async (browser) => {
              const page = browser.pages()[0] ?? (await browser.newPage());
              await page.goto(url);
              const row = page.locator('#feeds tr[data-feed="nightly"]');
              await row.waitFor();
              expect(await row.locator('.overdue').textContent()).toBe('yes');
              expect(await row.textContent()).toContain('0 2 * * *');
              expect(await row.locator('.success time').getAttribute('datetime')).toBe(last.lastSuccessAt);
              expect(await row.locator('.next time').getAttribute('datetime')).toBe(feed.nextTick);
              mkdirSync(OUTPUT, { recursive: true });
              for (const width of [1280, 390]) {
                await page.setViewportSize({ width, height: 900 });
                const scrollWidth = Number(await page.evaluate('document.documentElement.scrollWidth'));
                expect(scrollWidth, `${width} px`).toBeLessThanOrEqual(width);
                await page.screenshot({ path: join(OUTPUT, `console-feeds-${width}.png`), fullPage: true });
              }
            },
          );
        }
      } finally {
        await app.close();
      }
    } finally {
      await server?.close();
      await failing.close();
      await events.close();
      await client.close();
      await feeds.close();
      redis.disconnect();
    }
  }, 90_000);

  it('the worker command serves /metrics on METRICS_PORT (behind CONSOLE_TOKEN when set); an open METRICS_HOST is refused', async () => {
    const env = {
      ...process.env,
      ...apiEnv(sandbox.url),
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: prefix,
      REPORT_DIR: join(dir, 'reports'),
      LOG_LEVEL: 'warn',
      METRICS_PORT: '0',
    };
    const jobsDir = join(dir, 'no-jobs');
    // Another address without credentials: exit 2 before anything starts, saying how to set them.
    const open = spawnSync(process.execPath, ['bin/product-sync.mjs', 'worker', '--jobs-dir', jobsDir], {
      env: { ...env, METRICS_HOST: '0.0.0.0' },
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(open.status, open.stderr).toBe(2);
    expect(open.stderr).toMatch(/METRICS_HOST=0\.0\.0\.0 without authentication: set CONSOLE_TOKEN/);

    const child = spawn(process.execPath, ['bin/product-sync.mjs', 'worker', '--jobs-dir', jobsDir], {
      env: { ...env, CONSOLE_TOKEN: 'ops-token' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
    const exited = new Promise<number | null>((r) => child.once('exit', r));
    try {
      for (let i = 0; i < 300 && !/metrics on (\S+)/.test(stdout); i++) await new Promise((r) => setTimeout(r, 50));
      const url = /metrics on (\S+)/.exec(stdout)?.[1];
      expect(url, stderr).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/metrics$/);
      expect((await fetch(url!)).status).toBe(401);
      const m = await scrape(url!, { authorization: 'Bearer ops-token' });
      // Redis's part is the fleet's: the runs of the test above are in it; this worker finished none itself.
      expect(sampleValue(m, 'bullmq_job_completed_total', { queue: 'import' })).toBe(2);
      expect(m.get('product_sync_rows_total')?.samples ?? []).toEqual([]);
    } finally {
      child.kill('SIGTERM');
    }
    expect(await exited, stderr).toBe(0);
  }, 60_000);
});
