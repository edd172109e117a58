import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, existsSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { openDirSource } from '../src/sources/dir.ts';
import { isPartialName, writeHashed } from '../src/sources/hash-file.ts';
import { sourceLabel } from '../src/sources/open.ts';

describe('the dir source', () => {
  it('lists matching regular files with size and time, copies one hashed, and moves or deletes it after its run', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-dir-source-'));
    writeFileSync(join(dir, 'delta-1.csv'), 'one\n');
    writeFileSync(join(dir, 'delta-2.csv'), 'two\n');
    writeFileSync(join(dir, 'other.csv'), 'x\n');
    mkdirSync(join(dir, 'delta-3.csv'));
    const source = openDirSource({ dir, pattern: 'delta-*.csv' });
    const files = (await source.list()).sort((a, b) => a.name.localeCompare(b.name));
    expect(files.map((f) => [f.name, f.size])).toEqual([
      ['delta-1.csv', 4],
      ['delta-2.csv', 4],
    ]);
    expect(files[0]!.mtimeMs).toBeGreaterThan(0);
    const dest = join(dir, 'copies', 'a', 'delta-1.csv');
    const got = await source.fetch(files[0]!, dest, { maxBytes: 10 });
    expect(got).toEqual({ size: 4, sha256: createHash('sha256').update('one\n').digest('hex') });
    expect(readFileSync(dest, 'utf8')).toBe('one\n');
    await source.afterImport!(files[0]!, { move: 'done/' });
    expect(existsSync(join(dir, 'done', 'delta-1.csv'))).toBe(true);
    await source.afterImport!(files[1]!, { delete: true });
    expect(existsSync(join(dir, 'delta-2.csv'))).toBe(false);
    // Never out of its folder: a name or a move target that would leave it is refused.
    await expect(source.afterImport!({ name: 'x.csv', size: 1, mtimeMs: 0 }, { move: '../elsewhere' })).rejects.toThrow(
      /leaves/,
    );
    await expect(source.fetch({ name: '../other.csv', size: 1, mtimeMs: 0 }, dest, { maxBytes: 10 })).rejects.toThrow(
      /is not a file of/,
    );
    expect(sourceLabel({ dir, pattern: 'delta-*.csv', order: 'name', settleSeconds: 0 })).toBe(
      `dir:${dir}/delta-*.csv`,
    );
  });

  it('lists nothing for a missing folder', async () => {
    expect(await openDirSource({ dir: join(tmpdir(), 'ps-no-such-drop'), pattern: '*' }).list()).toEqual([]);
  });
});

describe('writing a fetched file', () => {
  it('stops past the size limit and leaves no partial file', async () => {
    const dest = join(mkdtempSync(join(tmpdir(), 'ps-hashed-')), 'big.csv');
    const err = (await writeHashed(Readable.from([Buffer.alloc(600), Buffer.alloc(600)]), dest, {
      maxBytes: 1000,
      what: 'big.csv',
    }).catch((e: unknown) => e)) as { code?: string };
    expect(err.code).toBe('PS_ERR_SOURCE_TOO_LARGE');
    expect(existsSync(dest)).toBe(false);
  });

  it('knows the names of files still arriving', () => {
    expect(['a.csv.part', 'a.TMP', 'b.tmp'].every(isPartialName)).toBe(true);
    expect(['a.csv', 'part.csv', 'tmp'].some(isPartialName)).toBe(false);
  });
});
