import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runImport, runValidate } from '../../src/pipeline/run/run.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import {
  archivedGtins,
  expectOneItemPerGtin,
  reportIdsMatchApi,
  reportRows,
  useSandbox,
  commandContext,
} from '../helpers/sandbox.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { apiEnv } from '../helpers/env.ts';
import { cliInProcess, spawnCli } from '../helpers/cli.ts';
import { until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
const sandbox = useSandbox();

/** An inline run against the sandbox, 16 requests at once, in chunks of `chunkSize` rows (default: the config's). */
const context = (reportDir: string, chunkSize?: number) =>
  commandContext(
    apiEnv(sandbox.url, {
      REPORT_DIR: reportDir,
      API_CONCURRENCY: '16',
      LOG_LEVEL: 'silent',
      ...(chunkSize ? { CHUNK_SIZE: String(chunkSize) } : {}),
    }),
  );

const read = (dir: string, name: string) =>
  existsSync(join(dir, name)) ? readFileSync(join(dir, name), 'utf8') : null;
const runJson = (dir: string) =>
  JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8')) as { apiState?: { strategy: string }; rowChunks: number };

/**
 * 600 rows: every 97th GTIN has a wrong check digit, every 250th row has no name, the GTIN of data row 10 is on data
 * row 590 too (eleven 50-row chunks apart), rows 0–99 are renamed against the catalogue.
 */
const MIXED_ROWS = 600;

function writeMixedSheet(dir: string): { file: string; mapping: string } {
  const { mapping } = writeProductSheet(dir, 1, { owner, file: 'unused.csv' });
  const lines = ['GTIN;Désignation;Poids net;Unité'];
  for (let i = 0; i < MIXED_ROWS; i++) {
    let gtin = i === 590 ? testGtin(10) : testGtin(i);
    if (i % 97 === 50) gtin = gtin.slice(0, -1) + String((Number(gtin.at(-1)) + 1) % 10);
    const name = i % 250 === 7 ? '' : i < 100 ? `Biscuits au chocolat ${i}` : `Biscuits au beurre ${i}`;
    lines.push(`${gtin};${name};${(i % 900) + 100};g`);
  }
  const file = join(dir, 'mixed.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, mapping };
}

describe('the streaming engine', () => {
  it('gives the same outcomes and report files whatever the chunk size (12 chunks or one)', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-stream-'));
    const seed = writeProductSheet(dir, 300, { owner, file: 'seed.csv' });
    const sheet = writeMixedSheet(dir);
    const reports: Record<string, string | null>[] = [];
    for (const chunkSize of [50, 1000]) {
      sandbox.handle.reset();
      const cc = await context(join(dir, `reports-${chunkSize}`), chunkSize);
      try {
        await runImport({ file: seed.file, mapping: seed.mapping }, cc.ctx);
        const r = await runImport({ file: sheet.file, mapping: sheet.mapping }, cc.ctx);
        expect(runJson(r.reportDir).rowChunks).toBe(Math.ceil(MIXED_ROWS / chunkSize));
        expect(r.summary.counts.rows).toBe(MIXED_ROWS);
        const c = r.summary.counts;
        expect(
          c.created + c.updated + c.unchanged + c.invalid + c.failed + c.skipped + c.notAttempted + c.unarchived,
        ).toBe(MIXED_ROWS);
        // 6 bad check digits, 3 nameless rows, the duplicated pair; 100 renamed of the 300 seeded (3 of them invalid).
        expect(c).toMatchObject({ invalid: 6 + 3 + 2, updated: 97, failed: 0 });
        const v = await runValidate({ file: sheet.file, mapping: sheet.mapping }, cc.ctx);
        reports.push({
          counts: JSON.stringify(r.summary.counts),
          rows: read(r.reportDir, 'rows.csv'),
          rejected: read(r.reportDir, 'rejected.csv'),
          validate: read(v.reportDir, 'rows.csv'),
          validateRejected: read(v.reportDir, 'rejected.csv'),
        });
        reportIdsMatchApiForValid(r.reportDir);
      } finally {
        await cc.close();
      }
    }
    expect(reports[0]!.rows).toContain('DUPLICATE_KEY');
    expect(reports[0]).toEqual(reports[1]);
  }, 120_000);

  it('plans by GTIN search for a small sheet and from the catalogue index for a large one or in full mode (archives from the index)', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-stream-'));
    const cc = await context(join(dir, 'reports'), 40);
    try {
      const seed = writeProductSheet(dir, 1200, { owner, file: 'seed.csv' });
      await runImport({ file: seed.file, mapping: seed.mapping }, cc.ctx);
      const small = writeProductSheet(dir, 3, {
        owner,
        file: 'small.csv',
        name: (i) => (i === 0 ? 'Renamed 0' : `Biscuits au beurre ${i}`),
      });
      const s = await runImport({ file: small.file, mapping: small.mapping }, cc.ctx);
      expect(runJson(s.reportDir).apiState?.strategy).toBe('search');
      expect(s.summary.counts).toMatchObject({ rows: 3, updated: 1, unchanged: 2, created: 0 });

      // full mode: 1 150 of the 1 200 (5 renamed), 50 left out → archived through the index, 40-row chunks.
      const full = writeProductSheet(dir, 1150, {
        owner,
        file: 'full.csv',
        name: (i) => (i < 5 ? `Renamed ${i}` : `Biscuits au beurre ${i}`),
      });
      const f = await runImport({ file: full.file, mapping: full.mapping, mode: 'full' }, cc.ctx);
      expect(runJson(f.reportDir).apiState?.strategy).toBe('index');
      expect(f.summary.counts).toMatchObject({ rows: 1150, updated: 4, unchanged: 1146, archived: 50, failed: 0 });
      expect(archivedGtins(sandbox)).toEqual(
        Array.from({ length: 50 }, (_, i) => testGtin(1150 + i).padStart(14, '0')).sort(),
      );
      // The catalogue index is spilled to the run directory while the run lasts, and removed after it.
      expect(existsSync(join(f.reportDir, 'catalog'))).toBe(false);
    } finally {
      await cc.close();
    }
  }, 120_000);

  it('finishes a run killed with SIGKILL in the middle of its second pass: nothing created twice, every row reported created', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-stream-kill-'));
    const rows = 1500;
    const { file, mapping } = writeProductSheet(dir, rows, { owner });
    let midPass = 0;
    try {
      for (let trial = 0; trial < 2; trial++) {
        sandbox.handle.reset();
        sandbox.handle.setFaults({ latencyMs: [2, 6], seed: 5 + trial });
        const reportDir = join(dir, `reports-${trial}`);
        const env = apiEnv(sandbox.url, {
          REPORT_DIR: reportDir,
          API_CONCURRENCY: '8',
          CHUNK_SIZE: '50',
          LOG_LEVEL: 'silent',
        });
        const killed = spawnCli(['import', file, '--mapping', mapping], { env, unset: ['REDIS_URL'] });
        const killAfter = 150 + Math.floor(Math.random() * 600);
        await until('the import to send', () => sandbox.handle.store.dump().tradeItems.length >= killAfter, 60_000);
        killed.child.kill('SIGKILL');
        await killed.exit;
        const [runId] = readdirSync(reportDir).filter((d) => !d.startsWith('.'));
        const chunkFiles = readdirSync(join(reportDir, runId!, 'chunks')).filter((f) =>
          /^rows-\d+\.json$/.test(f),
        ).length;
        // The second pass had not written every chunk yet: the kill landed while it was reading.
        if (chunkFiles < rows / 50) midPass++;
        // The same command again, in-process (its exit code and report are what is checked).
        const rerun = await cliInProcess(['import', file, '--mapping', mapping], { env, unset: ['REDIS_URL'] });
        expect(rerun.code, `trial ${trial}: ${rerun.stderr}`).toBe(0);
        expectOneItemPerGtin(sandbox, owner, rows);
        const summary = JSON.parse(readFileSync(join(reportDir, runId!, 'summary.json'), 'utf8'));
        expect(summary.counts).toMatchObject({ rows, created: rows, unchanged: 0, failed: 0 });
        reportIdsMatchApi(sandbox, owner, join(reportDir, runId!), rows);
        expect(sandbox.handle.counts().byRoute['POST /api/tradeItem'] ?? 0).toBeLessThanOrEqual(rows + 8);
      }
      expect(midPass).toBeGreaterThan(0);
    } finally {
      sandbox.handle.setFaults({});
    }
  }, 180_000);
});

