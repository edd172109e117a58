// A resumed run never sends a plan another run may have outdated (docs/concurrency.md, "Resuming a run"):
// an import killed with kill -9 mid-run, another import of the same owner and GTINs run to its end, then the killed
// command again — what the docs tell an operator to do. The resumed run plans every row again from the API as it is
// now, so the catalogue ends with its sheet's values, one item per GTIN, and its report says what it did. Real
// processes (the CLI), the sandbox over HTTP, against an API that honours client ids and one that assigns its own.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { gtinKey } from '../../src/pipeline/gtin.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { spawnCli, type CliProcess } from '../helpers/cli.ts';
import { until } from '../helpers/wait.ts';
import { expectOneItemPerGtin } from '../helpers/sandbox.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';

const owner = DEMO_COMPANY_ID;
const redisUrl = inject('redisUrl');
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

type Proc = CliProcess;
const cli = (args: string[], env: Record<string, string>): Proc => spawnCli(args, { env });

const items = () => sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);

/** The one run directory under `reportDir` (the killed run resumed in the same directory). */
function runDir(reportDir: string): string {
  const dirs = readdirSync(reportDir).filter((d) => existsSync(join(reportDir, d, 'run.json')));
  expect(dirs).toHaveLength(1);
  return join(reportDir, dirs[0]!);
}

/** Rows of rows.csv: [row, key, outcome, tradeItemId]. */
function reportRows(dir: string): string[][] {
  return readFileSync(join(dir, 'rows.csv'), 'utf8')
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/)
    .slice(1)
    .map((l) => l.split(','));
}

describe('a run resumed after another run held the lease plans again from the API', () => {
  const cases = [
    { assignIds: false, redis: false, same: 0 },
    { assignIds: true, redis: false, same: 0 },
    { assignIds: true, redis: true, same: 0 },
    // The other sheet holds this sheet's names for its first rows: those the killed run created are found as wanted.
    { assignIds: false, redis: false, same: 20 },
  ];
  for (const c of cases) {
    it(`kill -9, another import of the owner, the killed command again (${c.assignIds ? 'API assigns ids' : 'API honours ids'}, ${c.redis ? 'Redis' : 'lease file'}${c.same ? `, ${c.same} rows alike` : ''}): the catalogue ends with the resumed sheet's values, one item per GTIN, a true report`, async () => {
      sandbox.handle.reset();
      sandbox.handle.setAssignIds(c.assignIds);
      sandbox.handle.setFaults({ latencyMs: [10, 20], seed: 7 });
      const dir = mkdtempSync(join(tmpdir(), 'ps-resume-takeover-'));
      const rows = 300;
      const night = writeProductSheet(dir, rows, { owner, file: 'night.csv', name: (i) => `Night ${i}` });
      const fix = writeProductSheet(dir, rows, {
        owner,
        file: 'fix.csv',
        name: (i) => (i < c.same ? `Night ${i}` : `Fix ${i}`),
      });
      const env = {
        PRODUCT_API_URL: sandbox.url,
        REFERENCE_API_URL: sandbox.url,
        API_TOKEN: 'sandbox-token',
        STATE_DIR: join(dir, 'state'),
        API_CONCURRENCY: '4',
        CHUNK_SIZE: '50',
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'json',
        ...(c.redis ? { REDIS_URL: redisUrl, QUEUE_PREFIX: `resume-${process.pid}-${Date.now()}` } : { REDIS_URL: '' }),
      };
      const nightReports = join(dir, 'night-reports');
      const first = cli(['import', night.file, '--mapping', night.mapping, '--report-dir', nightReports], env);
      try {
        // Killed mid-run: some chunks pushed, one in flight, the rest planned or not read yet.
        await until('the first import to create items', () => items().length >= 60);
        first.child.kill('SIGKILL');
        await first.exit;
        const killedAt = items().length;
        expect(killedAt).toBeLessThan(rows);
        sandbox.handle.setFaults({});
        // Another import of the same GTINs runs to its end (the killed holder's lease is free: its process is gone).
        const other = await cli(
          ['import', fix.file, '--mapping', fix.mapping, '--report-dir', join(dir, 'fix-reports')],
          env,
        ).exit;
        expect(other.code, other.stderr).toBe(0);
        expect(items().filter((t) => String(t.tradeItemName).startsWith('Fix '))).toHaveLength(rows - c.same);
        // The killed command again: it resumes its run directory.
        const resumed = await cli(['import', night.file, '--mapping', night.mapping, '--report-dir', nightReports], env)
          .exit;
        expect(resumed.code, resumed.stderr + resumed.stdout).toBe(0);
        expectOneItemPerGtin(sandbox, owner, rows);
        // The catalogue holds what the last command asked for: the resumed sheet's values, on every item.
        const byGtin = new Map(items().map((t) => [gtinKey(String(t.gtin)), t]));
        for (let i = 0; i < rows; i++) expect(byGtin.get(gtinKey(testGtin(i)))?.tradeItemName).toBe(`Night ${i}`);
        // Its report says what really happened: every item was held with the other sheet's name, so every row was
        // updated (none created again, none confirmed without a write), each naming the one item of its GTIN.
        const run = runDir(nightReports);
        const summary = JSON.parse(readFileSync(join(run, 'summary.json'), 'utf8')) as {
          exitCode: number;
          counts: Record<string, number>;
        };
        // Rows alike in both sheets were created by the killed attempt and left as they were: they send nothing and
        // keep that outcome (and their undo ledger line).
        expect(summary.counts).toMatchObject({
          rows,
          updated: rows - c.same,
          created: c.same,
          unchanged: 0,
          failed: 0,
        });
        const lines = reportRows(run);
        expect(lines).toHaveLength(rows);
        for (const [row, key, outcome, tradeItemId] of lines) {
          expect(outcome).toBe(Number(row) - 2 < c.same ? 'created' : 'updated');
          expect(tradeItemId).toBe(byGtin.get(gtinKey(key!))?.tradeItemId);
        }
        const ledger = readFileSync(join(run, 'undo.jsonl'), 'utf8').trim().split('\n');
        expect(ledger.filter((l) => (JSON.parse(l) as { outcome: string }).outcome === 'created')).toHaveLength(c.same);
      } finally {
        first.child.kill('SIGKILL');
        sandbox.handle.setFaults({});
        sandbox.handle.setAssignIds(false);
      }
    }, 120_000);
  }
});

