import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { createRequire } from 'node:module';
import type Iconv from 'iconv-lite';

/** The encodings CSV/TSV files are decoded from. */
export type TextEncoding = 'utf-8' | 'utf-16le' | 'utf-16be' | 'windows-1252';

/**
 * How far into a BOM-less file the detector looks for its first non-ASCII byte (then it decides on the bytes there).
 */
export const ENCODING_LOOKAHEAD_BYTES = 16 * 1024 * 1024;

/**
 * What a window of bytes says: 'utf-8' when it holds at least one well-formed UTF-8 multibyte sequence (invalid bytes
 * beside them are then damage, reported later as U+FFFD), 'windows-1252' when it holds high bytes but no such sequence,
 * 'ascii' when it holds no high byte. A sequence cut by the end of the window is ignored.
 */
function verdict(b: Buffer): TextEncoding | 'ascii' {
  let valid = 0;
  let invalid = 0;
  for (let i = 0; i < b.length; i++) {
    const x = b[i]!;
    if (x < 0x80) continue;
    const len = x >= 0xc2 && x <= 0xdf ? 2 : x >= 0xe0 && x <= 0xef ? 3 : x >= 0xf0 && x <= 0xf4 ? 4 : 0;
    if (len === 0) {
      invalid++;
      continue;
    }
    if (i + len > b.length) break;
    let ok = true;
    for (let k = 1; k < len; k++) if ((b[i + k]! & 0xc0) !== 0x80) ok = false;
    if (ok) {
      valid++;
      i += len - 1;
    } else invalid++;
  }
  return valid > 0 ? 'utf-8' : invalid > 0 ? 'windows-1252' : 'ascii';
}

/**
 * Encoding from the bytes: a BOM decides (UTF-8, UTF-16 LE/BE — Excel's "Unicode Text"); otherwise the 64 KB from the
 * first non-ASCII byte decide: any well-formed UTF-8 multibyte sequence → UTF-8, only stray high bytes → Windows-1252.
 */
export function detectEncoding(head: Buffer): TextEncoding | 'ascii' {
  if (head[0] === 0xef && head[1] === 0xbb && head[2] === 0xbf) return 'utf-8';
  if (head[0] === 0xff && head[1] === 0xfe) return 'utf-16le';
  if (head[0] === 0xfe && head[1] === 0xff) return 'utf-16be';
  const first = head.findIndex((x) => x >= 0x80);
  if (first < 0) return 'ascii';
  return verdict(head.subarray(first, first + 65_536));
}

/**
 * Encoding of a text file. Policy: BOM first; else the bytes around the first non-ASCII byte, looked for up to
 * ENCODING_LOOKAHEAD_BYTES into the file (a Windows-1252 file whose accents start on row 5 000 is still seen as
 * such); a pure-ASCII prefix of that size is read as UTF-8. Bytes that are not valid in the chosen encoding further on
 * become U+FFFD and the reader reports each cell holding one (ENCODING_REPLACED, an error: the value is damaged).
 */
export async function detectFileEncoding(file: string, head: Buffer): Promise<TextEncoding> {
  const quick = detectEncoding(head);
  if (quick !== 'ascii') return quick;
  const fh = await open(file, 'r');
  try {
    const buf = Buffer.alloc(1024 * 1024);
    for (let pos = head.length; pos < ENCODING_LOOKAHEAD_BYTES;) {
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) break;
      const b = buf.subarray(0, bytesRead);
      const first = b.findIndex((x) => x >= 0x80);
      if (first >= 0) {
        const { bytesRead: n } = await fh.read(buf, 0, 65_536, pos + first);
        const v = verdict(buf.subarray(0, n));
        return v === 'ascii' ? 'utf-8' : v;
      }
      pos += bytesRead;
    }
    return 'utf-8';
  } finally {
    await fh.close();
  }
}

/**
 * A streaming decoder: a multibyte character split between two writes is joined, never corrupted; the BOM is dropped.
 */
export interface TextChunkDecoder {
  write(bytes: Buffer): string;
  end(): string;
}

const require = createRequire(import.meta.url);

/**
 * A streaming decoder of `encoding`. UTF-8 — nearly every sheet — uses the platform's TextDecoder (WHATWG: each
 * ill-formed sequence becomes U+FFFD, as iconv-lite's UTF-8 decoder does); the others iconv-lite, loaded on first use
 * (a UTF-8 run does not pay for loading it): it keeps Windows-1252's five undefined bytes as U+FFFD, which the reader
 * reports (TextDecoder would make them C1 control characters), and drops a UTF-16 file's odd last byte.
 */
export function textDecoder(encoding: TextEncoding): TextChunkDecoder {
  if (encoding === 'utf-8') {
    const d = new TextDecoder('utf-8');
    return { write: (bytes) => d.decode(bytes, { stream: true }), end: () => d.decode() };
  }
  const iconv = require('iconv-lite') as typeof Iconv;
  const d = iconv.getDecoder(encoding, { stripBOM: true });
  return { write: (bytes) => d.write(bytes), end: () => d.end() ?? '' };
}

/** What decodeFile has seen of the text so far (set before the chunk that holds it is yielded, never reset). */
export interface DecodeFlags {
  /** A NUL character (U+0000) was decoded. */
  nul: boolean;
}

/**
 * Bytes of the file decoded and yielded at a time (a read is cut into pieces of this size). A CSV's rows come in one
 * batch per piece, and a run cuts its chunks in the middle of a batch: the rows of the batch not yet taken wait while
 * the chunk before them is prepared and reported. A small piece keeps few of them waiting, so few live long enough to
 * be copied into the old generation and collected there (docs/performance.md, issue 36 item 5).
 */
export const TEXT_PIECE_BYTES = 8 * 1024;

/**
 * The file's text in chunks of up to `pieceBytes` bytes, decoded by {@link textDecoder} (a multibyte character split
 * between two pieces is joined, never corrupted), BOM removed; the file is read `chunkBytes` at a time. Pulled: the
 * file is read only as fast as the caller iterates.
 * `flags.nul` turns true with the first chunk holding a NUL: in UTF-8 and Windows-1252 only a zero byte decodes to
 * one, so the bytes are searched (memchr) rather than the decoded text (slow in two-byte strings); UTF-16's text is.
 */
export async function* decodeFile(
  file: string,
  encoding: TextEncoding,
  chunkBytes = 64 * 1024,
  flags?: DecodeFlags,
  pieceBytes = TEXT_PIECE_BYTES,
): AsyncGenerator<string> {
  const decoder = textDecoder(encoding);
  const stream = createReadStream(file, { highWaterMark: chunkBytes });
  const wide = encoding === 'utf-16le' || encoding === 'utf-16be';
  try {
    // destroyOnReturn: false — a read stopped early (the header probe) ends in `finally` without the premature-close
    // error Node's own return() would destroy the stream with (and whose stack trace it formats at once).
    for await (const read of stream.iterator({ destroyOnReturn: false }) as AsyncIterable<Buffer>) {
      for (let at = 0; at < read.length; at += pieceBytes) {
        const buf = at === 0 && read.length <= pieceBytes ? read : read.subarray(at, at + pieceBytes);
        const s = decoder.write(buf);
        if (flags && !flags.nul) flags.nul = wide ? s.includes('\0') : buf.indexOf(0) !== -1;
        if (s) yield s;
      }
    }
    const rest = decoder.end();
    if (flags && !flags.nul && rest) flags.nul = rest.includes('\0');
    if (rest) yield rest;
  } finally {
    stream.destroy();
  }
}
