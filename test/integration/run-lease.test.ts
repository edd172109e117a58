// One run at a time per (product API, owner), whatever started it (docs/concurrency.md): inline imports with and
// without Redis, queued imports, both at once; a busy lease is refused naming its holder, or waited for. Real processes
// (the CLI) beside in-process commands and workers, a real Redis, a sandbox that assigns its own ids on create (a
// create sent twice is a second item). Nothing here waits for a lease to run out: the pauses are in
// lease-fencing.test.ts.
import { existsSync, mkdtempSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { acquireLease, holderOf, leaseName } from '../../src/lease/lease.ts';
import { redisLeaseStore } from '../../src/lease/lease-redis.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { freePort } from '../global-setup.ts';
import { cliInProcess, spawnCli } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import {
  expectOneAfterTheOther,
  expectReportTrue,
  fenceHold,
  finishedRuns,
  OWNER,
  ownerItems,
  queuedAndInlineSheets,
  runsByEnd,
  type RunSummary,
  useRunSandbox,
} from '../helpers/lease-runs.ts';
import { expectOneItemPerGtin } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const owner = OWNER;
const redisUrl = inject('redisUrl');
const sandbox = useRunSandbox({ assignIds: true });

const cli = (args: string[], env: Record<string, string>) => spawnCli(args, { env });
const names = () => ownerItems(sandbox).map((t) => String(t.tradeItemName));

describe('one run at a time per (owner, API)', () => {
  for (const withRedis of [false, true]) {
    it(`inline${withRedis ? ' with REDIS_URL' : " (the state directory's lock file)"}: two imports at once with different report dirs — the second exits 2 naming the holder, or waits with --wait-lock`, async () => {
      sandbox.handle.setFaults({ latencyMs: [3, 8], seed: 1 });
      const dir = mkdtempSync(join(tmpdir(), 'ps-lease-'));
      const env = inlineEnv(sandbox.url, dir, {
        API_CONCURRENCY: '8',
        ...(withRedis ? { REDIS_URL: redisUrl, QUEUE_PREFIX: `lease-${process.pid}-${Date.now()}` } : {}),
      });
      const one = writeProductSheet(dir, 200, { owner, file: 'one.csv', name: (i) => `One ${i}` });
      const two = writeProductSheet(dir, 200, { owner, file: 'two.csv', name: (i) => `Two ${i}` });
      const run = (sheet: typeof one, reports: string, more: string[] = [], extra: Record<string, string> = {}) =>
        spawnCli(['import', sheet.file, '--mapping', sheet.mapping, '--report-dir', join(dir, reports), ...more], {
          env: { ...env, ...extra },
        });
      // The first import is held past its fence check (its lease held) while two more start without waiting: the
      // same sheet into the same report dir, another sheet into another. Both are refused, naming the first.
      const hold = fenceHold(dir, 'first', 20);
      const first = run(one, 'r1', [], { PS_TEST_FENCE_HOLD: hold.env });
      await until('the first import to be held', () => existsSync(hold.held));
      // (Refused at once, they run in-process: only their exit code and message are checked.)
      const refuse = (sheet: typeof one, reports: string) =>
        cliInProcess(['import', sheet.file, '--mapping', sheet.mapping, '--report-dir', join(dir, reports)], { env });
      const refused = await Promise.all([refuse(one, 'r1'), refuse(two, 'r2')]);
      hold.release();
      for (const r of refused) {
        expect(r.code, r.stderr).toBe(2);
        expect(r.stderr).toMatch(
          /another run is importing for owner .* run [0-9a-f]{12}-[0-9a-f]{8} \(pid \d+ on .+, since .*\[PS_ERR_RUN_LOCKED\]/s,
        );
      }
      expect((await first.exit).code).toBe(0);
      expectOneItemPerGtin(sandbox, owner, 200);
      expect(finishedRuns(join(dir, 'r1'))).toHaveLength(1);
      expect(finishedRuns(join(dir, 'r2'))).toEqual([]);

      // Both waiting (one a process, one in-process): one after the other, one item per GTIN, the last one's values,
      // its report true to the API.
      sandbox.handle.reset();
      const [x, y] = await Promise.all([
        run(one, 'r3', ['--wait-lock', '60']).exit,
        cliInProcess(
          ['import', two.file, '--mapping', two.mapping, '--report-dir', join(dir, 'r4'), '--wait-lock', '60'],
          { env },
        ),
      ]);
      expect([x.code, y.code], x.stderr + y.stderr).toEqual([0, 0]);
      expectOneItemPerGtin(sandbox, owner, 200);
      const runs = runsByEnd(join(dir, 'r3'), join(dir, 'r4'));
      expect(runs).toHaveLength(2);
      expectOneAfterTheOther(runs);
      const last = runs[1]!.summary.source!.file.endsWith('one.csv') ? 'One ' : 'Two ';
      expect(names().every((n) => n.startsWith(last))).toBe(true);
      expectReportTrue(sandbox, runs[1]!.dir);
      // The lock lives in the state directory, not in a report dir.
      if (!withRedis)
        expect(readdirSync(join(dir, 'state', 'leases')).filter((f) => f.endsWith('.json'))).toHaveLength(1);
      for (const r of ['r1', 'r2', 'r3', 'r4']) expect(existsSync(join(dir, r, '.locks'))).toBe(false);
    }, 120_000);
  }

  it('queue: two imports for one owner never push at the same time; one item per GTIN', async () => {
    sandbox.handle.setFaults({ latencyMs: [3, 8], seed: 2 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-lease-q-'));
    const config = loadConfig(
      inlineEnv(sandbox.url, dir, {
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: `leaseq-${process.pid}-${Date.now()}`,
        API_CONCURRENCY: '8',
        LOG_LEVEL: 'silent',
      }),
    );
    const s1 = writeProductSheet(dir, 300, { owner, file: 'one.csv', name: (i) => `One ${i}` });
    const s2 = writeProductSheet(dir, 300, { owner, file: 'two.csv', name: (i) => `Two ${i}` });
    const w1 = await startWorkers(config, {
      jobsDir: join(dir, 'no-jobs'),
      chunkSize: 50,
      pushConcurrency: 2,
      importConcurrency: 2,
    });
    const client = importQueueClient(config);
    try {
      const [j1, j2] = await Promise.all(
        [s1, s2].map((s) =>
          client.enqueue({ request: { file: s.file, mapping: s.mapping }, origin: 'cli', step: 'prepare' }),
        ),
      );
      const [a, b] = await Promise.all([client.wait(j1!.jobId, 90_000), client.wait(j2!.jobId, 90_000)]);
      expect([a.exitCode, b.exitCode]).toEqual([0, 0]);
      expectOneItemPerGtin(sandbox, owner, 300);
      const runs = [a, b]
        .map((r) => ({ dir: r.reportDir, summary: r.summary as unknown as RunSummary }))
        .sort((p, q) => p.summary.finishedAt.localeCompare(q.summary.finishedAt));
      expectOneAfterTheOther(runs);
      expectReportTrue(sandbox, runs[1]!.dir);
    } finally {
      await client.close();
      await w1.close();
    }
  }, 120_000);

  it('an inline import and a queued import of one owner (REDIS_URL set for both) never write at once', async () => {
    sandbox.handle.setFaults({ latencyMs: [2, 6], seed: 5 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-fence-mixed-'));
    const rows = 200;
    const { queued, inline } = queuedAndInlineSheets(dir, rows);
    const env = inlineEnv(sandbox.url, dir, {
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: `fencem-${process.pid}-${Date.now()}`,
      CHUNK_SIZE: '25',
    });
    const workers = await startWorkers(loadConfig(env), { jobsDir: join(dir, 'no-jobs') });
    try {
      const [q, i] = await Promise.all([
        cliInProcess(['enqueue', queued.file, '--mapping', queued.mapping, '--wait'], { env }),
        cli(
          [
            'import',
            inline.file,
            '--mapping',
            inline.mapping,
            '--wait-lock',
            '60',
            '--report-dir',
            join(dir, 'inline-reports'),
          ],
          env,
        ).exit,
      ]);
      expect([q.code, i.code], q.stderr + i.stderr).toEqual([0, 0]);
      expectOneItemPerGtin(sandbox, owner, rows);
      const runs = runsByEnd(join(dir, 'reports'), join(dir, 'inline-reports'));
      expect(runs).toHaveLength(2);
      // One after the other: the second started when the first had written its report.
      expectOneAfterTheOther(runs);
      const last = runs[1]!.dir.includes('inline-reports') ? 'Inline ' : 'Queued ';
      expect(names().every((n) => n.startsWith(last))).toBe(true);
      expectReportTrue(sandbox, runs[1]!.dir);
    } finally {
      await workers.close();
    }
  }, 120_000);

  it('a queued import waits for a busy lease and says for whom (the console shows it); enqueue --wait-lock gives up with exit 2', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-fence-wait-'));
    const sheet = writeProductSheet(dir, 30, { owner });
    const prefix = `fencew-${process.pid}-${Date.now()}`;
    const env = inlineEnv(sandbox.url, dir, { REDIS_URL: redisUrl, QUEUE_PREFIX: prefix });
    const redis = new Redis(redisUrl);
    // Another run (here: this test) holds the owner's lease on this API.
    const held = await acquireLease({
      store: redisLeaseStore(redis, prefix, leaseName(owner, sandbox.url)),
      owner,
      holder: holderOf('run-holding', 'inline'),
      ttlMs: 60_000,
    });
    const workers = await startWorkers(loadConfig(env), { jobsDir: join(dir, 'no-jobs') });
    const client = importQueueClient(loadConfig(env));
    try {
      const gaveUp = await cliInProcess(
        ['enqueue', sheet.file, '--mapping', sheet.mapping, '--wait', '--wait-lock', '1'],
        { env },
      );
      expect(gaveUp.code).toBe(2);
      expect(gaveUp.stderr).toMatch(
        /another run is importing for owner .* run run-holding \(pid \d+ on .*\[PS_ERR_RUN_LOCKED\]/,
      );
      const { jobId } = await client.enqueue({
        request: { file: sheet.file, mapping: sheet.mapping, mode: 'update-only' },
        origin: 'cli',
        step: 'prepare',
      });
      let status = await client.status(jobId);
      await until(
        'the import to wait',
        async () => ((status = await client.status(jobId))?.progress as { stage?: string } | null)?.stage === 'waiting',
      );
      expect(status!.progress).toMatchObject({
        stage: 'waiting',
        waitingFor: expect.stringMatching(/^run run-holding \(pid \d+/),
      });
      expect(sandbox.handle.counts().writes).toBe(0);
      await held.release();
      const result = await client.wait(jobId, 60_000);
      expect(result.exitCode).toBe(0);
    } finally {
      await held.release();
      await client.close();
      await workers.close();
      redis.disconnect();
    }
  }, 60_000);

  it('REDIS_URL set but Redis unreachable: exit 2 naming Redis and the URL (password redacted), nothing sent, no fallback', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-fence-noredis-'));
    const sheet = writeProductSheet(dir, 20, { owner });
    const port = await freePort();
    const r = await cliInProcess(['import', sheet.file, '--mapping', sheet.mapping], {
      env: inlineEnv(sandbox.url, dir, { REDIS_URL: `redis://:s3cret-pass@127.0.0.1:${port}` }),
    });
    expect(r.code).toBe(2);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      new RegExp(`cannot reach Redis at redis://.*127\\.0\\.0\\.1:${port}.*\\[PS_ERR_REDIS_UNREACHABLE\\]`),
    );
    expect(r.stderr).not.toContain('s3cret-pass');
    expect(sandbox.handle.counts().writes).toBe(0);
    expect(existsSync(join(dir, 'state'))).toBe(false);
  }, 30_000);
});