describe('the queued variant: a worker killed mid-chunk, an inline run of the owner, the job picked up again', () => {
  for (const inlineRedis of [true, false])
    it(`the queued run sends none of its outdated plans (the inline run ${inlineRedis ? 'with REDIS_URL' : 'without REDIS_URL, on the same machine'}): one item per GTIN, the inline sheet held, a complete report from each run`, async () => {
      sandbox.handle.reset();
      sandbox.handle.setAssignIds(true);
      sandbox.handle.setFaults({ latencyMs: [10, 20], seed: 8 });
      const dir = mkdtempSync(join(tmpdir(), 'ps-resume-queued-'));
      const rows = 300;
      const queued = writeProductSheet(dir, rows, { owner, file: 'queued.csv', name: (i) => `Queued ${i}` });
      const inline = writeProductSheet(dir, rows, { owner, file: 'inline.csv', name: (i) => `Inline ${i}` });
      const env = {
        PRODUCT_API_URL: sandbox.url,
        REFERENCE_API_URL: sandbox.url,
        API_TOKEN: 'sandbox-token',
        REPORT_DIR: join(dir, 'reports'),
        STATE_DIR: join(dir, 'state'),
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: `resumeq-${process.pid}-${Date.now()}`,
        API_CONCURRENCY: '2',
        CHUNK_SIZE: '50',
        LEASE_TTL_SECONDS: '3',
        WORKER_LOCK_MS: '2000',
        LOG_LEVEL: 'warn',
        LOG_FORMAT: 'json',
      };
      const worker = cli(['worker', '--jobs-dir', join(dir, 'no-jobs')], env);
      let again: Proc | undefined;
      try {
        const enq = cli(['enqueue', queued.file, '--mapping', queued.mapping, '--wait'], env);
        await until('the worker to write', () => items().length >= 60);
        worker.child.kill('SIGKILL');
        await worker.exit;
        const killedAt = items().length;
        expect(killedAt).toBeLessThan(rows);
        // The owner's inline run takes the lease once the queued run's has run out (no worker keeps it), and runs to
        // its end.
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
        const run = runDir(join(dir, 'reports'));
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
        sandbox.handle.setFaults({});
        sandbox.handle.setAssignIds(false);
      }
    }, 180_000);
});
