import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, vi } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { logger } from '../../src/logger.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { redisState } from '../../src/redis-state.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox } from '../../src/sandbox/server.ts';
import { ownRedis } from '../helpers/redis-server.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { expectRerunCreatesNothing, reportIdsMatchApi, expectOneItemPerGtin, useSandbox } from '../helpers/sandbox.ts';
import { apiEnv } from '../helpers/env.ts';
import { cliInProcess, spawnCli } from '../helpers/cli.ts';
import { until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
const sandbox = useSandbox();

function env(dir: string, redisUrl: string, apiUrl = sandbox.url): Record<string, string> {
  return {
    ...apiEnv(apiUrl),
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: 'ps-faults',
    REPORT_DIR: join(dir, 'reports'),
    UPLOAD_DIR: join(dir, 'uploads'),
    API_CONCURRENCY: '4',
    LOG_LEVEL: 'silent',
  };
}

function itemsOf(): { gtin?: unknown; tradeItemId: string }[] {
  return sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);
}

// The tests run at once: each has a Redis of its own, and the one that is not about faults a sandbox of its own.
describe.concurrent('queue mode under infrastructure faults', () => {
  it('survives a Redis restart (AOF) in the middle of an import', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [5, 15], seed: 9 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-aof-'));
    const redis = await ownRedis(dir);
    await redis.start();
    const e = env(dir, redis.url);
    const { file, mapping } = writeProductSheet(dir, 400, { owner });
    const workers = await startWorkers(loadConfig(e), {
      jobsDir: join(dir, 'no-jobs'),
      chunkSize: 25,
      lockDurationMs: 3000,
    });
    const client = importQueueClient(loadConfig(e));
    try {
      const { jobId } = await client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' });
      // Redis dies in the middle of the push: some items exist, most do not.
      await until('the first items', () => itemsOf().length >= 40);
      expect(itemsOf().length).toBeLessThan(400);
      await redis.stop('SIGKILL');
      // Down until the workers have seen it go.
      await until('the workers to lose Redis', () => redisState.down);
      await redis.start();
      const result = await client.wait(jobId, 90_000);
      expect(result.summary.counts.rows).toBe(400);
      expect(result.summary.counts.failed + result.summary.counts.notAttempted).toBe(0);
      expectOneItemPerGtin(sandbox, owner, 400);
      reportIdsMatchApi(sandbox, owner, result.reportDir, 400);
      sandbox.handle.setFaults({});
      await expectRerunCreatesNothing(sandbox, e, file, mapping, 400);
    } finally {
      await client.close();
      await workers.close();
      await redis.stop();
      sandbox.handle.setFaults({});
    }
  }, 120_000);

  it('warns at start when Redis may evict keys, and not when it may not', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-evict-'));
    const redis = await ownRedis(dir, { args: ['--maxmemory-policy', 'allkeys-lru'] });
    await redis.start();
    // The workers of `worker`, in-process: what they log at start is what is checked, not the process.
    const warn = vi.spyOn(logger, 'warn').mockImplementation(() => undefined);
    const startAndStop = async (): Promise<string> => {
      warn.mockClear();
      const workers = await startWorkers(loadConfig(env(dir, redis.url)), { jobsDir: join(dir, 'no-jobs') });
      await workers.close();
      return warn.mock.calls.map((c) => String(c[1])).join('\n');
    };
    try {
      expect(await startAndStop()).toMatch(/maxmemory-policy is "allkeys-lru": set it to "noeviction"/);
      const { Redis } = await import('ioredis');
      const r = new Redis(redis.url);
      await r.config('SET', 'maxmemory-policy', 'noeviction');
      r.disconnect();
      expect(await startAndStop()).not.toMatch(/maxmemory-policy/);
    } finally {
      warn.mockRestore();
      await redis.stop();
    }
  }, 30_000);

  it('two workers and two feeds importing the same GTIN make one item', async () => {
    const api = await startSandbox({ port: 0 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-two-feeds-'));
    const redis = await ownRedis(dir);
    await redis.start();
    const e = env(dir, redis.url, api.url);
    const jobs = join(dir, 'jobs');
    mkdirSync(jobs);
    for (const feed of ['acme', 'bravo']) {
      const drop = join(dir, feed);
      mkdirSync(drop);
      // Rows 0-49 in both feeds (same GTINs), plus 10 of each feed's own.
      const lines = ['GTIN;Désignation;Poids net;Unité'];
      for (let i = 0; i < 50; i++) lines.push(`${testGtin(i)};Biscuits au beurre ${i};100;g`);
      for (let i = 0; i < 10; i++)
        lines.push(`${testGtin(i, feed === 'acme' ? '035001' : '035002')};${feed} ${i};100;g`);
      writeFileSync(join(drop, `${feed}-1.csv`), `${lines.join('\n')}\n`);
      writeFileSync(
        join(jobs, `${feed}.yaml`),
        `schedule: "0 3 * * *"\nsource: { dir: ${drop}, pattern: "${feed}-*.csv", settleSeconds: 0 }\nmapping: ${join(dir, 'products.yaml')}\n`,
      );
    }
    writeProductSheet(dir, 1, { owner, file: 'unused.csv' });
    const spawnWorker = () => spawnCli(['worker', '--jobs-dir', jobs], { env: e });
    const [a, b] = [spawnWorker(), spawnWorker()];
    const client = importQueueClient(loadConfig(e));
    try {
      await until('both workers to start', () => [a, b].every((w) => w.out.stdout.includes('worker started')));
      for (const feed of ['acme', 'bravo']) {
        const run = await cliInProcess(['feeds', 'run', feed, '--jobs-dir', jobs], { env: e });
        expect(run.code, run.stderr).toBe(0);
      }
      // Both feed ticks enqueue an import; wait until both are done.
      await until('both imports done', async () => (await client.queue.getJobCountByTypes('completed')) >= 2);
      const runs = await client.queue.getJobs(['completed']);
      expect(runs).toHaveLength(2);
      for (const r of runs) {
        expect(r.returnvalue.summary.counts).toMatchObject({ rows: 60, failed: 0, invalid: 0 });
        expect(
          r.returnvalue.summary.counts.created +
            r.returnvalue.summary.counts.updated +
            r.returnvalue.summary.counts.unchanged,
        ).toBe(60);
        reportIdsMatchApi(api, owner, r.returnvalue.reportDir, 60);
      }
      expectOneItemPerGtin(api, owner, 70);
      for (const feed of ['acme', 'bravo'])
        await expectRerunCreatesNothing(api, e, join(dir, feed, `${feed}-1.csv`), join(dir, 'products.yaml'), 60);
    } finally {
      // SIGKILL: this test is not about shutdown, and a worker must not outlive it.
      a.child.kill('SIGKILL');
      b.child.kill('SIGKILL');
      await client.close();
      await redis.stop();
      await api.close();
    }
  }, 90_000);
});
