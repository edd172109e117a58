// When a feed's text file looks cut while it was written (issue 34): held by the tick, not imported.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { cutLastRow } from '../src/queue/feed-cut-row.ts';

const dir = mkdtempSync(join(tmpdir(), 'ps-cut-row-'));
let n = 0;
const check = (text: string | Buffer) => {
  const file = join(dir, `f${n++}.csv`);
  writeFileSync(file, text);
  return cutLastRow(file);
};

describe('cutLastRow', () => {
  it('holds a text file whose last line has no line end', async () => {
    expect(await check('a;b;c\n1;2;3\n4;5')).toMatch(/^its last line has no line end/);
    expect(await check('a;b;c\n1;2;3\n"4;5')).toMatch(/^its last line has no line end/);
    // CSV needs no final line end: a last line with all its fields is whole.
    expect(await check('a;b;c\r\n1;2;3\r\n4;5;6')).toBeNull();
  });

  it('holds a last row shorter than the header and the row before it', async () => {
    expect(await check('a;b;c;d\n1;2;3;4\n5;6\n')).toBe(
      'its last row has 2 field(s), the header 4 and the row before it 4 (cut while it was written?)',
    );
    expect(await check('a,b,c\n1,2,3\n4,5,6\n7\r\n')).toMatch(/^its last row has 1 field\(s\), the header 3/);
  });

  it('takes a whole file, and one whose rows are all short the same way (an export that drops empty cells)', async () => {
    expect(await check('a;b;c\n1;2;3\n4;5;6\n')).toBeNull();
    expect(await check('a;b;c;d\n1;2\n3;4\n5;6\n')).toBeNull();
    expect(await check('a;b;c\n1;2;3\n\n\n')).toBeNull();
  });

  it('does not judge what it cannot: quoted rows, workbooks, UTF-16, empty files', async () => {
    expect(await check('a;b;c\n1;"two\nlines";3\n4;"5\n')).toBeNull();
    expect(await check(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00]))).toBeNull();
    expect(await check(Buffer.from([0xff, 0xfe, 0x61, 0x00]))).toBeNull();
    expect(await check('')).toBeNull();
  });
});
