// Never a duplicate (docs/concurrency.md): the owner lease is one per (product API, owner) for inline and queued runs
// alike, and fenced — a writer paused past its lease, or a worker paused past its job lock, sends nothing more once it
// resumes. Real processes (the CLI, `worker`), a real Redis, and a sandbox that assigns its own ids on create, as many
// real APIs do: a create sent twice is a second item, so every test here counts items per GTIN.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { acquireLease, holderOf, leaseName } from '../../src/lease/lease.ts';
import { redisLeaseStore } from '../../src/lease/lease-redis.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { freePort } from '../global-setup.ts';
import { expectOneItemPerGtin } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { spawnCli, type CliProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { sleep, until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
const redisUrl = inject('redisUrl');
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, assignIds: true });
});
afterAll(async () => {
  await sandbox?.close();
});

type Proc = CliProcess;

const cli = (args: string[], env: Record<string, string>) => spawnCli(args, { env });

const items = () => sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);

function baseEnv(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return inlineEnv(sandbox.url, dir, { LOG_FORMAT: 'json', ...extra });
}

interface Summary {
  runId: string;
  exitCode: number;
  startedAt: string;
  finishedAt: string;
  aborted?: string;
  abortCode?: string;
  counts: Record<string, number>;
}

/** The finished runs under a report dir, with their summaries. */
function runsIn(reportDir: string): { dir: string; summary: Summary }[] {
  if (!existsSync(reportDir)) return [];
  return readdirSync(reportDir)
    .filter((d) => existsSync(join(reportDir, d, 'summary.json')))
    .map((d) => ({
      dir: join(reportDir, d),
      summary: JSON.parse(readFileSync(join(reportDir, d, 'summary.json'), 'utf8')) as Summary,
    }));
}

/**
 * A report says only what its run did, and what the API holds: each row it reports created, updated or unchanged names
 * the one item the API holds for its GTIN; the counts add up to the lines.
 */
function expectReportTrue(runDir: string): void {
  const byGtin = new Map(items().map((t) => [String(t.gtin), t.tradeItemId]));
  const lines = readFileSync(join(runDir, 'rows.csv'), 'utf8')
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/)
    .slice(1);
  const summary = JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8')) as Summary;
  const seen: Record<string, number> = {};
  for (const line of lines) {
    const [, key, outcome, tradeItemId] = line.split(',');
    seen[outcome!] = (seen[outcome!] ?? 0) + 1;
    if (outcome === 'created' || outcome === 'updated' || outcome === 'unchanged')
      expect(tradeItemId, `${runDir}: ${line}`).toBe(byGtin.get(key!));
    else expect(['not_attempted', 'failed'], line).toContain(outcome);
  }
  expect(summary.counts.created).toBe(seen.created ?? 0);
  expect(summary.counts.notAttempted).toBe(seen.not_attempted ?? 0);
  expect(lines.length).toBe(summary.counts.rows);
}

