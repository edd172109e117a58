/**
 * Report lines written straight into a byte buffer, handed on a batch at a time. A line is not built as a string first:
 * concatenating a line's pieces makes a rope of small strings that must be flattened, then encoded, then collected
 * (a large share of rows.xlsx's cost); here its markup, numbers and ASCII text are copied a byte at a
 * time, and only text with other characters (or characters its file must escape) goes through a string and UTF-8.
 */

/**
 * Default batch size: one stream or zlib call per 256 KiB. A zlib write is a round trip through the thread pool: fewer,
 * larger batches make fewer of them (docs/performance.md).
 */
export const BATCH_BYTES = 256 * 1024;
/**
 * What the streams batches go to may hold before they ask the writer to wait (Node's default is 16 KiB, less than one
 * batch: every batch would wait for the file or zlib, a round trip through the thread pool each, while the rows behind
 * it could have been prepared meanwhile).
 */
export const STREAM_BUFFER_BYTES = 1024 * 1024;
// Room past BATCH_BYTES, so that the line that fills a batch rarely makes the buffer grow.
const SLACK_BYTES = 64 * 1024;
// Text longer than this is encoded by Buffer#write at once rather than looked at a character at a time.
const LONG_TEXT = 256;

/**
 * Which ASCII characters a file takes as they are (1) in some place, the others (0) needing escapes there: a table of
 * 128 entries built from the characters to refuse. Control characters are refused unless listed in `allowControls`.
 */
export function plainAscii(refused: string, allowControls = ''): Uint8Array {
  const t = new Uint8Array(128).fill(1);
  for (let c = 0; c < 32; c++) if (!allowControls.includes(String.fromCharCode(c))) t[c] = 0;
  for (const ch of refused) t[ch.charCodeAt(0)] = 0;
  return t;
}

/** The bytes of ASCII text (markup), made once to be appended many times with {@link ByteBatch.bytes}. */
export const ascii = (text: string): Uint8Array => Buffer.from(text, 'latin1');

/** A byte buffer filled line by line; {@link take} hands the bytes over and starts a fresh buffer. */
export class ByteBatch {
  readonly #size: number;
  #buf: Buffer;
  #used = 0;

  /** `size`: bytes at which {@link full} says to hand the batch on. */
  constructor(size = BATCH_BYTES) {
    this.#size = size;
    this.#buf = Buffer.allocUnsafe(size + SLACK_BYTES);
  }

  /** The bytes collected so far. */
  get length(): number {
    return this.#used;
  }

  /** True once the batch holds its size: time to {@link take} it. */
  get full(): boolean {
    return this.#used >= this.#size;
  }

  /**
   * Appends `text` as UTF-8 (ASCII copied a byte at a time, the rest from the first other character encoded by
   * Buffer#write).
   */
  text(text: string): void {
    const n = text.length;
    // A UTF-16 unit is at most 3 bytes of UTF-8.
    if (this.#used + n * 3 > this.#buf.length) this.#grow(n * 3);
    const buf = this.#buf;
    let u = this.#used;
    if (n > LONG_TEXT) {
      this.#used = u + buf.write(text, u);
      return;
    }
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80) {
        // Never inside a surrogate pair: i is the first character that is not ASCII.
        this.#used = u + buf.write(i === 0 ? text : text.slice(i), u);
        return;
      }
      buf[u++] = c;
    }
    this.#used = u;
  }

  /**
   * Appends `text` if every character of it is ASCII that `plain` ({@link plainAscii}) takes as it is, and says so;
   * else appends nothing and returns false (the caller escapes the text and appends it with {@link text}).
   */
  plain(text: string, plain: Uint8Array): boolean {
    const n = text.length;
    if (this.#used + n > this.#buf.length) this.#grow(n);
    const buf = this.#buf;
    let u = this.#used;
    for (let i = 0; i < n; i++) {
      const c = text.charCodeAt(i);
      if (c >= 0x80 || plain[c] === 0) return false;
      buf[u++] = c;
    }
    this.#used = u;
    return true;
  }

  /** Appends bytes (markup made once, {@link ascii}). */
  bytes(bytes: Uint8Array): void {
    const n = bytes.length;
    if (this.#used + n > this.#buf.length) this.#grow(n);
    const buf = this.#buf;
    let u = this.#used;
    for (let i = 0; i < n; i++) buf[u++] = bytes[i]!;
    this.#used = u;
  }

  /** Appends a whole number from 0 to 2^31 - 1 in decimal digits; returns how many. */
  int(n: number): number {
    if (this.#used + 10 > this.#buf.length) this.#grow(10);
    let digits = 1;
    for (let x = n; x >= 10; x = (x / 10) | 0) digits++;
    const buf = this.#buf;
    let u = this.#used + digits;
    this.#used = u;
    let x = n;
    do {
      const q = (x / 10) | 0;
      buf[--u] = 48 + x - q * 10;
      x = q;
    } while (x > 0);
    return digits;
  }

  /**
   * Appends again the `length` bytes at `start` of this batch (a row number written once, repeated in each cell
   * reference).
   */
  repeat(start: number, length: number): void {
    if (this.#used + length > this.#buf.length) this.#grow(length);
    const buf = this.#buf;
    let u = this.#used;
    for (let i = start, end = start + length; i < end; i++) buf[u++] = buf[i]!;
    this.#used = u;
  }

  /** Drops the bytes appended after the first `length` (a line that must not be written after all). */
  truncate(length: number): void {
    if (length < this.#used) this.#used = length;
  }

  /** The bytes collected, for the caller to keep (a new buffer takes their place). */
  take(): Buffer {
    const out = this.#buf.subarray(0, this.#used);
    this.#buf = Buffer.allocUnsafe(this.#size + SLACK_BYTES);
    this.#used = 0;
    return out;
  }

  #grow(more: number): void {
    const bigger = Buffer.allocUnsafe(Math.max(this.#buf.length * 2, this.#used + more));
    this.#buf.copy(bigger, 0, 0, this.#used);
    this.#buf = bigger;
  }
}
