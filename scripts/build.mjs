// Builds dist/ from src/ (npm run build; `npm ci` runs it as `prepare`): esbuild bundles the CLI and the report
// thread's entry as ES modules, the code they share split into chunks, with source maps pointing at src/; the console's
// pages are copied beside them. Packages are loaded from node_modules at run time, except the few every command needs
// at start (zod, yaml, commander, lru-cache, and papaparse for every CSV), which are bundled in (minified below):
// loading their many small modules one by one, or a large file as written, is most of a short command's start on Node
// 20. What a command loads at start is parsed and compiled on every run (Node 20 has no compile cache), and with source
// maps on Node also scans each file it loads line by line: the bundle is minified (whitespace and syntax; names are
// kept, for stack traces and error names), zod is imported as `import * as z` so that only what src uses is bundled
// (eslint.config.js), and yaml is taken from its ES module build, whose unused parts the bundler drops (its CommonJS
// build, the one Node would pick, is kept whole). Type checking is `npm run typecheck`.
import { cpSync, existsSync, renameSync, rmSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const root = fileURLToPath(new URL('..', import.meta.url));
const dist = `${root}dist`;
// yaml's ES module build: the same code as its CommonJS build (package.json "browser" maps one to the other), but for
// its LOG_STREAM / LOG_TOKENS debugging and a warning (a mapping key that is itself a collection) printed with
// console.warn instead of process.emitWarning.
const YAML_ESM = `${root}node_modules/yaml/browser/dist/index.js`;
const BUNDLED = new Set(['zod', 'yaml', 'commander', 'lru-cache', 'papaparse']);
// Every other package stays an import of node_modules — but for its JSON files (data, bundled as they are).
const packages = {
  name: 'packages',
  setup(b) {
    b.onResolve({ filter: /^yaml$/ }, () => ({ path: YAML_ESM }));
    b.onResolve({ filter: /^[^./]/ }, (a) => {
      const name = a.path
        .split('/')
        .slice(0, a.path.startsWith('@') ? 2 : 1)
        .join('/');
      return a.path.startsWith('node:') || BUNDLED.has(name) || a.path.endsWith('.json')
        ? undefined
        : { path: a.path, external: true };
    });
  },
};

const t0 = Date.now();
// Built beside dist/ and swapped in whole: a CLI started meanwhile (another test run's, a user's) finds either the
// old build or the new one, never a half-written or missing dist/ (chunk names are hashes of their content).
const next = `${dist}.next-${process.pid}`;
rmSync(next, { recursive: true, force: true });
await build({
  // Named by their place in src/: the report thread is started from dist/pipeline/report/report-worker.js.
  entryPoints: {
    cli: `${root}src/cli.ts`,
    'pipeline/report/report-worker': `${root}src/pipeline/report/report-worker.ts`,
  },
  outdir: next,
  bundle: true,
  splitting: true,
  format: 'esm',
  platform: 'node',
  target: 'node20',
  sourcemap: true,
  sourcesContent: false,
  minifyWhitespace: true,
  minifySyntax: true,
  plugins: [packages],
  logLevel: 'warning',
  // The bundled CommonJS package (commander) requires Node's built-ins.
  banner: {
    js: 'import { createRequire as __createRequire } from "node:module"; const require = __createRequire(import.meta.url);',
  },
});
cpSync(`${root}src/server/public`, `${next}/server/public`, { recursive: true });
const old = `${dist}.old-${process.pid}`;
if (existsSync(dist)) renameSync(dist, old);
renameSync(next, dist);
rmSync(old, { recursive: true, force: true });
console.log(`dist/ built from src/ in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
