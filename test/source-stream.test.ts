// The download path every source kind shares: bytes hashed as they stream to the file, a size limit checked while
// they arrive (a file that grows past it after being listed), no partial file left behind; and the feed's glob.
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { afterAll, describe, expect, it } from 'vitest';
import { ProductSyncError } from '../src/errors.ts';
import { isPlainName, patternRegExp } from '../src/sources/pattern.ts';
import { writeHashed } from '../src/sources/hash-file.ts';

const dir = mkdtempSync(join(tmpdir(), 'ps-stream-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** A stream of `count` chunks of 1000 bytes. */
function chunks(count: number): Readable {
  let i = 0;
  return new Readable({
    read() {
      this.push(i++ < count ? Buffer.alloc(1000, 97 + (i % 26)) : null);
    },
  });
}

describe('writeHashed', () => {
  it('writes the bytes and returns their sha256 and size', async () => {
    const dest = join(dir, 'ok');
    const got = await writeHashed(chunks(5), dest, { maxBytes: 5000, what: 'five' });
    const bytes = readFileSync(dest);
    expect(got).toEqual({ sha256: createHash('sha256').update(bytes).digest('hex'), size: 5000 });
    expect(bytes.length).toBe(5000);
  });

  it('stops as soon as more than maxBytes arrived, names the file, and removes the partial file', async () => {
    const dest = join(dir, 'big');
    const body = chunks(1_000_000); // a gigabyte, were it read to the end
    const err = await writeHashed(body, dest, { maxBytes: 4500, what: 'the growing file' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProductSyncError);
    expect((err as ProductSyncError).code).toBe('PS_ERR_SOURCE_TOO_LARGE');
    expect((err as ProductSyncError).message).toContain('the growing file');
    expect(existsSync(dest)).toBe(false);
    expect(body.destroyed).toBe(true);
  });

  it('an aborted download rejects and leaves no file', async () => {
    const dest = join(dir, 'aborted');
    const ac = new AbortController();
    let sent = 0;
    const body = new Readable({
      read() {
        if (++sent === 3) ac.abort();
        this.push(Buffer.alloc(1000));
      },
    });
    const err = await writeHashed(body, dest, { maxBytes: 1e9, signal: ac.signal, what: 'x' }).catch((e: unknown) => e);
    expect((err as Error).name).toBe('AbortError');
    expect(existsSync(dest)).toBe(false);
  });
});

describe('patterns and names', () => {
  it('globs * and ? over the whole name, case-insensitively, other characters literally', () => {
    const re = patternRegExp('delta-??.csv');
    expect(re.test('delta-01.csv')).toBe(true);
    expect(re.test('DELTA-01.CSV')).toBe(true);
    expect(re.test('delta-1.csv')).toBe(false);
    expect(re.test('delta-01xcsv')).toBe(false);
    expect(patternRegExp('*.csv').test('a.csv.part')).toBe(false);
    expect(patternRegExp('a+(b).csv').test('a+(b).csv')).toBe(true);
  });

  it('takes one path segment only', () => {
    for (const bad of ['', '.', '..', 'a/b', '../a', 'a\\b', 'a\0b']) expect(isPlainName(bad), bad).toBe(false);
    for (const ok of ['a.csv', '..a', 'a..', '.hidden']) expect(isPlainName(ok), ok).toBe(true);
  });
});
