import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { ownRedis } from '../helpers/redis-server.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { expectRerunCreatesNothing, reportIdsMatchApi, expectOneItemPerGtin, useSandbox } from '../helpers/sandbox.ts';
import { apiEnv } from '../helpers/env.ts';
import { cliInProcess, spawnCli } from '../helpers/cli.ts';
import { until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
const sandbox = useSandbox();

function env(dir: string, redisUrl: string): Record<string, string> {
  return {
    ...apiEnv(sandbox.url),
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

describe('queue mode under infrastructure faults', () => {
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
      for (let i = 0; i < 3000 && itemsOf().length < 40; i++) await new Promise((r) => setTimeout(r, 5));
      expect(itemsOf().length).toBeGreaterThan(0);
      expect(itemsOf().length).toBeLessThan(400);
      await redis.stop('SIGKILL');
      await new Promise((r) => setTimeout(r, 500));
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
    const startAndStop = async (): Promise<string> => {
      const w = spawn(process.execPath, ['bin/product-sync.mjs', 'worker', '--jobs-dir', join(dir, 'no-jobs')], {
        env: { ...process.env, ...env(dir, redis.url), LOG_LEVEL: 'warn' },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      w.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
      await new Promise<void>((r) =>
        w.stdout!.on('data', (d: Buffer) => d.toString().includes('worker started') && r()),
      );
      w.kill('SIGTERM');
      expect(await new Promise((r) => w.once('exit', (code, signal) => r(code ?? signal))), stderr).toBe(0);
      return stderr;
    };
    try {
      expect(await startAndStop()).toMatch(/maxmemory-policy is \\?"allkeys-lru\\?": set it to \\?"noeviction/);
      const { Redis } = await import('ioredis');
      const r = new Redis(redis.url);
      await r.config('SET', 'maxmemory-policy', 'noeviction');
      r.disconnect();
      expect(await startAndStop()).not.toMatch(/maxmemory-policy/);
    } finally {
      await redis.stop();
    }
  }, 30_000);

  it('two workers and two feeds importing the same GTIN make one item', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-two-feeds-'));
    const redis = await ownRedis(dir);
    await redis.start();
    const e = env(dir, redis.url);
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
      for (let i = 0; i < 300; i++) {
        const done = await client.queue.getJobCountByTypes('completed');
        if (done >= 2) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      const runs = await client.queue.getJobs(['completed']);
      expect(runs).toHaveLength(2);
      for (const r of runs) {
        expect(r.returnvalue.summary.counts).toMatchObject({ rows: 60, failed: 0, invalid: 0 });
        expect(
          r.returnvalue.summary.counts.created +
            r.returnvalue.summary.counts.updated +
            r.returnvalue.summary.counts.unchanged,
        ).toBe(60);
        reportIdsMatchApi(sandbox, owner, r.returnvalue.reportDir, 60);
      }
      expectOneItemPerGtin(sandbox, owner, 70);
      for (const feed of ['acme', 'bravo'])
        await expectRerunCreatesNothing(sandbox, e, join(dir, feed, `${feed}-1.csv`), join(dir, 'products.yaml'), 60);
    } finally {
      // SIGKILL: this test is not about shutdown, and a worker must not outlive it.
      a.child.kill('SIGKILL');
      b.child.kill('SIGKILL');
      await client.close();
      await redis.stop();
    }
  }, 90_000);
});
