#!/usr/bin/env -S node --max-semi-space-size=8
// Runs the built CLI, dist/cli.js (`npm run build`, which `npm ci` runs), with stack traces pointing at src/.
// --max-semi-space-size=8: V8's young generation defaults to 3 × 16 MB semi-spaces on a large machine; a run allocates
// many short-lived rows, and 8 MB keeps a large import within its memory target (docs/performance.md). `node
// bin/product-sync.mjs` bypasses the shebang: the npm scripts and the image pass the flag themselves.
import { existsSync } from 'node:fs';
import module from 'node:module';

const cli = new URL('../dist/cli.js', import.meta.url);
if (!existsSync(cli)) {
  process.stderr.write('product-sync: dist/ is missing: run npm run build\n');
  process.exit(2);
}
// Node's own compile cache where it has one (22.1 and later; not 20).
module.enableCompileCache?.();
process.setSourceMapsEnabled(true);
const { main } = await import(cli.href);
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Every command has finished its work when main resolves: a forgotten socket must not keep the process alive.
setTimeout(() => process.exit(code), 1000).unref();
