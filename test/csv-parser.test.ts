// CsvParser (src/pipeline/read/csv-parser.ts) against papaparse's core parser, whose rules it follows: the same records
// and the same unparsed rest on generated texts full of quotes, delimiters, line ends and spaces (malformed ones
// included), whole and cut into pieces the way read-csv.ts feeds it.
import fc from 'fast-check';
import Papa from 'papaparse';
import { describe, expect, it } from 'vitest';
import { CsvParser } from '../src/pipeline/read/csv-parser.ts';

type Newline = '\n' | '\r\n' | '\r';
const NEWLINES: Newline[] = ['\n', '\r\n', '\r'];

/** Texts made of the characters that matter to a CSV parser, and a few that do not. */
const text = (delimiter: string) => fc.array(fc.constantFrom('a', 'b', 'é', '😀', '"', '"', '""', delimiter, delimiter, '\n', '\r', '\r\n', ' ', '\t', '\u00a0', ',', ';'), { maxLength: 40 }).map((parts) => parts.join(''));

function papa(input: string, delimiter: string, newline: Newline, final: boolean): { records: string[][]; rest: number } {
  const res = new Papa.Parser({ delimiter, newline, quoteChar: '"' }).parse(input, 0, !final) as { data: string[][]; meta: { cursor: number } };
  return { records: res.data, rest: res.meta.cursor };
}

function ours(input: string, delimiter: string, newline: Newline, final: boolean): { records: string[][]; rest: number } {
  const records: string[][] = [];
  const rest = new CsvParser(delimiter, newline).parse(input, final, (fields, n) => records.push(fields.slice(0, n)));
  return { records, rest };
}

type Parse = (input: string, final: boolean, onRecord: (fields: readonly string[], n: number) => void) => number;

const oursParse = (delimiter: string, newline: Newline): Parse => {
  const parser = new CsvParser(delimiter, newline);
  return (input, final, onRecord) => parser.parse(input, final, onRecord);
};

const papaParse = (delimiter: string, newline: Newline): Parse => {
  const parser = new Papa.Parser({ delimiter, newline, quoteChar: '"' });
  return (input, final, onRecord) => {
    const res = parser.parse(input, 0, !final) as { data: string[][]; meta: { cursor: number } };
    for (const r of res.data) onRecord(r, r.length);
    return res.meta.cursor;
  };
};

/** Records of `input` fed in pieces cut at `cuts`, each parse taking the unparsed rest of the one before (read-csv.ts's loop). */
function inPieces(parse: Parse, input: string, cuts: number[]): string[][] {
  const records: string[][] = [];
  const onRecord = (fields: readonly string[], n: number) => records.push(fields.slice(0, n));
  let partial = '';
  let from = 0;
  for (const cut of [...cuts.map((c) => Math.min(c, input.length)).sort((a, b) => a - b), input.length]) {
    const piece = partial + input.slice(from, cut);
    from = Math.max(from, cut);
    partial = piece.slice(parse(piece, false, onRecord));
  }
  if (partial) parse(partial, true, onRecord);
  return records;
}

describe('CsvParser', () => {
  for (const delimiter of [';', ',', '\t', '|']) {
    it(`splits records exactly as papaparse's core parser does (delimiter ${JSON.stringify(delimiter)})`, () => {
      fc.assert(fc.property(text(delimiter), fc.constantFrom(...NEWLINES), fc.boolean(), (input, newline, final) => {
        expect(ours(input, delimiter, newline, final), JSON.stringify({ input, newline, final })).toEqual(papa(input, delimiter, newline, final));
      }), { numRuns: 4000 });
    });
  }

  it('gives the records papaparse gives when both are fed the text in the same pieces', () => {
    fc.assert(fc.property(text(';'), fc.constantFrom(...NEWLINES), fc.array(fc.nat(45), { maxLength: 4 }), (input, newline, cuts) => {
      const want = inPieces(papaParse(';', newline), input, cuts);
      expect(inPieces(oursParse(';', newline), input, cuts), JSON.stringify({ input, newline, cuts })).toEqual(want);
    }), { numRuns: 4000 });
  });

  it('reads the usual shapes: quoted cells with delimiters, escaped quotes and line breaks, spaces after a closing quote, empty fields', () => {
    const r = ours('a;"b;c";"say ""hi"""\n"multi\nline" ;;\n"open', ';', '\n', true);
    expect(r.records).toEqual([['a', 'b;c', 'say "hi"'], ['multi\nline', '', ''], ['open']]);
    // Without `final` the last record, unfinished, is left for the next piece.
    expect(ours('a;b\nc;"d', ';', '\n', false)).toEqual({ records: [['a', 'b']], rest: 4 });
  });

  it('refuses delimiters it cannot split on', () => {
    for (const d of ['', ';;', '"', '\n', '\r']) expect(() => new CsvParser(d, '\n')).toThrow(/unsupported CSV delimiter/);
  });
});
