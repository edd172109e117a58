/**
 * The parts of a workbook a worksheet's values need, read before the worksheet (the zip's directory lets them be read
 * in any order): the shared strings (the text of `t="s"` cells) and, from the styles, which cell formats are dates.
 */
import type { FileHandle } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { entryChunks, entryText, type ZipEntry } from './zip-entries.ts';
import { attr, decodeXml } from './xml-text.ts';

const SI = /<(?:\w+:)?si(?:\s[^>]*)?(?:\/>|>([\s\S]*?)<\/(?:\w+:)?si>)/g;
const PHONETIC = /<(?:\w+:)?rPh[\s>][\s\S]*?<\/(?:\w+:)?rPh>|<(?:\w+:)?phoneticPr[^>]*>/g;
const T = /<(?:\w+:)?t(?:\s[^>]*)?(?:\/>|>([\s\S]*?)<\/(?:\w+:)?t>)/g;

/**
 * Appends the text of every complete `<si>` of `xml` to `out` (rich-text runs joined, phonetic runs left out, XML
 * entities decoded; OOXML `_xHHHH_` escapes are left for the cell reader); returns the text after the last complete
 * one, to be continued by the next chunk.
 */
function takeSharedStrings(xml: string, out: string[]): string {
  let rest = 0;
  SI.lastIndex = 0;
  for (let m = SI.exec(xml); m !== null; m = SI.exec(xml)) {
    let text = '';
    const raw = m[1] ?? '';
    const body = raw.includes('rPh') || raw.includes('phoneticPr') ? raw.replace(PHONETIC, '') : raw;
    T.lastIndex = 0;
    for (let t = T.exec(body); t !== null; t = T.exec(body)) text += t[1] ?? '';
    out.push(decodeXml(text));
    rest = SI.lastIndex;
  }
  return xml.slice(rest);
}

/** The shared strings of the workbook, in order (index = the value of a `t="s"` cell). */
export async function readSharedStrings(file: string, fh: FileHandle, e: ZipEntry): Promise<string[]> {
  const out: string[] = [];
  const decoder = new StringDecoder('utf8');
  let pending = '';
  for await (const chunk of entryChunks(file, fh, e)) pending = takeSharedStrings(pending + decoder.write(chunk), out);
  return out;
}

// The built-in number formats that are dates or times (ECMA-376 part 1, 18.8.30, and the East Asian ones).
const BUILT_IN_DATES = new Set([
  14, 15, 16, 17, 18, 19, 20, 21, 22, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 45, 46, 47, 50, 51, 52, 53, 54, 55, 56,
  57, 58,
]);

/** Whether a format code shows a date or a time: a y, m, d, h, s (or b, Buddhist year) outside quotes and brackets. */
export function isDateFormat(code: string): boolean {
  return /[ymdhsb]/i.test(code.replace(/\[[^\]]*]|"[^"]*"|\\./g, '').replace(/General/gi, ''));
}

/**
 * For each cell format of the styles part (`<cellXfs>`, the index a cell's `s` attribute gives), whether its number
 * format is a date or time: such a cell's number is a date.
 */
export async function readDateStyles(file: string, fh: FileHandle, e: ZipEntry): Promise<boolean[]> {
  return dateStyles(await entryText(file, fh, e, 32 * 1024 * 1024));
}

/** readDateStyles on the styles part's text. */
export function dateStyles(xml: string): boolean[] {
  const custom = new Map<number, string>();
  for (const m of xml.matchAll(/<(?:\w+:)?numFmt\s[^>]*>/g)) {
    const id = Number(attr(m[0], 'numFmtId'));
    const code = attr(m[0], 'formatCode');
    if (Number.isInteger(id) && code !== null) custom.set(id, code);
  }
  const xfs = /<(?:\w+:)?cellXfs[\s>][\s\S]*?<\/(?:\w+:)?cellXfs>/.exec(xml)?.[0] ?? '';
  const out: boolean[] = [];
  for (const m of xfs.matchAll(/<(?:\w+:)?xf[\s/>][^>]*>/g)) {
    const id = Number(attr(m[0], 'numFmtId') ?? 0);
    const code = custom.get(id);
    out.push(code !== undefined ? isDateFormat(code) : BUILT_IN_DATES.has(id));
  }
  return out;
}
