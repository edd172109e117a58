// Every writer on a machine takes the machine's lease file (docs/concurrency.md): a queue worker or an inline import
// that holds the Redis lease of (API, owner) also holds STATE_DIR's lease file for it while it writes, so an inline
// import on the same machine whose shell lacks REDIS_URL waits for it or exits 2 naming it — and a queued import waits
// for an inline run without Redis. Real processes (`worker`, `enqueue`, `import`), a real Redis, and a sandbox that
// assigns its own ids: two writers at once would leave GTINs with two items.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { spawnCli, type CliProcess } from '../helpers/cli.ts';
import { until as waitUntil } from '../helpers/wait.ts';
import { expectOneItemPerGtin } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';

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
const cli = (args: string[], env: Record<string, string>): Proc => spawnCli(args, { env });

const items = () => sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);

const until = (what: string, cond: () => boolean, ms = 60_000): Promise<void> => waitUntil(what, cond, ms);

interface Summary {
  startedAt: string;
  finishedAt: string;
  exitCode: number;
}

const summaries = (reportDir: string): Summary[] =>
  existsSync(reportDir)
    ? readdirSync(reportDir)
        .filter((d) => existsSync(join(reportDir, d, 'summary.json')))
        .map((d) => JSON.parse(readFileSync(join(reportDir, d, 'summary.json'), 'utf8')) as Summary)
    : [];

function envOf(dir: string, prefix: string): { withRedis: Record<string, string>; without: Record<string, string> } {
  const base = {
    PRODUCT_API_URL: sandbox.url,
    REFERENCE_API_URL: sandbox.url,
    API_TOKEN: 'sandbox-token',
    REPORT_DIR: join(dir, 'reports'),
    // One machine: one state directory for every process.
    STATE_DIR: join(dir, 'state'),
    API_CONCURRENCY: '2',
    CHUNK_SIZE: '50',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
  };
  return {
    withRedis: { ...base, REDIS_URL: redisUrl, QUEUE_PREFIX: prefix },
    without: { ...base, REDIS_URL: '', REPORT_DIR: join(dir, 'inline-reports') },
  };
}

describe("every writer on a machine takes the machine's lease file", () => {
  it('a queue worker writing for an owner: an inline import without REDIS_URL exits 2 naming the queued run, or waits for it with --wait-lock', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [10, 20], seed: 11 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-machine-lease-'));
    const rows = 300;
    const queued = writeProductSheet(dir, rows, { owner, file: 'queued.csv', name: (i) => `Queued ${i}` });
    const inline = writeProductSheet(dir, rows, { owner, file: 'inline.csv', name: (i) => `Inline ${i}` });
    const env = envOf(dir, `machine-${process.pid}-${Date.now()}`);
    const worker = cli(['worker', '--jobs-dir', join(dir, 'no-jobs')], env.withRedis);
    try {
      const enq = cli(['enqueue', queued.file, '--mapping', queued.mapping, '--wait'], env.withRedis);
      await until('the worker to write', () => items().length >= 20);
      const refused = await cli(['import', inline.file, '--mapping', inline.mapping], env.without).exit;
      expect(refused.code, refused.stderr + refused.stdout).toBe(2);
      expect(refused.stderr).toMatch(
        /another run is importing for owner .* run [0-9a-f-]+ \(pid \d+ on .+; queued, job .+\).*\[PS_ERR_RUN_LOCKED\]/s,
      );
      // Waiting: it starts once the queued run wrote its report.
      const waited = cli(['import', inline.file, '--mapping', inline.mapping, '--wait-lock', '120'], env.without);
      const q = await enq.exit;
      expect(q.code, q.stderr + q.stdout).toBe(0);
      const w = await waited.exit;
      expect(w.code, w.stderr + w.stdout).toBe(0);
      expectOneItemPerGtin(sandbox, owner, rows);
      expect(items().every((t) => String(t.tradeItemName).startsWith('Inline '))).toBe(true);
      const [queuedRun] = summaries(join(dir, 'reports'));
      const inlineRuns = summaries(join(dir, 'inline-reports'));
      expect(inlineRuns).toHaveLength(1);
      expect(queuedRun!.finishedAt <= inlineRuns[0]!.startedAt).toBe(true);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exit;
      sandbox.handle.setFaults({});
    }
  }, 180_000);

  it('an inline import without REDIS_URL writing for an owner: a queued import of that owner on the same machine waits for it', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [10, 20], seed: 12 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-machine-lease-'));
    const rows = 300;
    const queued = writeProductSheet(dir, rows, { owner, file: 'queued.csv', name: (i) => `Queued ${i}` });
    const inline = writeProductSheet(dir, rows, { owner, file: 'inline.csv', name: (i) => `Inline ${i}` });
    const env = envOf(dir, `machine-${process.pid}-${Date.now()}`);
    const worker = cli(['worker', '--jobs-dir', join(dir, 'no-jobs')], env.withRedis);
    try {
      const first = cli(['import', inline.file, '--mapping', inline.mapping], env.without);
      await until('the inline import to write', () => items().length >= 20);
      const enq = await cli(['enqueue', queued.file, '--mapping', queued.mapping, '--wait'], env.withRedis).exit;
      const i = await first.exit;
      expect([i.code, enq.code], i.stderr + enq.stderr + enq.stdout).toEqual([0, 0]);
      expectOneItemPerGtin(sandbox, owner, rows);
      expect(items().every((t) => String(t.tradeItemName).startsWith('Queued '))).toBe(true);
      const [inlineRun] = summaries(join(dir, 'inline-reports'));
      const [queuedRun] = summaries(join(dir, 'reports'));
      expect(inlineRun!.finishedAt <= queuedRun!.startedAt).toBe(true);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exit;
      sandbox.handle.setFaults({});
    }
  }, 180_000);

  it('an inline import with REDIS_URL holds the lease file too: the same import without REDIS_URL exits 2 naming it', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [10, 20], seed: 13 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-machine-lease-'));
    const rows = 200;
    const one = writeProductSheet(dir, rows, { owner, file: 'one.csv', name: (i) => `One ${i}` });
    const two = writeProductSheet(dir, rows, { owner, file: 'two.csv', name: (i) => `Two ${i}` });
    const env = envOf(dir, `machine-${process.pid}-${Date.now()}`);
    const first = cli(['import', one.file, '--mapping', one.mapping], env.withRedis);
    try {
      await until('the first import to write', () => items().length >= 20);
      const second = await cli(['import', two.file, '--mapping', two.mapping], env.without).exit;
      expect(second.code, second.stderr).toBe(2);
      expect(second.stderr).toMatch(/another run is importing for owner .* run [0-9a-f-]+ \(pid \d+ on /);
      const f = await first.exit;
      expect(f.code, f.stderr).toBe(0);
      expectOneItemPerGtin(sandbox, owner, rows);
    } finally {
      first.child.kill('SIGKILL');
      sandbox.handle.setFaults({});
    }
  }, 120_000);
});
