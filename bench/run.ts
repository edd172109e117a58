// `npm run bench [-- name…]`: runs each benchmark in its own process (so peak memory is its own) and prints its figures.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

// `scale` (bench/scale.ts: validate, import and rerun of 1 000 000 rows) runs last: about 7 minutes on two cores.
const ALL = ['read', 'import', 'workers', 'scale'];
// Arguments naming a bench are benches; the others (`--rows 2000000`, `--queue`) go to the benches that take options.
const TAKES_OPTIONS = new Set(['scale']);
const args = process.argv.slice(2);
const wanted: string[] = [];
const options: string[] = [];
for (const [i, a] of args.entries()) {
  const prev = args[i - 1];
  const isValue = prev !== undefined && prev.startsWith('--') && !prev.includes('=') && !existsSync(new URL(`./${a}.ts`, import.meta.url));
  (a.startsWith('-') || isValue ? options : wanted).push(a);
}
const names = wanted.length > 0 ? wanted : ALL;
let failed = 0;
for (const name of names) {
  const file = new URL(`./${name}.ts`, import.meta.url);
  if (!existsSync(file)) {
    console.log(`(bench ${name}: not present)`);
    continue;
  }
  console.log(`\n=== bench/${name}.ts ===`);
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', file.pathname, ...(TAKES_OPTIONS.has(name) ? options : [])], { stdio: 'inherit', env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' } });
  if (r.status !== 0) failed++;
}
process.exitCode = failed > 0 ? 1 : 0;
