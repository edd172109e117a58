// Queue mode: an import through a flow of chunk jobs, a worker stopped by SIGTERM, feed files, a 429 held back. A
// worker process killed with SIGKILL mid-import (several trials at once): queue-kill.test.ts.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { expectRerunCreatesNothing, reportIdsMatchApi, expectOneItemPerGtin, useSandbox } from '../helpers/sandbox.ts';
import { queueEnv } from '../helpers/env.ts';
import { usePrefixes } from '../helpers/prefixes.ts';
import { sleep } from '../helpers/wait.ts';
import { useProcesses, type TestProcess } from '../helpers/processes.ts';

const owner = DEMO_COMPANY_ID;
const redisUrl = inject('redisUrl');
const sandbox = useSandbox();
const nextPrefix = usePrefixes('queue');
/** Worker processes: each killed with its test, however it ends. */
const procs = useProcesses();

function env(dir: string): Record<string, string> {
  return queueEnv(sandbox.url, redisUrl, nextPrefix(), dir, {
    API_CONCURRENCY: '4',
    CHUNK_SIZE: '40',
    WORKER_LOCK_MS: '3000',
  });
}

/**
 * The worker process the SIGTERM test stops, started with the file (its start goes on beside the tests before it): its
 * directory, environment, and its start (`worker started`).
 */
let stopped: { dir: string; e: Record<string, string>; started: Promise<TestProcess> };
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'ps-queue-term-'));
  const e = env(dir);
  const started = procs.worker(join(dir, 'no-jobs'), { env: e });
  // Awaited by its test; a start that failed is that test's failure, not an unhandled rejection meanwhile.
  started.catch(() => undefined);
  stopped = { dir, e, started };
});

function itemsOf(of = owner): { gtin?: unknown; tradeItemId: string }[] {
  return sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === of);
}

