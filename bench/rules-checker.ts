// `npm run bench -- rules-checker [--rows N] [--turns N] [--before DIR]`: a mapping's own rules alone, without the
// rest of a validate. The five rules of bench/rules.ts (bench/rules-five.ts) checked over N drafts (default
// 1 000 000) of its sheet's shape (fields as the mapping makes them, strings read from text), 500 a chunk as a run
// checks them: the CPU time (user + system) of the checking, less that of making the drafts, each in a process of its
// own, best of --turns (default 3). --before DIR runs DIR's checker (another checkout's src/) in the same turns.
import { spawnSync } from 'node:child_process';
import { loadavg } from 'node:os';
import { resolve } from 'node:path';
import type { Draft } from '../src/pipeline/types.ts';
import type * as UserRules from '../src/pipeline/map/user-rules.ts';
import { FIVE_RULES } from './rules-five.ts';

const ROOT = resolve(import.meta.dirname, '..');
const args = process.argv.slice(2);
const opt = (name: string): string | undefined => {
  const i = args.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return undefined;
  return args[i]!.includes('=') ? args[i]!.split('=')[1] : args[i + 1];
};
const ROWS = Number(opt('rows') ?? 1_000_000);
const TURNS = Number(opt('turns') ?? 3);
const CHUNK = 500;

/** In the child: the checking's CPU time in seconds, less that of making the same drafts (a pass without it). */
async function measure(root: string): Promise<number> {
  const { UserRuleChecker } = (await import(`${root}/src/pipeline/map/user-rules.ts`)) as typeof UserRules;
  const checker = new UserRuleChecker(FIVE_RULES.map((r, line) => ({ ...r, line })));
  // A thousand rows' fields, their strings flat as a parser's are (a template literal's would be ropes).
  const pool = JSON.parse(
    JSON.stringify(
      Array.from({ length: 1000 }, (_, j) => ({
        gtin: `035000${String(j).padStart(6, '0')}7`,
        tradeItemName: `Biscuits au beurre ${j}`,
        netContents: [{ value: String((j % 900) + 100), unitOfMeasure: 'g' }],
      })),
    ),
  ) as Record<string, unknown>[];
  const pass = async (check: boolean): Promise<number> => {
    const t0 = process.cpuUsage();
    for (let i = 0; i < ROWS; i += CHUNK) {
      const drafts: Draft[] = [];
      for (let j = i; j < Math.min(ROWS, i + CHUNK); j++)
        drafts.push({
          row: j + 2,
          key: String(j),
          target: 'tradeItem',
          fields: pool[j % 1000]!,
          clear: [],
          issues: [],
          source: [],
          origins: {},
        });
      if (check) await checker.check(drafts);
      if (drafts.some((d) => d.issues.length > 0)) throw new Error('a bench rule failed on a row');
    }
    const u = process.cpuUsage(t0);
    return (u.user + u.system) / 1e6;
  };
  await pass(true); // compiled and warm
  const making = Math.min(await pass(false), await pass(false));
  return (await pass(true)) - making;
}

if (args[0] === '--child') {
  console.log(JSON.stringify(await measure(args[1]!)));
} else {
  const before = opt('before');
  const roots = [ROOT, ...(before ? [resolve(before)] : [])];
  const best = roots.map(() => Infinity);
  const loadBefore = loadavg()[0]!.toFixed(1);
  for (let t = 0; t < TURNS; t++) {
    const turn = roots.map((root) => {
      const r = spawnSync(
        process.execPath,
        ['--max-semi-space-size=8', '--import', 'tsx', import.meta.filename, '--child', root, '--rows', String(ROWS)],
        { encoding: 'utf8', cwd: ROOT },
      );
      if (r.status !== 0) throw new Error(`the checker of ${root} exited ${r.status}: ${r.stderr}`);
      return Number(r.stdout.trim());
    });
    turn.forEach((s, i) => (best[i] = Math.min(best[i]!, s)));
    console.log(`  turn ${t + 1}: ${turn.map((s) => `${s.toFixed(2)} s`).join(', ')}`);
  }
  console.log(
    `the five rules' checker over ${ROWS} drafts, CPU, best of ${TURNS} (load ${loadBefore} → ${loadavg()[0]!.toFixed(1)}):`,
  );
  roots.forEach((root, i) =>
    console.log(
      `  ${root}: ${best[i]!.toFixed(2)} s (${(((best[i]! / ROWS) * 1e9) / FIVE_RULES.length).toFixed(0)} ns a rule and row)`,
    ),
  );
}
