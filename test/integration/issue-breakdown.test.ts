// The issue breakdown of a run (issue 24 item 1): summary.json `issues` and issues.csv, one line per code × column,
// and the CLI's table and mapping-problem hint — through the real CLI (validate needs no API) and the pipeline
// (reconcile, against the embedded sandbox).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { IssueBreakdownEntry } from '../../src/pipeline/report/issue-breakdown.ts';
import { runReconcile } from '../../src/pipeline/run/reconcile.ts';
import { contextFromConfig } from '../../src/runtime.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { apiEnv, offlineEnv } from '../helpers/env.ts';

const owner = DEMO_COMPANY_ID;

/** A GTIN-13 with a wrong check digit. */
const badCheck = (i: number) => {
  const g = testGtin(i);
  return g.slice(0, -1) + String((Number(g.at(-1)) + 1) % 10);
};

/**
 * 30 rows: the first `badChecks` with a wrong check digit (distinct values), then GTINs too short ("123" on two rows,
 * "12" on one), one not digits (a formula-like "=45"), two rows without a name, the rest valid. Sheet row n is data
 * row n + 2.
 */
function writeSheet(dir: string, badChecks: number): { file: string; mapping: string } {
  const { mapping } = writeProductSheet(dir, 1, { owner, file: 'unused.csv' });
  const lines = ['GTIN;Désignation;Poids net;Unité'];
  for (let i = 0; i < 30; i++) {
    const gtin =
      i < badChecks ? badCheck(i) : i === 20 || i === 21 ? '123' : i === 22 ? '12' : i === 23 ? '=45' : testGtin(i);
    lines.push(`${gtin};${i === 25 || i === 27 ? '' : `Sablés ${i}`};${100 + i};g`);
  }
  const file = join(dir, `sheet-${badChecks}.csv`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { file, mapping };
}

function validate(
  dir: string,
  file: string,
  mapping: string,
): { stdout: string; runDir: string; issues: IssueBreakdownEntry[] } {
  const reportDir = join(dir, `reports-${readdirSync(dir).length}`);
  const r = spawnSync(process.execPath, ['bin/product-sync.mjs', 'validate', file, '--mapping', mapping], {
    env: { ...process.env, ...offlineEnv(reportDir) },
    encoding: 'utf8',
    timeout: 60_000,
  });
  expect(r.status, r.stderr).toBe(1);
  const [run] = readdirSync(reportDir).filter((d) => !d.startsWith('.'));
  const runDir = join(reportDir, run!);
  const summary = JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8'));
  return { stdout: r.stdout, runDir, issues: summary.issues };
}

describe('the issue breakdown', () => {
  it('summary.json and issues.csv: one line per code × column, most rows first, first rows and top values; the CLI prints them and names a likely mapping problem', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-issues-'));
    const { file, mapping } = writeSheet(dir, 18);
    const { stdout, runDir, issues } = validate(dir, file, mapping);

    expect(issues.map((e) => [e.code, e.column, e.field, e.rows, e.rule])).toEqual([
      ['GTIN_CHECK_DIGIT', 'GTIN', 'gtin', 18, 'PS-GTIN-006'],
      ['GTIN_LENGTH', 'GTIN', 'gtin', 3, 'PS-GTIN-005'],
      ['FIELD_REQUIRED', 'Désignation', 'tradeItemName', 2, 'PS-FLD-001'],
      ['GTIN_NOT_DIGITS', 'GTIN', 'gtin', 1, 'PS-GTIN-002'],
    ]);
    const [check, length, name] = issues as IssueBreakdownEntry[] as [
      IssueBreakdownEntry,
      IssueBreakdownEntry,
      IssueBreakdownEntry,
    ];
    expect(check.severity).toBe('error');
    expect(check.firstRows).toEqual([2, 3, 4, 5, 6]);
    // 18 distinct values, fewer than the counters: exact, the ten shown all seen once.
    expect(check.values).toHaveLength(10);
    expect(check.values.every((v) => v.rows === 1)).toBe(true);
    expect(check.approximate).toBeUndefined();
    expect(length.firstRows).toEqual([22, 23, 24]);
    expect(length.values).toEqual([
      { value: '123', rows: 2 },
      { value: '12', rows: 1 },
    ]);
    expect(name.firstRows).toEqual([27, 29]);

    const csv = readFileSync(join(runDir, 'issues.csv'), 'utf8')
      .replace(/^\uFEFF/, '')
      .trim()
      .split('\r\n');
    // The rule id, then the message in the report's language (the mapping's language, fr-FR).
    expect(csv[0]).toBe('code,severity,column,field,rows,firstRows,values,rule,message');
    expect(csv).toHaveLength(5);
    expect(csv[1]!.startsWith('GTIN_CHECK_DIGIT,error,GTIN,gtin,18,2; 3; 4; 5; 6,')).toBe(true);
    expect(csv[1]!).toContain(',PS-GTIN-006,');
    expect(csv[2]).toBe(
      'GTIN_LENGTH,error,GTIN,gtin,3,22; 23; 24,"""123"" (2); ""12"" (1)",PS-GTIN-005,"le GTIN doit avoir 8, 12, 13 ou 14 chiffres"',
    );
    expect(csv[3]!).toContain(',PS-FLD-001,');
    expect(csv[4]).toBe(
      'GTIN_NOT_DIGITS,error,GTIN,gtin,1,25,"""=45"" (1)",PS-GTIN-002,le GTIN ne doit contenir que des chiffres',
    );

    expect(stdout).toMatch(/issues by code and column, errors first:\n\s+rows\s+code\s+column\s+field/);
    expect(stdout).toMatch(/18\s+GTIN_CHECK_DIGIT\s+GTIN\s+gtin\s+2 3 4 5 6/);
    expect(stdout).toContain(
      `Likely a mapping problem: 18 of 30 rows fail GTIN_CHECK_DIGIT on column "GTIN" (field gtin), e.g. "${check.values[0]!.value}", "${check.values[1]!.value}" — check the mapping's column for gtin.`,
    );
    expect(stdout.match(/Likely a mapping problem/g)).toHaveLength(1);
  }, 60_000);

  it('no mapping-problem hint when no code × column fails more than half the rows', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-issues-few-'));
    const { file, mapping } = writeSheet(dir, 15);
    const { stdout, issues } = validate(dir, file, mapping);
    expect(issues[0]).toMatchObject({ code: 'GTIN_CHECK_DIGIT', rows: 15 });
    expect(stdout).toMatch(/15\s+GTIN_CHECK_DIGIT/);
    expect(stdout).not.toContain('Likely a mapping problem');
  }, 60_000);
});

describe('the issue breakdown of reconcile', () => {
  let sandbox: RunningSandbox;
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
  });
  afterAll(async () => {
    await sandbox?.close();
  });

  it('is in its summary.json and issues.csv too', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-issues-reconcile-'));
    const { file, mapping } = writeSheet(dir, 18);
    const config = loadConfig({
      ...apiEnv(sandbox.url),
      REPORT_DIR: join(dir, 'reports'),
      LOG_LEVEL: 'silent',
    });
    const cc = await contextFromConfig(config, {});
    try {
      const r = await runReconcile({ file, mapping }, cc.ctx);
      expect(r.summary.issues!.map((e) => [e.code, e.column, e.rows])).toEqual([
        ['GTIN_CHECK_DIGIT', 'GTIN', 18],
        ['GTIN_LENGTH', 'GTIN', 3],
        ['FIELD_REQUIRED', 'Désignation', 2],
        ['GTIN_NOT_DIGITS', 'GTIN', 1],
      ]);
      expect(readFileSync(join(r.reportDir, 'issues.csv'), 'utf8').trim().split('\r\n')).toHaveLength(5);
    } finally {
      await cc.close();
    }
  }, 60_000);
});
