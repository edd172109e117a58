// Builds dist/ from src/: every .ts file transpiled on its own by TypeScript with tsconfig.build.json's options
// (`rewriteRelativeImportExtensions` turns './x.ts' into './x.js', dynamic imports included; source maps point at
// src/), other files (src/server/public/*.html) copied. Incremental: dist/.build.json records each source's mtime and
// size, so only changed files are redone and files whose source is gone are removed. Each file is written to a temporary
// name and renamed, so a process starting meanwhile (or a second build) never reads half a file.
// Type checking is `npm run typecheck` (tsc over the whole program: ~20 s of CPU here, against ~1 s for this).
//   node scripts/build.mjs            build or bring dist/ up to date (npm run build, prepare, test global setup)
//   import { isFresh, build } from    the bin: `isFresh()` (stat calls only) before `build()` (loads TypeScript)
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const srcDir = join(root, 'src');
const distDir = join(root, 'dist');
const manifestFile = join(distDir, '.build.json');
// Dependencies bundled into one file each, dist/vendor/<name>.js, with dist/'s imports of them rewritten: zod is ~95
// ES modules, and on Node 20 (no compile cache) resolving and linking them is ~90 ms of every start, against ~40 ms for
// one bundled file (esbuild, a dev dependency; only what `import { z } from 'zod'` needs). src/ through tsx (tests)
// imports the package itself.
const VENDORED = {
  zod: 'export { z } from "zod";',
  yaml: 'export { isMap, isSeq, LineCounter, parseDocument } from "yaml";',
  commander: 'export { Command, CommanderError, InvalidArgumentError, Option } from "commander";',
  'lru-cache': 'export { LRUCache } from "lru-cache";',
};
// CommonJS packages bundled as ES modules require Node's built-ins at run time: the bundle gets a `require` of its own.
const REQUIRE_BANNER = 'import { createRequire as __vendorRequire } from "node:module"; const require = __vendorRequire(import.meta.url);';
// A change to these rebuilds everything.
const configFiles = ['tsconfig.json', 'tsconfig.build.json', 'scripts/build.mjs', 'node_modules/typescript/package.json', 'node_modules/esbuild/package.json', ...Object.keys(VENDORED).map((p) => `node_modules/${p}/package.json`)];
const vendorFile = (name) => `vendor/${name}.js`;
const VENDOR_IMPORT = new RegExp(`(\\bfrom\\s*|\\bimport\\s*\\(\\s*)(['"])(${Object.keys(VENDORED).join('|')})\\2`, 'g');

/** The output of one module with its imports of vendored packages pointed at dist/vendor/ (relative to `out`). */
function rewriteVendored(code, out) {
  return code.replace(VENDOR_IMPORT, (_, lead, q, name) => {
    let rel = relative(dirname(out), join(distDir, vendorFile(name))).split('\\').join('/');
    if (!rel.startsWith('.')) rel = `./${rel}`;
    return `${lead}${q}${rel}${q}`;
  });
}

// Modules of a vendored package bundled as empty ones. zod's `z.locales` (re-exported by its core too) holds all 60-odd
// locales, ~half the bundle parsed at every start (~10 ms); nothing here uses one, and English, the default, is
// registered by zod's schemas module from its own file.
const ZOD_LOCALES = /\/zod\/v4\/locales\/index\.js$/;
const STUBBED = { zod: ZOD_LOCALES };

/** Bundles the vendored packages (dist/vendor/*.js) with esbuild. */
async function buildVendored(require) {
  const esbuild = require('esbuild');
  for (const [name, entry] of Object.entries(VENDORED)) {
    const out = join(distDir, vendorFile(name));
    const stub = STUBBED[name];
    const plugins = stub ? [stubsPlugin(stub)] : [];
    const r = await esbuild.build({ stdin: { contents: entry, resolveDir: root }, bundle: true, platform: 'node', format: 'esm', target: 'node20', write: false, logLevel: 'silent', legalComments: 'inline', banner: { js: REQUIRE_BANNER }, plugins });
    writeAtomic(out, r.outputFiles[0].contents);
  }
}

