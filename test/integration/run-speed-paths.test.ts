// The short cuts the engine takes for speed (issue 10) keep every row's outcome and the report files: chunks that need
// no request are settled without a chunk file (validate writes none at all), the report is the same whether its files
// are written in the run's thread or a worker thread, and a command that sends nothing does not load the HTTP client.
import { spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPORT_THREAD_BYTES, ReportAssembler } from '../../src/pipeline/run/assemble.ts';
import { runImport, runValidate } from '../../src/pipeline/run/run.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { useSandbox, commandContext } from '../helpers/sandbox.ts';
import { apiEnv, offlineEnv } from '../helpers/env.ts';

const owner = DEMO_COMPANY_ID;
const sandbox = useSandbox();

/** An inline run against the sandbox, 16 requests at once, in chunks of `chunkSize` rows. */
const context = (reportDir: string, chunkSize: number) =>
  commandContext(
    apiEnv(sandbox.url, {
      REPORT_DIR: reportDir,
      API_CONCURRENCY: '16',
      LOG_LEVEL: 'silent',
      CHUNK_SIZE: String(chunkSize),
    }),
  );

const chunkFiles = (runDir: string, pattern: RegExp) =>
  existsSync(join(runDir, 'chunks')) ? readdirSync(join(runDir, 'chunks')).filter((f) => pattern.test(f)) : [];
const text = (dir: string, name: string) => readFileSync(join(dir, name), 'utf8');

/**
 * 300 rows: every 50th without a name (invalid), the GTIN of row 5 also on row 290 (a duplicate eleven 25-row chunks
 * apart).
 */
function writeSheet(dir: string): { file: string; mapping: string } {
  const { mapping } = writeProductSheet(dir, 1, { owner, file: 'unused.csv' });
  const lines = ['GTIN;Désignation;Poids net;Unité'];
  for (let i = 0; i < 300; i++)
    lines.push(`${testGtin(i === 290 ? 5 : i)};${i % 50 === 7 ? '' : `Sablés ${i}`};${100 + i};g`);
  const file = join(dir, 'sheet.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, mapping };
}

describe('chunks that need no request', () => {
  it('are settled without chunk files: validate writes none, a rerun with nothing to change writes results only; outcomes as before', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-speed-'));
    const { file, mapping } = writeSheet(dir);
    const cc = await context(join(dir, 'reports'), 25);
    try {
      const v = await runValidate({ file, mapping }, cc.ctx);
      expect(v.summary.counts).toMatchObject({ rows: 300, valid: 300 - 6 - 2, invalid: 8 });
      expect(existsSync(join(v.reportDir, 'chunks'))).toBe(false);
      const validateRows = text(v.reportDir, 'rows.csv').trim().split('\r\n');
      expect(validateRows).toHaveLength(301);
      expect(validateRows.filter((l) => l.includes('DUPLICATE_KEY'))).toHaveLength(2);

      const first = await runImport({ file, mapping }, cc.ctx);
      expect(first.summary.counts).toMatchObject({ rows: 300, created: 292, invalid: 8 });
      // Chunks with rows to create were written before they were pushed.
      expect(chunkFiles(first.reportDir, /^rows-\d+\.json$/)).toHaveLength(12);

      const again = await runImport({ file, mapping }, cc.ctx);
      expect(again.writes).toBe(0);
      expect(again.summary.counts).toMatchObject({ rows: 300, unchanged: 292, invalid: 8 });
      expect(chunkFiles(again.reportDir, /^rows-\d+\.json$/)).toEqual([]);
      expect(chunkFiles(again.reportDir, /^rows-\d+\.results\.jsonl$/)).toHaveLength(12);
      // Same rows, same order, same invalid rows and issues as the first import: only created → unchanged.
      const norm = (s: string) =>
        s
          .split('\r\n')
          .map((l) =>
            l.split(',').slice(0, 3).concat(l.split(',').slice(6)).join(',').replace(',created,', ',unchanged,'),
          );
      expect(norm(text(again.reportDir, 'rows.csv'))).toEqual(norm(text(first.reportDir, 'rows.csv')));
      expect(text(again.reportDir, 'rejected.csv')).toBe(text(first.reportDir, 'rejected.csv'));
    } finally {
      await cc.close();
    }
  }, 120_000);
});

