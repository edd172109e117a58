#!/usr/bin/env -S node --max-semi-space-size=8
// --max-semi-space-size=8: V8's young generation defaults to 3 × 16 MB semi-spaces on a large machine; a run allocates
// a lot of short-lived rows, and 8 MB keeps a million-row import under 300 MB RSS (docs/architecture.md). `node
// bin/product-sync.mjs` bypasses the shebang: the npm scripts and the image pass the flag themselves.
// Runs the compiled CLI: dist/cli.cjs, the CLI bundled into one file by `npm ci`'s prepare script (scripts/build.mjs),
// loaded with V8's code cache and stack traces mapped to src/*.ts lines (bin/load-bundle.mjs). In a checkout (src/
// beside dist/) it first makes sure dist/ matches src/ (stat calls only; changed files are built again, ~1 s at most),
// so an edit is never hidden by an old build; if that build fails it warns and runs the sources through tsx (a dev
// dependency). The image ships dist/ without src/.
import { existsSync } from 'node:fs';
import module from 'node:module';
import { fileURLToPath } from 'node:url';

// V8's compile cache (Node ≥ 22.1, the image's Node) for what the bundle requires and the worker threads import;
// Node 20 has no such cache (the call is absent there). The bundle has its own (load-bundle.mjs).
module.enableCompileCache?.();
const root = new URL('../', import.meta.url);
let main;
if (existsSync(new URL('src/cli.ts', root))) {
  try {
    const { isFresh, build } = await import('../scripts/build.mjs');
    // Quiet when only some files changed (tests read this process's stderr); a first build says why it takes seconds.
    const first = !existsSync(new URL('dist/cli.cjs', root));
    if (first) process.stderr.write('product-sync: building dist/ from src/ (first run)\n');
    if (!isFresh()) await build();
  } catch (e) {
    process.stderr.write(`product-sync: warning: cannot build dist/ (${e instanceof Error ? e.message : e}); running src/ through tsx\n`);
    const { register } = await import('tsx/esm/api');
    register();
    ({ main } = await import(new URL('src/cli.ts', root).href));
  }
}
if (!main) {
  const { loadBundle } = await import('./load-bundle.mjs');
  ({ main } = loadBundle(fileURLToPath(new URL('dist/cli.cjs', root))));
}
const code = await main(process.argv.slice(2));
process.exitCode = code;
// Every command has finished its work when main resolves: a forgotten socket must not keep the process alive.
setTimeout(() => process.exit(code), 1000).unref();
