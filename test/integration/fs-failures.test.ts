// The file system says no (issue 22, item 6): a full or read-only disk ends a command with one line naming the file or
// directory and the reason, exit 2 when nothing was sent and 3 once writes were, no stack trace, never a hang; a run
// that sent writes keeps its journal, and the same command run again once there is space resumes without sending a
// create twice. Real file systems: small tmpfs mounts (test/helpers/tmpfs.ts; root needed, skipped elsewhere).
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { cliInProcess, runCli, type CliResult } from '../helpers/cli.ts';
import { expectOneItemPerGtin } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { fillUp, mountTmpfs, mountUnavailable } from '../helpers/tmpfs.ts';
import { apiEnv } from '../helpers/env.ts';
import { until } from '../helpers/wait.ts';

const owner = '6b1f3c2a-7d4e-4f5a-8b9c-0d1e2f3a4b5c';
// validate needs an API configured, not reached (the test mapping has no lookup).
const noApi = { PRODUCT_API_URL: 'http://127.0.0.1:9', REFERENCE_API_URL: 'http://127.0.0.1:9', API_TOKEN: 'unused' };
let work: string;
const mounts: { unmount(): void }[] = [];

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'ps-fs-'));
});
afterAll(() => {
  for (const m of mounts.splice(0).reverse()) m.unmount();
  rmSync(work, { recursive: true, force: true });
});

function tmpfs(size: string, at?: string) {
  const m = mountTmpfs(size, at);
  mounts.push(m);
  return m;
}

/** Runs the CLI as a process, without Redis; a hang is killed after `timeoutMs` and fails the test (code null). */
const cli = (args: string[], env: Record<string, string> = {}, timeoutMs = 30_000) =>
  runCli(args, { env: { LOG_LEVEL: 'error', ...env }, unset: ['REDIS_URL'], timeoutMs });

/** stderr without the progress lines a run prints every second when stderr is not a terminal (`[push] rows read …`). */
const said = (stderr: string): string[] =>
  stderr.split('\n').filter((l) => l !== '' && !/^\[(keys|read|push|report)\] rows read/.test(l));

/** One line on stderr, `PS_ERR_FILE_WRITE`, the exit code, the reason and the path — and no stack trace. */
function expectOneLine(r: CliResult, exit: number, reason: RegExp, path: string): void {
  expect(r.code, r.stderr).toBe(exit);
  expect(r.stderr).not.toMatch(/unexpected failure/);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  expect(said(r.stderr), r.stderr).toHaveLength(1);
  expect(said(r.stderr)[0]).toMatch(/^product-sync: cannot /);
  expect(r.stderr).toContain('[PS_ERR_FILE_WRITE]');
  expect(r.stderr).toMatch(reason);
  expect(r.stderr).toContain(path);
}

/** Every file below `dir` (relative paths). */
function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((d) => d.isFile())
    .map((d) => join(d.parentPath, d.name).slice(dir.length + 1));
}