// The CLI bundled into one CommonJS file, dist/cli.cjs (with its source map beside it): the bin runs it through a
// vm.Script with V8's code cache (bin/load-bundle.mjs), where ~80 ES modules cost ~100 ms of resolving, linking and
// compiling at every start on Node 20, which has no compile cache. dist/'s modules stay for the worker threads. The
// dependencies are required at run time, but the vendored ones, which are bundled in.
const BUNDLE = 'cli.cjs';
// Each module's import.meta.url is the bundle's (src/build-dir.ts keeps the paths that depend on it true).
const BUNDLE_BANNER = 'var __bundleUrl = require("node:url").pathToFileURL(__filename).href;';

/** Bundles src/cli.ts into dist/cli.cjs and its map (esbuild). */
async function buildBundle(require) {
  const esbuild = require('esbuild');
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
  const external = Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }).filter((d) => !(d in VENDORED)).flatMap((d) => [d, `${d}/*`]);
  const r = await esbuild.build({
    entryPoints: [join(srcDir, 'cli.ts')], outfile: join(distDir, BUNDLE), bundle: true, platform: 'node', format: 'cjs', target: 'node20',
    external, sourcemap: 'external', sourcesContent: false, write: false, logLevel: 'silent', legalComments: 'inline',
    // import() of a dependency becomes a require() (they are CommonJS): a vm.Script read from a code cache loses its
    // dynamic import callback on Node 20 (ERR_VM_DYNAMIC_IMPORT_CALLBACK_MISSING).
    supported: { 'dynamic-import': false },
    define: { 'import.meta.url': '__bundleUrl' }, banner: { js: BUNDLE_BANNER }, plugins: [stubsPlugin(ZOD_LOCALES)],
  });
  for (const f of r.outputFiles) writeAtomic(f.path, f.contents);
}

/** An esbuild plugin that bundles the modules whose path matches `stub` as empty ones. */
function stubsPlugin(stub) {
  return { name: 'stubs', setup: (b) => {
    b.onResolve({ filter: /.*/ }, (a) => (stub.test(join(a.resolveDir, a.path).split('\\').join('/')) ? { path: a.path, namespace: 'stub' } : undefined));
    b.onLoad({ filter: /.*/, namespace: 'stub' }, () => ({ contents: 'export {};' }));
  } };
}

function sources(dir = srcDir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) sources(p, out);
    else if (e.isFile() && !e.name.endsWith('.d.ts')) out.push(relative(srcDir, p));
  }
  return out;
}

const stamp = (file) => {
  try {
    const s = statSync(file);
    return `${s.mtimeMs}:${s.size}`;
  } catch {
    return 'missing';
  }
};

function state() {
  const config = configFiles.map((f) => stamp(join(root, f))).join(' ');
  const files = Object.fromEntries(sources().map((f) => [f, stamp(join(srcDir, f))]));
  return { config, files };
}

function readManifest() {
  try {
    return JSON.parse(readFileSync(manifestFile, 'utf8'));
  } catch {
    return { config: '', files: {} };
  }
}

const outputsOf = (file) => (file.endsWith('.ts') ? [file.replace(/\.ts$/, '.js'), file.replace(/\.ts$/, '.js.map')] : [file]);

/** True when dist/ was built from src/ as it is now (no TypeScript loaded: a directory walk and stat calls). */
export function isFresh() {
  if (!existsSync(join(distDir, 'cli.js')) || !existsSync(join(distDir, BUNDLE)) || Object.keys(VENDORED).some((n) => !existsSync(join(distDir, vendorFile(n))))) return false;
  const before = readManifest();
  const now = state();
  if (before.config !== now.config) return false;
  const names = Object.keys(now.files);
  return names.length === Object.keys(before.files).length && names.every((f) => before.files[f] === now.files[f]);
}

