/**
 * Whether a feed's text file (CSV, TSV) looks cut while it was written: its last line has no line end and fewer fields
 * than the header, or its last row is shorter than both the header and the row before it (a row cut mid-way). CSV does
 * not need a final line end (RFC 4180): a last line with all its fields is whole, and the settle time guards the rest.
 * Such a file is held by the tick (not imported, checked again later) rather than imported with its last row half
 * there. A workbook (zip) is not looked at here: a cut one has no central directory, and the input gate refuses it.
 */
import { open } from 'node:fs/promises';
import { detectDelimiter } from '../formats/read-csv.ts';

/** How much of the file's head and tail is read. */
const WINDOW = 64 * 1024;

/** Why `file` looks cut (one phrase), or null when its last row is whole (or it is not a text sheet). */
export async function cutLastRow(file: string): Promise<string | null> {
  const fh = await open(file, 'r');
  try {
    const { size } = await fh.stat();
    if (size === 0) return null;
    const head = Buffer.alloc(Math.min(WINDOW, size));
    await fh.read(head, 0, head.length, 0);
    // A workbook (zip), or UTF-16 text: not judged here.
    if (head[0] === 0x50 && head[1] === 0x4b) return null;
    if ((head[0] === 0xff && head[1] === 0xfe) || (head[0] === 0xfe && head[1] === 0xff)) return null;
    const tail = Buffer.alloc(Math.min(WINDOW, size));
    await fh.read(tail, 0, tail.length, size - tail.length);
    const last = tail[tail.length - 1];
    const noLineEnd = last !== 0x0a && last !== 0x0d;
    const headerLine =
      head
        .toString('utf8')
        .replace(/^\uFEFF/, '')
        .split(/\r\n|\n|\r/, 1)[0] ?? '';
    const lines = tail
      .toString('utf8')
      .split(/\r\n|\n|\r/)
      .filter((l) => l.trim() !== '');
    const d = detectDelimiter(headerLine);
    const fields = (l: string) => l.split(d).length;
    const header = fields(headerLine);
    // Quotes may hold line ends: a row is then no line, and counting fields proves nothing.
    const quoted = headerLine.includes('"') || lines.slice(-2).some((l) => l.includes('"'));
    if (noLineEnd && (quoted || lines.length < 2 || fields(lines.at(-1)!) < header))
      return 'its last line has no line end and not all its fields (cut while it was written?)';
    if (lines.length < 3 || quoted) return null;
    const [before, row] = [fields(lines.at(-2)!), fields(lines.at(-1)!)];
    return row < header && row < before
      ? `its last row has ${row} field(s), the header ${header} and the row before it ${before} (cut while it was written?)`
      : null;
  } finally {
    await fh.close();
  }
}
