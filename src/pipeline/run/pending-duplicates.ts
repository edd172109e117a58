/**
 * Second items that may still come (docs/concurrency.md, "The window that remains"): a run that took the lease over
 * and found, in the lost run's journal, a create of a key it created itself sent without an answer — and no second item
 * yet — cannot tell whether that create is still on its way (the lost run killed while it was on the wire, the API
 * slow to apply it). It notes the key in the machine's state directory, and every later run of the owner on this
 * machine looks again before its report:
 *
 *   STATE_DIR/late-creates/<lease name>.jsonl   one line per key: {key, keep, lostRun, lostDir, since}
 *
 * A key whose kept item (the one the new holder created) is live with another live item beside it: the other is the
 * late create's, archived and reported `duplicate_removed` (in the checking run's report, and written to the lost run's
 * `duplicates.jsonl`). A line is dropped once checked so (a second item removed, or the kept item no longer live: the
 * catalogue changed since), or a day after it was written.
 */
import { existsSync } from 'node:fs';
import { appendFile, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { leaseName } from '../../lease/lease.ts';

/** A key to look at again. */
export interface PendingCheck {
  key: string;
  /** The items the run that took the lease over created for it: the one to keep. */
  keep: string[];
  lostRun: string;
  lostDir: string;
  /** When it was noted (ISO). */
  since: string;
}

/** How long a key is looked at again. */
const KEEP_MS = 24 * 3600_000;

/** The owner's file of keys to look at again, for the product API `api`, in the machine's state directory. */
export function pendingFile(stateDir: string, owner: string, api: string): string {
  return join(stateDir, 'late-creates', `${leaseName(owner, api)}.jsonl`);
}

/** Notes keys to look at again. */
export async function notePending(file: string, checks: readonly PendingCheck[]): Promise<void> {
  if (checks.length === 0) return;
  await mkdir(dirname(file), { recursive: true });
  await appendFile(file, checks.map((c) => JSON.stringify(c)).join('\n') + '\n');
}

/** The keys noted, oldest first (lines that cannot be read are skipped). */
export async function readPending(file: string): Promise<PendingCheck[]> {
  if (!existsSync(file)) return [];
  const out: PendingCheck[] = [];
  for (const line of (await readFile(file, 'utf8')).split('\n')) {
    if (line.trim() === '') continue;
    try {
      out.push(JSON.parse(line) as PendingCheck);
    } catch {
      // A line cut by a crash: nothing to check.
    }
  }
  return out;
}

/** Keeps the keys still to look at (`left`), dropping those older than a day. */
export async function keepPending(file: string, left: readonly PendingCheck[], now = Date.now()): Promise<void> {
  const kept = left.filter((c) => now - Date.parse(c.since) < KEEP_MS);
  const tmp = `${file}.tmp`;
  await writeFile(tmp, kept.map((c) => JSON.stringify(c) + '\n').join(''));
  await rename(tmp, file);
}
