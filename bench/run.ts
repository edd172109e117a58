// `npm run bench [-- name…]`: runs each benchmark in its own process (so peak memory is its own) and prints its figures.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

const ALL = ['read', 'import', 'workers'];
const wanted = process.argv.slice(2).filter((a) => !a.startsWith('-'));
const names = wanted.length > 0 ? wanted : ALL;
let failed = 0;
for (const name of names) {
  const file = new URL(`./${name}.ts`, import.meta.url);
  if (!existsSync(file)) {
    console.log(`(bench ${name}: not present)`);
    continue;
  }
  console.log(`\n=== bench/${name}.ts ===`);
  const r = spawnSync(process.execPath, ['--expose-gc', '--import', 'tsx', file.pathname], { stdio: 'inherit', env: { ...process.env, LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn' } });
  if (r.status !== 0) failed++;
}
process.exitCode = failed > 0 ? 1 : 0;
