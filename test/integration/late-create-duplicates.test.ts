// The fence's last window (docs/concurrency.md): a holder that passed its fence check and was then held before the
// request's first byte went out lets one create out after another run took its lease over. Against an API that
// assigns its own ids, that is a second item for the key. The window is forced, not waited for: the test hook of the
// fence interceptor (PS_TEST_FENCE_HOLD) blocks the process right after the check until the test releases it. Both
// orders: the late create lands while the new holder still runs (it removes it), or after it ended (the lost run
// removes its own). Either way the catalogue ends with one live item per GTIN and both reports say `duplicate_removed`.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { spawnCli, type CliProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
const redisUrl = inject('redisUrl');
let sandbox: RunningSandbox;

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, assignIds: true });
});
afterAll(async () => {
  await sandbox?.close();
});

const items = () => sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);
const live = () => items().filter((t) => !t.archived);

/** GTINs with more than one live item. */
const twice = () => {
  const n = new Map<string, number>();
  for (const t of live()) n.set(String(t.gtin), (n.get(String(t.gtin)) ?? 0) + 1);
  return [...n].filter(([, c]) => c > 1).map(([g]) => g);
};

interface Summary {
  exitCode: number;
  abortCode?: string;
  counts: Record<string, number>;
}

/** The one finished run under `reportDir`: its summary and its rows.csv lines ([row, key, outcome, tradeItemId]). */
function report(reportDir: string): { summary: Summary; lines: string[][] } {
  const runs = readdirSync(reportDir).filter((d) => existsSync(join(reportDir, d, 'summary.json')));
  expect(runs).toHaveLength(1);
  const dir = join(reportDir, runs[0]!);
  return {
    summary: JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as Summary,
    lines: readFileSync(join(dir, 'rows.csv'), 'utf8')
      .replace(/^\uFEFF/, '')
      .trim()
      .split(/\r?\n/)
      .slice(1)
      .map((l) => l.split(',')),
  };
}

/** Holds the `nth` trade-item create of a process right after its fence check, until `release` is written. */
function hold(dir: string, name: string, nth: number): { env: string; held: string; release: () => void } {
  const held = join(dir, `${name}.held`);
  const release = join(dir, `${name}.release`);
  return {
    env: JSON.stringify({ match: 'POST /api/tradeItem', nth, held, release }),
    held,
    release: () => writeFileSync(release, ''),
  };
}

describe('a create let out after the lease was taken over leaves no second item', () => {
  for (const withRedis of [false, true])
    for (const order of ['before', 'after'] as const)
      it(`the late create lands ${order === 'before' ? 'while the new holder still runs: it archives it' : 'after the new holder ended: the lost run archives its own'} (${withRedis ? 'Redis' : 'lease file'})`, async () => {
        sandbox.handle.reset();
        const dir = mkdtempSync(join(tmpdir(), 'ps-late-create-'));
        const rows = 60;
        const night = writeProductSheet(dir, rows, { owner, file: 'night.csv', name: (i) => `Night ${i}` });
        const fix = writeProductSheet(dir, rows, { owner, file: 'fix.csv', name: (i) => `Fix ${i}` });
        const shared = {
          API_CONCURRENCY: '1',
          ...(withRedis ? { REDIS_URL: redisUrl, QUEUE_PREFIX: `late-${process.pid}-${Date.now()}` } : {}),
        };
        const holdA = hold(dir, 'a', 10);
        const holdB = hold(dir, 'b', 40);
        const envA = inlineEnv(sandbox.url, dir, { ...shared, LEASE_TTL_SECONDS: '2', PS_TEST_FENCE_HOLD: holdA.env });
        const envB = inlineEnv(sandbox.url, dir, {
          ...shared,
          LEASE_TTL_SECONDS: '60',
          ...(order === 'before' ? { PS_TEST_FENCE_HOLD: holdB.env } : {}),
        });
        const aReports = join(dir, 'a-reports');
        const bReports = join(dir, 'b-reports');
        const procs: CliProcess[] = [];
        try {
          // A passes its fence for its 10th create and is held there, its lease running out.
          const a = spawnCli(
            ['import', night.file, '--mapping', night.mapping, '--report-dir', aReports, '--wait-lock', '60'],
            {
              env: envA,
            },
          );
          procs.push(a);
          await until('the first import to be held past its fence check', () => existsSync(holdA.held), 30_000);
          expect(live()).toHaveLength(9);
          // B takes the lease over once A's ran out, and creates the GTIN A's held request is about to create.
          const b = spawnCli(
            ['import', fix.file, '--mapping', fix.mapping, '--report-dir', bReports, '--wait-lock', '60'],
            {
              env: envB,
            },
          );
          procs.push(b);
          if (order === 'before') {
            await until('the second import to be held', () => existsSync(holdB.held), 60_000);
            // A's create goes out now, after B created that GTIN: a second live item.
            holdA.release();
            await until('the late create to land', () => twice().length === 1, 30_000);
            holdB.release();
          } else {
            const rb = await b.exit;
            expect(rb.code, rb.stderr).toBe(0);
            expect(twice()).toHaveLength(0);
            holdA.release();
          }
          const [ra, rb] = await Promise.all([a.exit, b.exit]);
          expect(ra.code, ra.stderr).toBe(3);
          expect(rb.code, rb.stderr).toBe(0);
          // One live item per GTIN, B's values; the item A let out late is archived.
          expect(twice()).toEqual([]);
          expect(live()).toHaveLength(rows);
          expect(live().every((t) => String(t.tradeItemName).startsWith('Fix '))).toBe(true);
          const archived = items().filter((t) => t.archived);
          expect(archived).toHaveLength(1);
          expect(String(archived[0]!.tradeItemName)).toMatch(/^Night /);
          const removedId = archived[0]!.tradeItemId;
          // Both reports say so where the removal is known: the lost run's always, the new holder's when it removed it.
          const ra2 = report(aReports);
          const rb2 = report(bReports);
          expect(ra2.summary.abortCode).toBe('PS_ERR_LEASE_LOST');
          expect(ra2.summary.counts.duplicateRemoved).toBe(1);
          expect(ra2.lines.filter((l) => l[2] === 'duplicate_removed').map((l) => l[3])).toEqual([removedId]);
          expect(rb2.summary.counts.duplicateRemoved).toBe(order === 'before' ? 1 : 0);
          expect(rb2.lines.filter((l) => l[2] === 'duplicate_removed').map((l) => l[3])).toEqual(
            order === 'before' ? [removedId] : [],
          );
          // B's rows name the live items.
          const byGtin = new Map(live().map((t) => [String(t.gtin), t.tradeItemId]));
          for (const [row, key, outcome, id] of rb2.lines)
            if (row !== '') {
              expect(['created', 'updated']).toContain(outcome);
              expect(id).toBe(byGtin.get(key!));
            }
        } finally {
          holdA.release();
          holdB.release();
          for (const p of procs) p.child.kill('SIGKILL');
        }
      }, 120_000);
});

