// Quality gates (issue 38 item 3), through the CLI against the sandbox: an import over its mapping's gate prepares and
// reports every row and writes nothing (exit 3, PS_ERR_QUALITY_GATE, summary.json `held`); --waive-gate applies it
// anyway; a rule the gate lists holds the run on its first failure, warnings included.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { testGtin } from '../helpers/sheets.ts';
import { COLUMNS, tradeItemMapping } from '../helpers/mappings.ts';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

const mappingText = (gate: string) =>
  tradeItemMapping('gate-test', DEMO_COMPANY_ID, [COLUMNS.gtin, COLUMNS.name], `${gate}\n`);

/** `rows` rows, the first `invalid` with a wrong check digit; names from `name`. */
function setup(gate: string, rows: number, invalid: number, offset: number, name = (i: number) => `Sablés ${i}`) {
  const dir = mkdtempSync(join(tmpdir(), 'ps-gate-'));
  const mapping = join(dir, 'm.yaml');
  writeFileSync(mapping, mappingText(gate));
  const lines = ['GTIN;Désignation'];
  for (let i = 0; i < rows; i++) {
    const g = testGtin(offset + i);
    lines.push(`${i < invalid ? g.slice(0, -1) + String((Number(g.at(-1)) + 1) % 10) : g};${name(i)}`);
  }
  const file = join(dir, 'sheet.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { dir, file, mapping };
}

function summaries(dir: string): Record<string, unknown>[] {
  const reports = join(dir, 'reports');
  return readdirSync(reports)
    .filter((d) => !d.startsWith('.'))
    .sort()
    .map((d) => JSON.parse(readFileSync(join(reports, d, 'summary.json'), 'utf8')) as Record<string, unknown>);
}

const stored = () => new Set([...sandbox.handle.store.tradeItems.values()].map((t) => t.fields.gtin));

describe('a quality gate', () => {
  it('holds a run over maxInvalidShare: every row reported, nothing written, exit 3; --waive-gate applies it', async () => {
    const { dir, file, mapping } = setup('gate: { maxInvalidShare: 0.1 }', 10, 3, 100);
    const writes = sandbox.handle.counts().writes;
    const r = await cliInProcess(['import', file, '--mapping', mapping], { env: inlineEnv(sandbox.url, dir) });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain(
      'HELD: held by the quality gate: 30 % of the rows are invalid (3 of 10), over maxInvalidShare 10 %',
    );
    expect(sandbox.handle.counts().writes).toBe(writes);
    const [held] = summaries(dir) as [
      { counts: Record<string, number>; held: { invalidShare: number; rows: number }; abortCode: string },
    ];
    expect(held.abortCode).toBe('PS_ERR_QUALITY_GATE');
    expect(held.held).toMatchObject({ rows: 10, invalidRows: 3, invalidShare: 0.3, gate: { maxInvalidShare: 0.1 } });
    expect(held.counts).toMatchObject({ invalid: 3, notAttempted: 7 });
    expect(stored().has(`0${testGtin(105)}`)).toBe(false);

    const again = await cliInProcess(['import', file, '--mapping', mapping, '--waive-gate'], {
      env: inlineEnv(sandbox.url, dir),
    });
    expect(again.code, again.stderr).toBe(1);
    const [, applied] = summaries(dir) as [unknown, { counts: Record<string, number>; held?: unknown }];
    expect(applied.held).toBeUndefined();
    expect(applied.counts).toMatchObject({ invalid: 3, created: 7 });
    expect(stored().has(`0${testGtin(105)}`)).toBe(true);
  });

  it('lets a run under the gate write as usual', async () => {
    const { dir, file, mapping } = setup('gate: { maxInvalidShare: 0.5 }', 10, 3, 200);
    const r = await cliInProcess(['import', file, '--mapping', mapping], { env: inlineEnv(sandbox.url, dir) });
    expect(r.code, r.stderr).toBe(1);
    expect(summaries(dir)[0]).toMatchObject({ counts: { invalid: 3, created: 7 } });
  });

  it('holds a run on any failure of a rule it lists, a warning included', async () => {
    const { dir, file, mapping } = setup('gate: { rules: [PS-XF-008] }', 5, 0, 300, (i) =>
      i === 2 ? 'SABLES AU BEURRE' : `Sablés ${i}`,
    );
    const writes = sandbox.handle.counts().writes;
    const r = await cliInProcess(['import', file, '--mapping', mapping], { env: inlineEnv(sandbox.url, dir) });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain('1 row fails rule PS-XF-008');
    expect(sandbox.handle.counts().writes).toBe(writes);
    expect(summaries(dir)[0]).toMatchObject({ held: { ruleRows: { 'PS-XF-008': 1 } }, counts: { notAttempted: 5 } });
  });
});