describe('queue mode', () => {
  it('imports an enqueued sheet through a flow of chunk jobs with the inline summary, and runs the same upload once', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [8, 16], seed: 3 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-queue-'));
    const e = env(dir);
    const config: Config = loadConfig(e);
    const { file, mapping } = writeProductSheet(dir, 120, { owner });
    const workers = await startWorkers(config, { jobsDir: join(dir, 'no-jobs'), chunkSize: 25 });
    const client = importQueueClient(config);
    try {
      const first = await client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' });
      const again = await client.enqueue({ request: { file, mapping }, origin: 'upload', step: 'prepare' });
      expect(again).toEqual({ jobId: first.jobId, existed: true });
      // While the chunks run, the parent's progress counts the rows they have pushed.
      const seen: { operationsSent: number; chunksDone: number; chunks: number }[] = [];
      for (let i = 0; i < 600; i++) {
        const s = await client.status(first.jobId);
        if (s?.state === 'completed' || s?.state === 'failed') break;
        const p = s?.progress as
          { stage?: string; operationsSent: number; chunksDone: number; chunks: number } | undefined;
        if (s?.state === 'waiting-children' && p?.stage === 'push') seen.push(p);
        await new Promise((r) => setTimeout(r, 15));
      }
      expect(
        seen.some(
          (p) => p.chunksDone > 0 && p.chunksDone < 5 && p.operationsSent === p.chunksDone * 25 && p.chunks === 5,
        ),
      ).toBe(true);
      const result = await client.wait(first.jobId, 60_000);
      expect(result.exitCode).toBe(0);
      expect(result.summary.counts).toMatchObject({ rows: 120, created: 120, failed: 0, invalid: 0 });
      expectOneItemPerGtin(sandbox, owner, 120);
      reportIdsMatchApi(sandbox, owner, result.reportDir, 120);
      expect(sandbox.handle.counts().byRoute['POST /api/tradeItem']).toBe(120);
      // The undo ledger of a queued run: its chunks' parts, merged in the shared run directory (issue 27).
      const ledger = readFileSync(join(result.reportDir, 'undo.jsonl'), 'utf8').trim().split('\n');
      expect(ledger.map((l) => (JSON.parse(l) as { outcome: string }).outcome)).toEqual(Array(120).fill('created'));
      const push = new Queue('push', {
        connection: new Redis(redisUrl, { maxRetriesPerRequest: null }),
        prefix: `{${e.QUEUE_PREFIX}}`,
      });
      expect(await push.getJobCountByTypes('completed')).toBe(5);
      await push.close();
      expect((await client.status(first.jobId))?.progress).toMatchObject({ stage: 'done', rowsRead: 120 });
      await expectRerunCreatesNothing(sandbox, e, file, mapping, 120);
    } finally {
      await client.close();
      await workers.close();
      sandbox.handle.setFaults({});
    }
  });

  it('stops on SIGTERM after the chunk in hand (exit 0), and another worker finishes the import', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [4, 12], seed: 5 });
    const { dir, e } = stopped;
    const { file, mapping } = writeProductSheet(dir, 200, { owner });
    const first = await stopped.started;
    const client = importQueueClient(loadConfig(e));
    try {
      const { jobId } = await client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' });
      // SIGTERM in the middle of the push.
      for (let i = 0; i < 1500 && itemsOf().length < 60; i++) await new Promise((r) => setTimeout(r, 10));
      first.child.kill('SIGTERM');
      expect((await first.exit).code).toBe(0);
      const workers = await startWorkers(loadConfig(e), {
        jobsDir: join(dir, 'no-jobs'),
        chunkSize: 40,
        lockDurationMs: 3000,
      });
      try {
        const result = await client.wait(jobId, 60_000);
        expect(result.summary.counts.rows).toBe(200);
        expect(result.summary.counts.created).toBe(200);
        expectOneItemPerGtin(sandbox, owner, 200);
        reportIdsMatchApi(sandbox, owner, result.reportDir, 200);
        sandbox.handle.setFaults({});
        await expectRerunCreatesNothing(sandbox, e, file, mapping, 200);
      } finally {
        await workers.close();
      }
    } finally {
      await client.close();
      sandbox.handle.setFaults({});
    }
  }, 120_000);

  it('refuses to start on an invalid feed file, naming its line; schedules valid feeds once however many workers run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-feeds-'));
    const e = env(dir);
    const jobs = join(dir, 'jobs');
    mkdirSync(jobs);
    writeFileSync(
      join(jobs, 'bad.yaml'),
      'schedule: "0 2 * * *"\nsource: { dir: x, pattern: "*.csv" }\nmapping: m\nmode: sometimes\n',
    );
    await expect(startWorkers(loadConfig(e), { jobsDir: jobs })).rejects.toThrow(/bad\.yaml:4: mode/);
    writeFileSync(
      join(jobs, 'bad.yaml'),
      'schedule: "* * * * * *"\ntimezone: Europe/Paris\nsource: { dir: drop, pattern: "acme-*.csv" }\nmapping: m\n',
    );
    const w1 = await startWorkers(loadConfig(e), { jobsDir: jobs });
    const w2 = await startWorkers(loadConfig(e), { jobsDir: jobs });
    const feeds = new Queue('feeds', {
      connection: new Redis(redisUrl, { maxRetriesPerRequest: null }),
      prefix: `{${e.QUEUE_PREFIX}}`,
    });
    try {
      expect((await feeds.getJobSchedulers()).map((s) => s.key)).toEqual(['bad']);
      const t0 = Date.now();
      await sleep(2000);
      const ticks = await feeds.getJobCountByTypes('completed', 'failed');
      // Every second for ~2 s: two or three ticks, not twice that with two workers.
      expect(ticks).toBeGreaterThanOrEqual(1);
      expect(ticks).toBeLessThanOrEqual(Math.ceil((Date.now() - t0) / 1000) + 1);
    } finally {
      await w1.close();
      await w2.close();
    }
    // A feed file removed from jobs/ loses its scheduler at the next worker start; a new one gets its own.
    rmSync(join(jobs, 'bad.yaml'));
    writeFileSync(
      join(jobs, 'nightly.yaml'),
      'schedule: "0 2 * * *"\nsource: { dir: drop, pattern: "*.csv" }\nmapping: m\n',
    );
    const w3 = await startWorkers(loadConfig(e), { jobsDir: jobs });
    try {
      expect((await feeds.getJobSchedulers()).map((s) => s.key)).toEqual(['nightly']);
    } finally {
      await w3.close();
      await feeds.close();
    }
  }, 60_000);

  it('holds back only the refused request on a 429: the others go on, every row goes through once', async () => {
    sandbox.handle.reset();
    // The 41st faultable request (well into the push) is answered 429 with Retry-After: 2.
    sandbox.handle.setFaults({ latencyMs: 3, retryAfterSeconds: 2, sequence: [...Array<'ok'>(40).fill('ok'), '429'] });
    const dir = mkdtempSync(join(tmpdir(), 'ps-queue-429-'));
    const e = env(dir);
    const { file, mapping } = writeProductSheet(dir, 400, { owner });
    // One big chunk in each worker's hands: neither stops for the other's 429 (a 429 no longer pauses the fleet).
    const a = await startWorkers(loadConfig(e), { jobsDir: join(dir, 'no-jobs'), chunkSize: 100, pushConcurrency: 1 });
    const b = await startWorkers(loadConfig(e), { jobsDir: join(dir, 'no-jobs'), chunkSize: 100, pushConcurrency: 1 });
    const client = importQueueClient(loadConfig(e));
    try {
      const { jobId } = await client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' });
      let at429: number | undefined;
      for (let i = 0; i < 3000 && at429 === undefined; i++) {
        if ((sandbox.handle.counts().faults['429'] ?? 0) > 0) at429 = sandbox.handle.counts().total;
        else await new Promise((r) => setTimeout(r, 2));
      }
      expect(at429).toBeDefined();
      // Requests go on during the refused one's Retry-After (2 s).
      for (let i = 0; i < 1500 && sandbox.handle.counts().total - at429! <= 20; i++)
        await new Promise((r) => setTimeout(r, 2));
      expect(sandbox.handle.counts().total - at429!).toBeGreaterThan(20);
      const result = await client.wait(jobId, 60_000);
      expect(result.summary.counts).toMatchObject({ rows: 400, created: 400, failed: 0 });
      expectOneItemPerGtin(sandbox, owner, 400);
    } finally {
      await client.close();
      await a.close();
      await b.close();
      sandbox.handle.setFaults({});
    }
  }, 60_000);
});
