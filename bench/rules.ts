// `npm run bench -- rules [--rows N] [--turns N] [--before DIR]`: what a mapping's own rules cost. `validate` of an
// N-row CSV (default 1 000 000; 4 columns, no lookups) with the same mapping without rules and with five rules (a name
// length, a net content bound, a unit given, a GTIN prefix, a name without markup), each a process of its own
// (bin/product-sync.mjs over dist/, which `npm run bench` builds first), taken in turns; the best of --turns (default
// 2) of each is kept. Prints the wall times, the ratio (the target: within 20 %) and the load average before and after.
// --before DIR also runs the five rules with DIR's build (another checkout, built) in the same turns: what the change
// buys. The sheet is written once to the system's temp directory (product-sync-bench-rules/) and kept for later runs.
import { spawnSync } from 'node:child_process';
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { once } from 'node:events';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';
import { testGtin } from '../test/helpers/sheets.ts';
import { FIVE_RULES } from './rules-five.ts';

const ROOT = resolve(import.meta.dirname, '..');
const DATA = join(tmpdir(), 'product-sync-bench-rules');
const args = process.argv.slice(2);
const opt = (name: string, dflt: number) => {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return dflt;
  return Number(args[i]!.includes('=') ? args[i]!.split('=')[1] : args[i + 1]);
};
const ROWS = opt('rows', 1_000_000);
const TURNS = opt('turns', 2);
const beforeAt = args.findIndex((a) => a === '--before' || a.startsWith('--before='));
const BEFORE =
  beforeAt < 0 ? null : resolve(args[beforeAt]!.includes('=') ? args[beforeAt]!.split('=')[1]! : args[beforeAt + 1]!);

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
const RULES = `rules:\n${FIVE_RULES.map((r) => `  - { id: ${r.id}, assert: "${r.assert}", severity: ${r.severity}, message: ${r.message} }\n`).join('')}`;

async function prepare(): Promise<{ sheet: string; plain: string; ruled: string }> {
  mkdirSync(DATA, { recursive: true });
  const sheet = join(DATA, `rules-${ROWS}.csv`);
  if (!existsSync(sheet)) {
    // Streamed, a thousand lines a write; renamed when complete (an interrupted bench leaves no half sheet).
    const out = createWriteStream(`${sheet}.part`);
    out.write('GTIN;Désignation;Poids net;Unité\n');
    for (let i = 0; i < ROWS; i += 1000) {
      let block = '';
      for (let j = i; j < Math.min(ROWS, i + 1000); j++)
        block += `${testGtin(j)};Biscuits au beurre ${j};${(j % 900) + 100};g\n`;
      if (!out.write(block)) await once(out, 'drain');
    }
    out.end();
    await once(out, 'finish');
    renameSync(`${sheet}.part`, sheet);
  }
  const plain = join(DATA, 'plain.yaml');
  const ruled = join(DATA, 'ruled.yaml');
  writeFileSync(plain, HEAD);
  writeFileSync(ruled, HEAD + RULES);
  return { sheet, plain, ruled };
}

function validate(sheet: string, mapping: string, root = ROOT): number {
  const reportDir = join(DATA, 'reports');
  rmSync(reportDir, { recursive: true, force: true });
  const t0 = performance.now();
  const r = spawnSync(
    process.execPath,
    ['--max-semi-space-size=8', join(root, 'bin', 'product-sync.mjs'), 'validate', sheet, '--mapping', mapping],
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

const load = () =>
  loadavg()
    .map((l) => l.toFixed(1))
    .join(' ');
const { sheet, plain, ruled } = await prepare();
const loadBefore = load();
let without = Infinity;
let withRules = Infinity;
let before = Infinity;
for (let i = 0; i < TURNS; i++) {
  const turn = [validate(sheet, plain), validate(sheet, ruled), BEFORE ? validate(sheet, ruled, BEFORE) : Infinity];
  console.log(
    `  turn ${i + 1}: ${turn
      .filter(Number.isFinite)
      .map((ms) => `${(ms / 1000).toFixed(2)} s`)
      .join(', ')}`,
  );
  without = Math.min(without, turn[0]!);
  withRules = Math.min(withRules, turn[1]!);
  before = Math.min(before, turn[2]!);
}
const pct = (t: number) => `${t >= without ? '+' : ''}${((t / without - 1) * 100).toFixed(0)} %`;
console.log(`validate of ${ROWS} rows, best of ${TURNS} (load average ${loadBefore} before, ${load()} after):`);
console.log(`  without rules   ${(without / 1000).toFixed(2)} s`);
console.log(`  with five rules ${(withRules / 1000).toFixed(2)} s (${pct(withRules)})`);
if (BEFORE) console.log(`  with five rules, ${BEFORE}: ${(before / 1000).toFixed(2)} s (${pct(before)})`);
