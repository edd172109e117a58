// Redis lost while a worker runs, or back without its data (docs/errors.md, docs/queue.md "When Redis is away"): every
// situation ends in bounded time with one clear line and the documented exit code. Real processes (the CLI), a real
// Redis of each test's own that the test stops and starts again, the sandbox as the API. Redis away when a command
// starts: redis-outage-start.test.ts.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { openFeedsQueue } from '../../src/queue/queues.ts';
import { redisState } from '../../src/redis-state.ts';
import { stopWorkers } from '../../src/queue/worker-stop.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import type { RunningSandbox } from '../../src/sandbox/server.ts';
import { spawnCli } from '../helpers/cli.ts';
import { logLines, outageEnv } from '../helpers/outage.ts';
import { ownRedis } from '../helpers/redis-server.ts';
import { expectOneItemPerGtin, reportIdsMatchApi, useSandbox } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { sleep, until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
const sandbox = useSandbox();
/** The sandbox of the second-signal test, which runs beside the first test of its describe. */
const signalSandbox = useSandbox();

const cli = (args: string[], env: Record<string, string>) => spawnCli(args, { env });

const itemsOf = (s: RunningSandbox) => s.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);
const items = () => itemsOf(sandbox);

const env = (dir: string, redisUrl: string, extra: Record<string, string> = {}) =>
  outageEnv(sandbox.url, dir, redisUrl, extra);

