// Fair service across owners (issue 37, docs/queue.md "Fairness"): runs of different owners interleave, runs of one
// owner stay serialized by its lease, a worker killed while serving several owners loses nothing, and the per-owner
// cap (OWNER_MAX_CHUNKS) holds.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { ProcessMetrics } from '../../src/metrics/metrics.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { fleetMetrics } from '../../src/queue/metrics-fleet.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID, DEMO_SUPPLIER_ID, OTHER_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { queueEnv } from '../helpers/env.ts';
import { usePrefixes } from '../helpers/prefixes.ts';
import { useProcesses, type TestProcess } from '../helpers/processes.ts';
import { expectOneItemPerGtin, reportIdsMatchApi, useSandbox } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const redisUrl = inject('redisUrl');
const sandbox = useSandbox();
const nextPrefix = usePrefixes('fair');
/** Worker processes: each killed with its test, however it ends. */
const procs = useProcesses();

function env(dir: string, more: Record<string, string> = {}): Record<string, string> {
  return queueEnv(sandbox.url, redisUrl, nextPrefix(), dir, {
    API_CONCURRENCY: '4',
    CHUNK_SIZE: '20',
    WORKER_LOCK_MS: '3000',
    ...more,
  });
}

/** A sheet of `rows` products of `owner` in a folder of its own (GTINs of family `prefix`). */
function sheet(dir: string, name: string, rows: number, owner: string, prefix: string) {
  mkdirSync(join(dir, name), { recursive: true });
  return writeProductSheet(join(dir, name), rows, { owner, prefix });
}

/**
 * The worker process the last test kills, started with the file (its start goes on beside the tests before it): its
 * directory, environment, and its start (`worker started`).
 */
let victim: { dir: string; e: Record<string, string>; started: Promise<TestProcess> };
beforeAll(() => {
  const dir = mkdtempSync(join(tmpdir(), 'ps-fair-kill-'));
  const e = env(dir, { OWNER_MAX_CHUNKS: '2' });
  const started = procs.worker(join(dir, 'no-jobs'), { env: e });
  // Awaited by its test; a start that failed is that test's failure, not an unhandled rejection meanwhile.
  started.catch(() => undefined);
  victim = { dir, e, started };
});

const itemsOf = (owner: string) => sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);

