// A chunk job of a queued run's earlier plan that found the run's lease another run's is held between that check and
// its writes (PS_TEST_CHUNK_ABORT_HOLD, src/test-hold.ts) while the retried prepare step sets the earlier plans aside
// and plans every row again (docs/concurrency.md, "Resuming a run"). Let go once the new plan's chunks are written,
// it writes nothing among them: no abort mark of the new plan, no results of a new chunk. The run ends with every row
// pushed. Real worker processes, real Redis, the sandbox over HTTP assigning its own ids.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { gtinKey } from '../../src/pipeline/gtin.ts';
import { QUEUES } from '../../src/queue/catalog.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { spawnCli, type CliProcess } from '../helpers/cli.ts';
import { replanEnv } from '../helpers/env.ts';
import { fenceHold } from '../helpers/lease-runs.ts';
import { expectOneItemPerGtin, reportRows, useSandbox } from '../helpers/sandbox.ts';
import { brandSheet, testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { expireOwnerLeases } from '../helpers/takeover.ts';
import { until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
const redisUrl = inject('redisUrl');
const sandbox = useSandbox({ assignIds: true });

const items = () => sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);

/** The import job's lock removed, as its expiry does (its worker was killed): the chunk jobs' locks are kept. */
async function expireImportJobLock(r: Redis, prefix: string): Promise<void> {
  const locks = await r.keys(`{${prefix}}:${QUEUES.import}:*:lock`);
  expect(locks).toHaveLength(1);
  await r.del(...locks);
}

describe('a chunk job of an earlier plan held before its abort writes while the run plans again', () => {
  it('writes nothing into the new plan: the run ends exit 0, every row with its true outcome, one item per GTIN', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [5, 10], seed: 11 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-stale-abort-'));
    // 150 rows in chunks of 25; "Marque B" first named on row 100, in the fifth chunk (rows-4).
    const rows = 150;
    const queued = brandSheet(dir, rows, 100, { name: 'queued-stale-abort', owner });
    const inline = writeProductSheet(dir, rows, { owner, name: (i) => `Inline ${i}` });
    const prefix = `stale-abort-${process.pid}-${Date.now()}`;
    const stateDir = join(dir, 'state');
    const env = replanEnv(sandbox.url, dir, redisUrl, prefix);
    const brandHold = fenceHold(dir, 'brand', 2, 'POST /api/brands');
    const inlineHold = fenceHold(dir, 'inline', 1, 'POST /api/tradeItem');
    const chunkHeld = join(dir, 'chunk.held');
    const chunkRelease = join(dir, 'chunk.release');
    const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
    const pushQueue = new Queue(QUEUES.push, { connection: redis, prefix: `{${prefix}}` });
    const procs: CliProcess[] = [];
    try {
      // No chunk job runs until the test says: the first plan's wait in the push queue.
      await pushQueue.pause();
      // The prepare step is frozen when it creates "Marque B" (planning rows-4), then killed: rows-0..3 planned.
      const frozen = spawnCli(['worker', '--jobs-dir', join(dir, 'no-jobs')], {
        env: { ...env, PS_TEST_FENCE_HOLD: brandHold.env },
      });
      procs.push(frozen);
      const enq = spawnCli(['enqueue', queued.file, '--mapping', queued.mapping, '--wait'], { env });
      procs.push(enq);
      await until('the worker to be frozen in its prepare step', () => existsSync(brandHold.held), 60_000);
      frozen.child.kill('SIGKILL');
      await frozen.exit;
      expect(await expireOwnerLeases(redisUrl, prefix, stateDir, owner)).toBe(1);
      const run = join(dir, 'reports', readdirSync(join(dir, 'reports'))[0]!);
      expect(existsSync(join(run, 'chunks', 'rows-0.json'))).toBe(true);
      expect(existsSync(join(run, 'chunks', 'rows-4.json'))).toBe(false);

      // The owner's inline run takes the lease and is frozen holding it (a TTL no step of the test outlasts).
      const other = spawnCli(
        ['import', inline.file, '--mapping', inline.mapping, '--wait-lock', '60', '--report-dir', join(dir, 'inline')],
        { env: { ...env, LEASE_TTL_SECONDS: '600', PS_TEST_FENCE_HOLD: inlineHold.env } },
      );
      procs.push(other);
      await until('the inline run to hold the lease', () => existsSync(inlineHold.held), 60_000);

      // A worker takes the first plan's chunk jobs: they find the lease the inline run's; the first is held right
      // before its abort writes (the others settle their chunks not attempted, in the first plan's files).
      const worker = spawnCli(['worker', '--jobs-dir', join(dir, 'no-jobs')], {
        env: {
          ...env,
          PS_TEST_CHUNK_ABORT_HOLD: JSON.stringify({ nth: 1, held: chunkHeld, release: chunkRelease }),
        },
      });
      procs.push(worker);
      await pushQueue.resume();
      await until('a chunk job of the first plan held before its abort writes', () => existsSync(chunkHeld), 60_000);
      await pushQueue.pause();

      // The import job is the worker's now: its prepare step waits for the lease, the inline run ends, and the prepare
      // step plans every row again (the first plan's chunks set aside, the new plan's all written).
      await expireImportJobLock(redis, prefix);
      inlineHold.release();
      const o = await other.exit;
      expect(o.code, o.stderr).toBe(0);
      expect(items().every((t) => String(t.tradeItemName).startsWith('Inline '))).toBe(true);
      await until(
        'the new plan written',
        () => existsSync(join(run, 'outdated-1', 'chunks')) && existsSync(join(run, 'chunks', 'rows-5.json')),
        60_000,
      );

      // The held chunk job goes on, and ends, before any job of the new plan runs.
      writeFileSync(chunkRelease, '');
      await until('the held chunk job to end', async () => (await pushQueue.getActiveCount()) === 0, 60_000);
      // Neither its abort mark nor its results: the new plan's chunk files only (the first plan's marks set aside).
      expect.soft(readdirSync(run).filter((f) => f.startsWith('aborted'))).toEqual([]);
      expect.soft(readdirSync(join(run, 'chunks')).filter((f) => f.endsWith('.results.jsonl'))).toEqual([]);
      await pushQueue.resume();

      const q = await enq.exit;
      expect(q.code, q.stderr + q.stdout).toBe(0);
      expectOneItemPerGtin(sandbox, owner, rows);
      const byGtin = new Map(items().map((t) => [gtinKey(String(t.gtin)), t]));
      for (let i = 0; i < rows; i++) expect(byGtin.get(gtinKey(testGtin(i)))?.tradeItemName).toBe(`Queued ${i}`);
      const summary = JSON.parse(readFileSync(join(run, 'summary.json'), 'utf8')) as {
        counts: Record<string, number>;
        aborted?: string;
      };
      expect(summary.aborted).toBeUndefined();
      expect(summary.counts).toMatchObject({ rows, updated: rows, failed: 0, notAttempted: 0 });
      const lines = reportRows(run);
      expect(lines).toHaveLength(rows);
      for (const [, key, outcome, tradeItemId] of lines) {
        expect(outcome).toBe('updated');
        expect(tradeItemId).toBe(byGtin.get(gtinKey(key!))?.tradeItemId);
      }
    } finally {
      brandHold.release();
      inlineHold.release();
      writeFileSync(chunkRelease, '');
      for (const p of procs) p.child.kill('SIGKILL');
      await pushQueue.close();
      redis.disconnect();
    }
  }, 240_000);
});
