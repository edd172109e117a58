/**
 * The requests of an inline run across its processes: a run resumed after a crash reports the requests of its earlier
 * attempts too (`summary.requests`). Each turn of the event loop that sent requests appends one line to
 * `<run>/requests.log` before it ends (so a process killed with -9 has written all but the requests of its last turn's
 * microseconds); a resumed run sums the lines of the earlier ones. The file stays open between lines (a line is one
 * `write`, not an open, a write and a close) until `close()`.
 */
import { appendFileSync, closeSync, openSync, writeSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { ApiName } from '../../api/endpoints.ts';

type Counts = Record<ApiName, number>;

export class RequestTally {
  #earlier: Counts = { product: 0, reference: 0 };
  readonly #now: Counts = { product: 0, reference: 0 };
  readonly #pending: Counts = { product: 0, reference: 0 };
  #file: string | undefined;
  #fd: number | undefined;
  #closed = false;
  #scheduled = false;

  /** Counts a request of this process (RunScope.count). */
  readonly count = (api: ApiName, n: number): void => {
    this.#now[api] += n;
    this.#pending[api] += n;
    if (this.#file && !this.#scheduled) {
      this.#scheduled = true;
      queueMicrotask(this.#flush);
    }
  };

  /** From now on keeps the counts in `<workDir>/requests.log`, after the earlier attempts' lines there. */
  async persistIn(workDir: string): Promise<void> {
    this.#file = join(workDir, 'requests.log');
    const text = await readFile(this.#file, 'utf8').catch(() => '');
    for (const line of text.split('\n')) {
      const m = /^(-?\d+) (-?\d+)$/.exec(line);
      if (!m) continue;
      this.#earlier.product += Number(m[1]);
      this.#earlier.reference += Number(m[2]);
    }
    this.#flush();
  }

  /** The run's requests: this process's and its earlier attempts'. */
  total(): Counts {
    this.#flush();
    return {
      product: this.#earlier.product + this.#now.product,
      reference: this.#earlier.reference + this.#now.reference,
    };
  }

  readonly #flush = (): void => {
    this.#scheduled = false;
    if (!this.#file || (this.#pending.product === 0 && this.#pending.reference === 0)) return;
    const line = `${this.#pending.product} ${this.#pending.reference}\n`;
    try {
      // After close() (a request counted late), a line is appended as a whole: no descriptor is left open.
      if (this.#closed) appendFileSync(this.#file, line);
      else writeSync((this.#fd ??= openSync(this.#file, 'a')), line);
      this.#pending.product = this.#pending.reference = 0;
    } catch {
      // A full disk: the count stays pending, written with the next line (or lost with the process, as it must be).
    }
  };

  /** Writes what is pending and closes the file (the run is over); idempotent. */
  close(): void {
    this.#flush();
    this.#closed = true;
    if (this.#fd === undefined) return;
    const fd = this.#fd;
    this.#fd = undefined;
    try {
      closeSync(fd);
    } catch {
      // Nothing is left to write to it.
    }
  }
}
