/**
 * The terminal's last line, shared by the progress display and the log: on a TTY a progress line is redrawn in place,
 * and a log line written meanwhile would land in the middle of it (or be overwritten by the next redraw). Every writer
 * of stderr that may meet a progress line goes through one {@link LiveLine}: a log line clears the progress line, is
 * written, and the progress line is drawn again below it — in one write, so nothing else comes in between.
 */
import { writeSync } from 'node:fs';

// Carriage return, then erase to the end of the line: the progress line is gone whatever its length was.
const CLEAR = '\r\x1b[K';

/** The last line of a stream: a status line drawn in place (on a TTY), and the lines written above it. */
export class LiveLine {
  readonly #write: (text: string) => void;
  readonly #tty: boolean;
  /** The status line on screen now ('' when none). */
  #status = '';

  constructor(write: (text: string) => void, tty: boolean) {
    this.#write = write;
    this.#tty = tty;
  }

  /** Whether the stream is a terminal (a status line is drawn in place only there). */
  get tty(): boolean {
    return this.#tty;
  }

  /**
   * Draws the status line in place of the one on screen. Not a TTY: nothing (a stream that is not a terminal gets
   * plain lines through {@link above}: a carriage return is noise in a file).
   */
  status(text: string): void {
    if (!this.#tty) return;
    this.#status = text;
    this.#write(`${CLEAR}${text}`);
  }

  /**
   * Writes `text` (whole lines, each ending with a newline) above the status line: the status line is cleared first
   * and drawn again after them, in the same write.
   */
  above(text: string): void {
    if (this.#status === '') {
      this.#write(text);
      return;
    }
    this.#write(`${CLEAR}${text}${this.#status}`);
  }

  /** Leaves the status line on screen as it is, and the cursor on the next line: what follows is written below it. */
  end(): void {
    if (this.#status === '') return;
    this.#status = '';
    this.#write('\n');
  }
}

let stderrLine: LiveLine | undefined;

/** The process's stderr as a {@link LiveLine} (synchronous writes: a line is whole on screen when the call returns). */
export function stderrLiveLine(): LiveLine {
  return (stderrLine ??= new LiveLine((text) => writeSync(2, text), Boolean(process.stderr.isTTY)));
}
