// sha256File (run-state.ts): the sheet's hash, which names its runs, the same whichever way the file is read.
import { createHash } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sha256File } from '../src/pipeline/run/run-state.ts';

describe('sha256File', () => {
  it('hashes a small file (read whole, off the calling thread) and a large one (streamed) as sha256 of their bytes', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-sha-'));
    for (const [name, bytes] of [
      ['empty', 0],
      ['small', 70_000],
      ['large', 17 * 1024 * 1024 + 3],
    ] as const) {
      const data = Buffer.alloc(bytes);
      for (let i = 0; i < bytes; i++) data[i] = (i * 7919) & 0xff;
      const file = join(dir, name);
      writeFileSync(file, data);
      expect(await sha256File(file), name).toBe(createHash('sha256').update(data).digest('hex'));
    }
  });
});
