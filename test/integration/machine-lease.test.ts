// Every writer on a machine takes the machine's lease file (docs/concurrency.md): a queue worker or an inline import
// that holds the Redis lease of (API, owner) also holds STATE_DIR's lease file for it while it writes, so an inline
// import on the same machine whose shell lacks REDIS_URL waits for it or exits 2 naming it — and a queued import waits
// for an inline run without Redis. Real processes (`worker`, `enqueue`, `import`), a real Redis, and a sandbox that
// assigns its own ids: two writers at once would leave GTINs with two items.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { cliInProcess, spawnCli, type CliProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { expectOneAfterTheOther, OWNER, ownerItems, runsByEnd, useRunSandbox } from '../helpers/lease-runs.ts';
import { expectOneItemPerGtin } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const owner = OWNER;
const redisUrl = inject('redisUrl');
const sandbox = useRunSandbox({ assignIds: true });

const cli = (args: string[], env: Record<string, string>): CliProcess => spawnCli(args, { env });
/** A command whose exit code and output only are checked: in this process, while the holder runs as its own. */
const inProcess = (args: string[], env: Record<string, string>) => cliInProcess(args, { env });
const items = () => ownerItems(sandbox);

/**
 * One machine (one state directory for every process), two sheets of the same GTINs (`first` and `second`, named so),
 * and the environments with Redis (reports in `reports`) and without it (reports in `inline-reports`).
 */
function machine(prefix: string, rows: number, first: string, second: string) {
  const dir = mkdtempSync(join(tmpdir(), 'ps-machine-lease-'));
  const base = inlineEnv(sandbox.url, dir, { API_CONCURRENCY: '2', CHUNK_SIZE: '50', LOG_FORMAT: 'json' });
  return {
    dir,
    a: writeProductSheet(dir, rows, { owner, file: `${first.toLowerCase()}.csv`, name: (i) => `${first} ${i}` }),
    b: writeProductSheet(dir, rows, { owner, file: `${second.toLowerCase()}.csv`, name: (i) => `${second} ${i}` }),
    withRedis: { ...base, REDIS_URL: redisUrl, QUEUE_PREFIX: `machine-${prefix}-${process.pid}-${Date.now()}` },
    without: { ...base, REPORT_DIR: join(dir, 'inline-reports') },
    runs: () => runsByEnd(join(dir, 'reports'), join(dir, 'inline-reports')),
  };
}

const REFUSED = /another run is importing for owner .* run [0-9a-f-]+ \(pid \d+ on .+/s;
// The API's pace: writing, then held (each request far slower) while the test checks what a second writer does beside
// the first, so that the first is still writing however loaded the machine; at full speed once nothing overlaps.
const writing = (seed: number) => sandbox.handle.setFaults({ latencyMs: [10, 20], seed });
const held = () => sandbox.handle.setFaults({ latencyMs: 1000 });
const atFullSpeed = () => sandbox.handle.setFaults({});

describe("every writer on a machine takes the machine's lease file", () => {
  it('a queue worker writing for an owner: an inline import without REDIS_URL exits 2 naming the queued run, or waits for it with --wait-lock', async () => {
    writing(11);
    const m = machine('q', 300, 'Queued', 'Inline');
    const worker = cli(['worker', '--jobs-dir', join(m.dir, 'no-jobs')], m.withRedis);
    // The queued import through the queue's client, as `enqueue --wait` does (the process of the worker is tested).
    const client = importQueueClient(loadConfig(m.withRedis));
    try {
      const { jobId } = await client.enqueue({
        request: { file: m.a.file, mapping: m.a.mapping },
        origin: 'cli',
        step: 'prepare',
      });
      const enq = client.wait(jobId, 120_000);
      await until('the worker to write', () => items().length >= 20, 60_000);
      held();
      const refused = await inProcess(['import', m.b.file, '--mapping', m.b.mapping], m.without);
      expect(refused.code, refused.stderr + refused.stdout).toBe(2);
      expect(refused.stderr).toMatch(/; queued, job .+\).*\[PS_ERR_RUN_LOCKED\]/s);
      expect(refused.stderr).toMatch(REFUSED);
      // Waiting: it starts once the queued run wrote its report.
      const waited = inProcess(['import', m.b.file, '--mapping', m.b.mapping, '--wait-lock', '120'], m.without);
      writing(11);
      const q = await enq;
      expect(q.exitCode, JSON.stringify(q.summary)).toBe(0);
      const w = await waited;
      expect(w.code, w.stderr + w.stdout).toBe(0);
      expectOneItemPerGtin(sandbox, owner, 300);
      expect(items().every((t) => String(t.tradeItemName).startsWith('Inline '))).toBe(true);
      const runs = m.runs();
      expect(runs.map((r) => r.dir.includes('inline-reports'))).toEqual([false, true]);
      expectOneAfterTheOther(runs);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exit;
      await client.close();
    }
  }, 180_000);

  it('an inline import without REDIS_URL writing for an owner: a queued import of that owner on the same machine waits for it', async () => {
    writing(12);
    const m = machine('i', 300, 'Inline', 'Queued');
    // Its log says when the queued import waits for the lease.
    const worker = cli(['worker', '--jobs-dir', join(m.dir, 'no-jobs')], { ...m.withRedis, LOG_LEVEL: 'info' });
    try {
      const first = cli(['import', m.a.file, '--mapping', m.a.mapping], m.without);
      await until('the inline import to write', () => items().length >= 20, 60_000);
      held();
      const queued = inProcess(['enqueue', m.b.file, '--mapping', m.b.mapping, '--wait'], m.withRedis);
      await until('the queued import to wait for the lease', () =>
        worker.out.stderr.includes('import waits for the lease of its owner'),
      );
      atFullSpeed();
      const enq = await queued;
      const i = await first.exit;
      expect([i.code, enq.code], i.stderr + enq.stderr + enq.stdout).toEqual([0, 0]);
      expectOneItemPerGtin(sandbox, owner, 300);
      expect(items().every((t) => String(t.tradeItemName).startsWith('Queued '))).toBe(true);
      const runs = m.runs();
      expect(runs.map((r) => r.dir.includes('inline-reports'))).toEqual([true, false]);
      expectOneAfterTheOther(runs);
    } finally {
      worker.child.kill('SIGTERM');
      await worker.exit;
    }
  }, 180_000);

  it('an inline import with REDIS_URL holds the lease file too: the same import without REDIS_URL exits 2 naming it', async () => {
    writing(13);
    const m = machine('r', 200, 'One', 'Two');
    const first = cli(['import', m.a.file, '--mapping', m.a.mapping], m.withRedis);
    try {
      await until('the first import to write', () => items().length >= 20, 60_000);
      held();
      const second = await inProcess(['import', m.b.file, '--mapping', m.b.mapping], m.without);
      atFullSpeed();
      expect(second.code, second.stderr).toBe(2);
      expect(second.stderr).toMatch(REFUSED);
      const f = await first.exit;
      expect(f.code, f.stderr).toBe(0);
      expectOneItemPerGtin(sandbox, owner, 200);
    } finally {
      first.child.kill('SIGKILL');
    }
  }, 120_000);
});
