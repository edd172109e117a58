// A resumed run never sends a plan another run may have outdated (docs/concurrency.md, "Resuming a run"), the queued
// variant of resume-after-takeover.test.ts: a worker killed with kill -9 mid-chunk, an inline run of the owner that
// takes the lease over once the queued run's ran out, then a worker again, which picks the killed chunk job up once its
// lock ran out. The workers run on the default job lock and a long lease; the test expires the killed worker's lock and
// lease itself (helpers/takeover.ts), and the new worker looks for stalled jobs often (WORKER_STALLED_CHECK_MS).
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, inject, it } from 'vitest';
import { gtinKey } from '../../src/pipeline/gtin.ts';
import { spawnWithEnv, type CliProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { onlyRunDir, OWNER, ownerItems, queuedAndInlineSheets } from '../helpers/lease-runs.ts';
import { expectOneItemPerGtin, reportRows, useSandbox } from '../helpers/sandbox.ts';
import { expireJobLocks, expireOwnerLeases } from '../helpers/takeover.ts';
import { until } from '../helpers/wait.ts';

const owner = OWNER;
const redisUrl = inject('redisUrl');
/** A sandbox for each case (the inline run with REDIS_URL, without): the two run at once. */
const sandboxes = new Map([true, false].map((inlineRedis) => [inlineRedis, useSandbox({ assignIds: true })]));

const cli = spawnWithEnv;

describe('the queued variant: a worker killed mid-chunk, an inline run of the owner, the job picked up again', () => {
  // Both cases at once: each has its sandbox, key prefix, state directory and processes of its own.
  for (const inlineRedis of [true, false])
    it.concurrent(
      `the queued run sends none of its outdated plans (the inline run ${inlineRedis ? 'with REDIS_URL' : 'without REDIS_URL, on the same machine'}): one item per GTIN, the inline sheet held, a complete report from each run`,
      async ({ expect }) => {
        const sandbox = sandboxes.get(inlineRedis)!;
        const items = () => ownerItems(sandbox);
        sandbox.handle.setFaults({ latencyMs: [10, 20], seed: 8 });
        const dir = mkdtempSync(join(tmpdir(), 'ps-resume-queued-'));
        const rows = 300;
        const { queued, inline } = queuedAndInlineSheets(dir, rows);
        const prefix = `resumeq-${process.pid}-${Date.now()}-${inlineRedis ? 'redis' : 'file'}`;
        const env = inlineEnv(sandbox.url, dir, {
          REDIS_URL: redisUrl,
          QUEUE_PREFIX: prefix,
          API_CONCURRENCY: '2',
          CHUNK_SIZE: '50',
          LEASE_TTL_SECONDS: '30',
          WORKER_STALLED_CHECK_MS: '200',
          LOG_FORMAT: 'json',
        });
        const worker = cli(['worker', '--jobs-dir', join(dir, 'no-jobs')], env);
        let again: CliProcess | undefined;
        try {
          const enq = cli(['enqueue', queued.file, '--mapping', queued.mapping, '--wait'], env);
          await until('the worker to write', () => items().length >= 60);
          worker.child.kill('SIGKILL');
          await worker.exit;
          const killedAt = items().length;
          expect(killedAt).toBeLessThan(rows);
          // No worker keeps the queued run's lease or its chunk's lock any more: they run out (here, at once).
          expect(await expireOwnerLeases(redisUrl, prefix, join(dir, 'state'), owner)).toBe(1);
          await expireJobLocks(redisUrl, prefix);
          // The owner's inline run takes the lease once the queued run's has run out, and runs to its end.
          const other = await cli(
            [
              'import',
              inline.file,
              '--mapping',
              inline.mapping,
              '--wait-lock',
              '60',
              '--report-dir',
              join(dir, 'inline'),
            ],
            inlineRedis ? env : { ...env, REDIS_URL: '' },
          ).exit;
          expect(other.code, other.stderr).toBe(0);
          // A worker again: the killed chunk job is picked up (its lock ran out), and the run ends.
          again = cli(['worker', '--jobs-dir', join(dir, 'no-jobs')], env);
          const q = await enq.exit;
          expectOneItemPerGtin(sandbox, owner, rows);
          expect(items().every((t) => String(t.tradeItemName).startsWith('Inline '))).toBe(true);
          // The queued run's report is complete and true: what it created before it was killed, the rest not sent (its
          // lease was another run's since), exit 3.
          expect(q.code, q.stderr + q.stdout).toBe(3);
          const run = onlyRunDir(join(dir, 'reports'));
          const summary = JSON.parse(readFileSync(join(run, 'summary.json'), 'utf8')) as {
            abortCode?: string;
            counts: Record<string, number>;
          };
          expect(summary.abortCode).toBe('PS_ERR_LEASE_LOST');
          const lines = reportRows(run);
          expect(lines).toHaveLength(rows);
          const byGtin = new Map(items().map((t) => [gtinKey(String(t.gtin)), t]));
          for (const [, key, outcome, tradeItemId] of lines) {
            expect(['created', 'not_attempted', 'failed']).toContain(outcome);
            if (outcome === 'created') expect(tradeItemId).toBe(byGtin.get(gtinKey(key!))?.tradeItemId);
          }
        } finally {
          worker.child.kill('SIGKILL');
          again?.child.kill('SIGTERM');
          await again?.exit;
        }
      },
      180_000,
    );
});
