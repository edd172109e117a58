import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { startWorkers, type WorkerSet } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { queueEnv } from '../helpers/env.ts';
import { usePrefixes } from '../helpers/prefixes.ts';

const redisUrl = inject('redisUrl');
const prefix = usePrefixes('cli')();
let sandbox: RunningSandbox;
let workers: WorkerSet;
let env: Record<string, string>;
let dir: string;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'ps-queue-cli-'));
  env = queueEnv(sandbox.url, redisUrl, prefix, dir, { API_CONCURRENCY: '4' });
  const jobs = join(dir, 'jobs');
  mkdirSync(jobs);
  mkdirSync(join(dir, 'drop'));
  writeFileSync(
    join(jobs, 'nightly.yaml'),
    `schedule: "0 2 * * *"\nexpect: "0 6 * * *"\ntimezone: Europe/Paris\nsource: { dir: ${join(dir, 'drop')}, pattern: "acme-*.csv", settleSeconds: 0 }\nmapping: ${join(dir, 'products.yaml')}\n`,
  );
  mkdirSync(join(dir, 'drop-guarded'));
  writeFileSync(
    join(jobs, 'guarded.yaml'),
    `schedule: "0 3 * * *"\nsource: { dir: ${join(dir, 'drop-guarded')}, pattern: "g-*.csv", settleSeconds: 0 }\nmapping: ${join(dir, 'products.yaml')}\nmode: full\narchiveGuard: { maxRatio: 0.1 }\n`,
  );
  workers = await startWorkers(loadConfig(env), { jobsDir: jobs, chunkSize: 20 });
});
afterAll(async () => {
  await workers?.close();
  await sandbox?.close();
});

/** The CLI in-process (its output and exit code are under test), beside this file's workers. */
const cli = (args: string[], extra: Record<string, string> = {}) => cliInProcess(args, { env: { ...env, ...extra } });

/** The summary without what differs between two runs of one sheet: the report directory. */
const comparable = (summary: string) => summary.replace(/report: .*/, 'report: …').trim();