// Both at once: each has its sandbox, Redis (or key prefix) and worker process of its own, and mostly waits on them.
describe.concurrent('Redis lost while a worker runs', () => {
  it('the first SIGTERM stops it within 10 s: nothing more is sent, what was in flight is journalled; once Redis is back the run ends with one item per GTIN', async ({
    expect,
  }) => {
    sandbox.handle.reset();
    // Slow enough that the worker is stopped well before the last row, however loaded the machine (the rest is sent
    // without latency once Redis is back).
    sandbox.handle.setFaults({ latencyMs: [60, 100], seed: 3 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-lost-midrun-'));
    const redis = await ownRedis(dir);
    await redis.start();
    const e = env(dir, redis.url, { CHUNK_SIZE: '20', WORKER_LOCK_MS: '3000' });
    const sheet = writeProductSheet(dir, 200, { owner });
    const worker = cli(['worker', '--jobs-dir', join(dir, 'no-jobs')], e);
    const client = importQueueClient(loadConfig(e));
    let workers: Awaited<ReturnType<typeof startWorkers>> | undefined;
    try {
      await until('the worker to start', () => worker.out.stdout.includes('worker started'));
      const { jobId } = await client.enqueue({
        request: { file: sheet.file, mapping: sheet.mapping },
        origin: 'cli',
        step: 'prepare',
      });
      await until('the first items', () => items().length >= 10);
      await redis.stop('SIGKILL');
      await sleep(200);
      worker.child.kill('SIGTERM');
      const t0 = Date.now();
      const r = await worker.exit;
      expect(Date.now() - t0).toBeLessThan(10_000);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(
        new RegExp(
          `^product-sync: SIGTERM while Redis at redis://127\\.0\\.0\\.1:${redis.port} does not answer: the worker stopped sending; the requests in flight settled and are journalled; its jobs go back to the queue when Redis answers .*$`,
          'm',
        ),
      );
      // The outage once, not once per reconnection attempt; no worker errors.
      expect(logLines(r.stderr, /does not answer: reconnecting/).length).toBeLessThanOrEqual(1);
      expect(r.stderr).not.toMatch(/worker error|ECONNREFUSED.*\n.*ECONNREFUSED/);
      const sent = items().length;
      expect(sent).toBeLessThan(200);
      await sleep(300);
      expect(items().length).toBe(sent);
      const runDir = readdirSync(e.REPORT_DIR!)
        .map((d) => join(e.REPORT_DIR!, d))
        .find((d) => existsSync(join(d, 'run.json')))!;
      expect(readdirSync(join(runDir, 'chunks')).some((f) => f.endsWith('.journal.jsonl'))).toBe(true);
      // Redis back (AOF): another worker takes the jobs over once their locks expired, and resumes from the journals.
      sandbox.handle.setFaults({});
      await redis.start();
      workers = await startWorkers(loadConfig(e), {
        jobsDir: join(dir, 'no-jobs'),
        chunkSize: 20,
        lockDurationMs: 3000,
      });
      const result = await client.wait(jobId, 60_000);
      expect(result.summary.counts.rows).toBe(200);
      expect(result.summary.counts.failed + result.summary.counts.notAttempted).toBe(0);
      expectOneItemPerGtin(sandbox, owner, 200);
      reportIdsMatchApi(sandbox, owner, result.reportDir, 200);
    } finally {
      worker.child.kill('SIGKILL');
      await workers?.close();
      await client.close();
      await redis.stop();
      sandbox.handle.setFaults({});
    }
  }, 60_000);

  it('a second signal exits at once (143) while the first waits for the chunk in hand', async ({ expect }) => {
    const sandbox = signalSandbox;
    const items = () => itemsOf(sandbox);
    sandbox.handle.setFaults({ latencyMs: 400 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-second-signal-'));
    const prefix = `ps-second-${process.pid}`;
    const e = outageEnv(sandbox.url, dir, inject('redisUrl'), {
      QUEUE_PREFIX: prefix,
      CHUNK_SIZE: '50',
      API_CONCURRENCY: '1',
    });
    const sheet = writeProductSheet(dir, 50, { owner });
    const worker = cli(['worker', '--jobs-dir', join(dir, 'no-jobs')], e);
    const client = importQueueClient(loadConfig(e));
    try {
      await until('the worker to start', () => worker.out.stdout.includes('worker started'));
      await client.enqueue({ request: { file: sheet.file, mapping: sheet.mapping }, origin: 'cli', step: 'prepare' });
      await until('the chunk to be pushed', () => items().length >= 1);
      const sentBefore = items().length;
      worker.child.kill('SIGTERM');
      // The first signal: the chunk in hand goes on.
      await until('the chunk in hand to go on', () => items().length > sentBefore);
      expect(worker.child.exitCode).toBe(null);
      const t0 = Date.now();
      worker.child.kill('SIGTERM');
      const r = await worker.exit;
      expect(Date.now() - t0).toBeLessThan(2000);
      expect(r.code).toBe(143);
      expect(r.stderr).toMatch(
        /^product-sync: SIGTERM again: exiting now \(the jobs in hand go back to the queue when their locks expire, and resume from their journals\)$/m,
      );
    } finally {
      worker.child.kill('SIGKILL');
      await client.close();
      sandbox.handle.setFaults({});
      const r = new Redis(inject('redisUrl'));
      const keys = await r.keys(`{${prefix}}*`);
      if (keys.length > 0) await r.del(...keys);
      r.disconnect();
    }
  });
});

describe('a SIGTERM just after Redis came back', () => {
  it('the worker closes: its blocking connections still waiting out their reconnect delay are ended, not waited for', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-back-sigterm-'));
    const redis = await ownRedis(dir, { aof: false });
    await redis.start();
    const set = await startWorkers(loadConfig(env(dir, redis.url)), { jobsDir: join(dir, 'no-jobs') });
    try {
      // The connection each BullMQ worker blocks on (BZPOPMIN) for its next job, as BullMQ made it.
      const blocking = (await Promise.all(set.workers.map((w) => w.backend.blockingClient))) as unknown as Redis[];
      // A reconnect delay longer than the test: what a longer outage leaves (ioredis's delays grow with the attempts).
      for (const c of blocking) c.options.retryStrategy = () => 60_000;
      await redis.stop('SIGKILL');
      await until('every blocking connection to wait out its delay', () =>
        blocking.every((c) => c.status === 'reconnecting'),
      );
      await redis.start();
      // Every connection the process watches has Redis back (src/redis-state.ts): the SIGTERM closes, not abandons.
      await until('the worker to have Redis back', async () => !redisState.down && (await set.redisAnswers(1000)));
      expect(blocking.map((c) => c.status)).toEqual(blocking.map(() => 'reconnecting'));
      // What the worker's SIGTERM does (src/commands/queue.ts): Redis answers, so it closes rather than abandons.
      let bound: NodeJS.Timeout | undefined;
      const stopped = await Promise.race([
        stopWorkers(set),
        new Promise<'hung'>((res) => (bound = setTimeout(() => res('hung'), 15_000))),
      ]).finally(() => clearTimeout(bound));
      expect(stopped).toBe('closed');
      expect(blocking.map((c) => c.status)).toEqual(blocking.map(() => 'end'));
    } finally {
      await set.abandon(1000);
      await redis.stop();
    }
  });
});

describe('Redis restarted without persistence', () => {
  it(
    'enqueue --wait exits 3 (PS_ERR_JOB_LOST) within 60 s saying what happened and what to do; a running worker re-creates the feed schedules',
    // Over the sum of its named bounds (job id 30 s, exit 60 s, schedules 20 s, close 15 s): a slow step fails by name.
    { timeout: 150_000 },
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ps-no-aof-'));
      const redis = await ownRedis(dir, { aof: false });
      await redis.start();
      const sheet = writeProductSheet(dir, 5, { owner });
      const jobs = join(dir, 'jobs');
      mkdirSync(jobs);
      writeFileSync(
        join(jobs, 'nightly.yaml'),
        `schedule: "0 2 * * *"\nsource: { dir: ${dir}, pattern: "*.csv" }\nmapping: ${sheet.mapping}\n`,
      );
      // The worker serves one prefix; the queued import waits under another, where no worker takes it.
      const workerConfig = loadConfig(env(dir, redis.url, { QUEUE_PREFIX: 'ps-feeds' }));
      const workers = await startWorkers(workerConfig, { jobsDir: jobs });
      const feeds = openFeedsQueue(workerConfig);
      let closed = { feeds: false, workers: false };
      const waiting = cli(
        ['enqueue', sheet.file, '--mapping', sheet.mapping, '--wait'],
        env(dir, redis.url, { QUEUE_PREFIX: 'ps-nobody' }),
      );
      try {
        expect([...(await feeds.schedulers()).keys()]).toEqual(['nightly']);
        await until('the job id', () => waiting.out.stdout.trim().length > 0);
        await redis.stop('SIGKILL');
        await sleep(300);
        await redis.start();
        const t0 = Date.now();
        // Bounded here, so a hang fails this test with what the command printed (and `finally` cleans up).
        let bound: NodeJS.Timeout | undefined;
        const r = await Promise.race([
          waiting.exit,
          new Promise<never>((_, reject) => {
            const hung = () =>
              new Error(`enqueue --wait still waits 60 s after Redis came back: ${waiting.out.stderr}`);
            bound = setTimeout(() => reject(hung()), 60_000);
          }),
        ]).finally(() => clearTimeout(bound));
        expect(Date.now() - t0).toBeLessThan(60_000);
        expect(r.code, r.stderr).toBe(3);
        // The outage was logged once while it lasted; then one line says what happened.
        expect(logLines(r.stderr, /does not answer: reconnecting/).length).toBeLessThanOrEqual(1);
        const lines = r.stderr
          .trim()
          .split('\n')
          .filter((l) => !l.startsWith('{'));
        expect(lines, r.stderr).toHaveLength(1);
        expect(lines[0]).toMatch(
          new RegExp(
            `^product-sync: run \\S+ is gone from the queue: Redis at redis://127\\.0\\.0\\.1:${redis.port} restarted without its data \\(it runs without persistence: give it appendonly yes, see docs/queue\\.md\\)\\. .*enqueue the same sheet again .* \\[PS_ERR_JOB_LOST\\]$`,
          ),
        );
        await until('the feed schedule to be back', async () => (await feeds.schedulers()).has('nightly'), 20_000);
      } finally {
        waiting.child.kill('SIGKILL');
        // Bounded too, each by name, so that a close caught by the restart fails this test instead of its time running
        // out.
        const within15s = async (p: Promise<unknown>) => {
          let bound: NodeJS.Timeout | undefined;
          const t = new Promise<boolean>((res) => (bound = setTimeout(() => res(false), 15_000)));
          return Promise.race([p.then(() => true), t]).finally(() => clearTimeout(bound));
        };
        closed = { feeds: await within15s(feeds.close()), workers: await within15s(workers.close()) };
        // A close that did not end (a failure below) must not keep this file's process alive.
        if (!closed.workers) await workers.abandon(1000);
        await redis.stop();
      }
      expect(closed.feeds, 'the feeds queue of this process closed within 15 s').toBe(true);
      // Its blocking connections caught reconnecting by the restart are ended (src/queue/worker-close.ts).
      expect(closed.workers, 'the workers of this process closed within 15 s').toBe(true);
      // Not retried: the hang seen about one run in five (the command printing nothing after its job id) was its close
      // waiting for ever on the events' connection caught reconnecting (queue-events-close.test.ts); 50 runs in a row
      // pass. The schedules not re-created (this test timing out) was this process's Redis state held down by a
      // connection an earlier test closed during its outage (test/redis-state.test.ts).
    },
  );
});
