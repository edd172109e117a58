// Input that used to hang or be misread (issue 9): non-regular files, NUL past the sniffed head, mixed line ends,
// shared strings stored after the worksheet, hidden columns the mapping does not use.
import { execFileSync } from 'node:child_process';
import { mkdirSync, symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProductSyncError } from '../src/errors.ts';
import { matchHeaders } from '../src/pipeline/map/headers.ts';
import { mapRow } from '../src/pipeline/map/map-row.ts';
import { parseMapping } from '../src/pipeline/map/mapping.ts';
import { lineEndNormalizer } from '../src/formats/read-csv.ts';
import { checkSheetFile, openSheet } from '../src/pipeline/read/read-sheet.ts';
import {
  expectReadFailure,
  fixtureDir,
  handZip,
  readAll,
  readError,
  RELS_XML,
  sheetXml,
  WORKBOOK_XML,
  writeWorkbook,
} from './fixtures/sheets.ts';

const { dir, write } = fixtureDir('ps-read-guards-');

/** The ProductSyncError checkSheetFile throws for `file` (null when it accepts it). */
async function checkError(file: string): Promise<ProductSyncError | null> {
  return checkSheetFile(file).then(
    () => null,
    (e: unknown) => e as ProductSyncError,
  );
}

describe('only regular files are read (a FIFO or a device would hang the run)', () => {
  it('refuses a FIFO, a character device, a directory, a missing file and a dangling symlink, naming the file and why', async () => {
    const fifo = join(dir, 'pipe.csv');
    execFileSync('mkfifo', [fifo]);
    const folder = join(dir, 'folder.csv');
    mkdirSync(folder);
    const dangling = join(dir, 'dangling.csv');
    symlinkSync(join(dir, 'gone.csv'), dangling);
    const cases: [string, RegExp][] = [
      [fifo, /is a FIFO \(named pipe\), not a regular file/],
      ['/dev/zero', /is a character device, not a regular file/],
      [folder, /is a directory, not a file/],
      [join(dir, 'missing.csv'), /: no such file$/],
      [dangling, /is a symbolic link to .*gone\.csv, which does not exist/],
      [join(write('plain.txt', 'x'), 'below.csv'), /not a directory/],
    ];
    for (const [file, why] of cases) {
      const err = await checkError(file);
      expect(err, file).toBeInstanceOf(ProductSyncError);
      expect(err!.code, file).toBe('PS_ERR_FILE_UNREADABLE');
      expect(err!.message, file).toContain(file);
      expect(err!.message, file).toMatch(why);
    }
    // openSheet refuses them the same way (and returns at once: nothing is opened for reading).
    await expectReadFailure(fifo, 'PS_ERR_FILE_UNREADABLE', /FIFO/);
    await expectReadFailure('/dev/zero', 'PS_ERR_FILE_UNREADABLE', /character device/);
  });

  it('accepts a symlink to a regular file', async () => {
    const target = write('real.csv', 'GTIN;Nom\n1;a\n');
    const link = join(dir, 'link.csv');
    symlinkSync(target, link);
    expect(await checkError(link)).toBeNull();
    expect((await readAll(link)).rows).toEqual([{ row: 2, cells: ['1', 'a'], issues: [] }]);
  });
});

describe('CSV: NUL characters anywhere', () => {
  it('refuses a NUL past the sniffed head as a damaged file, naming row and column', async () => {
    const lines = ['GTIN;Nom'];
    for (let i = 2; i <= 1200; i++) lines.push(`${i};Biscuit ${i}${i === 1100 ? '\0' : ''}`);
    const f = write('late-nul.csv', `${lines.join('\n')}\n`);
    await expectReadFailure(f, 'PS_ERR_FILE_UNREADABLE', /NUL character .* row 1100, column Nom/);
    // UTF-16 files skip the byte check of the head (their NUL bytes are text): a decoded NUL is still refused.
    const u16 = write(
      'nul-utf16.csv',
      Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('GTIN;Nom\n1;a\0b\n', 'utf16le')]),
    );
    await expectReadFailure(u16, 'PS_ERR_FILE_UNREADABLE', /NUL character .* row 2, column Nom/);
  });
});