describe('fair queues', () => {
  it("serves a one-row run of owner B while owner A's large run goes on, with one worker", async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: 15 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-fair-'));
    const config = loadConfig(env(dir));
    const a = sheet(dir, 'a', 600, DEMO_COMPANY_ID, '035000');
    const b = sheet(dir, 'b', 1, OTHER_COMPANY_ID, '036000');
    const workers = await startWorkers(config, { jobsDir: join(dir, 'no-jobs'), chunkSize: 20 });
    const client = importQueueClient(config);
    try {
      const runA = await client.enqueue({ request: a, origin: 'cli', step: 'prepare' });
      // A's chunks are being pushed (all 30 of them queued ahead of B's one).
      await until("A's push", () => itemsOf(DEMO_COMPANY_ID).length >= 40, 30_000);
      const runB = await client.enqueue({ request: b, origin: 'upload', step: 'prepare' });
      const resultB = await client.wait(runB.jobId, 30_000);
      const aWhenBDone = itemsOf(DEMO_COMPANY_ID).length;
      expect(resultB.summary.counts).toMatchObject({ rows: 1, created: 1 });
      // B did not wait for A: most of A was still to send when B's report was written.
      expect(aWhenBDone).toBeLessThan(400);
      expect((await client.status(runA.jobId))?.state).not.toBe('completed');
      const resultA = await client.wait(runA.jobId, 60_000);
      expect(resultA.summary.counts).toMatchObject({ rows: 600, created: 600 });
      expectOneItemPerGtin(sandbox, DEMO_COMPANY_ID, 600);
      expectOneItemPerGtin(sandbox, OTHER_COMPANY_ID, 1);
    } finally {
      await client.close();
      await workers.close();
      sandbox.handle.setFaults({});
    }
  }, 120_000);

  it('shows where a run is in line, and the queue wait and chunks in progress per owner on /metrics', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: 20 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-fair-line-'));
    const config = loadConfig(env(dir));
    const client = importQueueClient(config);
    const fleet = fleetMetrics(config);
    const metrics = new ProcessMetrics();
    // Queued while no worker runs: the second is behind the first.
    const one = await client.enqueue({
      request: sheet(dir, 'a', 200, DEMO_COMPANY_ID, '035000'),
      origin: 'cli',
      step: 'prepare',
    });
    const two = await client.enqueue({
      request: sheet(dir, 'c', 200, OTHER_COMPANY_ID, '036000'),
      origin: 'cli',
      step: 'prepare',
    });
    expect((await client.status(one.jobId))?.progress).toMatchObject({ stage: 'queued', ahead: 0 });
    expect((await client.status(two.jobId))?.progress).toMatchObject({ stage: 'queued', ahead: 1 });
    const workers = await startWorkers(config, {
      jobsDir: join(dir, 'no-jobs'),
      chunkSize: 20,
      pushConcurrency: 1,
      metrics,
    });
    try {
      // One chunk at a time: while one run's chunk is sent, the other's next chunk waits its turn.
      const seen = new Set<string>();
      let gauge = '';
      for (let i = 0; i < 3000 && !(seen.has('in line') && seen.has('running') && gauge); i++) {
        for (const id of [one.jobId, two.jobId]) {
          const p = (await client.status(id))?.progress as { stage?: string; next?: string; ahead?: number };
          if (p?.stage === 'push' && p.next && typeof p.ahead === 'number') seen.add(p.next);
        }
        gauge ||= (await fleet.text()).match(/^product_sync_owner_chunks_in_progress\{owner="[^"]+"\} 1$/m)?.[0] ?? '';
        await new Promise((r) => setTimeout(r, 10));
      }
      expect([...seen].sort()).toEqual(['in line', 'running']);
      expect(gauge).not.toBe('');
      await client.wait(one.jobId, 60_000);
      await client.wait(two.jobId, 60_000);
      const text = await metrics.text();
      for (const owner of [DEMO_COMPANY_ID, OTHER_COMPANY_ID]) {
        expect(text).toContain(`product_sync_queue_wait_seconds_count{queue="push",owner="${owner}"} 10`);
        expect(text).toContain(`product_sync_queue_wait_seconds_count{queue="import",owner="${owner}"} 1`);
      }
    } finally {
      await client.close();
      await fleet.close();
      await workers.close();
      sandbox.handle.setFaults({});
    }
  }, 120_000);

  it('keeps the runs of one owner serialized by its lease: the second shows whom it waits for, starts after', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: 20 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-fair-same-'));
    const config = loadConfig(env(dir));
    const first = sheet(dir, 'first', 200, DEMO_COMPANY_ID, '035000');
    const second = sheet(dir, 'second', 40, DEMO_COMPANY_ID, '037000');
    const workers = await startWorkers(config, { jobsDir: join(dir, 'no-jobs'), chunkSize: 20 });
    const client = importQueueClient(config);
    try {
      const one = await client.enqueue({ request: first, origin: 'cli', step: 'prepare' });
      await until('the first run pushing', () => itemsOf(DEMO_COMPANY_ID).length > 0, 30_000);
      const two = await client.enqueue({ request: second, origin: 'cli', step: 'prepare' });
      await until(
        'the second run waiting for the lease',
        async () => ((await client.status(two.jobId))?.progress as { stage?: string } | null)?.stage === 'waiting',
        30_000,
      );
      const waiting = (await client.status(two.jobId))?.progress as { waitingFor: string };
      const r1 = await client.wait(one.jobId, 60_000);
      expect(waiting.waitingFor).toContain(r1.runId);
      const r2 = await client.wait(two.jobId, 60_000);
      expect(Date.parse(r2.summary.startedAt)).toBeGreaterThanOrEqual(Date.parse(r1.summary.finishedAt));
      expect(r1.summary.counts.created + r2.summary.counts.created).toBe(240);
      expectOneItemPerGtin(sandbox, DEMO_COMPANY_ID, 240);
    } finally {
      await client.close();
      await workers.close();
      sandbox.handle.setFaults({});
    }
  }, 120_000);

  it("holds the per-owner cap: one owner's chunks never exceed OWNER_MAX_CHUNKS across the fleet", async () => {
    sandbox.handle.reset();
    // The API serves API_CONCURRENCY requests at once and refuses (429) past it: one chunk at a time fits, two do not.
    sandbox.handle.setFaults({ latencyMs: 15, capacity: 4 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-fair-cap-'));
    const config = loadConfig(env(dir, { OWNER_MAX_CHUNKS: '1' }));
    const a = sheet(dir, 'a', 200, DEMO_COMPANY_ID, '035000');
    const w1 = await startWorkers(config, { jobsDir: join(dir, 'no-jobs'), chunkSize: 20 });
    const w2 = await startWorkers(config, { jobsDir: join(dir, 'no-jobs'), chunkSize: 20 });
    const client = importQueueClient(config);
    try {
      const run = await client.enqueue({ request: a, origin: 'cli', step: 'prepare' });
      const result = await client.wait(run.jobId, 90_000);
      expect(result.summary.counts).toMatchObject({ rows: 200, created: 200 });
      expect(sandbox.handle.counts().faults['429'] ?? 0).toBe(0);
      expectOneItemPerGtin(sandbox, DEMO_COMPANY_ID, 200);
    } finally {
      await client.close();
      await Promise.all([w1.close(), w2.close()]);
      sandbox.handle.setFaults({});
    }
  }, 120_000);

  it('loses nothing when a worker serving several owners is killed (SIGKILL), its cap slots lapsing', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [4, 12], seed: 37 });
    const { dir, e } = victim;
    const owners = [
      { owner: DEMO_COMPANY_ID, rows: 300, prefix: '035000' },
      { owner: OTHER_COMPANY_ID, rows: 200, prefix: '036000' },
      { owner: DEMO_SUPPLIER_ID, rows: 100, prefix: '037000' },
    ];
    const killed = await victim.started;
    // The other worker, in this process: it finishes what the victim held.
    const other = await startWorkers(loadConfig(e), { jobsDir: join(dir, 'no-jobs'), lockDurationMs: 3000 });
    const client = importQueueClient(loadConfig(e));
    try {
      const jobs = [];
      for (const [i, o] of owners.entries())
        jobs.push(
          await client.enqueue({
            request: sheet(dir, `s${i}`, o.rows, o.owner, o.prefix),
            origin: 'cli',
            step: 'prepare',
          }),
        );
      // Killed once every owner's pushing has begun.
      await until('every owner pushing', () => owners.every((o) => itemsOf(o.owner).length > 0), 60_000);
      killed.child.kill('SIGKILL');
      for (const [i, o] of owners.entries()) {
        const result = await client.wait(jobs[i]!.jobId, 90_000);
        // Every row one outcome, no item twice.
        expect(result.summary.counts.rows).toBe(o.rows);
        expect(result.summary.counts.created + result.summary.counts.unchanged).toBe(o.rows);
        expectOneItemPerGtin(sandbox, o.owner, o.rows);
        reportIdsMatchApi(sandbox, o.owner, result.reportDir, o.rows);
      }
    } finally {
      await client.close();
      await other.close();
      sandbox.handle.setFaults({});
    }
  }, 180_000);
});
