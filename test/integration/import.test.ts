import { mkdtempSync, readFileSync, readdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runImport } from '../../src/pipeline/run/run.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { archivedGtins, expectOneItemPerGtin, useSandbox, commandContext, reportRows } from '../helpers/sandbox.ts';
import { apiEnv } from '../helpers/env.ts';
import { cliInProcess, spawnCli } from '../helpers/cli.ts';
import { until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
const sandbox = useSandbox();

/** An inline run against the sandbox, 16 requests at once. */
const context = (reportDir: string) =>
  commandContext(apiEnv(sandbox.url, { REPORT_DIR: reportDir, API_CONCURRENCY: '16', LOG_LEVEL: 'silent' }));

describe('import against the sandbox with faults', () => {
  it('ends with the API matching the sheet, one item per GTIN and one outcome per row; a second import sends no write', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({
      rate503: 0.1,
      rate429: 0.05,
      retryAfterSeconds: 0,
      rate500After: 0.02,
      rateReset: 0.02,
      seed: 11,
    });
    const dir = mkdtempSync(join(tmpdir(), 'ps-import-'));
    const { file, mapping } = writeProductSheet(dir, 120, { owner });
    const cc = await context(join(dir, 'reports'));
    try {
      const first = await runImport({ file, mapping }, cc.ctx);
      const notCreated = reportRows(first.reportDir)
        .filter((l) => l[2] !== 'created')
        .map((l) => l.join(','));
      expect(first.summary.counts, notCreated.join('\n')).toMatchObject({
        rows: 120,
        created: 120,
        failed: 0,
        invalid: 0,
        notAttempted: 0,
      });
      expect(first.exitCode).toBe(0);
      expectOneItemPerGtin(sandbox, owner, 120);
      const lines = reportRows(first.reportDir);
      expect(lines).toHaveLength(120);
      const ids = new Map(sandbox.handle.store.dump().tradeItems.map((t) => [t.gtin, t.tradeItemId]));
      for (const l of lines) expect(l[3]).toBe(ids.get(l[1]!.replace(/^'/, '')));

      sandbox.handle.setFaults({});
      const second = await runImport({ file, mapping }, cc.ctx);
      expect(second.writes).toBe(0);
      expect(second.summary.counts).toMatchObject({ rows: 120, unchanged: 120 });
      expect(second.runId).not.toBe(first.runId);
    } finally {
      sandbox.handle.setFaults({});
      await cc.close();
    }
  });

  it('patches only changed rows and archives, in full mode, what left the sheet — unless the guard trips', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-import-'));
    const cc = await context(join(dir, 'reports'));
    try {
      const base = writeProductSheet(dir, 50, { owner });
      await runImport({ file: base.file, mapping: base.mapping }, cc.ctx);
      // 3 renamed, 2 dropped: 2/50 = 4 % archived, under the 10 % guard.
      const changed = writeProductSheet(dir, 48, {
        owner,
        file: 'changed.csv',
        name: (i) => (i < 3 ? `Biscuits au chocolat ${i}` : `Biscuits au beurre ${i}`),
      });
      const dry = await runImport({ file: changed.file, mapping: changed.mapping, mode: 'full', dryRun: true }, cc.ctx);
      expect(dry.summary.counts).toMatchObject({ updated: 3, unchanged: 45, archived: 2 });
      expect(dry.writes).toBe(0);
      const real = await runImport({ file: changed.file, mapping: changed.mapping, mode: 'full' }, cc.ctx);
      expect(real.summary.counts).toMatchObject({ updated: 3, unchanged: 45, archived: 2 });
      const items = sandbox.handle.store.dump().tradeItems;
      expect(archivedGtins(sandbox)).toEqual([testGtin(48), testGtin(49)].map((g) => g.padStart(14, '0')).sort());
      expect(items.find((t) => t.gtin === testGtin(0).padStart(14, '0'))?.tradeItemName).toBe('Biscuits au chocolat 0');

      // A truncated feed: 10 of 48 active rows → would archive 79 %: the guard trips, nothing is sent.
      const truncated = writeProductSheet(dir, 10, { owner, file: 'truncated.csv' });
      const before = sandbox.handle.counts().writes;
      const guarded = await runImport({ file: truncated.file, mapping: truncated.mapping, mode: 'full' }, cc.ctx);
      expect(guarded.exitCode).toBe(3);
      expect(guarded.summary.counts.archived).toBe(0);
      expect(sandbox.handle.counts().writes).toBe(before);
      expect(sandbox.handle.store.dump().tradeItems.filter((t) => !t.archived)).toHaveLength(48);
    } finally {
      await cc.close();
    }
  });
});

describe('an inline import killed with SIGKILL', () => {
  it('finishes on rerun with the same arguments without repeating a create (several trials)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-kill-'));
    // 300 rows at 4 requests at once, 5-15 ms each: the push lasts long enough for a kill to land in its middle.
    const rows = 300;
    let midway = 0;
    const { file, mapping } = writeProductSheet(dir, rows, { owner });
    try {
      for (let trial = 0; trial < 2; trial++) {
        sandbox.handle.reset();
        sandbox.handle.setFaults({ latencyMs: [5, 15], seed: 3 + trial });
        const reportDir = join(dir, `reports-${trial}`);
        const env = apiEnv(sandbox.url, { REPORT_DIR: reportDir, API_CONCURRENCY: '4', LOG_LEVEL: 'silent' });
        const child = spawnCli(['import', file, '--mapping', mapping], { env, unset: ['REDIS_URL'] }).child;
        // Kill at a random point of the push: once a random number of items exist.
        const killAfter = 20 + Math.floor(Math.random() * (rows - 100));
        await until(
          'the killed import to send its creates',
          () => sandbox.handle.store.dump().tradeItems.length >= killAfter,
          60_000,
        );
        child.kill('SIGKILL');
        await new Promise((r) => child.once('exit', r));
        const atKill = sandbox.handle.store.dump().tradeItems.length;
        if (atKill > 0 && atKill < rows) midway++;
        // The rerun's exit code and report are what is checked: in-process.
        const rerun = await cliInProcess(['import', file, '--mapping', mapping], { env, unset: ['REDIS_URL'] });
        expect(rerun.code, `trial ${trial} (killed after ${killAfter} items): ${rerun.stderr}`).toBe(0);
        expectOneItemPerGtin(sandbox, owner, rows);
        const runs = readdirSync(reportDir).filter((d) => existsSync(join(reportDir, d, 'summary.json')));
        expect(runs).toHaveLength(1);
        const summary = JSON.parse(readFileSync(join(reportDir, runs[0]!, 'summary.json'), 'utf8'));
        expect(summary.counts.rows).toBe(rows);
        expect(reportRows(join(reportDir, runs[0]!))).toHaveLength(rows);
        // Every create reached the API at most once per item: a duplicate would show as a second item above, a 409
        // here.
        expect(sandbox.handle.counts().byRoute['POST /api/tradeItem'] ?? 0).toBeLessThanOrEqual(rows + 8);
        // The run's created rows are the items it made, in both processes: every item (none existed before).
        expect(summary.counts.created).toBe(rows);
        // Its requests are those of both processes (all the sandbox saw; the killed one may have counted a few it had
        // not sent yet).
        const seen = sandbox.handle.counts().total;
        const counted = summary.requests.product + summary.requests.reference;
        expect(counted, `trial ${trial}`).toBeGreaterThanOrEqual(seen);
        expect(counted, `trial ${trial}`).toBeLessThanOrEqual(seen + 8);
      }
      // The kill must have landed in the middle of the push at least once, or the test proves nothing.
      expect(midway).toBeGreaterThan(0);
    } finally {
      sandbox.handle.setFaults({});
    }
  }, 120_000);
});
