// Loads dist/cli.cjs (the CLI bundled into one file by scripts/build.mjs) through a vm.Script with V8's code cache:
// the bytecode of every function a run compiled is kept in dist/.cache/ (or the temp directory when dist/ is read-only)
// and read back by the next start, which then neither parses the bundle nor compiles those functions again — Node 20
// has no compile cache of its own. The cache file is named by a hash of the bundle's content, Node's version and flags:
// V8 only checks a cache's source length, so a cache never meets another bundle. A missing or refused cache is written
// when the process exits.
//
// Stack traces name the src/*.ts lines: Node does not apply source maps to vm scripts, so frames of the bundle are mapped
// here (sourceMapLookup), the map read only when a stack is first formatted.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import module, { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { basename, dirname, extname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

/** Runs the bundle at `file` (a path) and returns its exports. */
export function loadBundle(file) {
  const source = readFileSync(file, 'utf8');
  // Named by the bundle's content (sha1: an identity, ~2 ms for the bundle; its file's inode or times would change when
  // the image's layers are unpacked, and the cache made while the image was built would never be found).
  const key = createHash('sha1').update(source).update(`\0${process.version}\0${process.arch}\0${process.execArgv.join(' ')}`).digest('hex').slice(0, 24);
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

/**
 * A source map read for lookups only: its mappings decoded once into flat arrays, on the first lookup (~15 ms for the
 * bundle's; node:module's SourceMap builds an object per segment, ~70 ms, which a stack read by Node's own streams on
 * a normal run would pay). `lookup` takes and gives 0-based lines and columns, and finds what node:module's
 * SourceMap.findEntry finds; null where nothing maps.
 */
export function sourceMapLookup(mapFile) {
  let decoded;
  const decode = () => {
    const map = JSON.parse(readFileSync(mapFile, 'utf8'));
    return { sources: map.sources, ...decodeMappings(map.mappings) };
  };
  return {
    lookup(line0, col0) {
      decoded ??= decode();
      const { lineStarts, segs, sources } = decoded;
      if (line0 < 0) return null;
      if (line0 + 1 >= lineStarts.length) line0 = lineStarts.length - 2;
      let lo = lineStarts[line0];
      let hi = lineStarts[line0 + 1] - 1;
      let found = -1;
      while (lo <= hi) {
        const mid = (lo + hi) >>> 1;
        if (segs[mid * 4] <= col0) {
          found = mid;
          lo = mid + 1;
        } else hi = mid - 1;
      }
      // Before the line's first segment (or on a line without one): the last segment before it, as node:module's SourceMap.
      if (found < 0) found = lineStarts[line0] - 1;
      if (found < 0 || segs[found * 4 + 1] < 0) return null;
      return { source: sources[segs[found * 4 + 1]], line: segs[found * 4 + 2], column: segs[found * 4 + 3] };
    },
  };
}

/**
 * A source map's `mappings` as flat arrays: four numbers a segment (generated column, source index — -1 for a segment
 * without source —, original line, original column, all absolute), and the index of each generated line's first
 * segment (one more entry than lines). One pass, no closure and no object a segment: ~1 MB of mappings in ~10 ms.
 */
function decodeMappings(text) {
  const lineStarts = [0];
  let segs = new Int32Array(1 << 16);
  let n = 0;
  // The absolute values so far (source, original line and column; the generated column, reset at each line), and the
  // segment being read: its fields (f0-f3), how many, and the VLQ value being summed with its shift.
  let [src, line, col, genCol] = [0, 0, 0, 0];
  let [f0, f1, f2, f3, field, value, shift] = [0, 0, 0, 0, 0, 0, 0];
  for (let i = 0; i <= text.length; i++) {
    const c = i < text.length ? text.charCodeAt(i) : 59;
    if (c === 59 || c === 44) {
      // `;` ends a line, `,` a segment.
      if (field > 0) {
        if (n + 4 > segs.length) {
          const bigger = new Int32Array(segs.length * 2);
          bigger.set(segs);
          segs = bigger;
        }
        genCol += f0;
        segs[n] = genCol;
        if (field >= 4) {
          src += f1;
          line += f2;
          col += f3;
          segs[n + 1] = src;
          segs[n + 2] = line;
          segs[n + 3] = col;
        } else segs[n + 1] = -1;
        n += 4;
      }
      field = 0;
      if (c === 59) {
        genCol = 0;
        lineStarts.push(n >> 2);
      }
      continue;
    }
    const digit = BASE64[c];
    value += (digit & 31) << shift;
    if (digit & 32) {
      shift += 5;
      continue;
    }
    const v = value & 1 ? -(value >>> 1) | 0 : value >>> 1;
    if (field === 0) f0 = v;
    else if (field === 1) f1 = v;
    else if (field === 2) f2 = v;
    else if (field === 3) f3 = v;
    field++;
    value = 0;
    shift = 0;
  }
  return { lineStarts, segs: segs.subarray(0, n) };
}

// Base64 digit of each character code.
const BASE64 = new Int8Array(128);
for (const [i, ch] of [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/'].entries()) BASE64[ch.charCodeAt(0)] = i;

/** Formats stack traces as V8 does, frames of the bundle at `file` mapped to their sources (its map read when first needed). */
function mapStackTraces(file) {
  const map = sourceMapLookup(`${file}.map`);
  const mapDir = dirname(file);
  const frame = (f) => {
    if (f.getFileName() !== file || f.getLineNumber() === null) return `    at ${f}`;
    let e = null;
    try {
      e = map.lookup(f.getLineNumber() - 1, f.getColumnNumber() - 1);
    } catch {
      // No map, or an unreadable one: the frame as V8 has it.
    }
    if (!e) return `    at ${f}`;
    const src = e.source.startsWith('file:') ? fileURLToPath(e.source) : join(mapDir, e.source);
    const where = `${src}:${e.line + 1}:${e.column + 1}`;
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
