import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { EVENT_TYPE_NAMES } from '../../src/events/catalog.ts';
import { queuePrefix } from '../../src/queue/connection.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { feedKeys } from '../../src/redis-keys.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { buildConsole } from '../../src/server/app.ts';
import { cliInProcess, runCli } from '../helpers/cli.ts';
import { hasChromium, withChromium } from '../helpers/console.ts';
import { queueEnv } from '../helpers/env.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';
import { startReceiver, type Received, type Receiver } from '../helpers/webhook-receiver.ts';

const owner = DEMO_COMPANY_ID;
// The suite's Redis, under key prefixes of this file's own (ps-ev-all, ps-ev-retry, ps-ev-dead).
const redisUrl = inject('redisUrl');
let sandbox: RunningSandbox;
let receiver: Receiver;
let dir: string;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'ps-events-'));
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await sandbox?.close();
});

function env(prefix: string, extra: Record<string, string> = {}): Record<string, string> {
  return queueEnv(sandbox.url, redisUrl, prefix, dir, {
    LOG_LEVEL: 'silent',
    WEBHOOK_URL: receiver.url,
    WEBHOOK_SECRET: receiver.secret,
    WEBHOOK_RETRY_BASE_MS: '50',
    PUBLIC_URL: 'https://console.example/',
    ...extra,
  });
}

/** The verified, accepted deliveries of `type` (one per event id). */
function acceptedOf(type: string, where: (r: Received) => boolean = () => true): Received[] {
  return [...receiver.accepted().values()].filter((r) => r.type === type && where(r));
}

