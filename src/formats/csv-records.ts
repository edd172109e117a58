import { EventEmitter } from 'node:events';
import Papa from 'papaparse';

/**
 * The CSV records of a text given in pieces, split by papaparse (its streaming parse: `Papa.parse` of a stream with a
 * `chunk` callback). The source papaparse reads is an event emitter this adapter feeds one decoded piece at a time:
 * papaparse parses a `data` event as it is emitted, so `push` returns the records that piece completes and nothing is
 * read ahead — the caller pulls the file at the pace rows are consumed (papaparse's own pause() does not throttle a
 * stream source, so a real stream would pile the file up in memory while the caller is busy).
 *
 * Everything around the splitting stays the reader's (read-csv.ts), where papaparse alone would do otherwise:
 * - encoding and BOM: the text comes decoded, BOM dropped (decode.ts); papaparse strips a BOM from strings only;
 * - line ends: papaparse splits on one newline, so a lone CR or a lone LF in a file of another newline would join
 *   lines: read-csv.ts's lineEndNormalizer makes them the file's newline first, outside quoted cells;
 * - a quote never closed would make papaparse hold, and parse again with each piece, the rest of the file:
 *   `consumed` tells how much text the unfinished record holds, and read-csv.ts stops past its record size limit
 *   (the line the quote opened on, or a cell over the size limit told apart from an unclosed quote);
 * - row numbers are counted by the reader over every record, blank ones included (the row Excel shows); the lines a
 *   multi-line cell spans are counted in the text, not taken from papaparse;
 * - a text ending in a line break: its last, empty line is no record here (papaparse's whole-string parse gives one).
 */
export class CsvRecords {
  // What papaparse's stream input needs of a Node stream: `readable`, `read` and the events; emit() is synchronous.
  private readonly source = Object.assign(new EventEmitter(), {
    readable: true,
    read: () => null,
    pause() {},
    resume() {},
  });
  private records: string[][] = [];
  private cursor = 0;
  private complete = false;
  private failure: { error: unknown } | null = null;

  constructor(delimiter: string, newline: '\n' | '\r\n' | '\r') {
    Papa.parse<string[]>(this.source as unknown as NodeJS.ReadableStream, {
      delimiter,
      newline,
      quoteChar: '"',
      escapeChar: '"',
      chunk: (results) => {
        this.records = this.records.length === 0 ? results.data : this.records.concat(results.data);
        this.cursor = results.meta.cursor;
      },
      complete: () => {
        this.complete = true;
      },
      error: (error: unknown) => {
        this.failure = { error };
      },
    });
  }

  /** Characters of the text pushed so far that end in complete records (the unfinished record starts there). */
  get consumed(): number {
    return this.cursor;
  }

  /** Parses the next piece of the text: the records it completes, in order. */
  push(text: string): string[][] {
    if (text.length > 0) this.source.emit('data', text);
    return this.take();
  }

  /** Ends the text: the record it ends in, if any (a quote still open takes the rest of the text, as typed). */
  end(): string[][] {
    this.source.emit('end');
    const records = this.take();
    if (!this.complete) throw new Error('papaparse did not finish the text it was given synchronously');
    return records;
  }

  private take(): string[][] {
    if (this.failure) throw this.failure.error;
    const records = this.records;
    this.records = [];
    return records;
  }
}
