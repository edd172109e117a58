import { describe, expect, it } from 'vitest';
import { functionLengths } from '../scripts/long-functions.mjs';

// No function of src/ over 200 lines (issue 36): a reader names its parts, so should the code. The sandbox's seed data
// are tables, not functions.
const LIMIT = 200;

describe('function length', () => {
  it(`no function in src/ is over ${LIMIT} lines`, () => {
    const long = functionLengths('src')
      .filter((f) => f.lines > LIMIT && !f.file.startsWith('src/sandbox/seed/'))
      .map((f) => `${f.file} ${f.name} (${f.lines} lines)`);
    expect(long).toEqual([]);
  });
});
