// The papaparse adapter (src/formats/csv-records.ts): whatever pieces the text comes in, the records are those
// of papaparse's parse of the whole text, and `consumed` is where the unfinished record starts (the reader's record
// size limit is measured from there).
import fc from 'fast-check';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { CsvRecords } from '../src/formats/csv-records.ts';

type Newline = '\n' | '\r\n' | '\r';

/** Texts made of the characters that matter to a CSV parser, and a few that do not. */
const parts = ['a', 'é', '😀', '"', '"', '""', ';', ';', '\n', '\r', '\r\n', ' ', '\t', ','];
const text = fc.array(fc.constantFrom(...parts), { maxLength: 40 }).map((p) => p.join(''));

function inPieces(input: string, newline: Newline, cuts: number[]): { records: string[][]; consumed: number[] } {
  const parser = new CsvRecords(';', newline);
  const records: string[][] = [];
  const consumed: number[] = [];
  let from = 0;
  for (const cut of [...cuts.map((c) => Math.min(c, input.length)).sort((a, b) => a - b), input.length]) {
    records.push(...parser.push(input.slice(from, Math.max(from, cut))));
    from = Math.max(from, cut);
    consumed.push(parser.consumed);
  }
  records.push(...parser.end());
  return { records, consumed };
}

describe('CsvRecords', () => {
  it("gives papaparse's records of the whole text, whatever pieces it comes in", () => {
    const newlines = fc.constantFrom<Newline>('\n', '\r\n', '\r');
    fc.assert(
      fc.property(text, newlines, fc.array(fc.nat(45), { maxLength: 4 }), (input, newline, cuts) => {
        const whole = Papa.parse<string[]>(input, { delimiter: ';', newline, quoteChar: '"' }).data;
        // A text ending in a line break has no last, empty record here (the reader would skip it as a blank line).
        const last = whole.at(-1);
        if (input.endsWith(newline) && last?.length === 1 && last[0] === '') whole.pop();
        const got = inPieces(input, newline, cuts);
        expect(got.records, JSON.stringify({ input, newline, cuts })).toEqual(whole);
        // The text after `consumed` holds no complete record: parsed alone it is one record at most.
        const rest = input.slice(got.consumed.at(-1));
        expect(Papa.parse(rest, { delimiter: ';', newline, quoteChar: '"' }).data.length).toBeLessThanOrEqual(1);
      }),
      { numRuns: 2000 },
    );
  });

  it('holds an unfinished record back until the text goes on, and counts only complete records as consumed', () => {
    const parser = new CsvRecords(';', '\n');
    expect(parser.push('a;b\nc;"d\n')).toEqual([['a', 'b']]);
    expect(parser.consumed).toBe(4);
    expect(parser.push('e";f\n')).toEqual([['c', 'd\ne', 'f']]);
    expect(parser.consumed).toBe(14);
    expect(parser.end()).toEqual([]);
  });
});
