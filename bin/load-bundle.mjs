// Loads dist/cli.cjs (the CLI bundled into one file by scripts/build.mjs) through a vm.Script with V8's code cache:
// the bytecode of every function a run compiled is kept in dist/.cache/ (or the temp directory when dist/ is read-only)
// and read back by the next start, which then neither parses the bundle nor compiles those functions again — Node 20
// has no compile cache of its own. The cache file is named by a hash of the bundle's file identity (inode, size, change
// time), Node's version and flags: V8 only checks a cache's source length, so a cache never meets another bundle. A
// missing or refused cache is written when the process exits.
//
// Stack traces name the src/*.ts lines: Node does not apply source maps to vm scripts, so frames of the bundle are mapped
// here (node:module's SourceMap), the map read only when a stack is first formatted.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import module, { createRequire, SourceMap } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

/** Runs the bundle at `file` (a path) and returns its exports. */
export function loadBundle(file) {
  const source = readFileSync(file, 'utf8');
  // The bundle's identity without hashing its 1.5 MB at every start: its inode, size and change time (ctime, which no
  // copy or touch sets back; the build writes a new file each time).
  const st = statSync(file, { bigint: true });
  const key = createHash('sha256').update(`${st.ino}\0${st.size}\0${st.ctimeNs}\0${process.version}\0${process.arch}\0${process.execArgv.join(' ')}`).digest('hex').slice(0, 24);
  const name = `${basename(file, extname(file))}-${key}.v8`;
  const dirs = [join(dirname(file), '.cache'), join(tmpdir(), 'product-sync-v8-cache')];
  let cachedData;
  for (const d of dirs) {
    try {
      cachedData = readFileSync(join(d, name));
      break;
    } catch {
      // Not there: the next place, or no cache.
    }
  }
  const script = new vm.Script(module.wrap(source), { filename: file, ...(cachedData ? { cachedData } : {}) });
  if (!cachedData || script.cachedDataRejected) process.once('exit', () => writeCache(script, dirs, name));
  mapStackTraces(file);
  const exports = {};
  const mod = { exports, filename: file, id: file };
  script.runInThisContext().call(exports, exports, createRequire(file), mod, file, dirname(file));
  return mod.exports;
}

/** The code cache of `script`, with the functions this run compiled, in the first directory that takes it. */
function writeCache(script, dirs, name) {
  let data;
  try {
    data = script.createCachedData();
  } catch {
    return;
  }
  for (const d of dirs) {
    try {
      mkdirSync(d, { recursive: true });
      const tmp = join(d, `${name}.${process.pid}.tmp`);
      writeFileSync(tmp, data);
      renameSync(tmp, join(d, name));
      return;
    } catch {
      // Read-only: the next place, or none (the next start compiles again).
    }
  }
}

/** Formats stack traces as V8 does, frames of the bundle at `file` mapped to their sources (its map read when first needed). */
function mapStackTraces(file) {
  let map;
  const mapOf = () => {
    if (map === undefined) {
      try {
        map = new SourceMap(JSON.parse(readFileSync(`${file}.map`, 'utf8')));
      } catch {
        map = null;
      }
    }
    return map;
  };
  const mapDir = dirname(file);
  const frame = (f) => {
    if (f.getFileName() !== file || f.getLineNumber() === null) return `    at ${f}`;
    const e = mapOf()?.findEntry(f.getLineNumber() - 1, f.getColumnNumber() - 1);
    if (!e?.originalSource) return `    at ${f}`;
    const src = e.originalSource.startsWith('file:') ? fileURLToPath(e.originalSource) : join(mapDir, e.originalSource);
    const where = `${src}:${e.originalLine + 1}:${e.originalColumn + 1}`;
    const fn = f.getFunctionName();
    const type = f.isToplevel() ? null : f.getTypeName();
    const name = fn && type && !fn.includes('.') ? `${type}.${fn}` : fn;
    return `    at ${f.isAsync() ? 'async ' : ''}${f.isConstructor() ? 'new ' : ''}${name ? `${name} (${where})` : where}`;
  };
  Error.prepareStackTrace = (error, frames) => {
    let head;
    try {
      head = Error.prototype.toString.call(error);
    } catch {
      head = '<error>';
    }
    return frames.length === 0 ? head : `${head}\n${frames.map(frame).join('\n')}`;
  };
}