describe('CSV: a quoted cell over the size limit (issue 22)', () => {
  it('reports a 50 MB quoted cell as a cell over the limit, naming row, column, size and limit, not as an unclosed quote', async () => {
    const size = 50 * 1024 * 1024;
    const f = write('huge-cell.csv', `GTIN;Nom;Note\n1;a;b\n2;"${'x'.repeat(size)}";c\n3;d;e\n`);
    const err = await readError(f);
    expect(err).toBeInstanceOf(ProductSyncError);
    expect((err as ProductSyncError).code).toBe('PS_ERR_FILE_TOO_LARGE');
    expect((err as Error).message).toBe(
      `${f}: row 3, column Nom: a cell of ${size} characters (on line 3), more than the limit of 32767 characters a cell (a record is read up to 1048576); shorten that cell and export again`,
    );
  });

  it("reads a quoted cell over the cell limit but within a record as the row's CELL_TOO_LONG, the rows after it as usual", async () => {
    // 100 000 characters from the start of the file: the cell is still open where the first 64 KB read ends.
    const f = write('long-cell.csv', `GTIN;Nom;Note\n1;"${'y'.repeat(50_000)}""${'y'.repeat(49_999)}";c\n2;d;e\n`);
    const { rows } = await readAll(f);
    expect(rows.map((r) => r.row)).toEqual([2, 3]);
    expect(rows[0]!.cells).toEqual(['1', null, 'c']);
    expect(rows[0]!.issues).toEqual([
      expect.objectContaining({
        code: 'CELL_TOO_LONG',
        row: 2,
        column: 'Nom',
        message: 'cell has 100000 characters, more than 32767',
      }),
    ]);
    expect(rows[1]).toEqual({ row: 3, cells: ['2', 'd', 'e'], issues: [] });
  });

  it('still reports a quote that is never closed as an unclosed quote (control), short or long', async () => {
    // The rest of the file after the quote: 2 MB (more than a record may hold), and 200 KB (less: the end of the file
    // comes first).
    for (const lines of [500_000, 50_000]) {
      const f = write(`unclosed-${lines}.csv`, `a,b\n1,x\n2,"never closed\n${'x,y\n'.repeat(lines)}`);
      await expectReadFailure(f, 'PS_ERR_FILE_UNREADABLE', /quote \("\) opened on line 3 .*never closed/);
    }
  });

  it("says which lines a cell over the limit spans: a quote left open and closed far below by another cell's quote", async () => {
    // The cell: `left open\n`, 500 000 lines of `x,y\n`, then `3,"q` (its first quote is text: it opens no cell there).
    const f = write('closed-below.csv', `a,b\n1,x\n2,"left open\n${'x,y\n'.repeat(500_000)}3,"q"\n4,z\n`);
    await expectReadFailure(
      f,
      'PS_ERR_FILE_TOO_LARGE',
      /row 3, column b: a cell of 2000014 characters \(from line 3 to line 500004: if it is not meant to span lines, its quote is never closed\), more than the limit of 32767/,
    );
  });
});

describe('CSV: mixed line ends', () => {
  it('reads CRLF, LF and lone CR line ends as line ends, keeps quoted multi-line cells whole and numbers rows by line', async () => {
    const f = write('mixed.csv', 'GTIN;Nom\r\n1;a\n2;b\r3;"multi\r\nline"\r\n4;"x\ny"\r\r\n6;"lone\rcr"\n7;f');
    const { headers, rows } = await readAll(f);
    expect(headers).toEqual(['GTIN', 'Nom']);
    expect(rows.map((r) => [r.row, ...r.cells])).toEqual([
      [2, '1', 'a'],
      [3, '2', 'b'],
      [4, '3', 'multi\r\nline'],
      [5, '4', 'x\ny'],
      [7, '6', 'lone\rcr'],
      [8, '7', 'f'],
    ]);
    expect(rows.every((r) => r.issues.length === 0)).toBe(true);
    // An LF file with CR lines, and a CR file with LF lines.
    expect((await readAll(write('lf-cr.csv', 'A;B\n1;x\r2;y\n3;z\n'))).rows.map((r) => [r.row, ...r.cells])).toEqual([
      [2, '1', 'x'],
      [3, '2', 'y'],
      [4, '3', 'z'],
    ]);
    expect((await readAll(write('cr-lf.csv', 'A;B\r1;x\n2;y\r\n3;z\r'))).rows.map((r) => [r.row, ...r.cells])).toEqual([
      [2, '1', 'x'],
      [3, '2', 'y'],
      [4, '3', 'z'],
    ]);
  });

  it("normalises line ends to the file's newline the same way however the text is cut into chunks", () => {
    const text = 'A;B\r\n"q\r\n""x"""\r\r\n1;"a"" \r"\r2;b\n" ""c""\r"; "\r"\r\n"tail"';
    // Outside quotes every line end becomes the target; inside a quoted cell (a quote opening a field) they stay as
    // typed.
    const expected = {
      '\n': 'A;B\n"q\r\n""x"""\n\n1;"a"" \r"\n2;b\n" ""c""\r"; "\n"\r\n"tail"',
      '\r\n': 'A;B\r\n"q\r\n""x"""\r\n\r\n1;"a"" \r"\r\n2;b\r\n" ""c""\r"; "\r\n"\r\n"tail"',
      '\r': 'A;B\r"q\r\n""x"""\r\r1;"a"" \r"\r2;b\r" ""c""\r"; "\r"\r\n"tail"',
    } as const;
    const trailing = { '\n': 'x;y\nz\n', '\r\n': 'x;y\r\nz\r\n', '\r': 'x;y\rz\r' } as const;
    for (const nl of ['\n', '\r\n', '\r'] as const) {
      for (const [input, want] of [
        [text, expected[nl]],
        ['x;y\nz\r', trailing[nl]],
      ] as const) {
        for (let a = 0; a <= input.length; a++) {
          for (let b = a; b <= input.length; b++) {
            const n = lineEndNormalizer(';', nl);
            const got = n(input.slice(0, a)) + n(input.slice(a, b)) + n(input.slice(b)) + n('', true);
            expect(JSON.stringify(got), `${JSON.stringify(nl)} cut at ${a}, ${b}`).toBe(JSON.stringify(want));
          }
        }
      }
    }
    // A file that does not mix line ends goes through untouched.
    const crlf = 'A;B\r\n1;"x\ny"\r\n2;z\r\n';
    expect(lineEndNormalizer(';', '\r\n')(crlf)).toBe(crlf);
  });

  it('keeps rows and multi-line cells intact where a CRLF straddles two read chunks (at 256 KB, a boundary of the 64 KB reads)', async () => {
    const CHUNK = 256 * 1024;
    let s = 'GTIN;Nom\n';
    const expected: [number, string, string][] = [];
    let row = 2;
    const ends = ['\n', '\r\n', '\r'];
    const add = (cells: [string, string], raw: string, end: string) => {
      s += `${cells[0]};${raw}${end}`;
      expected.push([row++, ...cells]);
    };
    while (s.length < CHUNK - 100) add([String(row), `n${row}`], `n${row}`, ends[row % 3]!);
    // A CRLF whose CR is the last character of the first chunk.
    const pad = 'x'.repeat(CHUNK - 1 - s.length - `${row};`.length);
    add([String(row), pad], pad, '\r\n');
    expect(s[CHUNK - 1]).toBe('\r');
    while (s.length < 2 * CHUNK - 100) add([String(row), `m${row}`], `m${row}`, ends[row % 3]!);
    // A quoted cell whose CRLF straddles the second boundary.
    const q = 'y'.repeat(2 * CHUNK - 1 - s.length - `${row};"`.length);
    add([String(row), `${q}\r\nz`], `"${q}\r\nz"`, '\r');
    expect(s.slice(2 * CHUNK - 1, 2 * CHUNK + 1)).toBe('\r\n');
    add([String(row), 'last'], 'last', '');
    const { rows } = await readAll(write('straddle.csv', s));
    // The first row that differs (a whole-array diff of 40 000 rows is too slow to print).
    const got = rows.map((r) => JSON.stringify([r.row, ...r.cells]));
    const first = expected.findIndex((e, i) => got[i] !== JSON.stringify(e));
    expect({ rows: got.length, firstDiff: first, got: got[first]?.slice(0, 80) }).toEqual({
      rows: expected.length,
      firstDiff: -1,
      got: undefined,
    });
  });
});

describe('XLSX: shared strings stored after the worksheet', () => {
  const strings =
    '<?xml version="1.0" encoding="UTF-8"?><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="4" uniqueCount="4">' +
    '<si><t>GTIN</t></si><si><t>Nom</t></si>' +
    '<si><r><rPr><b/></rPr><t>Pâte </t></r><r><t xml:space="preserve">à &amp; tartiner</t></r></si>' +
    '<si><t>日本</t><rPh sb="0" eb="2"><t>ニホン</t></rPh><phoneticPr fontId="1"/></si><si><t/></si><si><t>a_x000D_b</t></si></sst>';
  const worksheet = sheetXml(
    '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c></row>' +
      '<row r="2"><c r="A2"><v>3017620422003</v></c><c r="B2" t="s"><v>2</v></c></row>' +
      '<row r="3"><c r="A3"><v>5601234567891</v></c><c r="B3" t="s"><v>3</v></c></row>' +
      '<row r="4"><c r="A4"><v>4000000000006</v></c><c r="B4" t="s"><v>5</v></c></row>',
  );
  const expected = [
    [3017620422003, 'Pâte à & tartiner'],
    [5601234567891, '日本'],
    [4000000000006, 'a\rb'],
  ];

  it('reads the strings when xl/sharedStrings.xml is the last entry of the zip', async () => {
    const f = write(
      'strings-last.xlsx',
      handZip([
        { name: 'xl/workbook.xml', data: WORKBOOK_XML },
        { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
        { name: 'xl/worksheets/sheet1.xml', data: worksheet },
        { name: 'xl/sharedStrings.xml', data: strings },
      ]),
    );
    const { headers, rows } = await readAll(f);
    expect(headers).toEqual(['GTIN', 'Nom']);
    expect(rows.map((r) => r.cells)).toEqual(expected);
    expect(rows.flatMap((r) => r.issues)).toEqual([]);
  });

  it('reads them too when other entries follow, or when they come first', async () => {
    const tail = { name: 'docProps/app.xml', data: '<Properties/>' };
    for (const [name, order] of Object.entries({
      'strings-after.xlsx': ['wb', 'rels', 'ws', 'ss', 'tail'],
      'strings-first.xlsx': ['wb', 'rels', 'ss', 'ws', 'tail'],
    })) {
      const parts: Record<string, { name: string; data: string }> = {
        wb: { name: 'xl/workbook.xml', data: WORKBOOK_XML },
        rels: { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
        ws: { name: 'xl/worksheets/sheet1.xml', data: worksheet },
        ss: { name: 'xl/sharedStrings.xml', data: strings },
        tail,
      };
      const { rows } = await readAll(write(name, handZip(order.map((k) => parts[k]!))));
      // Where exceljs reads the strings itself (they come first), phonetic runs are its business: compare the rest.
      expect(
        rows.map((r) => r.cells[0]),
        name,
      ).toEqual(expected.map((e) => e[0]));
      expect(rows[0]!.cells[1], name).toBe('Pâte à & tartiner');
    }
  });
});

describe('XLSX: hidden columns', () => {
  it('warns about a hidden column only when the mapping uses it', async () => {
    const f = await writeWorkbook(dir, 'hidden-cols.xlsx', (wb) => {
      const ws = wb.addWorksheet('S');
      ws.addRow(['GTIN', 'Nom', 'Interne', 'Marque']);
      ws.addRow(['3017620422003', 'Pâte', 'x', 'Lu']);
      ws.addRow(['5601234567891', 'Gaufre', 'y', 'Lu']);
      ws.getColumn(3).hidden = true;
      ws.getColumn(4).hidden = true;
    });
    const mapping = parseMapping(
      'target: tradeItem\ncolumns:\n  - { column: GTIN, field: gtin }\n  - { column: Nom, field: tradeItemName }\n  - { column: Marque, field: brandId, lookup: { brand: { create: true } } }\n',
      'm.yaml',
    );
    const sheet = await openSheet(f);
    const index = matchHeaders(sheet.headers, mapping);
    const drafts = [];
    for await (const r of sheet.rows) drafts.push(mapRow(r, sheet.headers, mapping, index));
    const hidden = drafts.flatMap((d) =>
      d.issues.filter((i) => i.code === 'HIDDEN_COLUMN').map((i) => [d.row, i.column]),
    );
    expect(hidden).toEqual([[2, 'Marque']]);
  });
});

describe('XLSX: a zip of more entries than any workbook has (issue 34)', () => {
  const parts = [
    { name: 'xl/workbook.xml', data: WORKBOOK_XML },
    { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
    {
      name: 'xl/worksheets/sheet1.xml',
      data: sheetXml('<row r="1"><c r="A1" t="inlineStr"><is><t>GTIN</t></is></c></row>'),
    },
  ];
  const empties = (n: number) => Array.from({ length: n }, (_, i) => ({ name: `x/e${i}`, data: '', stored: true }));

  it('refuses 60 000 empty entries from the zip directory, naming the count and the limit, before reading them', async () => {
    // 60 000 empty entries (each inflated and checked) held the input gate 20–34 s of CPU.
    const f = write('60000-entries.xlsx', handZip([...parts, ...empties(60_000)]));
    await expectReadFailure(
      f,
      'PS_ERR_FILE_TOO_LARGE',
      /the zip holds 60003 entries, more than the 10000 any real workbook has/,
    );
  });

  it('refuses one entry past the limit and reads a workbook at the limit (control)', async () => {
    const over = write('over.xlsx', handZip([...parts, ...empties(98)]));
    await expectReadFailure(over, 'PS_ERR_FILE_TOO_LARGE', /holds 101 entries, more than the 100 /, {
      limits: { zipEntries: 100 },
    });
    const { headers } = await readAll(write('at.xlsx', handZip([...parts, ...empties(97)])), {
      limits: { zipEntries: 100 },
    });
    expect(headers).toEqual(['GTIN']);
  });
});
