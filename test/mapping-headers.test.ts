import { describe, expect, it } from 'vitest';
import { columnLetters, letterPosition } from '../src/formats/column-letters.ts';
import { matchHeaders, normalizeHeader, sourceLabel } from '../src/pipeline/map/headers.ts';

const mapping = (...columns: (string | string[])[]) => ({
  columns: columns.map((c) => ({ columns: Array.isArray(c) ? c : [c] })),
});

describe('header matching', () => {
  it('ignores case, surrounding and repeated spaces, non-breaking spaces and accent composition', () => {
    const decomposed = 'De\u0301signation'; // é as e + combining accent
    expect(normalizeHeader('  Poids\u00a0  NET ')).toBe('poids net');
    expect(
      matchHeaders([' GTIN ', decomposed, 'Poids\u00a0net', 'Autre'], mapping('gtin', 'Désignation', 'Poids  Net')),
    ).toEqual([0, 1, 2]);
  });

  it('takes the first alternative name present in the sheet', () => {
    expect(matchHeaders(['Code-barres', 'EAN'], mapping(['GTIN', 'EAN', 'Code-barres']))).toEqual([1]);
    expect(matchHeaders(['x', 'code-barres'], mapping(['GTIN', 'EAN', 'Code-barres']))).toEqual([1]);
  });

  it('ignores sheet columns the mapping does not name, even duplicated ones', () => {
    expect(matchHeaders(['Note', 'EAN', 'Note', ''], mapping('EAN'))).toEqual([1]);
  });

  it('fails on a mapped column missing from the sheet, naming it and listing the sheet headers', () => {
    expect(() => matchHeaders(['EAN', 'Nom'], mapping('EAN', 'Désignation', ['Marque', 'Brand']))).toThrow(
      expect.objectContaining({
        code: 'PS_ERR_FILE_HEADER',
        message: expect.stringMatching(
          /missing from the sheet: "Désignation"; one of "Marque", "Brand".*headers are: "EAN", "Nom"/,
        ),
      }),
    );
  });

  it('fails on a mapped header present twice after normalisation', () => {
    expect(() => matchHeaders(['EAN', 'Nom', ' ean'], mapping('EAN', 'Nom'))).toThrow(
      expect.objectContaining({ code: 'PS_ERR_FILE_HEADER', message: expect.stringContaining('"EAN" (columns 1, 3)') }),
    );
  });
});

describe('repeated headers named by group, occurrence or position', () => {
  const headers = ['EAN', 'Valeur', 'Unité', 'Valeur', 'Unité', 'Note'];
  // Titles as a merged cell reads them: in the first cell of the range, the others empty.
  const titles = ['', 'Poids net', '', 'Poids égoutté', '', 'Divers'];
  const at = (...sources: unknown[]) =>
    ({ columns: sources.map((s) => ({ columns: ['x'], sources: [s] })) }) as Parameters<typeof matchHeaders>[1];

  it('finds a header under the title above it; a title covers the empty cells right of it until the next title', () => {
    expect(
      matchHeaders(
        headers,
        at(
          { names: ['Valeur'], group: 'Poids net' },
          { names: ['unité'], group: 'poids  NET' },
          { names: ['Valeur'], group: 'Poids égoutté' },
          { names: ['Unité'], group: 'Poids égoutté' },
          { names: ['Note'], group: 'Divers' },
        ),
        titles,
      ),
    ).toEqual([1, 2, 3, 4, 5]);
  });

  it('finds the n-th column of a header, within its group when both are given, and a column by position', () => {
    expect(
      matchHeaders(
        headers,
        at(
          { names: ['Valeur'], occurrence: 1 },
          { names: ['Valeur'], occurrence: 2 },
          { names: ['Note'], occurrence: 1 },
          { position: 6 },
        ),
      ),
    ).toEqual([1, 3, 5, 5]);
    expect(matchHeaders(headers, at({ names: ['Valeur'], group: 'Poids égoutté', occurrence: 1 }), titles)).toEqual([
      3,
    ]);
  });

  it('keeps a plain name present twice an error, and says how to name one of them', () => {
    expect(() => matchHeaders(headers, mapping('Valeur'))).toThrow(
      expect.objectContaining({
        code: 'PS_ERR_FILE_HEADER',
        message: expect.stringContaining(
          '"Valeur" (columns 2, 4) — say which in the mapping: column: { header: <name>, occurrence: 2 } (the 2nd of them), or column: { header: <name>, group: <the title above it> }',
        ),
      }),
    );
    // Still two under one group: the group alone does not say which.
    expect(() =>
      matchHeaders(headers, at({ names: ['Valeur'], group: 'Poids net' }), ['', 'Poids net', '', '', '', '']),
    ).toThrow(/"Valeur" under "Poids net" \(columns 2, 4\)/);
  });

  it('names a group, an occurrence or a position the sheet does not have, with what it has', () => {
    const fails = (sources: unknown[], row?: string[]) => {
      try {
        matchHeaders(headers, at(...sources), row);
      } catch (e) {
        return (e as Error).message;
      }
      return 'no error';
    };
    expect(fails([{ names: ['Valeur'], group: 'Poids brut' }], titles)).toContain(
      'not found: group "Poids brut" of "Valeur": the titles on the row above the header are "Poids net", "Poids égoutté", "Divers"',
    );
    expect(fails([{ names: ['Valeur'], group: 'Poids net' }])).toContain('the row above the header holds no title');
    expect(fails([{ names: ['Note'], group: 'Poids net' }], titles)).toContain(
      '"Note" under "Poids net": the columns of that group are "Valeur", "Unité"',
    );
    expect(fails([{ names: ['Valeur'], occurrence: 3 }])).toContain('"Valeur" #3: the sheet has 2 such columns (B, D)');
    expect(fails([{ position: 9 }])).toContain('column I (position 9): the sheet has 6 columns');
  });

  it('labels addressed columns for issues by what tells them apart and their letter', () => {
    expect(sourceLabel({ names: ['Valeur'], group: 'Poids net' }, 1, headers)).toBe('Valeur (Poids net, column B)');
    expect(sourceLabel({ names: ['Valeur'], occurrence: 2 }, 3, headers)).toBe('Valeur #2 (column D)');
    expect(sourceLabel({ position: 6 }, 5, headers)).toBe('Note (column F)');
    expect(sourceLabel({ position: 2 }, 1, ['A', ''])).toBe('column B');
    expect(sourceLabel({ names: ['EAN'] }, 0, headers)).toBe('EAN');
    expect([1, 26, 27, 702, 703, 16384].map(columnLetters)).toEqual(['A', 'Z', 'AA', 'ZZ', 'AAA', 'XFD']);
    expect(['A', 'z', 'AA', 'XFD'].map(letterPosition)).toEqual([1, 26, 27, 16384]);
  });
});
