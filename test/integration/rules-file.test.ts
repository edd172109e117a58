// A rules file (issue 38 items 2 and 3): a mapping names its rules in a file of their own (`rules: ./acme-rules.yaml`,
// relative to the mapping), which apply and gate as inline rules do; a problem in it stops the run before anything is
// sent (exit 2), naming the rule's id, the rules file and its line.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { testGtin } from '../helpers/sheets.ts';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

function setup(rulesFile: string) {
  const dir = mkdtempSync(join(tmpdir(), 'ps-rules-file-'));
  writeFileSync(
    join(dir, 'm.yaml'),
    `name: rules-file
target: tradeItem
ownerCompanyId: ${DEMO_COMPANY_ID}
language: fr-FR
columns:
  - { column: GTIN, field: gtin, type: gtin }
  - { column: Désignation, field: tradeItemName }
rules: ./rules/acme-rules.yaml
gate: { rules: [ACME-001] }
`,
  );
  mkdirSync(join(dir, 'rules'));
  writeFileSync(join(dir, 'rules', 'acme-rules.yaml'), rulesFile);
  const lines = ['GTIN;Désignation'];
  for (let i = 0; i < 5; i++)
    lines.push(
      `${testGtin(500 + i)};${i === 3 ? 'Sablés au beurre pur et aux amandes grillées de Provence' : `Sablés ${i}`}`,
    );
  writeFileSync(join(dir, 'sheet.csv'), `${lines.join('\n')}\n`);
  return { dir, file: join(dir, 'sheet.csv'), mapping: join(dir, 'm.yaml') };
}

describe('a rules file', () => {
  it("applies its rules as the mapping's own: a gate listing one holds the run", async () => {
    const { dir, file, mapping } = setup(`# ACME's checks
- id: ACME-001
  assert: "$length(tradeItemName) <= 40"
  severity: warning
  message: name longer than 40 characters
`);
    const writes = sandbox.handle.counts().writes;
    const r = await cliInProcess(['import', file, '--mapping', mapping], { env: inlineEnv(sandbox.url, dir) });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain('1 row fails rule ACME-001');
    expect(sandbox.handle.counts().writes).toBe(writes);
  });

  it('stops the run before anything is sent when a rule in it is wrong, naming the rule, the file and its line', async () => {
    const { dir, file, mapping } = setup(`rules:
  - id: ACME-001
    assert: "$length(tradeItemName) <= 40"
    message: name longer than 40 characters
  - id: ACME-002
    assert: "tradeItemNam != ''"
    message: a name
`);
    const requests = sandbox.handle.counts().total;
    const r = await cliInProcess(['import', file, '--mapping', mapping], { env: inlineEnv(sandbox.url, dir) });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('invalid rules file');
    expect(r.stderr).toContain(`${join(dir, 'rules', 'acme-rules.yaml')}:6: rules[1].assert: rule ACME-002`);
    expect(r.stderr).toContain('did you mean tradeItemName?');
    expect(sandbox.handle.counts().total).toBe(requests);
  });
});