describe('the owner lease is fenced', () => {
  for (const withRedis of [false, true]) {
    it(`an inline import paused past its lease${withRedis ? ' (Redis)' : ' (lock file)'} sends nothing more once another import took over: it ends as lease lost, exit 3`, async () => {
      sandbox.handle.reset();
      sandbox.handle.setFaults({ latencyMs: [15, 25], seed: 3 });
      const dir = mkdtempSync(join(tmpdir(), 'ps-fence-inline-'));
      const rows = 300;
      const a = writeProductSheet(dir, rows, { owner, file: 'night.csv', name: (i) => `Night ${i}` });
      const b = writeProductSheet(dir, rows, { owner, file: 'fix.csv', name: (i) => `Fix ${i}` });
      const env = baseEnv(dir, {
        LEASE_TTL_SECONDS: '2',
        ...(withRedis ? { REDIS_URL: redisUrl, QUEUE_PREFIX: `fence-${process.pid}-${Date.now()}` } : {}),
      });
      const first = cli(['import', a.file, '--mapping', a.mapping], env);
      try {
        await until('the first import to create items', () => items().length >= 30);
        first.child.kill('SIGSTOP');
        const pausedAt = items().length;
        // Paused past its lease (2 s): the second import takes it over and writes every row.
        await sleep(3000);
        const second = await cli(['import', b.file, '--mapping', b.mapping], env).exit;
        expect(second.code, second.stderr).toBe(0);
        first.child.kill('SIGCONT');
        const resumed = await first.exit;
        expect(resumed.code, resumed.stderr).toBe(3);
        expect(resumed.stdout + resumed.stderr).toMatch(/lease lost/);
        expectOneItemPerGtin(sandbox, owner, rows);
        // The API holds the second import's names: the first one wrote nothing after it resumed.
        expect(items().every((t) => String(t.tradeItemName).startsWith('Fix '))).toBe(true);
        const runs = runsIn(join(dir, 'reports'));
        expect(runs).toHaveLength(2);
        const lost = runs.find((r) => r.summary.exitCode === 3)!;
        expect(lost.summary).toMatchObject({
          abortCode: 'PS_ERR_LEASE_LOST',
          aborted: expect.stringMatching(/^lease lost: /),
        });
        expect(lost.summary.counts.notAttempted).toBeGreaterThan(0);
        expect(lost.summary.counts.created).toBeGreaterThanOrEqual(pausedAt - 8);
        for (const r of runs) expectReportTrue(r.dir);
      } finally {
        // Never leave a child stopped (a failed assertion above may come before SIGCONT).
        first.child.kill('SIGCONT');
        first.child.kill('SIGKILL');
        sandbox.handle.setFaults({});
      }
    }, 90_000);
  }

  it('a queue worker paused past its job lock sends nothing more once another worker pushed its chunk', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [15, 25], seed: 4 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-fence-queue-'));
    const rows = 400;
    const sheet = writeProductSheet(dir, rows, { owner });
    const env = baseEnv(dir, {
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: `fenceq-${process.pid}-${Date.now()}`,
      WORKER_LOCK_MS: '1500',
      CHUNK_SIZE: '50',
      API_CONCURRENCY: '2',
      LEASE_TTL_SECONDS: '5',
    });
    const workers: Proc[] = [];
    try {
      workers.push(cli(['worker', '--jobs-dir', join(dir, 'no-jobs')], env));
      const enq = cli(['enqueue', sheet.file, '--mapping', sheet.mapping, '--wait'], env);
      await until('the worker to push', () => items().length >= 30);
      workers[0]!.child.kill('SIGSTOP');
      const pausedAt = items().length;
      // Another worker takes the stalled jobs over once their locks expired, and finishes the run.
      workers.push(cli(['worker', '--jobs-dir', join(dir, 'no-jobs')], env));
      const done = await enq.exit;
      expect(done.code, done.stderr + done.stdout).toBe(0);
      expect(items().length).toBe(rows);
      expect(pausedAt).toBeLessThan(rows);
      // The paused worker resumes: whatever it had in hand is refused by its job lock's fence.
      workers[0]!.child.kill('SIGCONT');
      await sleep(3000);
      expectOneItemPerGtin(sandbox, owner, rows);
      const [run] = runsIn(join(dir, 'reports'));
      expect(run!.summary.exitCode).toBe(0);
      expectReportTrue(run!.dir);
    } finally {
      for (const w of workers) {
        w.child.kill('SIGCONT');
        w.child.kill('SIGTERM');
      }
      await Promise.all(workers.map((w) => w.exit));
      sandbox.handle.setFaults({});
    }
  }, 120_000);

  it('an inline import and a queued import of one owner (REDIS_URL set for both) never write at once', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [2, 6], seed: 5 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-fence-mixed-'));
    const rows = 200;
    const queued = writeProductSheet(dir, rows, { owner, file: 'queued.csv', name: (i) => `Queued ${i}` });
    const inline = writeProductSheet(dir, rows, { owner, file: 'inline.csv', name: (i) => `Inline ${i}` });
    const env = baseEnv(dir, {
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: `fencem-${process.pid}-${Date.now()}`,
      CHUNK_SIZE: '25',
    });
    const worker = cli(['worker', '--jobs-dir', join(dir, 'no-jobs')], env);
    try {
      const [q, i] = await Promise.all([
        cli(['enqueue', queued.file, '--mapping', queued.mapping, '--wait'], env).exit,
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
      const runs = [...runsIn(join(dir, 'reports')), ...runsIn(join(dir, 'inline-reports'))].sort((x, y) =>
        x.summary.finishedAt.localeCompare(y.summary.finishedAt),
      );
      expect(runs).toHaveLength(2);
      // One after the other: the second started when the first had written its report.
      expect(
        runs[0]!.summary.finishedAt <= runs[1]!.summary.startedAt,
        JSON.stringify(runs.map((r) => [r.summary.startedAt, r.summary.finishedAt])),
      ).toBe(true);
      const last = runs[1]!.dir.includes('inline-reports') ? 'Inline ' : 'Queued ';
      expect(items().every((t) => String(t.tradeItemName).startsWith(last))).toBe(true);
      expectReportTrue(runs[1]!.dir);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exit;
      sandbox.handle.setFaults({});
    }
  }, 120_000);

  it("two inline imports with different report dirs share one lease (the state directory's lock file)", async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [2, 6], seed: 6 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-fence-dirs-'));
    const rows = 150;
    const one = writeProductSheet(dir, rows, { owner, file: 'one.csv', name: (i) => `One ${i}` });
    const two = writeProductSheet(dir, rows, { owner, file: 'two.csv', name: (i) => `Two ${i}` });
    const env = baseEnv(dir);
    try {
      // At once, without waiting: one of them is refused, naming the other.
      const [x, y] = await Promise.all([
        cli(['import', one.file, '--mapping', one.mapping, '--report-dir', join(dir, 'r1')], env).exit,
        sleep(200).then(
          () => cli(['import', two.file, '--mapping', two.mapping, '--report-dir', join(dir, 'r2')], env).exit,
        ),
      ]);
      expect([x.code, y.code].sort(), x.stderr + y.stderr).toEqual([0, 2]);
      expect((x.code === 2 ? x : y).stderr).toMatch(
        /PS_ERR_RUN_LOCKED.*|another run is importing for owner .* run [0-9a-f]{12}-[0-9a-f]{8} \(pid \d+ on .+, since /s,
      );
      expectOneItemPerGtin(sandbox, owner, rows);
      // Both waiting: one after the other, one item per GTIN.
      const [p, q] = await Promise.all([
        cli(['import', one.file, '--mapping', one.mapping, '--report-dir', join(dir, 'r3'), '--wait-lock', '60'], env)
          .exit,
        cli(['import', two.file, '--mapping', two.mapping, '--report-dir', join(dir, 'r4'), '--wait-lock', '60'], env)
          .exit,
      ]);
      expect([p.code, q.code], p.stderr + q.stderr).toEqual([0, 0]);
      expectOneItemPerGtin(sandbox, owner, rows);
      const runs = [...runsIn(join(dir, 'r3')), ...runsIn(join(dir, 'r4'))].sort((a, b) =>
        a.summary.finishedAt.localeCompare(b.summary.finishedAt),
      );
      expect(runs[0]!.summary.finishedAt <= runs[1]!.summary.startedAt).toBe(true);
      expectReportTrue(runs[1]!.dir);
      // The lock lives in the state directory, not in a report dir.
      expect(readdirSync(join(dir, 'state', 'leases')).filter((f) => f.endsWith('.json'))).toHaveLength(1);
      for (const r of ['r1', 'r2', 'r3', 'r4']) expect(existsSync(join(dir, r, '.locks'))).toBe(false);
    } finally {
      sandbox.handle.setFaults({});
    }
  }, 120_000);

  it('a queued import waits for a busy lease and says for whom (the console shows it); enqueue --wait-lock gives up with exit 2', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-fence-wait-'));
    const sheet = writeProductSheet(dir, 30, { owner });
    const prefix = `fencew-${process.pid}-${Date.now()}`;
    const env = baseEnv(dir, { REDIS_URL: redisUrl, QUEUE_PREFIX: prefix });
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
      const gaveUp = await cli(['enqueue', sheet.file, '--mapping', sheet.mapping, '--wait', '--wait-lock', '1'], env)
        .exit;
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
      for (let i = 0; i < 300 && (status?.progress as { stage?: string } | null)?.stage !== 'waiting'; i++) {
        await sleep(20);
        status = await client.status(jobId);
      }
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
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-fence-noredis-'));
    const sheet = writeProductSheet(dir, 20, { owner });
    const port = await freePort();
    const r = await cli(
      ['import', sheet.file, '--mapping', sheet.mapping],
      baseEnv(dir, { REDIS_URL: `redis://:s3cret-pass@127.0.0.1:${port}` }),
    ).exit;
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
