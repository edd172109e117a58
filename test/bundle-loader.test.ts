// bin/load-bundle.mjs, as the bin uses it on dist/cli.cjs: a CommonJS bundle run through a vm.Script with V8's code
// cache, and stack traces mapped back to the TypeScript sources. Each case runs in a child process (the loader sets
// Error.prepareStackTrace for its process).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { SourceMap } from 'node:module';
import { buildSync } from 'esbuild';
import { describe, expect, it } from 'vitest';
// @ts-expect-error: a plain ES module of the bin, without types.
import { sourceMapLookup } from '../bin/load-bundle.mjs';

const loader = pathToFileURL(resolve('bin/load-bundle.mjs')).href;

/** Bundles `source` (TypeScript, at `dir`/src/job.ts) as the build bundles the CLI: CommonJS, its map beside it. */
function bundle(dir: string, source: string): string {
  writeFileSync(join(dir, 'job.ts'), source);
  const out = join(dir, 'job.cjs');
  buildSync({ entryPoints: [join(dir, 'job.ts')], outfile: out, bundle: true, platform: 'node', format: 'cjs', sourcemap: 'external', sourcesContent: false, logLevel: 'silent' });
  return out;
}

/** Loads the bundle in a new process and calls its `run`; what it printed (the stack of what `run` threw, if it threw). */
function runBundle(file: string): string {
  const script = `import { loadBundle } from ${JSON.stringify(loader)};
const m = loadBundle(${JSON.stringify(file)});
try { console.log(m.run()); } catch (e) { console.log(e.stack); }`;
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { encoding: 'utf8', timeout: 30_000 });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}

const cacheFiles = (dir: string) => readdirSync(join(dir, '.cache')).filter((f) => f.endsWith('.v8')).sort();

describe('the bundle loader', () => {
  it('names the TypeScript line of each frame of the bundle in a stack trace', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-bundle-'));
    const file = bundle(dir, [
      'interface Row { n: number }',
      'function check(row: Row): number {',
      '  if (row.n > 1) throw new Error(`row ${row.n} refused`);',
      '  return row.n;',
      '}',
      'export function run(): number {',
      '  return check({ n: 2 });',
      '}',
      '',
    ].join('\n'));
    const stack = runBundle(file);
    expect(stack).toContain('Error: row 2 refused');
    expect(stack).toMatch(new RegExp(`at check \\(${join(dir, 'job.ts').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}:3:\\d+\\)`));
    expect(stack).toMatch(/at (Object\.)?run \(.*job\.ts:7:\d+\)/);
    expect(stack).not.toContain('job.cjs');
  });

  it('keeps the code cache of a run and reads it back; a changed bundle of the same length gets a cache of its own', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-bundle-'));
    const file = bundle(dir, 'export function run(): string {\n  return "aaa";\n}\n');
    expect(runBundle(file).trim()).toBe('aaa');
    const [first] = cacheFiles(dir);
    expect(first).toMatch(/^job-[0-9a-f]{24}\.v8$/);
    const written = statSync(join(dir, '.cache', first!)).mtimeMs;
    // Read back, not written again.
    expect(runBundle(file).trim()).toBe('aaa');
    expect(cacheFiles(dir)).toEqual([first]);
    expect(statSync(join(dir, '.cache', first!)).mtimeMs).toBe(written);
    // V8 checks only a cache's source length: the same length with other code must not run the old code.
    const before = readFileSync(file, 'utf8');
    writeFileSync(file, before.replace('"aaa"', '"bbb"'));
    expect(readFileSync(file, 'utf8')).toHaveLength(before.length);
    expect(runBundle(file).trim()).toBe('bbb');
    expect(cacheFiles(dir)).toHaveLength(2);
  });

  it('finds in a source map what node:module finds, at every position of a bundle of several modules', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-bundle-'));
    writeFileSync(join(dir, 'lib.ts'), 'export const twice = (n: number): number => n * 2;\n\nexport class Box {\n  constructor(readonly v: string) {}\n  get size(): number {\n    return this.v.length;\n  }\n}\n');
    const file = bundle(dir, "import { Box, twice } from './lib.ts';\n\nexport function run(): number {\n  const b = new Box('abc');\n  return twice(b.size);\n}\n");
    const map = JSON.parse(readFileSync(`${file}.map`, 'utf8'));
    const reference = new SourceMap(map);
    const lookup = sourceMapLookup(`${file}.map`) as { lookup(line: number, column: number): { source: string; line: number; column: number } | null };
    const lines = readFileSync(file, 'utf8').split('\n');
    let mapped = 0;
    for (let l = 0; l < lines.length + 2; l++) {
      for (let c = 0; c <= (lines[l]?.length ?? 3); c++) {
        const want = reference.findEntry(l, c) as { originalSource?: string; originalLine?: number; originalColumn?: number };
        const got = lookup.lookup(l, c);
        if (want.originalSource === undefined) expect(got, `${l}:${c}`).toBeNull();
        else {
          expect(got, `${l}:${c}`).toEqual({ source: want.originalSource, line: want.originalLine, column: want.originalColumn });
          mapped++;
        }
      }
    }
    expect(mapped).toBeGreaterThan(100);
  });
});