function writeAtomic(file, data) {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, file);
}

/** Brings dist/ up to date with src/; resolves to how many files were rebuilt. Rejects on a syntax error. */
export async function build({ log = () => {} } = {}) {
  const require = createRequire(import.meta.url);
  const ts = require('typescript');
  const parsed = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.build.json'), {}, { ...ts.sys, onUnRecoverableConfigFileDiagnostic: (d) => { throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n')); } });
  // transpileModule cannot see package.json's "type": "module" (NodeNext would emit CommonJS): ESNext emits what NodeNext
  // emits for an ES module.
  const options = { ...parsed.options, module: ts.ModuleKind.ESNext, moduleResolution: ts.ModuleResolutionKind.Bundler, sourceMap: true, declaration: false, noEmit: false };
  const before = readManifest();
  const now = state();
  const all = before.config !== now.config;
  const failures = [];
  let rebuilt = 0;
  for (const [file, st] of Object.entries(now.files)) {
    if (!all && before.files[file] === st && outputsOf(file).every((o) => existsSync(join(distDir, o)))) continue;
    const from = join(srcDir, file);
    if (!file.endsWith('.ts')) {
      writeAtomic(join(distDir, file), readFileSync(from));
      rebuilt++;
      continue;
    }
    const out = join(distDir, file.replace(/\.ts$/, '.js'));
    const r = ts.transpileModule(readFileSync(from, 'utf8'), { compilerOptions: options, fileName: from, reportDiagnostics: true });
    const errors = (r.diagnostics ?? []).filter((d) => d.category === ts.DiagnosticCategory.Error);
    if (errors.length) {
      failures.push(ts.formatDiagnostics(errors, { getCanonicalFileName: (f) => f, getCurrentDirectory: () => root, getNewLine: () => '\n' }));
      continue;
    }
    const map = JSON.parse(r.sourceMapText);
    map.file = basename(out);
    map.sources = [relative(dirname(out), from).split('\\').join('/')];
    delete map.sourceRoot;
    const code = rewriteVendored(r.outputText.replace(/\/\/# sourceMappingURL=.*\s*$/, ''), out);
    writeAtomic(`${out}.map`, JSON.stringify(map));
    writeAtomic(out, `${code}//# sourceMappingURL=${basename(out)}.map`);
    rebuilt++;
  }
  if (failures.length) throw new Error(`build failed:\n${failures.join('')}`);
  if (all || Object.keys(VENDORED).some((n) => !existsSync(join(distDir, vendorFile(n))))) {
    await buildVendored(require);
    rebuilt++;
  }
  if (rebuilt || !existsSync(join(distDir, BUNDLE))) {
    await buildBundle(require);
    rebuilt++;
  }
  // Outputs whose source is gone: a deleted module must not stay importable from dist/.
  const wanted = new Set([...Object.keys(now.files).flatMap(outputsOf), ...Object.keys(VENDORED).map(vendorFile), BUNDLE, `${BUNDLE}.map`]);
  const walk = (dir) => {
    if (!existsSync(dir)) return;
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      const rel = relative(distDir, p);
      if (e.isDirectory()) walk(p);
      else if (rel !== '.build.json' && !e.name.endsWith('.tmp') && !wanted.has(rel)) rmSync(p, { force: true });
    }
  };
  walk(distDir);
  writeAtomic(manifestFile, `${JSON.stringify(now)}\n`);
  if (rebuilt) log(`dist/: ${rebuilt} file${rebuilt === 1 ? '' : 's'} built from src/`);
  return rebuilt;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const t0 = Date.now();
  const n = await build();
  console.log(`dist/: ${n} file${n === 1 ? '' : 's'} built from src/ in ${((Date.now() - t0) / 1000).toFixed(1)} s${n ? '' : ' (up to date)'}`);
}