// The queued variant: the late create is a chunk job's, on a worker frozen past its fence check (its lease and job lock
// run out meanwhile, its lease keeper frozen with it); the owner's inline run takes the lease over. The queued run's
// finish step sweeps as the inline run does: as the lost run, its own late item (after); the inline run, as the new
// holder, the queued run's (before) — the queued run's journal is on this machine.
describe('the queued variant: a chunk job let out a create after its lease was taken over', () => {
  for (const order of ['before', 'after'] as const)
    it(`the late create lands ${order === 'before' ? 'while the inline run still runs: it archives it' : 'after the inline run ended: the queued run archives its own'}`, async () => {
      sandbox.handle.reset();
      const dir = mkdtempSync(join(tmpdir(), 'ps-late-create-q-'));
      const rows = 60;
      const night = writeProductSheet(dir, rows, { owner, file: 'night.csv', name: (i) => `Night ${i}` });
      const fix = writeProductSheet(dir, rows, { owner, file: 'fix.csv', name: (i) => `Fix ${i}` });
      const shared = {
        API_CONCURRENCY: '1',
        CHUNK_SIZE: '100',
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: `lateq-${process.pid}-${Date.now()}`,
      };
      const holdA = hold(dir, 'a', 10);
      const holdB = hold(dir, 'b', 40);
      const aReports = join(dir, 'a-reports');
      const bReports = join(dir, 'b-reports');
      const envA = inlineEnv(sandbox.url, dir, {
        ...shared,
        REPORT_DIR: aReports,
        LEASE_TTL_SECONDS: '2',
        WORKER_LOCK_MS: '2000',
        PS_TEST_FENCE_HOLD: holdA.env,
      });
      const envB = inlineEnv(sandbox.url, dir, {
        ...shared,
        LEASE_TTL_SECONDS: '60',
        ...(order === 'before' ? { PS_TEST_FENCE_HOLD: holdB.env } : {}),
      });
      const procs: CliProcess[] = [];
      try {
        // The worker passes its fence for the chunk's 10th create and is held there, its lease running out.
        const worker = spawnCli(['worker', '--jobs-dir', join(dir, 'no-jobs')], { env: envA });
        procs.push(worker);
        const enq = spawnCli(['enqueue', night.file, '--mapping', night.mapping, '--wait', '--wait-lock', '60'], {
          env: { ...envA, PS_TEST_FENCE_HOLD: '' },
        });
        procs.push(enq);
        await until('the worker to be held past its fence check', () => existsSync(holdA.held), 60_000);
        expect(live()).toHaveLength(9);
        // The inline run takes the lease over once the queued run's ran out, and creates the GTIN the held create is
        // about to create.
        const b = spawnCli(
          ['import', fix.file, '--mapping', fix.mapping, '--report-dir', bReports, '--wait-lock', '60'],
          { env: envB },
        );
        procs.push(b);
        if (order === 'before') {
          await until('the inline import to be held', () => existsSync(holdB.held), 60_000);
          holdA.release();
          await until('the late create to land', () => twice().length === 1, 30_000);
          holdB.release();
        } else {
          const rb = await b.exit;
          expect(rb.code, rb.stderr).toBe(0);
          expect(twice()).toHaveLength(0);
          holdA.release();
        }
        const [ra, rb] = await Promise.all([enq.exit, b.exit]);
        expect(ra.code, ra.stderr + ra.stdout).toBe(3);
        expect(rb.code, rb.stderr).toBe(0);
        // One live item per GTIN, the inline sheet's; the item the worker let out late is archived.
        expect(twice()).toEqual([]);
        expect(live()).toHaveLength(rows);
        expect(live().every((t) => String(t.tradeItemName).startsWith('Fix '))).toBe(true);
        const archived = items().filter((t) => t.archived);
        expect(archived).toHaveLength(1);
        expect(String(archived[0]!.tradeItemName)).toMatch(/^Night /);
        const removedId = archived[0]!.tradeItemId;
        const ra2 = report(aReports);
        const rb2 = report(bReports);
        expect(ra2.summary.abortCode).toBe('PS_ERR_LEASE_LOST');
        expect(ra2.summary.counts.duplicateRemoved).toBe(1);
        expect(ra2.lines.filter((l) => l[2] === 'duplicate_removed').map((l) => l[3])).toEqual([removedId]);
        expect(rb2.summary.counts.duplicateRemoved).toBe(order === 'before' ? 1 : 0);
        expect(rb2.lines.filter((l) => l[2] === 'duplicate_removed').map((l) => l[3])).toEqual(
          order === 'before' ? [removedId] : [],
        );
      } finally {
        holdA.release();
        holdB.release();
        for (const p of procs) p.child.kill('SIGKILL');
      }
    }, 150_000);
});

