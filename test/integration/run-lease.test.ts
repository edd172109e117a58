import { mkdtempSync, readdirSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { expectOneItemPerGtin } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { runCli, type CliResult } from '../helpers/cli.ts';

const owner = DEMO_COMPANY_ID;
const redisUrl = inject('redisUrl');
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

const cli = (args: string[], env: Record<string, string>) => runCli(args, { env });

/** Every line of a report that names an item names the one the API holds for its GTIN, with the API's values. */
function reportTrueToApi(reportDir: string, names: (gtin: string) => string | undefined): void {
  const items = new Map(
    sandbox.handle.store
      .dump()
      .tradeItems.filter((t) => t.ownerCompanyId === owner)
      .map((t) => [t.gtin, t]),
  );
  const lines = readFileSync(join(reportDir, 'rows.csv'), 'utf8')
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/)
    .slice(1);
  for (const line of lines) {
    const [, key, outcome, tradeItemId] = line.split(',');
    expect(['created', 'updated', 'unchanged']).toContain(outcome);
    expect(tradeItemId).toBe(items.get(key!)?.tradeItemId);
    // The run that reports the row last wrote it, or found it as it wanted it: the API holds this sheet's name.
    expect(items.get(key!)?.tradeItemName).toBe(names(key!));
  }
}

const finished = (reportDir: string) =>
  readdirSync(reportDir)
    .filter((d) => existsSync(join(reportDir, d, 'summary.json')))
    .map((d) => join(reportDir, d));

describe('one run at a time per (owner, API)', () => {
  for (const withRedis of [false, true]) {
    it(`inline${withRedis ? ' with REDIS_URL' : ' (lock file)'}: the same sheet twice at once — the second exits 2 naming the holder, or waits with --wait-lock`, async () => {
      sandbox.handle.reset();
      sandbox.handle.setFaults({ latencyMs: [3, 8], seed: 1 });
      const dir = mkdtempSync(join(tmpdir(), 'ps-lease-'));
      const { file, mapping } = writeProductSheet(dir, 400, { owner });
      const reportDir = join(dir, 'reports');
      const env: Record<string, string> = {
        PRODUCT_API_URL: sandbox.url,
        REFERENCE_API_URL: sandbox.url,
        API_TOKEN: 'sandbox-token',
        REPORT_DIR: reportDir,
        API_CONCURRENCY: '8',
        LOG_LEVEL: 'silent',
        ...(withRedis ? { REDIS_URL: redisUrl, QUEUE_PREFIX: `lease-${Date.now()}` } : { REDIS_URL: '' }),
      };
      try {
        const [a, b] = await Promise.all([
          cli(['import', file, '--mapping', mapping], env),
          new Promise<CliResult>((r) =>
            setTimeout(() => void cli(['import', file, '--mapping', mapping], env).then(r), 300),
          ),
        ]);
        expect([a.code, b.code].sort()).toEqual([0, 2]);
        const loser = a.code === 2 ? a : b;
        expect(loser.stderr).toMatch(/PS_ERR_RUN_LOCKED/);
        expect(loser.stderr).toMatch(/another run is importing for owner .* run [0-9a-f]{12}-[0-9a-f]{8} \(pid \d+/);
        expectOneItemPerGtin(sandbox, owner, 400);
        expect(finished(reportDir)).toHaveLength(1);

        // Two sheets sharing 200 GTINs, both waiting for the lease: one item per GTIN, each report true to the API.
        sandbox.handle.reset();
        const s1 = writeProductSheet(dir, 300, { owner, file: 'one.csv', name: (i) => `One ${i}` });
        const s2 = writeProductSheet(dir, 300, { owner, file: 'two.csv', name: (i) => `Two ${i}` });
        const r1 = join(dir, 'r1');
        const r2 = join(dir, 'r2');
        const [x, y] = await Promise.all([
          cli(['import', s1.file, '--mapping', s1.mapping, '--wait-lock', '60'], { ...env, REPORT_DIR: r1 }),
          cli(['import', s2.file, '--mapping', s2.mapping, '--wait-lock', '60'], {
            ...env,
            REPORT_DIR: withRedis ? r2 : r1,
          }),
        ]);
        expect([x.code, y.code], x.stderr + y.stderr).toEqual([0, 0]);
        expectOneItemPerGtin(sandbox, owner, 300);
        const dirs = [...finished(r1), ...(withRedis ? finished(r2) : [])];
        expect(dirs).toHaveLength(2);
        // The run that finished last wrote every shared row; the first one's report was true when it ended.
        const byEnd = dirs
          .map((d) => ({ d, s: JSON.parse(readFileSync(join(d, 'summary.json'), 'utf8')) }))
          .sort((p, q) => p.s.finishedAt.localeCompare(q.s.finishedAt));
        expect(
          byEnd[0]!.s.finishedAt <= byEnd[1]!.s.startedAt,
          JSON.stringify(byEnd.map((b) => [b.s.startedAt, b.s.finishedAt])),
        ).toBe(true);
        const lastName = byEnd[1]!.s.source.file.endsWith('one.csv') ? 'One' : 'Two';
        const names = new Map(sandbox.handle.store.dump().tradeItems.map((t) => [t.gtin, String(t.tradeItemName)]));
        for (const [, n] of names) expect(n.startsWith(lastName)).toBe(true);
        reportTrueToApi(byEnd[1]!.d, (g) => names.get(g));
      } finally {
        sandbox.handle.setFaults({});
      }
    }, 120_000);
  }

  it('queue: two imports for one owner never push at the same time; one item per GTIN', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [3, 8], seed: 2 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-lease-q-'));
    const e = {
      PRODUCT_API_URL: sandbox.url,
      REFERENCE_API_URL: sandbox.url,
      API_TOKEN: 'sandbox-token',
      REDIS_URL: redisUrl,
      QUEUE_PREFIX: `leaseq-${Date.now()}`,
      REPORT_DIR: join(dir, 'reports'),
      API_CONCURRENCY: '8',
      LOG_LEVEL: 'silent',
    };
    const config = loadConfig(e);
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
      const [j1, j2] = await Promise.all([
        client.enqueue({ request: { file: s1.file, mapping: s1.mapping }, origin: 'cli', step: 'prepare' }),
        client.enqueue({ request: { file: s2.file, mapping: s2.mapping }, origin: 'cli', step: 'prepare' }),
      ]);
      const [a, b] = await Promise.all([client.wait(j1.jobId, 90_000), client.wait(j2.jobId, 90_000)]);
      expect([a.exitCode, b.exitCode]).toEqual([0, 0]);
      expectOneItemPerGtin(sandbox, owner, 300);
      const [first, second] = [a.summary, b.summary].sort((p, q) => p.finishedAt.localeCompare(q.finishedAt));
      expect(first!.finishedAt <= second!.startedAt).toBe(true);
      const names = new Map(sandbox.handle.store.dump().tradeItems.map((t) => [t.gtin, String(t.tradeItemName)]));
      const lastDir = [a, b].find((r) => r.summary === second)!.reportDir;
      reportTrueToApi(lastDir, (g) => names.get(g));
    } finally {
      sandbox.handle.setFaults({});
      await client.close();
      await w1.close();
    }
  }, 120_000);
});
