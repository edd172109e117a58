// Never a duplicate (docs/concurrency.md): a queue worker paused past its job lock sends nothing more once it resumes.
// Real processes (`worker`, `enqueue`) stopped with SIGSTOP, a real Redis, and a sandbox that assigns its own ids on
// create, as many real APIs do: a create sent twice is a second item, so the test counts items per GTIN. The paused
// worker holds a short job lock, which its pause outlasts on its own clock (the fence it trusts); the one that goes on
// runs on a long one, which a loaded machine cannot let run out under it. An inline import paused past its lease:
// lease-fencing.test.ts.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { spawnCli, type CliProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { expectReportTrue, finishedRuns, OWNER, ownerItems, useRunSandbox } from '../helpers/lease-runs.ts';
import { expectOneItemPerGtin } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const owner = OWNER;
const redisUrl = inject('redisUrl');
const sandbox = useRunSandbox({ assignIds: true });

const cli = (args: string[], env: Record<string, string>) => spawnCli(args, { env });
const items = () => ownerItems(sandbox);

describe('the job lock is fenced', () => {
  it('a queue worker paused past its job lock sends nothing more once another worker pushed its chunk', async () => {
    sandbox.handle.setFaults({ latencyMs: [15, 25], seed: 4 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-fence-queue-'));
    const rows = 400;
    const sheet = writeProductSheet(dir, rows, { owner });
    const env = inlineEnv(sandbox.url, dir, {
      LOG_FORMAT: 'json',
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: `fenceq-${process.pid}-${Date.now()}`,
      WORKER_LOCK_MS: '1500',
      CHUNK_SIZE: '50',
      API_CONCURRENCY: '2',
      LEASE_TTL_SECONDS: '30',
    });
    const workers: CliProcess[] = [];
    try {
      workers.push(cli(['worker', '--jobs-dir', join(dir, 'no-jobs')], env));
      const enq = cli(['enqueue', sheet.file, '--mapping', sheet.mapping, '--wait'], env);
      await until('the worker to push', () => items().length >= 30);
      workers[0]!.child.kill('SIGSTOP');
      const pausedAt = items().length;
      // Another worker takes the stalled jobs over once their locks expired (it looks for them often), and finishes
      // the run on the default job lock.
      const live = { ...env, WORKER_LOCK_MS: '30000', WORKER_STALLED_CHECK_MS: '200' };
      workers.push(cli(['worker', '--jobs-dir', join(dir, 'no-jobs')], live));
      const done = await enq.exit;
      expect(done.code, done.stderr + done.stdout).toBe(0);
      expect(items().length).toBe(rows);
      expect(pausedAt).toBeLessThan(rows);
      // The paused worker resumes: whatever it had in hand is refused by its job lock's fence. It stops: a worker
      // finishes the jobs in hand before it exits, so each of them reaches its fence.
      workers[0]!.child.kill('SIGCONT');
      workers[0]!.child.kill('SIGTERM');
      await workers[0]!.exit;
      expectOneItemPerGtin(sandbox, owner, rows);
      const [run] = finishedRuns(join(dir, 'reports'));
      expect(run!.summary.exitCode).toBe(0);
      expectReportTrue(sandbox, run!.dir);
    } finally {
      for (const w of workers) {
        w.child.kill('SIGCONT');
        w.child.kill('SIGTERM');
      }
      await Promise.all(workers.map((w) => w.exit));
    }
  }, 120_000);
});