// The lost run killed while its late create was on its way (journalled `sent`, no answer), landing only after the new
// holder ended: the new holder found no second item, so it noted the key in the machine's state directory
// (STATE_DIR/late-creates/); the next run of the owner on this machine looks again and archives the second item.
describe('a late create that lands after the new holder ended, its run killed before the answer', () => {
  it('the next run of the owner archives the second item and reports it', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-late-create-k-'));
    const rows = 60;
    const night = writeProductSheet(dir, rows, { owner, file: 'night.csv', name: (i) => `Night ${i}` });
    const fix = writeProductSheet(dir, rows, { owner, file: 'fix.csv', name: (i) => `Fix ${i}` });
    const holdA = hold(dir, 'a', 10);
    const envA = inlineEnv(sandbox.url, dir, {
      API_CONCURRENCY: '1',
      LEASE_TTL_SECONDS: '2',
      PS_TEST_FENCE_HOLD: holdA.env,
    });
    const envB = inlineEnv(sandbox.url, dir, { API_CONCURRENCY: '1', LEASE_TTL_SECONDS: '60' });
    const bReports = join(dir, 'b-reports');
    const a = spawnCli(['import', night.file, '--mapping', night.mapping, '--report-dir', join(dir, 'a-reports')], {
      env: envA,
    });
    try {
      await until('the first import to be held past its fence check', () => existsSync(holdA.held), 30_000);
      // B takes the lease over and runs to its end: A's create of the held GTIN is in A's journal, sent without an
      // answer, and no second item exists yet.
      const fixArgs = ['import', fix.file, '--mapping', fix.mapping, '--report-dir', bReports, '--wait-lock', '60'];
      const rb = await spawnCli(fixArgs, { env: envB }).exit;
      expect(rb.code, rb.stderr).toBe(0);
      expect(twice()).toEqual([]);
      expect(report(bReports).summary.counts.duplicateRemoved).toBe(0);
      // A's create goes out; the API applies it, and its answer is lost (the connection reset) while the API is slow:
      // A is killed before it could learn anything of it (its journal: sent, no answer).
      sandbox.handle.setFaults({ latencyMs: 1500, sequence: ['reset'] });
      holdA.release();
      await until('the late create to land', () => twice().length === 1, 30_000);
      a.child.kill('SIGKILL');
      await a.exit;
      sandbox.handle.setFaults({});
      const lateId = live().find(
        (t) => String(t.tradeItemName).startsWith('Night ') && twice().includes(String(t.gtin)),
      )!.tradeItemId;
      // The next run of the owner (the same command again: a new run) archives it, and says so.
      const rc = await spawnCli(fixArgs, { env: envB }).exit;
      expect(rc.code, rc.stderr).toBe(0);
      expect(twice()).toEqual([]);
      expect(live()).toHaveLength(rows);
      expect(live().every((t) => String(t.tradeItemName).startsWith('Fix '))).toBe(true);
      const runs = readdirSync(bReports).filter((d) => existsSync(join(bReports, d, 'summary.json')));
      expect(runs).toHaveLength(2);
      const second = runs.find((d) => /-r2$/.test(d))!;
      const summary = JSON.parse(readFileSync(join(bReports, second, 'summary.json'), 'utf8')) as Summary;
      expect(summary.counts.duplicateRemoved).toBe(1);
      const lines = readFileSync(join(bReports, second, 'rows.csv'), 'utf8');
      expect(lines).toContain(`duplicate_removed,${lateId}`);
    } finally {
      holdA.release();
      sandbox.handle.setFaults({});
      a.child.kill('SIGKILL');
    }
  }, 120_000);
});
