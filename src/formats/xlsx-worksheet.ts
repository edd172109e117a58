/**
 * The one module that streams a worksheet: the rows of the worksheet to read, as its XML gives them (worksheet-xml.ts).
 * readXlsx (read-xlsx.ts) shapes them into SheetRows.
 *
 * The zip's directory gives every part's place, so the shared strings and the styles are read first, whatever the
 * order of the parts in the zip (Excel stores the worksheets before the shared strings), then the worksheet is
 * inflated and parsed as it is read: memory holds the shared strings and one piece of the worksheet, never the
 * worksheet, and nothing is written to disk.
 */
import { open } from 'node:fs/promises';
import { StringDecoder } from 'node:string_decoder';
import { readDateStyles, readSharedStrings } from './workbook-parts.ts';
import { WorksheetXml, type WorksheetRows, type XlsxRow } from './worksheet-xml.ts';
import { damaged, entryChunks } from './zip-entries.ts';
import type { WorkbookInspection } from './zip-guard.ts';

/**
 * Opens the worksheet `book.target` of a workbook whose head was inspected (startInspection: its parts, its date
 * system). Run the rows only once the inspection's scan passed or while it runs (bombs, entities, damage: the caller
 * releases no row before). Errors: damage as `damaged`, XML that is not well-formed as a WorksheetXmlError (the caller
 * words both, readXlsx's `unreadable`).
 */
export async function openWorksheet(
  file: string,
  book: Pick<WorkbookInspection, 'target' | 'date1904' | 'parts'>,
): Promise<WorksheetRows> {
  const { target, parts } = book;
  if (!parts.worksheet)
    throw damaged(file, `the part of worksheet "${target.name}" (${target.path ?? 'unnamed'}) is missing`);
  const fh = await open(file, 'r');
  let sharedStrings: string[] = [];
  let dateStyles: boolean[] = [];
  try {
    if (parts.sharedStrings) sharedStrings = await readSharedStrings(file, fh, parts.sharedStrings);
    if (parts.styles) dateStyles = await readDateStyles(file, fh, parts.styles);
  } catch (err) {
    await fh.close();
    throw err;
  }

  const queue: XlsxRow[] = [];
  let at = 0;
  const parser = new WorksheetXml(
    { part: parts.worksheet.name, sharedStrings, dateStyles, date1904: book.date1904 },
    (row) => queue.push(row),
  );
  const decoder = new StringDecoder('utf8');
  const chunks = entryChunks(file, fh, parts.worksheet);
  let ended = false;
  let closed = false;
  let failure: unknown = null;
  const close = async () => {
    if (closed) return;
    closed = true;
    queue.length = 0;
    try {
      await chunks.return(undefined);
    } finally {
      await fh.close();
    }
  };
  const done: IteratorReturnResult<undefined> = { done: true, value: undefined };
  const rows: AsyncIterator<XlsxRow> = {
    async next(): Promise<IteratorResult<XlsxRow>> {
      while (at >= queue.length) {
        queue.length = 0;
        at = 0;
        if (failure !== null) throw failure;
        if (ended || closed) return done;
        // The rows parsed before a failure (damage, XML that is not well-formed) come first, then the failure.
        try {
          const piece = await chunks.next();
          if (piece.done) {
            ended = true;
            parser.write(decoder.end());
            parser.end();
          } else parser.write(decoder.write(piece.value));
        } catch (err) {
          failure = err;
        }
      }
      return { done: false, value: queue[at++]! };
    },
    async return(): Promise<IteratorResult<XlsxRow>> {
      await close();
      return done;
    },
  };
  return { rows, close };
}
