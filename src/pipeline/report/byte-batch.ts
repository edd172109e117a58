/**
 * Report lines collected as UTF-8 bytes in a fixed buffer until it is full, then handed on in one write. Lines are
 * encoded a few kilobytes at a time, so they die young: a whole batch built as a string with `+=` is a rope of
 * thousands of small strings that stays alive until it is written, and every young-generation GC meanwhile copies it
 * (then promotes it); one buffer write per line costs a native call each.
 */

/**
 * Default batch size: one stream or zlib call per 256 KiB. A zlib write is a round trip through the thread pool: with
 * 64 KiB batches the 200 000-line report bench wrote ~10-20 % slower (a 38 MB worksheet is ~600 of them).
 */
export const BATCH_BYTES = 256 * 1024;
/**
 * What the streams batches go to may hold before they ask the writer to wait (Node's default is 16 KiB, less than one
 * batch: every batch would wait for the file or zlib, a round trip through the thread pool each, while the rows behind
 * it could have been prepared meanwhile).
 */
export const STREAM_BUFFER_BYTES = 1024 * 1024;
// Characters joined as a string before they are encoded into the buffer.
const STRING_CHARS = 4096;

/** A byte buffer filled line by line; {@link take} hands the bytes over and starts a fresh buffer. */
export class ByteBatch {
  readonly #size: number;
  #buf: Buffer;
  #used = 0;
  #text = '';

  constructor(size = BATCH_BYTES) {
    this.#size = size;
    this.#buf = Buffer.allocUnsafe(size);
  }

  /** At least the bytes collected so far, at most 3 bytes a character more (UTF-8 takes at most 3 bytes per UTF-16 unit). */
  get maxLength(): number {
    return this.#used + this.#text.length * 3;
  }

  /** The bytes collected so far, exactly. */
  get length(): number {
    this.#encode();
    return this.#used;
  }

  /** True when `text` surely fits; else take() first. */
  fits(text: string): boolean {
    return this.maxLength + text.length * 3 <= this.#buf.length;
  }

  /** Appends `text` (encoded as UTF-8); a text larger than the room left grows the buffer. */
  add(text: string): void {
    if (!this.fits(text)) {
      this.#encode();
      const bigger = Buffer.allocUnsafe(this.#used + text.length * 3);
      this.#buf.copy(bigger, 0, 0, this.#used);
      this.#buf = bigger;
    }
    this.#text += text;
    if (this.#text.length >= STRING_CHARS) this.#encode();
  }

  /** The bytes collected, for the caller to keep (a new buffer takes their place). */
  take(): Buffer {
    this.#encode();
    const out = this.#buf.subarray(0, this.#used);
    this.#buf = Buffer.allocUnsafe(this.#size);
    this.#used = 0;
    return out;
  }

  #encode(): void {
    if (this.#text === '') return;
    this.#used += this.#buf.write(this.#text, this.#used);
    this.#text = '';
  }
}
