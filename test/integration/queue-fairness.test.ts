// Fair service across owners (issue 37, docs/queue.md "Fairness"): runs of different owners interleave, and a run
// shows where it is in line. Runs of one owner serialized by its lease, the per-owner cap (OWNER_MAX_CHUNKS), a worker
// killed while serving several owners: queue-owner-cap.test.ts.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { ProcessMetrics } from '../../src/metrics/metrics.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { fleetMetrics } from '../../src/queue/metrics-fleet.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID, OTHER_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { fairEnv, ownerSheet } from '../helpers/fair-queues.ts';
import { usePrefixes } from '../helpers/prefixes.ts';
import { expectOneItemPerGtin, useSandbox } from '../helpers/sandbox.ts';
import { until } from '../helpers/wait.ts';

const redisUrl = inject('redisUrl');
const sandbox = useSandbox();
const nextPrefix = usePrefixes('fair');

const env = (dir: string, more: Record<string, string> = {}) => fairEnv(sandbox.url, redisUrl, nextPrefix(), dir, more);
const sheet = ownerSheet;

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
});
