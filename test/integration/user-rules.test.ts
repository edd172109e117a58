// A mapping's own rules (issue 38 item 2): JSONata assertions over the mapped row, through the CLI. A rule that does
// not hold is an issue carrying the rule's id (an error rejects the row, a warning does not); a rule that raises an
// error on a row is an issue of that row; a rule that does not parse or names a field the target does not have stops
// the run before anything is sent (exit 2, the rule's id and the mapping's line). The import runs against the sandbox.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { testGtin } from '../helpers/sheets.ts';
import { productMapping } from '../helpers/mappings.ts';
import { useSandbox } from '../helpers/sandbox.ts';

const sandbox = useSandbox();

const MAPPING_HEAD = productMapping('rules-test', DEMO_COMPANY_ID);

function setup(rules: string, rows: [string, string, string][]): { dir: string; file: string; mapping: string } {
  const dir = mkdtempSync(join(tmpdir(), 'ps-user-rules-'));
  const mapping = join(dir, 'm.yaml');
  writeFileSync(mapping, MAPPING_HEAD + rules);
  const file = join(dir, 'sheet.csv');
  const lines = ['GTIN;Désignation;Poids net;Unité', ...rows.map(([g, n, w]) => `${g};${n};${w};g`)];
  writeFileSync(file, `${lines.join('\n')}\n`);
  return { dir, file, mapping };
}

function report(dir: string): { at: (f: string) => string } {
  const reports = join(dir, 'reports');
  const [run] = readdirSync(reports).filter((d) => !d.startsWith('.'));
  return { at: (f) => readFileSync(join(reports, run!, f), 'utf8') };
}

const RULES = `rules:
  - id: ACME-001
    assert: "$length(tradeItemName) <= 20"
    severity: warning
    message: name longer than 20 characters
    column: Désignation
  - id: ACME-002
    assert: "$number(netContents[0].value) < 1000"
    severity: error
    message: net content of 1 kg or more
  - id: ACME-003
    assert: "$contains(tradeItemName, ' ') or $error('one word only')"
    severity: warning
    message: a one-word name
`;

describe("a mapping's own rules", () => {
  it('report each failure with the rule id, reject rows on an error rule, and make a throwing rule an issue of its row', async () => {
    const { dir, file, mapping } = setup(RULES, [
      [testGtin(1), 'Sablés au beurre', '250'],
      [testGtin(2), 'Sablés au beurre de Bretagne', '250'],
      [testGtin(3), 'Galettes pur beurre', '1500'],
      [testGtin(4), 'Palets', '100'],
    ]);
    const r = await cliInProcess(['import', file, '--mapping', mapping], { env: inlineEnv(sandbox.url, dir) });
    expect(r.code, r.stderr).toBe(1);
    const { at } = report(dir);
    const summary = JSON.parse(at('summary.json')) as {
      counts: Record<string, number>;
      issues: { code: string; rule: string; rows: number; firstRows: number[]; column: string | null }[];
    };
    expect(summary.counts).toMatchObject({ created: 3, invalid: 1 });
    const byRule = Object.fromEntries(summary.issues.map((e) => [e.rule, e]));
    expect(byRule['ACME-001']).toMatchObject({ code: 'USER_RULE', rows: 1, firstRows: [3], column: 'Désignation' });
    expect(byRule['ACME-002']).toMatchObject({ code: 'USER_RULE', rows: 1, firstRows: [4], column: 'Poids net' });
    // $error() raises on 'Palets' only: an issue on that row, the run goes on.
    expect(byRule['ACME-003']).toMatchObject({ code: 'USER_RULE_FAILED', rows: 1, firstRows: [5] });
    // rejected.csv in the supplier's language (the mapping's, fr-FR), the rule's own message kept as written.
    expect(at('rejected.csv')).toMatch(
      /ERREUR USER_RULE \[Poids net\] ""1500"": [^;]* — net content of 1 kg or more \(rule ACME-002\)/,
    );
    expect(at('rows.csv')).toMatch(/3,\d+,created,.*WARNING USER_RULE \[Désignation\].*\(rule ACME-001\)/);
    expect(at('rows.csv')).toMatch(
      /5,\d+,created,.*WARNING USER_RULE_FAILED .*ACME-003: one word only \(rule ACME-003\)/,
    );
    // The rejected row was not sent.
    const gtins = [...sandbox.handle.store.tradeItems.values()].map((t) => t.fields.gtin);
    expect(gtins).toContain(`0${testGtin(1)}`);
    expect(gtins).not.toContain(`0${testGtin(3)}`);
  });

  it('stop the run before anything is sent when an assertion does not parse, naming the rule and its line', async () => {
    const { dir, file, mapping } = setup(
      `rules:
  - id: ACME-010
    assert: "$length(tradeItemName <= 20"
    message: broken
`,
      [[testGtin(10), 'Sablés', '100']],
    );
    const before = sandbox.handle.counts().total;
    const r = await cliInProcess(['import', file, '--mapping', mapping], { env: inlineEnv(sandbox.url, dir) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('PS_ERR_MAPPING_INVALID');
    expect(r.stderr).toMatch(/m\.yaml:13: rules\[0\]\.assert: rule ACME-010: the assertion does not parse/);
    expect(sandbox.handle.counts().total).toBe(before);
  });

  it('stop the run when an assertion names a field the target does not have, suggesting the closest', async () => {
    const { dir, file, mapping } = setup(
      `rules:
  - id: ACME-020
    assert: "tradeItemNam != ''"
    message: typo
gate: { rules: [ACME-999] }
`,
      [[testGtin(20), 'Sablés', '100']],
    );
    const r = await cliInProcess(['validate', file, '--mapping', mapping], { env: inlineEnv(sandbox.url, dir) });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /m\.yaml:13: rules\[0\]\.assert: rule ACME-020: the assertion reads tradeItemNam \(at character \d+\), not a field of the target; did you mean tradeItemName\?/,
    );
    expect(r.stderr).toMatch(/m\.yaml:15: gate\.rules\[0\]: ACME-999 is no rule of the catalogue/);
  });
});
