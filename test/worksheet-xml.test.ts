// The worksheet XML parser (formats/worksheet-xml.ts) on its own: values by cell type, the XML it must take (prefixes,
// comments, CDATA, entities, attributes in any quoting) in pieces cut anywhere, and the XML it must refuse.
import { describe, expect, it } from 'vitest';
import {
  FORMULA_WITHOUT_RESULT,
  WorksheetXml,
  WorksheetXmlError,
  type WorksheetContext,
  type XlsxRow,
} from '../src/formats/worksheet-xml.ts';
import { dateStyles, isDateFormat } from '../src/formats/workbook-parts.ts';

const CONTEXT: WorksheetContext = {
  part: 'xl/worksheets/sheet1.xml',
  sharedStrings: ['GTIN', 'Nom', 'a &amp; b'],
  dateStyles: [false, true],
  date1904: false,
};
const sheet = (rows: string, head = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n') =>
  `${head}<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><dimension ref="A1:C3"/><sheetData>${rows}</sheetData><pageMargins left="0.7"/></worksheet>`;

/** The rows of `xml` fed in pieces of `size` characters (all at once by default). */
function parse(xml: string, size = xml.length, context: WorksheetContext = CONTEXT): XlsxRow[] {
  const rows: XlsxRow[] = [];
  const p = new WorksheetXml(context, (r) => rows.push(r));
  for (let i = 0; i < xml.length; i += size) p.write(xml.slice(i, i + size));
  p.end();
  return rows;
}

describe('worksheet XML: values', () => {
  it('types each cell as its t attribute and format say', () => {
    const rows = parse(
      sheet(
        [
          '<row r="1"><c r="A1" t="s"><v>0</v></c><c r="B1" t="s"><v>1</v></c><c r="C1" t="s"><v>9</v></c></row>',
          '<row r="2"><c r="A2"><v>3017620422003</v></c><c r="B2" t="inlineStr"><is><r><t>Pâte </t></r><r><rPr><b/></rPr><t xml:space="preserve">à &lt;tartiner&gt;</t></r><rPh sb="0" eb="1"><t>ぱ</t></rPh></is></c>',
          '<c r="C2" t="b"><v>1</v></c><c r="D2" t="b"><v>0</v></c><c r="E2" t="e"><v>#N/A</v></c><c r="F2" s="1"><v>45750</v></c><c r="G2" t="d"><v>2025-04-03T10:00:00</v></c>',
          '<c r="H2" t="str"><f>A1&amp;"x"</f><v>GTINx</v></c><c r="I2"><f>1/0</f></c><c r="J2" t="e"><f>NA()</f><v>#N/A</v></c><c r="K2" t="b"><f>TRUE()</f><v>1</v></c>',
          '<c r="L2" s="1"><f>TODAY()</f><v>45750.5</v></c><c r="M2" s="0"><v>1.5E+3</v></c><c r="N2" t="s"><v>2</v></c><c r="O2" s="1"/><c r="P2"><v></v></c></row>',
        ].join(''),
      ),
    );
    expect(rows[0]).toEqual({ number: 1, values: [undefined, 'GTIN', 'Nom', { error: 'a missing shared string' }] });
    expect(rows[1]!.number).toBe(2);
    expect(rows[1]!.values).toEqual([
      undefined,
      3017620422003,
      'Pâte à <tartiner>',
      true,
      false,
      { error: '#N/A' },
      new Date(Date.UTC(2025, 3, 3)),
      new Date(Date.UTC(2025, 3, 3, 10)),
      'GTINx',
      { error: FORMULA_WITHOUT_RESULT },
      { error: '#N/A' },
      true,
      new Date(Date.UTC(2025, 3, 3, 12)),
      1500,
      'a &amp; b',
    ]);
  });

  it('counts dates in the 1904 system when the workbook does', () => {
    const rows = parse(sheet('<row r="1"><c r="A1" s="1"><v>43860</v></c></row>'), undefined, {
      ...CONTEXT,
      date1904: true,
    });
    expect(rows[0]!.values[1]).toEqual(new Date(Date.UTC(2024, 0, 31)));
  });

  it('places cells and rows without r after the previous ones, and keeps the column of those with r', () => {
    const rows = parse(
      sheet(
        '<row><c><v>1</v></c><c><v>2</v></c><c r="E1"><v>5</v></c><c><v>6</v></c></row><row r="4"><c r="B4"><v>7</v></c></row><row><c><v>8</v></c></row><row r="7"/>',
      ),
    );
    expect(rows).toEqual([
      { number: 1, values: [undefined, 1, 2, undefined, undefined, 5, 6] },
      { number: 4, values: [undefined, undefined, 7] },
      { number: 5, values: [undefined, 8] },
      { number: 7, values: [undefined] },
    ]);
  });
});

describe('worksheet XML: the XML it takes', () => {
  const xml = sheet(
    [
      '<!-- a comment with <row> inside --><?mso-application progid="Excel.Sheet"?>',
      '<x:row r=\'1\' spans = "1:3"><x:c r=\'A1\' t="inlineStr"><x:is><x:t><![CDATA[<b>&amp;]]> &#233;&#x20AC;</x:t></x:is></x:c>',
      '<x:c r="B1"   s="1"  ><x:v>45750</x:v></x:c><x:c r="C1" t="inlineStr"><x:is><x:t>a&amp;b&quot;c&apos;&gt;</x:t></x:is></x:c></x:row>',
      '<row r="2"><c r="A2" t="s"><v>2</v></c><extLst><ext uri="{x}"><c>not a cell</c></ext></extLst></row>',
    ].join(''),
    '\uFEFF<?xml version="1.0"?>\r\n',
  );
  const expected: XlsxRow[] = [
    { number: 1, values: [undefined, '<b>&amp; é€', new Date(Date.UTC(2025, 3, 3)), 'a&b"c\'>'] },
    { number: 2, values: [undefined, 'a &amp; b'] },
  ];

  it('prefixes, comments, processing instructions, CDATA, entities, quotes of either kind, a BOM', () => {
    expect(parse(xml)).toEqual(expected);
  });

  it('gives the same rows whatever pieces the text comes in', () => {
    for (const size of [1, 2, 3, 5, 7, 11, 13, 64]) expect(parse(xml, size), `pieces of ${size}`).toEqual(expected);
  });

  it('a comment longer than the pieces it comes in', () => {
    const long = sheet(`<!--${'-x'.repeat(5000)}--><row r="1"><c r="A1"><v>1</v></c></row>`);
    expect(parse(long, 100)).toEqual([{ number: 1, values: [undefined, 1] }]);
  });
});

describe('worksheet XML: the XML it refuses', () => {
  const refused: [string, string, RegExp][] = [
    ['text before the root', `foo${sheet('')}`, /text before the root element/],
    ['a mismatched end tag', sheet('<row r="1"><c r="A1"><v>1</v></c></rowx>'), /<\/rowx> where <\/row> was expected/],
    ['a truncated part', sheet('<row r="1"><c r="A1"><v>1</v></c></row>').slice(0, -49), /ends before <\/sheetData>/],
    ['a part cut inside a tag', sheet('<row r="1"><c r="A1"><v>1</v></c></row>').slice(0, -5), /ends inside a tag/],
    ['a second root', `${sheet('')}<worksheet/>`, /after the root element/],
    ['an unquoted attribute', sheet('<row r=1></row>'), /unquoted attribute/],
    ['an attribute without a value', sheet('<row hidden><c/></row>'), /attribute without a value/],
    ['no root at all', '<?xml version="1.0"?>', /no root element/],
  ];
  for (const [what, xml, why] of refused) {
    it(what, () => {
      for (const size of [xml.length, 3]) {
        let err: unknown;
        try {
          parse(xml, size);
        } catch (e) {
          err = e;
        }
        expect(err, `pieces of ${size}`).toBeInstanceOf(WorksheetXmlError);
        expect((err as Error).message).toMatch(/^xl\/worksheets\/sheet1\.xml is not well-formed XML: /);
        expect((err as Error).message).toMatch(why);
      }
    });
  }

  it('hands over the rows complete before the damage', () => {
    const rows: XlsxRow[] = [];
    const p = new WorksheetXml(CONTEXT, (r) => rows.push(r));
    expect(() =>
      p.write(sheet('<row r="1"><c r="A1"><v>1</v></c></row><row r="2"><c r="A2"><v>2</v></c></rowx>')),
    ).toThrow(WorksheetXmlError);
    expect(rows).toEqual([{ number: 1, values: [undefined, 1] }]);
  });
});

describe('date formats', () => {
  it('tells date and time formats from the others', () => {
    for (const code of [
      'yyyy-mm-dd',
      'dd/mm/yyyy',
      'YYYY-MM-DD',
      'h:mm AM/PM',
      '[$-40C]d mmmm yyyy',
      'mm:ss.0',
      '[h]:mm:ss',
    ])
      expect(isDateFormat(code), code).toBe(true);
    for (const code of [
      'General',
      '0.00',
      '#,##0 "kg"',
      '[Red]0.00',
      '0.00E+00',
      '@',
      '0 "days"',
      '#,##0\\ "h"',
      '_-* #,##0.00\\ [$€-40C]_-',
    ])
      expect(isDateFormat(code), code).toBe(false);
  });

  it('reads which cell formats of the styles are dates: built-in and custom formats', () => {
    const styles = `<styleSheet><numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy\\-mm\\-dd"/><numFmt numFmtId="165" formatCode="0.00&quot; kg&quot;"/></numFmts>
      <cellStyleXfs count="1"><xf numFmtId="14"/></cellStyleXfs>
      <cellXfs count="5"><xf numFmtId="0" fontId="0"/><xf numFmtId="14" applyNumberFormat="1"/><xf numFmtId="164"><alignment wrapText="1"/></xf><xf numFmtId="165"/><xf fontId="1"/></cellXfs></styleSheet>`;
    expect(dateStyles(styles)).toEqual([false, true, true, false, false]);
  });
});

describe('worksheet XML: line ends', () => {
  it('reads CR LF and a lone CR as LF, as XML parsers do, even across pieces; a CR written as a reference stays', () => {
    const xml = sheet(
      '<row r="1"><c r="A1" t="inlineStr"><is><t>a\r\nb\rc&#13;d\r</t></is></c><c r="B1" t="inlineStr"><is><t><![CDATA[e\r\nf]]></t></is></c></row>',
    );
    for (const size of [xml.length, 1, 2, 3])
      expect(parse(xml, size)[0]!.values, `pieces of ${size}`).toEqual([undefined, 'a\nb\nc\rd\n', 'e\nf']);
  });
});
