import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { ProductSyncError } from '../errors.ts';

/** States an operation goes through (DESIGN §7). */
export type JournalState = 'planned' | 'sent' | 'confirmed' | 'failed';

/** The latest known state of one operation. */
export interface JournalEntry {
  state: JournalState;
  result?: unknown;
}

/** An append-only JSON-lines journal of a run's operations; replayed on open so a killed run resumes. */
export interface Journal {
  state(opId: string): JournalEntry | undefined;
  /** Records a state. `durable` writes it (and everything before it) at once; otherwise it is buffered for at most ~100 ms. */
  record(opId: string, state: JournalState, data?: unknown, durable?: boolean): void;
  entries(): IterableIterator<[string, JournalEntry]>;
  close(): Promise<void>;
}

/**
 * Opens (or creates) the journal at `path`. Every record is written with a synchronous `write` before the call returns,
 * so a `sent` record is in the OS page cache before its request leaves: that survives a killed process (kill -9), not
 * a power cut (no fsync per record — a deliberate trade of durability for speed). A torn last line is ignored on replay.
 */
export async function openJournal(path: string): Promise<Journal> {
  const latest = new Map<string, JournalEntry>();
  let tornTail = false;
  if (existsSync(path)) {
    const text = readFileSync(path, 'utf8');
    tornTail = text.length > 0 && !text.endsWith('\n');
    for (const line of text.split('\n')) {
      if (line === '') continue;
      try {
        const rec = JSON.parse(line) as { op: string; s: JournalState; r?: unknown };
        latest.set(rec.op, rec.r === undefined ? { state: rec.s } : { state: rec.s, result: rec.r });
      } catch {
        // The last line of a killed run may be half written: what it said did not happen as far as we know.
      }
    }
  }
  let fd: number;
  try {
    fd = openSync(path, 'a');
    // A torn last line must not glue itself to the next record.
    if (tornTail) writeSync(fd, '\n');
  } catch (err) {
    throw new ProductSyncError('PS_ERR_JOURNAL', `cannot open the run journal ${path}: ${(err as Error).message}`, { cause: err });
  }
  let closed = false;
  let buffer = '';
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    if (timer) clearTimeout(timer);
    timer = undefined;
    if (buffer === '') return;
    writeSync(fd, buffer);
    buffer = '';
  };
  return {
    state: (opId) => latest.get(opId),
    record(opId, state, data, durable = false) {
      if (closed) throw new ProductSyncError('PS_ERR_JOURNAL', `journal ${path} is closed`);
      const entry: JournalEntry = data === undefined ? { state } : { state, result: data };
      latest.set(opId, entry);
      buffer += `${JSON.stringify(data === undefined ? { op: opId, s: state } : { op: opId, s: state, r: data })}\n`;
      // A create's `sent` must be on disk before its request leaves (so a rerun looks before resending); a lost
      // `confirmed` only costs that lookup, so the rest is batched.
      if (durable || buffer.length > 65_536) flush();
      else timer ??= setTimeout(flush, 100);
    },
    entries: () => latest.entries(),
    async close() {
      if (closed) return;
      flush();
      closed = true;
      closeSync(fd);
    },
  };
}
