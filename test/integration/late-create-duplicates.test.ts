// The fence's last window (docs/concurrency.md): a holder that passed its fence check and was then held before the
// request's first byte went out lets one create out after another run took its lease over. Against an API that
// assigns its own ids, that is a second item for the key. The window is forced, not waited for: the test hook of the
// fence interceptor (PS_TEST_FENCE_HOLD) blocks the process right after the check until the test releases it. Both
// orders: the late create lands while the new holder still runs (it removes it), or after it ended (the lost run
// removes its own). Either way the catalogue ends with one live item per GTIN and both reports say `duplicate_removed`.
// Inline runs here (B in-process where it is not held); the queued variant (a worker's job lock running out) is
// late-create-queued.test.ts. The cases run at once, each against a sandbox of its own: most of their time is the
// processes' start and the wait for A's lease to run out.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { cliInProcess, spawnCli, type CliProcess, type CliResult } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { fenceHold as hold, OWNER } from '../helpers/lease-runs.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';
import { expectLateCreateRemoved, lateCreateCatalogue, report } from '../helpers/late-create.ts';
import type { RunSummary as Summary } from '../helpers/lease-runs.ts';

const owner = OWNER;
const redisUrl = inject('redisUrl');
/** A sandbox of its own for each case (they run at once), assigning its own ids as the API does. */
const ownSandbox = () => useSandbox({ assignIds: true });

describe.concurrent('a create let out after the lease was taken over leaves no second item', () => {
  for (const withRedis of [false, true])
    for (const order of ['before', 'after'] as const) {
      const sandbox = ownSandbox();
      const { live } = lateCreateCatalogue(sandbox);
      it(`the late create lands ${order === 'before' ? 'while the new holder still runs: it archives it' : 'after the new holder ended: the lost run archives its own'} (${withRedis ? 'Redis' : 'lease file'})`, async () => {
        const dir = mkdtempSync(join(tmpdir(), 'ps-late-create-'));
        const rows = 60;
        const night = writeProductSheet(dir, rows, { owner, file: 'night.csv', name: (i) => `Night ${i}` });
        const fix = writeProductSheet(dir, rows, { owner, file: 'fix.csv', name: (i) => `Fix ${i}` });
        const shared = {
          API_CONCURRENCY: '1',
          ...(withRedis ? { REDIS_URL: redisUrl, QUEUE_PREFIX: `late-${process.pid}-${Date.now()}-${order}` } : {}),
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
            { env: envA },
          );
          procs.push(a);
          await until('the first import to be held past its fence check', () => existsSync(holdA.held), 30_000);
          expect(live()).toHaveLength(9);
          // B takes the lease over once A's ran out, and creates the GTIN A's held request is about to create. Not held
          // (after), it runs in-process: its exit code and report are what is checked.
          const bArgs = ['import', fix.file, '--mapping', fix.mapping, '--report-dir', bReports, '--wait-lock', '60'];
          let b: CliProcess | { exit: Promise<CliResult> };
          if (order === 'before') {
            const held = spawnCli(bArgs, { env: envB });
            procs.push(held);
            b = held;
          } else b = { exit: cliInProcess(bArgs, { env: envB }) };
          const rb2 = await expectLateCreateRemoved(
            sandbox,
            order,
            { run: a, hold: holdA, reports: aReports },
            { run: b, hold: holdB, reports: bReports },
            rows,
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
    }
});

// The lost run killed while its late create was on its way (journalled `sent`, no answer), landing only after the new
// holder ended: the new holder found no second item, so it noted the key in the machine's state directory
// (STATE_DIR/late-creates/); the next run of the owner on this machine looks again and archives the second item.
describe.concurrent('a late create that lands after the new holder ended, its run killed before the answer', () => {
  const sandbox = ownSandbox();
  const { live, twice } = lateCreateCatalogue(sandbox);
  it('the next run of the owner archives the second item and reports it', async () => {
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
      const rb = await cliInProcess(fixArgs, { env: envB });
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
      const rc = await cliInProcess(fixArgs, { env: envB });
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
      a.child.kill('SIGKILL');
    }
  }, 120_000);
});
