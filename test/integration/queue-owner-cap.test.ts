// What a fair queue keeps per owner (issue 37, docs/queue.md "Fairness"): runs of one owner stay serialized by its
// lease, the per-owner cap (OWNER_MAX_CHUNKS) holds across the fleet, and a worker killed while serving several owners
// loses nothing, its cap slots lapsing. Runs of different owners interleaving: queue-fairness.test.ts.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID, DEMO_SUPPLIER_ID, OTHER_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { fairEnv, ownerSheet } from '../helpers/fair-queues.ts';
import { usePrefixes } from '../helpers/prefixes.ts';
import { useProcesses, type TestProcess } from '../helpers/processes.ts';
import { expectOneItemPerGtin, reportIdsMatchApi, useSandbox } from '../helpers/sandbox.ts';
import { until } from '../helpers/wait.ts';

const redisUrl = inject('redisUrl');
const sandbox = useSandbox();
const nextPrefix = usePrefixes('owner-cap');
/** Worker processes: each killed with its test, however it ends. */
const procs = useProcesses();

const env = (dir: string, more: Record<string, string> = {}) => fairEnv(sandbox.url, redisUrl, nextPrefix(), dir, more);
const sheet = ownerSheet;

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

describe('the per-owner limits of fair queues', () => {
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