describe('queue commands', () => {
  it('enqueue --wait prints the run id, then the same summary as the inline import', async () => {
    sandbox.handle.reset();
    const { file, mapping } = writeProductSheet(dir, 90, { owner: DEMO_COMPANY_ID });
    const queued = await cli(['enqueue', file, '--mapping', mapping, '--wait']);
    expect(queued.code, queued.stderr).toBe(0);
    const [idLine, ...summary] = queued.stdout.trim().split('\n');
    expect(idLine).toMatch(/^import-[0-9a-f]{20}-[0-9a-f]{12}$/);
    expect(summary.join('\n')).toMatch(/rows 90: created 90/);

    // The same sheet inline, against the same (emptied) API, in another report directory.
    sandbox.handle.reset();
    const inline = await cli(['import', file, '--mapping', mapping], { REPORT_DIR: join(dir, 'inline-reports') });
    expect(inline.code, inline.stderr).toBe(0);
    expect(comparable(summary.join('\n'))).toBe(comparable(inline.stdout));

    // Enqueued again: the same job, said so, not a second run.
    const again = await cli(['enqueue', file, '--mapping', mapping]);
    expect(again.stdout).toContain(`${idLine} (already queued`);
  }, 60_000);

  it('feeds list shows schedule and next run; feeds run imports the newest file and list then shows its outcome', async () => {
    sandbox.handle.reset();
    const before = await cli(['feeds', 'list', '--jobs-dir', join(dir, 'jobs')]);
    expect(before.code, before.stderr).toBe(0);
    expect(before.stdout).toMatch(/^nightly\n {2}schedule 0 2 \* \* \* \(Europe\/Paris\)/m);
    expect(before.stdout).toMatch(/next \d{4}-\d\d-\d\dT0[01]:00:00\.000Z/);
    expect(before.stdout).toContain('last run never');
    expect(before.stdout).toContain('last success never  expect 0 6 * * *, overdue no\n');
    expect(before.stdout).toContain('last success never  overdue no (no expect)\n');
    expect(before.stdout).toContain(`source dir:${join(dir, 'drop')}/acme-*.csv`);
    expect(before.stdout).toContain('last listing never');

    writeProductSheet(join(dir, 'drop'), 30, { owner: DEMO_COMPANY_ID, file: 'acme-1.csv' });
    writeProductSheet(dir, 1, { owner: DEMO_COMPANY_ID, file: 'unused.csv' });
    const run = await cli(['feeds', 'run', 'nightly', '--jobs-dir', join(dir, 'jobs')]);
    expect(run.code, run.stderr).toBe(0);
    const r = new Redis(redisUrl);
    const until = async (field: string, pattern: RegExp) => {
      for (let i = 0; i < 150 && !pattern.test((await r.hget(`{${prefix}}:feed:nightly:last`, field)) ?? ''); i++)
        await new Promise((res) => setTimeout(res, 100));
    };
    try {
      await until('exitCode', /^0$/);
      let listed = (await cli(['feeds', 'list', '--jobs-dir', join(dir, 'jobs')])).stdout;
      expect(listed).toMatch(/last run \S+ run \S+ exit 0 \(.*acme-1\.csv\)/);
      const success = await r.hget(`{${prefix}}:feed:nightly:last`, 'lastSuccessAt');
      expect(success).toMatch(/^\d{4}-/);
      expect(listed).toContain(`last success ${success}  expect 0 6 * * *, overdue no\n`);
      expect(sandbox.handle.store.dump().tradeItems).toHaveLength(30);

      // A second tick finds nothing new: no second import.
      await cli(['feeds', 'run', 'nightly', '--jobs-dir', join(dir, 'jobs')]);
      await until('tick', /nothing new/);
      listed = (await cli(['feeds', 'list', '--jobs-dir', join(dir, 'jobs')])).stdout;
      expect(listed).toMatch(/last tick \S+ nothing new/);
      expect(listed).toMatch(/last listing \S+: files seen 1, done 1, waiting 0/);

      // Overdue as the feed deadlines mark it (feed-deadlines.ts), read from the same hash as the console's GET /feeds.
      await r.hset(`{${prefix}}:feed:nightly:last`, { overdue: '1', overdueSince: '2026-01-02T05:00:00.000Z' });
      listed = (await cli(['feeds', 'list', '--jobs-dir', join(dir, 'jobs')])).stdout;
      expect(listed).toContain(
        `last success ${success}  expect 0 6 * * *, overdue yes since 2026-01-02T05:00:00.000Z\n`,
      );
    } finally {
      r.disconnect();
    }

    const unknown = await cli(['feeds', 'run', 'weekly', '--jobs-dir', join(dir, 'jobs')]);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('no feed "weekly"');
  }, 60_000);

  it('tries an aborted feed import again at the next tick (here: the archive guard trips, nothing is archived)', async () => {
    sandbox.handle.reset();
    // 20 items in the API; the feed's file in full mode names 2 of them: archiving 18 of 20 trips the guard (10 %).
    const { file, mapping } = writeProductSheet(dir, 20, { owner: DEMO_COMPANY_ID, file: 'twenty.csv' });
    expect((await cli(['import', file, '--mapping', mapping], { REPORT_DIR: join(dir, 'inline-reports') })).code).toBe(
      0,
    );
    writeProductSheet(join(dir, 'drop-guarded'), 2, { owner: DEMO_COMPANY_ID, file: 'g-1.csv' });
    const r = new Redis(redisUrl);
    const last = async (previous?: string): Promise<Record<string, string>> => {
      for (let i = 0; i < 150; i++) {
        const h = await r.hgetall(`{${prefix}}:feed:guarded:last`);
        if (h.finishedAt && h.finishedAt !== previous) return h;
        await new Promise((res) => setTimeout(res, 100));
      }
      throw new Error('the feed run did not finish');
    };
    try {
      expect((await cli(['feeds', 'run', 'guarded', '--jobs-dir', join(dir, 'jobs')])).code).toBe(0);
      const first = await last();
      expect(first.exitCode).toBe('3');
      expect((await cli(['feeds', 'run', 'guarded', '--jobs-dir', join(dir, 'jobs')])).code).toBe(0);
      const second = await last(first.finishedAt);
      expect(second.exitCode).toBe('3');
      expect(second.runId).not.toBe(first.runId);
      expect(sandbox.handle.store.dump().tradeItems.filter((t) => t.archived)).toHaveLength(0);
      // Enqueued by hand, the same sheet, mapping and mode: the aborted job is replaced and runs again (and aborts
      // again).
      const byHand = await cli([
        'enqueue',
        join(dir, 'drop-guarded', 'g-1.csv'),
        '--mapping',
        join(dir, 'products.yaml'),
        '--mode',
        'full',
        '--wait',
      ]);
      expect(byHand.code, byHand.stderr).toBe(3);
      expect(byHand.stdout).not.toContain('already queued');
      expect(byHand.stdout).toMatch(/ABORTED: archive guard tripped/);
    } finally {
      r.disconnect();
    }
  }, 60_000);

  it('enqueue refuses a missing file or a bad mapping at once (exit 2); a job that hits one fails once, with its code', async () => {
    const { file, mapping } = writeProductSheet(dir, 3, { owner: DEMO_COMPANY_ID, file: 'three.csv' });
    const missing = await cli(['enqueue', join(dir, 'nope.csv'), '--mapping', mapping]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/nope\.csv: no such file \[PS_ERR_FILE_UNREADABLE\]/);
    const broken = join(dir, 'broken.yaml');
    writeFileSync(broken, 'name: broken\ntarget: tradeItem\ncolumns: []\n');
    const bad = await cli(['enqueue', file, '--mapping', broken]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('PS_ERR_MAPPING_INVALID');

    // Queued anyway (a client that does not check): the worker fails it without retrying, and the waiter gets the code.
    const client = importQueueClient(loadConfig(env));
    try {
      const { jobId } = await client.enqueue({ request: { file, mapping: broken }, origin: 'cli' });
      const err = (await client.wait(jobId, 20_000).catch((e: unknown) => e)) as { code?: string };
      expect(err.code, String(err)).toBe('PS_ERR_MAPPING_INVALID');
      expect((await client.queue.getJob(jobId))?.attemptsMade).toBe(1);
    } finally {
      await client.close();
    }
  }, 60_000);
});
