import { closeSync, openSync, readSync, writeSync } from 'node:fs';
import { ProductSyncError } from '../../errors.ts';
import { fileWriteError } from '../../fs-errors.ts';

/** States an operation goes through (docs/reports.md "Journal and resume"). */
export type JournalState = 'planned' | 'sent' | 'confirmed' | 'failed';

/**
 * The latest known state of one operation; `result` is what the caller recorded with it (an id, an outcome, an error
 * message).
 */
export interface JournalEntry {
  state: JournalState;
  result?: unknown;
}

/** An append-only JSON-lines journal of a run's operations; replayed on open so a killed run resumes. */
export interface Journal {
  /** The latest state recorded for `opId` (this run or a replayed one), or undefined when never recorded. */
  state(opId: string): JournalEntry | undefined;
  /**
   * Records a state. `durable` writes it (and everything buffered before it) with a synchronous `write` before
   * returning — or, on a journal opened with `batchDurable`, before the promise returned resolves: use it for a `sent`
   * that must be on disk before its request leaves. Other records are buffered for at most ~100 ms (or 64 KB), in
   * order.
   */
  record(opId: string, state: JournalState, data?: unknown, durable?: boolean): void | Promise<void>;
  /** The latest state of every operation, in first-recorded order. */
  entries(): IterableIterator<[string, JournalEntry]>;
  /** Writes what is buffered and closes the file; idempotent. */
  close(): Promise<void>;
}

const STATES: ReadonlySet<string> = new Set<JournalState>(['planned', 'sent', 'confirmed', 'failed']);
const NEWLINE = 0x0a;
const CHUNK = 1 << 20;

/** One journal line as written: `{"op": id, "s": state, "r"?: data}`. */
interface JournalLine {
  op: string;
  s: JournalState;
  r?: unknown;
}

/**
 * The line of a record as `JSON.stringify({ op, s, r })` writes it, without making that object for each record (a
 * state is one of {@link STATES}: nothing in it to escape).
 */
function journalLine(opId: string, state: JournalState, data: unknown): string {
  const r = data === undefined ? undefined : JSON.stringify(data);
  return r === undefined
    ? `{"op":${JSON.stringify(opId)},"s":"${state}"}\n`
    : `{"op":${JSON.stringify(opId)},"s":"${state}","r":${r}}\n`;
}

function parseLine(line: string): JournalLine | undefined {
  try {
    const rec = JSON.parse(line) as Partial<JournalLine> | null;
    if (rec && typeof rec === 'object' && typeof rec.op === 'string' && typeof rec.s === 'string' && STATES.has(rec.s))
      return rec as JournalLine;
  } catch {
    // A torn line (the process was killed mid-write): what it said did not happen as far as we know.
  }
  return undefined;
}

/**
 * Replays the file into `latest` chunk by chunk (a million-op journal is never one string); returns whether the last
 * line is torn.
 */
function replay(fd: number, latest: Map<string, JournalEntry>): boolean {
  const buf = Buffer.allocUnsafe(CHUNK);
  let carry: Buffer = Buffer.alloc(0);
  for (;;) {
    const n = readSync(fd, buf, 0, CHUNK, null);
    if (n === 0) break;
    const data = carry.length ? Buffer.concat([carry, buf.subarray(0, n)]) : buf.subarray(0, n);
    let start = 0;
    for (let nl = data.indexOf(NEWLINE, start); nl !== -1; nl = data.indexOf(NEWLINE, start)) {
      if (nl > start) {
        const rec = parseLine(data.toString('utf8', start, nl));
        if (rec) latest.set(rec.op, rec.r === undefined ? { state: rec.s } : { state: rec.s, result: rec.r });
      }
      start = nl + 1;
    }
    carry = Buffer.from(data.subarray(start));
  }
  if (carry.length === 0) return false;
  // A complete last record whose newline was not written yet still counts; a torn one is ignored.
  const rec = parseLine(carry.toString('utf8'));
  if (rec) latest.set(rec.op, rec.r === undefined ? { state: rec.s } : { state: rec.s, result: rec.r });
  return true;
}

/**
 * A failure to open or write the journal: PS_ERR_FILE_WRITE when the file system refused (fs-errors.ts), else
 * PS_ERR_JOURNAL.
 */
function journalError(err: unknown, action: string, path: string): ProductSyncError {
  const e = fileWriteError(err, action, path);
  return e instanceof ProductSyncError
    ? e
    : new ProductSyncError('PS_ERR_JOURNAL', `${action} ${path}: ${(err as Error).message}`, { cause: err });
}