describe.skipIf(mountUnavailable !== null)(
  `a full or read-only disk${mountUnavailable ? ` (skipped: ${mountUnavailable})` : ''}`,
  () => {
    let sheet: { file: string; mapping: string };
    beforeAll(() => {
      sheet = writeProductSheet(work, 30, { owner, file: 'small.csv' });
    });

    it('a read-only report directory: validate and import --sandbox exit 2 at once, saying so', async () => {
      const ro = tmpfs('256k');
      mkdirSync(join(ro.dir, 'reports'));
      ro.remount('ro');
      const [inside, below, sandboxed] = await Promise.all([
        cli(['validate', sheet.file, '--mapping', sheet.mapping, '--report-dir', join(ro.dir, 'reports')], noApi),
        cli(
          ['validate', sheet.file, '--mapping', sheet.mapping, '--report-dir', join(ro.dir, 'reports', 'new')],
          noApi,
        ),
        cli(['import', sheet.file, '--mapping', sheet.mapping, '--sandbox', '--report-dir', join(ro.dir, 'reports')]),
      ]);
      expectOneLine(inside, 2, /: read-only file system/, join(ro.dir, 'reports'));
      expectOneLine(below, 2, /: read-only file system/, join(ro.dir, 'reports', 'new'));
      expectOneLine(sandboxed, 2, /: read-only file system/, join(ro.dir, 'reports'));
    }, 60_000);

    it('validate on a full disk: exit 2, one line naming the file, nothing left half-written', async () => {
      const full = tmpfs('256k');
      const reports = join(full.dir, 'reports');
      mkdirSync(reports);
      fillUp(full.dir);
      const r = await cli(['validate', sheet.file, '--mapping', sheet.mapping, '--report-dir', reports], noApi);
      expectOneLine(r, 2, /: no space left on device/, reports);
      expect(filesBelow(reports).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    }, 60_000);

    it('import --sandbox on a full disk: exit 2 (nothing was sent), one line', async () => {
      const full = tmpfs('256k');
      const reports = join(full.dir, 'reports');
      mkdirSync(reports);
      fillUp(full.dir);
      const r = await cli(['import', sheet.file, '--mapping', sheet.mapping, '--sandbox', '--report-dir', reports]);
      expectOneLine(r, 2, /: no space left on device/, reports);
    }, 60_000);

    it('import --sandbox: the disk is full when the report is written — exit 3, one line naming the directory, the journal kept; with space the same command finishes the run', async () => {
      const rows = 400;
      const big = writeProductSheet(work, rows, { owner, file: 'report-full.csv' });
      const args = ['import', big.file, '--mapping', big.mapping, '--sandbox'];
      // The run's id is deterministic (sheet, mapping, owner, mode): learnt from the same import into another
      // directory (in-process: only its directory is read).
      const scratch = join(work, 'scratch');
      const learnt = await cliInProcess([...args, '--report-dir', scratch], {
        env: { LOG_LEVEL: 'error' },
        unset: ['REDIS_URL'],
      });
      expect(learnt.code, learnt.stderr).toBe(0);
      const runId = readdirSync(scratch).find((d) => !d.startsWith('.'))!;
      // The run's directory is a disk of 32 KB: room for run.json and the report files as they open, not for the
      // report's 400 lines, written when it finishes. Its chunks (input, journal, results) are on a roomy one; the
      // sandbox's store stays in <report-dir>/.sandbox, on the test's own disk.
      const reports = join(work, 'reports-full');
      const runDir = join(reports, runId);
      mkdirSync(runDir, { recursive: true });
      const small = tmpfs('32k', runDir);
      mkdirSync(join(runDir, 'chunks'));
      tmpfs('4m', join(runDir, 'chunks'));

      const r = await cli([...args, '--report-dir', reports]);
      expectOneLine(
        r,
        3,
        new RegExp(`cannot write the report to ${runDir}: no space left on device — ${rows} writes were sent`),
        runDir,
      );
      expect(existsSync(join(runDir, 'summary.json'))).toBe(false);
      const left = filesBelow(runDir);
      expect(left.filter((f) => f.endsWith('.tmp'))).toEqual([]);
      expect(left).toEqual(
        expect.arrayContaining([
          'run.json',
          join('chunks', 'rows-0.json'),
          join('chunks', 'rows-0.journal.jsonl'),
          join('chunks', 'rows-0.results.jsonl'),
        ]),
      );
      const store = () =>
        JSON.parse(readFileSync(join(reports, '.sandbox', 'store.json'), 'utf8')) as {
          tradeItems: { fields: { gtin: string } }[];
        };
      expect(store().tradeItems).toHaveLength(rows);

      small.remount('size=1m');
      const again = await cli([...args, '--report-dir', reports]);
      expect(again.code, again.stderr).toBe(0);
      expect(said(again.stderr)).toEqual([]);
      const summary = JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8'));
      expect(summary.counts).toMatchObject({ rows, created: rows, failed: 0, notAttempted: 0 });
      expect(readFileSync(join(runDir, 'rows.csv'), 'utf8').trim().split(/\r?\n/)).toHaveLength(rows + 1);
      // No item twice: the store holds one per GTIN.
      expect(new Set(store().tradeItems.map((t) => t.fields.gtin)).size).toBe(rows);
      expect(store().tradeItems).toHaveLength(rows);
    }, 120_000);

    describe('the disk fills while an import is sending', () => {
      let sandbox: RunningSandbox;
      beforeAll(async () => {
        sandbox = await startSandbox({ port: 0 });
      });
      afterAll(async () => {
        await sandbox?.close();
      });

      it('exit 3 with one line, the journal kept; once there is space the same command resumes and sends no create twice', async () => {
        const rows = 200;
        const big = writeProductSheet(work, rows, { owner, file: 'big.csv' });
        const disk = tmpfs('4m');
        const reports = join(disk.dir, 'reports');
        const env = {
          ...apiEnv(sandbox.url),
          REPORT_DIR: reports,
          API_CONCURRENCY: '2',
        };
        const args = ['import', big.file, '--mapping', big.mapping];
        const creates = () => sandbox.handle.counts().byRoute['POST /api/tradeItem'] ?? 0;
        sandbox.handle.reset();
        // Slow enough that the disk fills long before the last create: ~200 × 10 ms / 2.
        sandbox.handle.setFaults({ latencyMs: [5, 15], seed: 7 });
        try {
          const first = cli(args, env, 60_000);
          await until('the import to send its first creates', () => creates() >= 20, 30_000);
          const filler = fillUp(disk.dir);
          const r = await first;
          const sentBefore = creates();
          expect(sentBefore, 'the disk filled only after the last create: the test proves nothing').toBeLessThan(rows);
          expectOneLine(r, 3, /: no space left on device/, reports);
          expect(r.stderr).toMatch(/writes? (was|were) sent; .*run the same command again/);
          // The run's journal and chunk files stay for the rerun; no temp file holds space.
          const runDir = readdirSync(reports).find((d) => !d.startsWith('.'))!;
          const left = filesBelow(join(reports, runDir));
          expect(left.filter((f) => f.endsWith('.journal.jsonl')).length).toBeGreaterThan(0);
          expect(left).toContain(join('chunks', 'rows-0.json'));
          expect(left.filter((f) => f.endsWith('.tmp'))).toEqual([]);
          expect(existsSync(join(reports, runDir, 'summary.json'))).toBe(false);

          rmSync(filler);
          sandbox.handle.setFaults({});
          const again = await cli(args, env, 60_000);
          expect(again.code, again.stderr).toBe(0);
          expect(said(again.stderr)).toEqual([]);
          // Every row's item created once: no second item, and no create sent again (a resent one would be a 409,
          // counted here).
          expectOneItemPerGtin(sandbox, owner, rows);
          expect(creates()).toBe(rows);
          const summary = JSON.parse(readFileSync(join(reports, runDir, 'summary.json'), 'utf8'));
          expect(summary.counts).toMatchObject({ rows, created: rows, failed: 0, notAttempted: 0 });
        } finally {
          sandbox.handle.setFaults({});
        }
      }, 120_000);
    });
  },
);