/** Rows the report calls created / updated / unchanged name the item the API holds for their GTIN. */
function reportIdsMatchApiForValid(reportDir: string): void {
  const ids = new Map(
    sandbox.handle.store
      .dump()
      .tradeItems.filter((t) => t.ownerCompanyId === owner)
      .map((t) => [t.gtin, t.tradeItemId]),
  );
  let checked = 0;
  for (const [, key, outcome, tradeItemId] of reportRows(reportDir)) {
    if (outcome === 'created' || outcome === 'updated' || outcome === 'unchanged') {
      expect(tradeItemId).toBe(ids.get(key!));
      checked++;
    }
  }
  expect(checked).toBe(MIXED_ROWS - 11);
}

describe('a rejected file re-imports with the same mapping', () => {
  it('for a sheet whose header is on row 2: the fixed rows go through with their original values, formulas undone', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-stream-rej-'));
    const { mapping } = writeProductSheet(dir, 1, { owner, file: 'unused.csv' });
    writeFileSync(mapping, readFileSync(mapping, 'utf8').replace('key: gtin\n', 'key: gtin\nheaderRow: 2\n'));
    const bad = testGtin(1).slice(0, -1) + String((Number(testGtin(1).at(-1)) + 1) % 10);
    const file = join(dir, 'titled.csv');
    writeFileSync(
      file,
      `Catalogue fournisseur;;;\nGTIN;Désignation;Poids net;Unité\n${testGtin(0)};Plain;100;g\n${bad};=1+2;250;g\n${testGtin(2)};@cmd;300;g\n`,
    );
    const cc = await context(join(dir, 'reports'));
    try {
      const first = await runImport({ file, mapping }, cc.ctx);
      expect(first.summary.counts).toMatchObject({ rows: 3, created: 2, invalid: 1 });
      const rejected = readFileSync(join(first.reportDir, 'rejected.csv'), 'utf8');
      expect(rejected.split(/\r\n/)[0]).toContain('Catalogue fournisseur');
      // The supplier fixes the check digit in the rejected file and imports it again, with the same mapping.
      const fixed = join(dir, 'fixed.csv');
      writeFileSync(fixed, rejected.replace(bad, testGtin(1)));
      const again = await runImport({ file: fixed, mapping }, cc.ctx);
      expect(again.summary.counts).toMatchObject({ rows: 1, created: 1, invalid: 0 });
      const items = sandbox.handle.store.dump().tradeItems;
      expect(items.find((t) => t.gtin === testGtin(1).padStart(14, '0'))?.tradeItemName).toBe('=1+2');
      expect(items.find((t) => t.gtin === testGtin(2).padStart(14, '0'))?.tradeItemName).toBe('@cmd');
    } finally {
      await cc.close();
    }
  }, 60_000);
});
