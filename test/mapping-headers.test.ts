import { describe, expect, it } from 'vitest';
import { matchHeaders, normalizeHeader } from '../src/pipeline/map/headers.ts';

const mapping = (...columns: (string | string[])[]) => ({ columns: columns.map((c) => ({ columns: Array.isArray(c) ? c : [c] })) });

describe('header matching', () => {
  it('ignores case, surrounding and repeated spaces, non-breaking spaces and accent composition', () => {
    const decomposed = 'De\u0301signation'; // é as e + combining accent
    expect(normalizeHeader('  Poids\u00a0  NET ')).toBe('poids net');
    expect(matchHeaders([' GTIN ', decomposed, 'Poids\u00a0net', 'Autre'], mapping('gtin', 'Désignation', 'Poids  Net'))).toEqual([0, 1, 2]);
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
        message: expect.stringMatching(/missing from the sheet: "Désignation"; one of "Marque", "Brand".*headers are: "EAN", "Nom"/),
      }),
    );
  });

  it('fails on a mapped header present twice after normalisation', () => {
    expect(() => matchHeaders(['EAN', 'Nom', ' ean'], mapping('EAN', 'Nom'))).toThrow(
      expect.objectContaining({ code: 'PS_ERR_FILE_HEADER', message: expect.stringContaining('"EAN" (columns 1, 3)') }),
    );
  });
});
