// A resumed run never sends a plan another run may have outdated (docs/concurrency.md, "Resuming a run"):
// an import killed with kill -9 mid-run, another import of the same owner and GTINs run to its end, then the killed
// command again — what the docs tell an operator to do. The resumed run plans every row again from the API as it is
// now, so the catalogue ends with its sheet's values, one item per GTIN, and its report says what it did. A real
// process (the CLI, killed), the sandbox over HTTP, against an API that honours client ids and one that assigns its
// own; the two commands that run to their end run in-process (their exit code, the catalogue and the report are what
// is checked). Nothing waits for a lease to run out (the killed holder's process is gone); the queued variant, where a
// worker's lease and job lock must run out, is resume-after-takeover-queued.test.ts.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { gtinKey } from '../../src/pipeline/gtin.ts';
import { cliInProcess, spawnWithEnv } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { onlyRunDir, OWNER, ownerItems, useRunSandbox } from '../helpers/lease-runs.ts';
import { expectOneItemPerGtin, reportRows } from '../helpers/sandbox.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const owner = OWNER;
const redisUrl = inject('redisUrl');
const sandbox = useRunSandbox();

const cli = spawnWithEnv;

const items = () => ownerItems(sandbox);

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
      const env = inlineEnv(sandbox.url, dir, {
        CHUNK_SIZE: '50',
        LOG_FORMAT: 'json',
        ...(c.redis ? { REDIS_URL: redisUrl, QUEUE_PREFIX: `resume-${process.pid}-${Date.now()}` } : {}),
      });
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
        const other = await cliInProcess(
          ['import', fix.file, '--mapping', fix.mapping, '--report-dir', join(dir, 'fix-reports')],
          { env },
        );
        expect(other.code, other.stderr).toBe(0);
        expect(items().filter((t) => String(t.tradeItemName).startsWith('Fix '))).toHaveLength(rows - c.same);
        // The killed command again: it resumes its run directory.
        const resumed = await cliInProcess(
          ['import', night.file, '--mapping', night.mapping, '--report-dir', nightReports],
          { env },
        );
        expect(resumed.code, resumed.stderr + resumed.stdout).toBe(0);
        expectOneItemPerGtin(sandbox, owner, rows);
        // The catalogue holds what the last command asked for: the resumed sheet's values, on every item.
        const byGtin = new Map(items().map((t) => [gtinKey(String(t.gtin)), t]));
        for (let i = 0; i < rows; i++) expect(byGtin.get(gtinKey(testGtin(i)))?.tradeItemName).toBe(`Night ${i}`);
        // Its report says what really happened: every item was held with the other sheet's name, so every row was
        // updated (none created again, none confirmed without a write), each naming the one item of its GTIN.
        const run = onlyRunDir(nightReports);
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
        sandbox.handle.setAssignIds(false);
      }
    }, 120_000);
  }
});