describe('run events and feed deadlines (queue)', () => {
  it('sends every event type, signed (verified by standardwebhooks), feed.missed once, then feed.recovered', async () => {
    const e = env('ps-ev-all');
    const jobs = join(dir, 'jobs');
    const drop = join(dir, 'drop');
    mkdirSync(jobs);
    mkdirSync(drop);
    const { file: sheet, mapping } = writeProductSheet(dir, 10, { owner, file: 'ten.csv' });
    // A feed ticking every second over an empty drop folder, expected to have run every 2 seconds.
    writeFileSync(
      join(jobs, 'acme.yaml'),
      `schedule: "* * * * * *"\nexpect: "*/2 * * * * *"\nsource: { dir: ${drop}, pattern: "acme-*.csv", settleSeconds: 0 }\nmapping: ${mapping}\n`,
    );
    const config = loadConfig(e);
    const workers = await startWorkers(config, { jobsDir: jobs, chunkSize: 5, lockDurationMs: 5000 });
    const client = importQueueClient(config);
    const conn = new Redis(redisUrl);
    try {
      // run.queued, run.started, run.finished: a sheet through the queue.
      const { jobId } = await client.enqueue({ request: { file: sheet, mapping }, origin: 'cli', step: 'prepare' });
      const done = await client.wait(jobId, 30_000);
      expect(done.exitCode).toBe(0);
      await receiver.waitFor(() => acceptedOf('run.finished', (r) => r.data.jobId === jobId).length === 1);
      const finished = acceptedOf('run.finished', (r) => r.data.jobId === jobId)[0]!;
      expect(finished.data).toMatchObject({
        runId: done.runId,
        status: 'ok',
        exitCode: 0,
        counts: { rows: 10, created: 10 },
        issues: [],
        links: {
          run: `https://console.example/#run=${jobId}`,
          summary: `https://console.example/runs/${jobId}/files/summary.json`,
        },
      });
      // Every row went through: no rejected file, so no link to one.
      expect(finished.data.links).not.toHaveProperty('rejected');
      expect(acceptedOf('run.queued', (r) => r.data.jobId === jobId)).toHaveLength(1);
      expect(acceptedOf('run.started', (r) => r.data.jobId === jobId)).toHaveLength(1);

      // run.aborted: a one-row sheet in full mode would archive 9 of 10 items, past the guard's 10 %.
      const one = writeProductSheet(dir, 1, { owner, file: 'one.csv' });
      const aborted = await client.enqueue({
        request: { file: one.file, mapping, mode: 'full', maxArchiveRatio: 0.1 },
        origin: 'cli',
        step: 'prepare',
      });
      expect((await client.wait(aborted.jobId, 30_000)).exitCode).toBe(3);
      await receiver.waitFor(() => acceptedOf('run.aborted', (r) => r.data.jobId === aborted.jobId).length === 1);
      expect(acceptedOf('run.aborted', (r) => r.data.jobId === aborted.jobId)[0]!.data).toMatchObject({
        reason: 'archive_guard',
        code: 'PS_ERR_ARCHIVE_GUARD',
        exitCode: 3,
      });

      // run.failed: a mapping the worker cannot load.
      const bad = join(dir, 'bad.yaml');
      writeFileSync(bad, 'name: bad\n');
      const failed = await client.enqueue({ request: { file: sheet, mapping: bad }, origin: 'cli', step: 'prepare' });
      await expect(client.wait(failed.jobId, 30_000)).rejects.toThrow();
      await receiver.waitFor(() => acceptedOf('run.failed', (r) => r.data.jobId === failed.jobId).length === 1);
      expect(acceptedOf('run.failed', (r) => r.data.jobId === failed.jobId)[0]!.data).toMatchObject({
        error: { code: 'PS_ERR_MAPPING_INVALID' },
      });

      // feed.no_new_file from the ticks, feed.missed at the first expected time, and never again while overdue.
      await receiver.waitFor(() => acceptedOf('feed.missed').length === 1 && acceptedOf('feed.no_new_file').length > 0);
      const missed = acceptedOf('feed.missed')[0]!;
      expect(missed.data).toMatchObject({ feed: 'acme', expect: '*/2 * * * * *', lastSuccessAt: null });
      const last = feedKeys(queuePrefix(config), 'acme').last;
      // The event is recorded before the feed is marked overdue: the mark follows it.
      await until(async () => (await conn.hget(last, 'overdue')) === '1');
      expect(await conn.hget(last, 'overdueSince')).toBe(missed.data.expectedAt);
      // Two more expected times pass.
      const twoLater = Date.parse(String(missed.data.expectedAt)) + 4000;
      await until(async () => Date.parse((await conn.hget(last, 'expectCheckedAt')) ?? '') >= twoLater);
      expect(acceptedOf('feed.missed')).toHaveLength(1);
      expect(acceptedOf('feed.no_new_file')[0]!.data).toMatchObject({ feed: 'acme', file: null });

      // A file arrives: the feed's run succeeds, and the feed recovers.
      writeProductSheet(drop, 2, { owner, file: 'acme-1.csv', prefix: '035444' });
      await receiver.waitFor(() => acceptedOf('feed.recovered').length === 1, 30_000);
      const recovered = acceptedOf('feed.recovered')[0]!;
      expect(recovered.data).toMatchObject({ feed: 'acme', overdueSince: missed.data.expectedAt });
      expect(
        acceptedOf('run.finished', (r) => r.data.feed === 'acme' && r.data.runId === recovered.data.runId),
      ).toHaveLength(1);
      await until(async () => (await conn.hget(last, 'overdue')) === '0');
      expect(await conn.hget(last, 'lastSuccessAt')).toMatch(/^\d{4}-\d\d-\d\dT/);

      // Every type of the catalogue came, and nothing arrived unsigned.
      const types = new Set([...receiver.accepted().values()].map((r) => r.type));
      expect([...types].sort()).toEqual([...EVENT_TYPE_NAMES].sort());
      expect(receiver.received.filter((r) => !r.verified)).toEqual([]);
      // The secret stays out of Redis: delivery jobs name their endpoint, the worker holds the secret.
      const key = receiver.secret.slice('whsec_'.length);
      let scanned = 0;
      for (const k of await conn.keys('{ps-ev-all}:events:*')) {
        if ((await conn.type(k)) !== 'hash') continue;
        scanned++;
        expect(JSON.stringify(await conn.hgetall(k))).not.toContain(key);
      }
      expect(scanned).toBeGreaterThan(0);
    } finally {
      conn.disconnect();
      await client.close();
      await workers.close();
    }
  }, 60_000);

  it('retries a failing endpoint with the same webhook-id until it accepts', async () => {
    const config = loadConfig(env('ps-ev-retry'));
    const workers = await startWorkers(config, { jobsDir: join(dir, 'no-jobs') });
    const client = importQueueClient(config);
    try {
      receiver.failFirst(3);
      const { file, mapping } = writeProductSheet(dir, 2, { owner, file: 'retry.csv', prefix: '035111' });
      const { jobId } = await client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' });
      await client.wait(jobId, 30_000);
      await receiver.waitFor(() => acceptedOf('run.finished', (r) => r.data.jobId === jobId).length === 1);
      const id = acceptedOf('run.finished', (r) => r.data.jobId === jobId)[0]!.id;
      const attempts = receiver.received.filter((r) => r.id === id);
      expect(attempts.map((r) => r.status)).toEqual([500, 500, 500, 204]);
      expect(new Set(attempts.map((r) => r.type))).toEqual(new Set(['run.finished']));
    } finally {
      receiver.failFirst(0);
      await client.close();
      await workers.close();
    }
  }, 30_000);

  it('keeps an event out of retries as dead; the console lists it and redelivers it with the same webhook-id', async () => {
    const config = loadConfig(env('ps-ev-dead', { WEBHOOK_RETRY_WINDOW_SECONDS: '1' }));
    const workers = await startWorkers(config, { jobsDir: join(dir, 'no-jobs') });
    const client = importQueueClient(config);
    const app = await buildConsole({ config });
    try {
      receiver.failAll(503);
      const { file, mapping } = writeProductSheet(dir, 1, { owner, file: 'dead.csv', prefix: '035222' });
      const { jobId } = await client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' });
      await client.wait(jobId, 30_000);
      type Dead = { jobId: string; id: string; type: string; attempts: number; url: string };
      let dead: Dead[] = [];
      for (let i = 0; i < 200 && !dead.some((d) => d.type === 'run.finished'); i++) {
        await new Promise((r) => setTimeout(r, 50));
        dead = (await app.inject({ url: '/events/dead' })).json<{ events: Dead[] }>().events;
      }
      const d = dead.find((x) => x.type === 'run.finished')!;
      expect(d).toMatchObject({ url: receiver.url });
      expect(d.attempts).toBeGreaterThan(1);
      expect(receiver.received.filter((r) => r.id === d.id).every((r) => r.status === 503)).toBe(true);
      receiver.failAll(null);
      if (hasChromium) {
        // As a person does it: the page's dead events section, its redeliver button.
        const address = await app.listen({ port: 0, host: '127.0.0.1' });
        await withChromium({}, async (browser) => {
          const page = browser.pages()[0] ?? (await browser.newPage());
          await page.goto(address);
          const button = page.locator(`button[data-redeliver="${d.jobId}"]`);
          await button.waitFor();
          expect(await page.locator('#dead-events-section').isVisible()).toBe(true);
          await button.click();
          await page.waitForSelector('#message.ok');
        });
      } else {
        const res = await app.inject({ method: 'POST', url: `/events/dead/${d.jobId}/redeliver` });
        expect(res.statusCode).toBe(202);
      }
      await receiver.waitFor(() => receiver.accepted().has(d.id));
      expect(receiver.accepted().get(d.id)!.type).toBe('run.finished');
      // Delivered now: no longer dead, and a second redeliver is refused.
      const again = await app.inject({ method: 'POST', url: `/events/dead/${d.jobId}/redeliver` });
      expect(again.statusCode).toBe(409);
      expect((await app.inject({ url: '/events/dead/no-such/redeliver', method: 'POST' })).statusCode).toBe(404);
    } finally {
      receiver.failAll(null);
      await app.close();
      await client.close();
      await workers.close();
    }
  }, 30_000);
});