describe('validate reads the sheet once unless a key is on several rows', () => {
  /** The rows read as validate reports its progress: one climb per read of the sheet. */
  async function reads(
    file: string,
    mapping: string,
    dir: string,
  ): Promise<{ climbs: number[]; stages: Set<string>; rows: string[] }> {
    const cc = await context(join(dir, 'reports'), 500);
    const seen: { stage: string; rowsRead: number }[] = [];
    try {
      const v = await runValidate(
        { file, mapping },
        { ...cc.ctx, onProgress: (p) => seen.push({ stage: p.stage, rowsRead: p.rowsRead }) },
      );
      const climbs: number[] = [];
      let last = -1;
      for (const p of seen.filter((x) => x.stage === 'read')) {
        if (p.rowsRead < last || climbs.length === 0) climbs.push(0);
        climbs[climbs.length - 1] = Math.max(climbs.at(-1)!, p.rowsRead);
        last = p.rowsRead;
      }
      return {
        climbs,
        stages: new Set(seen.map((x) => x.stage)),
        rows: text(v.reportDir, 'rows.csv').trim().split('\r\n'),
      };
    } finally {
      await cc.close();
    }
  }

  it('once without duplicates (no first pass for the keys); twice with one, every row of the key marked, the report written once', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-speed-once-'));
    const { mapping } = writeProductSheet(dir, 1, { owner, file: 'unused.csv' });
    const lines = ['GTIN;Désignation;Poids net;Unité'];
    for (let i = 0; i < 3000; i++) lines.push(`${testGtin(i)};Sablés ${i};${100 + i};g`);
    const unique = join(dir, 'unique.csv');
    writeFileSync(unique, `${lines.join('\n')}\n`);
    // The key of the first row again on the last: the first row was reported valid before the duplicate was read.
    const dup = join(dir, 'dup.csv');
    writeFileSync(dup, `${[...lines, `${testGtin(0)};Sablés bis;100;g`].join('\n')}\n`);

    const once = await reads(unique, mapping, dir);
    expect(once.stages.has('keys')).toBe(false);
    expect(once.climbs).toEqual([3000]);
    expect(once.rows).toHaveLength(3001);
    expect(once.rows.filter((l) => l.includes('DUPLICATE_KEY'))).toEqual([]);

    const twice = await reads(dup, mapping, dir);
    expect(twice.climbs).toEqual([3001, 3001]);
    expect(twice.rows).toHaveLength(3002);
    const marked = twice.rows.filter((l) => l.includes('DUPLICATE_KEY'));
    expect(marked.map((l) => l.split(',')[0])).toEqual(['2', '3002']);
    expect(marked.every((l) => l.includes(',invalid,'))).toBe(true);
  }, 60_000);
});

describe('the report of a run written by a worker thread', () => {
  it('holds the same files as the one written in the run thread', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-speed-thread-'));
    const { file, mapping } = writeSheet(dir);
    const cc = await context(join(dir, 'reports'), 25);
    try {
      const v = await runValidate({ file, mapping }, cc.ctx);
      // The same run's chunks assembled again, into another directory, by a report thread: validate keeps no results on
      // disk, so the import (which does) is used.
      const imported = await runImport({ file, mapping, dryRun: true }, cc.ctx);
      const state = JSON.parse(text(imported.reportDir, 'run.json'));
      for (const thread of [false, true]) {
        const copy = join(dir, `copy-${thread}`);
        mkdirSync(copy);
        cpSync(join(imported.reportDir, 'chunks'), join(copy, 'chunks'), { recursive: true });
        const a = await ReportAssembler.open(copy, state, { thread });
        for (let i = 0; i < state.rowChunks; i++) await a.ready(i);
        const { summary } = await a.finish(0, (counts) => ({ ...imported.summary, counts }));
        expect(summary.counts).toEqual(imported.summary.counts);
        // The issue breakdown, tallied again from the chunks' results on disk, counts each row once.
        expect(summary.issues).toEqual(imported.summary.issues);
      }
      expect(imported.summary.issues!.map((e) => [e.code, e.rows])).toEqual([
        ['FIELD_REQUIRED', 6],
        ['DUPLICATE_KEY', 2],
      ]);
      expect(v.summary.issues).toEqual(imported.summary.issues);
      for (const f of ['rows.csv', 'rejected.csv', 'issues.csv']) {
        expect(text(join(dir, 'copy-true'), f)).toBe(text(join(dir, 'copy-false'), f));
        expect(text(join(dir, 'copy-true'), f)).toBe(text(imported.reportDir, f));
      }
      expect(v.summary.counts.invalid).toBe(imported.summary.counts.invalid);
    } finally {
      await cc.close();
    }
  }, 120_000);
});

