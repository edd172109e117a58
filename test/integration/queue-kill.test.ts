// Queue mode when a worker process is killed with SIGKILL mid-import: another worker finishes the import, one item
// per GTIN, its report true to the API (several trials at once). The rest of queue mode: queue.test.ts.
import { mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID, DEMO_SUPPLIER_ID, OTHER_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { queueEnv } from '../helpers/env.ts';
import { usePrefixes } from '../helpers/prefixes.ts';
import { useProcesses } from '../helpers/processes.ts';
import { expectOneItemPerGtin, expectRerunCreatesNothing, reportIdsMatchApi, useSandbox } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const redisUrl = inject('redisUrl');
const sandbox = useSandbox();
const nextPrefix = usePrefixes('queue-kill');
/** Worker processes: each killed with its test, however it ends. */
const procs = useProcesses();

/** A queued run in chunks of 40 under a prefix of its own, its job lock short (the survivor takes the killed one's). */
const env = (dir: string) =>
  queueEnv(sandbox.url, redisUrl, nextPrefix(), dir, {
    API_CONCURRENCY: '4',
    CHUNK_SIZE: '40',
    WORKER_LOCK_MS: '3000',
  });

const itemsOf = (of: string) => sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === of);

describe('queue mode', () => {
  it('finishes an import when a worker process is killed with SIGKILL mid-import (several trials)', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [4, 12], seed: 20 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-queue-kill-'));
    const rows = 200;
    let midway = 0;
    // The trials run at once, each for an owner of its own on a prefix of its own: a worker process, killed at a
    // random point of the push, beside a worker of this process that finishes what the killed one held.
    const trial = async (owner: string, n: number) => {
      const tdir = join(dir, `t${n}`);
      mkdirSync(tdir, { recursive: true });
      const e = env(tdir);
      const { file, mapping } = writeProductSheet(tdir, rows, { owner, prefix: `0${35 + n}000` });
      const victim = await procs.worker(join(dir, 'no-jobs'), { env: e });
      const survivor = await startWorkers(loadConfig(e), { jobsDir: join(dir, 'no-jobs'), lockDurationMs: 3000 });
      const client = importQueueClient(loadConfig(e));
      try {
        const { jobId } = await client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' });
        // Killed at a random point of the push: once a random number of items exist.
        const target = 20 + Math.floor(Math.random() * (rows - 100));
        await until(`${target} items`, () => itemsOf(owner).length >= target, 30_000);
        if (itemsOf(owner).length < rows) midway++;
        victim.child.kill('SIGKILL');
        const result = await client.wait(jobId, 90_000);
        expect(result.summary.counts.rows).toBe(rows);
        expect(result.summary.counts.created + result.summary.counts.unchanged).toBe(rows);
        expectOneItemPerGtin(sandbox, owner, rows);
        reportIdsMatchApi(sandbox, owner, result.reportDir, rows);
        return { e, file, mapping };
      } finally {
        victim.child.kill('SIGKILL');
        await client.close();
        await survivor.close();
      }
    };
    const ends = await Promise.allSettled([DEMO_COMPANY_ID, OTHER_COMPANY_ID, DEMO_SUPPLIER_ID].map(trial));
    sandbox.handle.setFaults({});
    const runs = ends.map((end) => {
      if (end.status === 'rejected') throw end.reason;
      return end.value;
    });
    expect(midway).toBeGreaterThan(0);
    // One after the other, once every trial ended: each checks that nothing at all is written.
    for (const { e, file, mapping } of runs) await expectRerunCreatesNothing(sandbox, e, file, mapping, rows);
  }, 240_000);
});