/** Options of {@link openJournal}. */
export interface JournalOptions {
  /**
   * Durable records made during one turn of the event loop share one write, done at the end of that turn: `record`
   * returns a promise that resolves once the record is written (await it before sending what it announces). An executor
   * starting many requests at once then makes one system call instead of one each.
   */
  batchDurable?: boolean;
}

/**
 * Opens (or creates) the journal at `path`, replaying what an earlier attempt of the run recorded (a torn last line is
 * ignored). A durable record is written with a synchronous `write` before `record` returns (or before its promise
 * resolves, with `batchDurable`), so it is in the OS page cache before the request it announces leaves: that survives a
 * killed process (kill -9), not a power cut — there is no fsync per record, a deliberate trade of durability for speed.
 */
export async function openJournal(path: string, options: JournalOptions = {}): Promise<Journal> {
  const latest = new Map<string, JournalEntry>();
  let fd: number;
  try {
    fd = openSync(path, 'a+');
    // A torn last line must not glue itself to the next record.
    if (replay(fd, latest)) writeSync(fd, '\n');
  } catch (err) {
    throw journalError(err, 'cannot open the run journal', path);
  }
  let closed = false;
  let buffer = '';
  // Bytes a failed write left unwritten (a full disk takes part of a write): written first by the next flush, so a line
  // begun on disk is completed, never followed by another record.
  let carry: Buffer | null = null;
  // One pending timer at most: a flush leaves it running (it finds nothing to write), rather than clear and set one per
  // record.
  let timer: NodeJS.Timeout | undefined;
  // batchDurable: the durable records of this turn of the event loop, waiting for its end.
  let waiting: { resolve: () => void; reject: (err: unknown) => void }[] = [];
  const flush = () => {
    if (buffer === '' && carry === null) return;
    const bytes = carry ? Buffer.concat([carry, Buffer.from(buffer)]) : Buffer.from(buffer);
    buffer = '';
    carry = null;
    let written = 0;
    try {
      // write(2) may take part of the bytes (the disk filled meanwhile): the rest goes on, or fails with the reason.
      while (written < bytes.length) written += writeSync(fd, bytes, written);
    } catch (err) {
      carry = bytes.subarray(written);
      throw journalError(err, 'cannot write the run journal', path);
    }
  };
  const flushWaiting = () => {
    const now = waiting;
    waiting = [];
    try {
      flush();
      for (const w of now) w.resolve();
    } catch (err) {
      for (const w of now) w.reject(err);
    }
  };
  return {
    state: (opId) => latest.get(opId),
    record(opId, state, data, durable = false) {
      if (closed) throw new ProductSyncError('PS_ERR_JOURNAL', `journal ${path} is closed`);
      const entry: JournalEntry = data === undefined ? { state } : { state, result: data };
      latest.set(opId, entry);
      buffer += journalLine(opId, state, data);
      // A create's `sent` must be on disk before its request leaves (so a rerun looks before resending); a lost
      // `confirmed` only costs that lookup, so the rest is batched.
      if (durable && options.batchDurable) {
        return new Promise<void>((resolve, reject) => {
          if (waiting.push({ resolve, reject }) === 1) setImmediate(flushWaiting);
        });
      }
      if (durable || buffer.length > 65_536) flush();
      else
        timer ??= setTimeout(() => {
          timer = undefined;
          try {
            flush();
          } catch {
            // The buffer is kept: the next durable record or close() writes it again and reports a failure to its
            // caller.
          }
        }, 100);
    },
    entries: () => latest.entries(),
    async close() {
      if (closed) return;
      if (timer) clearTimeout(timer);
      timer = undefined;
      closed = true;
      // The file is closed even when what is buffered cannot be written (a full disk): what is on disk stays the
      // journal a rerun replays, and the failure is thrown.
      try {
        flushWaiting();
        flush();
      } finally {
        closeSync(fd);
      }
    },
  };
}

/**
 * What the journal at `path` recorded, read without opening it for writing (a missing journal is an empty one, and no
 * file is created): for a reader that only settles a chunk from it (run/chunks.ts recoverChunk).
 */
export function readJournal(path: string): Pick<Journal, 'state'> {
  const latest = new Map<string, JournalEntry>();
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { state: () => undefined };
    throw journalError(err, 'cannot read the run journal', path);
  }
  try {
    replay(fd, latest);
  } finally {
    closeSync(fd);
  }
  return { state: (opId) => latest.get(opId) };
}