describe('start-up', () => {
  it('validate of a sheet over REPORT_THREAD_BYTES from the CLI: the report thread started before the run writes every row', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-speed-warm-'));
    const { mapping } = writeProductSheet(dir, 1, { owner, file: 'unused.csv' });
    const lines = ['GTIN;Désignation;Poids net;Unité'];
    // 15 000 long rows: over REPORT_THREAD_BYTES with a quarter of the rows a shorter line would need.
    for (let i = 0; i < 15_000; i++)
      lines.push(
        `${testGtin(i)};${i % 1000 === 3 ? '' : `Sablés au beurre doux ${i} ${'·'.repeat(140)}`};${100 + (i % 900)};g`,
      );
    const file = join(dir, 'large.csv');
    writeFileSync(file, `${lines.join('\n')}\n`);
    expect(statSync(file).size).toBeGreaterThanOrEqual(REPORT_THREAD_BYTES);
    const reportDir = join(dir, 'reports');
    const env: NodeJS.ProcessEnv = { ...process.env, ...offlineEnv(reportDir) };
    const r = spawnSync(process.execPath, ['bin/product-sync.mjs', 'validate', file, '--mapping', mapping], {
      env,
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(r.status, r.stderr).toBe(1);
    expect(r.stdout).toContain('rows 15000: valid 14985, invalid 15');
    const [run] = readdirSync(reportDir).filter((d) => !d.startsWith('.'));
    const rows = text(join(reportDir, run!), 'rows.csv').trim().split('\r\n');
    expect(rows).toHaveLength(15_001);
    expect(rows.filter((l) => l.includes(',invalid,'))).toHaveLength(15);
    expect(rows[15_000]!.startsWith('15001,')).toBe(true);
    expect(text(join(reportDir, run!), 'rejected.csv').trim().split('\r\n')).toHaveLength(16);
    // The issue breakdown is tallied in the run's thread, whichever thread writes the files.
    const { issues } = JSON.parse(text(join(reportDir, run!), 'summary.json'));
    expect(issues).toMatchObject([
      { code: 'FIELD_REQUIRED', column: 'Désignation', rows: 15, firstRows: [5, 1005, 2005, 3005, 4005] },
    ]);
    expect(text(join(reportDir, run!), 'issues.csv')).toContain('FIELD_REQUIRED,error,Désignation,tradeItemName,15,');
  }, 60_000);

  it('a validate that sends nothing never loads the HTTP client (undici) nor exceljs, nor the country names without a country column', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-speed-start-'));
    const { file, mapping } = writeProductSheet(dir, 3, { owner });
    // Preloaded: names every file the process loaded, required (the bundle's dependencies) or imported (an ES module).
    const hook = join(dir, 'hook.cjs');
    writeFileSync(
      hook,
      `const { register } = require('node:module');
register('data:text/javascript,' + encodeURIComponent('export async function resolve(s, c, next) { const r = await next(s, c); if (r.url.startsWith("file:")) process.stderr.write("LOADED " + r.url + "\\\\n"); return r; }'));
process.on('exit', () => { for (const f of Object.keys(require.cache)) process.stderr.write('LOADED ' + f + '\\n'); });`,
    );
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      PRODUCT_API_URL: 'http://127.0.0.1:9',
      REFERENCE_API_URL: 'http://127.0.0.1:9',
      API_TOKEN: 'unused',
      REPORT_DIR: join(dir, 'reports'),
      LOG_LEVEL: 'error',
    };
    delete env.REDIS_URL;
    const r = spawnSync(
      process.execPath,
      ['--require', hook, 'bin/product-sync.mjs', 'validate', file, '--mapping', mapping],
      { env, encoding: 'utf8', timeout: 60_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('valid 3');
    const loaded = r.stderr.split('\n').filter((l) => l.startsWith('LOADED '));
    // The hook works: it saw the bin and the bundle (imported). Nothing is require()d at start (package.json, for the
    // version, is read as a file); a package that were would be listed from require.cache.
    expect(loaded.some((l) => l.endsWith('/bin/product-sync.mjs'))).toBe(true);
    expect(loaded.some((l) => l.endsWith('/dist/cli.js'))).toBe(true);
    // Nor the country names: the sheet has no country column.
    expect(loaded.filter((l) => /\/node_modules\/i18n-iso-countries\//.test(l))).toEqual([]);
    expect(loaded.filter((l) => /\/node_modules\/(undici|exceljs|ioredis)\//.test(l))).toEqual([]);
  }, 60_000);
});
