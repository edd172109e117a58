// `npm run bench -- rules [--rows N] [--runs N]`: what a mapping's own rules cost. `validate` of an N-row CSV (default
// 1 000 000; 4 columns, no lookups) with the same mapping without rules and with five rules (a name length, a net
// content range, a unit in a list, a GTIN prefix, a name without markup), each a process of its own
// (bin/product-sync.mjs over dist/: `npm run build` first), taken in turns; the best of --runs (default 2) of each is
// kept. Prints both wall times and the ratio (the target: within 20 %).
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';
import { testGtin } from '../test/helpers/sheets.ts';

const ROOT = resolve(import.meta.dirname, '..');
const DATA = join(ROOT, 'bench', '.data', 'rules');
const args = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return dflt;
  return Number(args[i]!.includes('=') ? args[i]!.split('=')[1] : args[i + 1]);
};
const ROWS = opt('rows', 1_000_000);
const RUNS = opt('runs', 2);

const HEAD = `name: bench-rules
target: tradeItem
ownerCompanyId: ${DEMO_COMPANY_ID}
language: fr-FR
key: gtin
columns:
  - { column: GTIN, field: gtin, type: gtin }
  - { column: Désignation, field: tradeItemName }
  - { column: Poids net, field: "netContents[0].value", type: decimal }
  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit }
`;
const RULES = `rules:
  - { id: B-1, assert: "$length(tradeItemName) <= 60", severity: warning, message: long name }
  - { id: B-2, assert: "$number(netContents[0].value) < 5000", severity: error, message: heavy }
  - { id: B-3, assert: "$length(netContents[0].unitOfMeasure) > 0", severity: error, message: unit }
  - { id: B-4, assert: "$substring(gtin, 0, 3) != '000'", severity: warning, message: prefix }
  - { id: B-5, assert: "$not($contains(tradeItemName, '<'))", severity: warning, message: markup }
`;

function prepare(): { sheet: string; plain: string; ruled: string } {
  mkdirSync(DATA, { recursive: true });
  const sheet = join(DATA, `rules-${ROWS}.csv`);
  if (!existsSync(sheet)) {
    const lines = ['GTIN;Désignation;Poids net;Unité'];
    for (let i = 0; i < ROWS; i++) lines.push(`${testGtin(i)};Biscuits au beurre ${i};${(i % 900) + 100};g`);
    writeFileSync(sheet, `${lines.join('\n')}\n`);
  }
  const plain = join(DATA, 'plain.yaml');
  const ruled = join(DATA, 'ruled.yaml');
  writeFileSync(plain, HEAD);
  writeFileSync(ruled, HEAD + RULES);
  return { sheet, plain, ruled };
}

function validate(sheet: string, mapping: string): number {
  const reportDir = join(DATA, 'reports');
  rmSync(reportDir, { recursive: true, force: true });
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    ['--max-semi-space-size=8', join(ROOT, 'bin', 'product-sync.mjs'), 'validate', sheet, '--mapping', mapping],
    {
      env: {
        ...process.env,
        PRODUCT_API_URL: 'http://127.0.0.1:9',
        REFERENCE_API_URL: 'http://127.0.0.1:9',
        API_TOKEN: 'unused',
        REPORT_DIR: reportDir,
        REDIS_URL: '',
        LOG_LEVEL: 'error',
      },
      encoding: 'utf8',
    },
  );
  const ms = performance.now() - t0;
  if (r.status !== 0 && r.status !== 1) throw new Error(`validate exited ${r.status}: ${r.stderr}`);
  return ms;
}

const { sheet, plain, ruled } = prepare();
let without = Infinity;
let withRules = Infinity;
for (let i = 0; i < RUNS; i++) {
  without = Math.min(without, validate(sheet, plain));
  withRules = Math.min(withRules, validate(sheet, ruled));
}
console.log(`validate of ${ROWS} rows, best of ${RUNS}:`);
console.log(`  without rules   ${(without / 1000).toFixed(2)} s`);
console.log(`  with five rules ${(withRules / 1000).toFixed(2)} s (${((withRules / without - 1) * 100).toFixed(0)} %)`);
