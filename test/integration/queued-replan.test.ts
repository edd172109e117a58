// A queued run whose prepare step is retried after another run held the lease plans again from the API
// (docs/concurrency.md, "Resuming a run"): a worker frozen in the middle of its prepare step (its chunks partly planned
// and pushed) is killed, the owner's inline run imports the same GTINs to its end, then a worker picks the import job
// up again. The retried prepare step sets the earlier plans aside and plans every row from the API as it is now: the
// chunk jobs of the earlier plans send nothing, the catalogue ends with one item per GTIN holding the queued sheet's
// values, and the report says what happened to each row. Real worker processes, real Redis, the sandbox over HTTP
// assigning its own ids (a replayed create would be a second item).
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
import { expectOneItemPerGtin, reportRows, useSandbox } from '../helpers/sandbox.ts';
import { brandSheet, testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { expireJobLocks, expireOwnerLeases } from '../helpers/takeover.ts';
import { until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
const redisUrl = inject('redisUrl');
const sandbox = useSandbox({ assignIds: true });

const items = () => sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);

describe('a queued run whose prepare step is retried after a takeover plans again', () => {
  it('worker frozen mid-prepare and killed, an inline run of the owner, the import job picked up again: no earlier plan is sent, one item per GTIN with the queued values, a true report', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [5, 10], seed: 9 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-queued-replan-'));
    // 150 rows in chunks of 25; "Marque B" first named on row 100, in the fifth chunk (rows-4).
    const rows = 150;
    const queued = brandSheet(dir, rows, 100, { name: 'queued-replan', owner });
    const inline = writeProductSheet(dir, rows, { owner, name: (i) => `Inline ${i}` });
    const held = join(dir, 'brand.held');
    const release = join(dir, 'brand.release');
    const prefix = `replan-${process.pid}-${Date.now()}`;
    const stateDir = join(dir, 'state');
    const env = replanEnv(sandbox.url, dir, redisUrl, prefix);
    // The prepare step creates "Marque B" when it plans the chunk of row 100: the worker is frozen right there, with
    // the first chunks planned and some pushed.
    const frozen = spawnCli(['worker', '--jobs-dir', join(dir, 'no-jobs')], {
      env: {
        ...env,
        PS_TEST_FENCE_HOLD: JSON.stringify({ match: 'POST /api/brands', nth: 2, held, release }),
      },
    });
    const procs: CliProcess[] = [frozen];
    try {
      const enq = spawnCli(['enqueue', queued.file, '--mapping', queued.mapping, '--wait'], { env });
      procs.push(enq);
      await until('the worker to be frozen in its prepare step', () => existsSync(held), 60_000);
      frozen.child.kill('SIGKILL');
      await frozen.exit;
      // Its lease and job locks run out (as their TTLs would make them).
      expect(await expireOwnerLeases(redisUrl, prefix, stateDir, owner)).toBe(1);
      expect(await expireJobLocks(redisUrl, prefix)).toBeGreaterThan(0);
      const runs = readdirSync(join(dir, 'reports'));
      expect(runs).toHaveLength(1);
      const run = join(dir, 'reports', runs[0]!);
      expect(existsSync(join(run, 'chunks', 'rows-4.json'))).toBe(false);
      // The owner's inline run takes the lease the queued run's holder left, and imports the same GTINs to its end.
      const other = await spawnCli(
        ['import', inline.file, '--mapping', inline.mapping, '--wait-lock', '60', '--report-dir', join(dir, 'inline')],
        { env },
      ).exit;
      expect(other.code, other.stderr).toBe(0);
      expectOneItemPerGtin(sandbox, owner, rows);
      expect(items().every((t) => String(t.tradeItemName).startsWith('Inline '))).toBe(true);
      // A worker again: the import job's prepare step is tried again, plans every row again from the API, and the run
      // ends. The chunk jobs of the earlier plans wait in the push queue until it has set those plans aside: the order
      // this test is about (one that ran before would find the lease another run's and abort the run, as
      // docs/concurrency.md says).
      const redis = new Redis(redisUrl, { maxRetriesPerRequest: null });
      const pushQueue = new Queue(QUEUES.push, { connection: redis, prefix: `{${prefix}}` });
      try {
        await pushQueue.pause();
        const again = spawnCli(['worker', '--jobs-dir', join(dir, 'no-jobs')], { env });
        procs.push(again);
        await until('the earlier plans set aside', () => existsSync(join(run, 'outdated-1', 'chunks')), 60_000);
        await pushQueue.resume();
      } finally {
        await pushQueue.close();
        redis.disconnect();
      }
      const q = await enq.exit;
      expect(q.code, q.stderr + q.stdout).toBe(0);
      expectOneItemPerGtin(sandbox, owner, rows);
      const byGtin = new Map(items().map((t) => [gtinKey(String(t.gtin)), t]));
      for (let i = 0; i < rows; i++) expect(byGtin.get(gtinKey(testGtin(i)))?.tradeItemName).toBe(`Queued ${i}`);
      // The earlier plans were set aside; the report has every row once, each naming the one item of its GTIN.
      expect(existsSync(join(run, 'outdated-1', 'chunks'))).toBe(true);
      const summary = JSON.parse(readFileSync(join(run, 'summary.json'), 'utf8')) as {
        counts: Record<string, number>;
      };
      expect(summary.counts).toMatchObject({ rows, failed: 0, notAttempted: 0 });
      expect(summary.counts.updated).toBeGreaterThan(0);
      const lines = reportRows(run);
      expect(lines).toHaveLength(rows);
      for (const [, key, outcome, tradeItemId] of lines) {
        expect(['created', 'updated', 'unchanged']).toContain(outcome);
        expect(tradeItemId).toBe(byGtin.get(gtinKey(key!))?.tradeItemId);
      }
    } finally {
      writeFileSync(release, '');
      for (const p of procs) p.child.kill('SIGKILL');
    }
  }, 180_000);
});