describe('run events (inline import)', () => {
  it('delivers run.started and run.finished at the end, and lists them with their state in summary.json', async () => {
    const { file, mapping } = writeProductSheet(dir, 3, { owner, file: 'inline.csv', prefix: '035333' });
    const e: NodeJS.ProcessEnv = { ...process.env, ...env('unused'), REPORT_DIR: join(dir, 'inline-reports') };
    delete e.REDIS_URL;
    // A process: its logs too must not carry the secret.
    const r = await runCli(['import', file, '--mapping', mapping], { env: e as Record<string, string> });
    const stdout = r.stdout + r.stderr;
    expect(r.code, stdout).toBe(0);
    expect(stdout).not.toContain(receiver.secret.slice('whsec_'.length));
    const runId = readdirSync(join(dir, 'inline-reports')).filter((n) => !n.startsWith('.'))[0]!;
    const summary = JSON.parse(readFileSync(join(dir, 'inline-reports', runId, 'summary.json'), 'utf8'));
    expect(summary.events).toEqual([
      expect.objectContaining({ type: 'run.started', state: 'delivered', attempts: 1 }),
      expect.objectContaining({ type: 'run.finished', state: 'delivered', attempts: 1 }),
    ]);
    for (const ev of summary.events) expect(receiver.accepted().get(ev.id)?.data.runId).toBe(summary.runId);
    expect(JSON.stringify(summary)).not.toContain(receiver.secret.slice('whsec_'.length));
  }, 30_000);

  it("lists an event out of its inline retries as failed, says so on stderr, and still exits with the run's code", async () => {
    const { file, mapping } = writeProductSheet(dir, 1, { owner, file: 'inline-dead.csv', prefix: '035334' });
    const reports = join(dir, 'inline-dead-reports');
    const e: NodeJS.ProcessEnv = { ...process.env, ...env('unused'), REPORT_DIR: reports, WEBHOOK_INLINE_SECONDS: '1' };
    delete e.REDIS_URL;
    receiver.failAll(503);
    try {
      const { code, output } = await cli(['import', file, '--mapping', mapping], e);
      expect(code, output).toBe(0);
      expect(output).toMatch(/2 webhook event\(s\) not delivered: see "events" in .*summary\.json/);
      const runId = readdirSync(reports).filter((n) => !n.startsWith('.'))[0]!;
      const summary = JSON.parse(readFileSync(join(reports, runId, 'summary.json'), 'utf8'));
      for (const ev of summary.events) {
        expect(ev).toMatchObject({ state: 'failed', error: `${receiver.url} answered 503` });
        expect(ev.attempts).toBeGreaterThan(1);
        // Every attempt carried the event's one id.
        expect(receiver.received.filter((r) => r.id === ev.id).length).toBe(ev.attempts);
      }
    } finally {
      receiver.failAll(null);
    }
  }, 30_000);

  it('sends run.failed when the run ends without a report (a bad mapping: exit 2)', async () => {
    const { file } = writeProductSheet(dir, 1, { owner, file: 'inline-bad.csv', prefix: '035335' });
    const bad = join(dir, 'inline-bad.yaml');
    writeFileSync(bad, 'name: inline-bad\n');
    const e: NodeJS.ProcessEnv = { ...process.env, ...env('unused'), REPORT_DIR: join(dir, 'inline-bad-reports') };
    delete e.REDIS_URL;
    const before = receiver.received.length;
    const { code, output } = await cli(['import', file, '--mapping', bad], e);
    expect(code, output).toBe(2);
    const got = receiver.received.slice(before).filter((r) => r.type === 'run.failed');
    expect(got).toHaveLength(1);
    expect(got[0]).toMatchObject({
      verified: true,
      data: { file: 'inline-bad.csv', error: { code: 'PS_ERR_MAPPING_INVALID' } },
    });
  }, 30_000);
});

/** The CLI in-process: its exit code, and stdout and stderr together. */
async function cli(args: string[], env: NodeJS.ProcessEnv): Promise<{ code: number | null; output: string }> {
  const r = await cliInProcess(args, { env: env as Record<string, string>, unset: ['REDIS_URL'] });
  return { code: r.code, output: r.stdout + r.stderr };
}
