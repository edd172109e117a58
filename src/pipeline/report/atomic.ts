import { randomBytes } from 'node:crypto';
import { open, rename, rm, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** The temp name of a final file: same directory (so the rename is atomic), hidden, `.tmp` suffix — `.rows.csv.tmp`. */
export function tempPathFor(finalPath: string): string {
  return join(dirname(finalPath), `.${basename(finalPath)}.tmp`);
}

/** A temp name of `finalPath` no other write uses (one of several writers of the same file, in any process). */
export function ownTempPathFor(finalPath: string): string {
  return join(dirname(finalPath), `.${basename(finalPath)}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`);
}

/**
 * Moves a finished temp file onto its final name in one rename: readers see the old file, or none, or the whole new
 * one.
 */
export async function commitTemp(finalPath: string): Promise<void> {
  await rename(tempPathFor(finalPath), finalPath);
}

/** Removes the temp file of `finalPath` if there is one (an aborted write, or one left by a killed process). */
export async function discardTemp(finalPath: string): Promise<void> {
  await rm(tempPathFor(finalPath), { force: true });
}

/**
 * Runs `write` (of the temp file); on failure (a full disk…) the temp file is removed, freeing what it held, and the
 * error thrown.
 */
async function orDiscard(finalPath: string, write: () => Promise<void>): Promise<void> {
  try {
    await write();
  } catch (err) {
    await discardTemp(finalPath).catch(() => undefined);
    throw err;
  }
}

/**
 * Writes `data` to `finalPath` through its temp file: a crash leaves either no final file or the complete one, and a
 * failed write (a full disk) leaves the final file as it was and no temp file. Errors are the file system's, unworded.
 */
export async function writeFileAtomic(finalPath: string, data: string | Uint8Array): Promise<void> {
  await orDiscard(finalPath, () => writeFile(tempPathFor(finalPath), data));
  await commitTemp(finalPath);
}

// Strings past ~128 KB live in V8's large-object space until a full GC: a run writing a chunk file of several hundred
// KB as one string would grow the heap by that much each time. Lines are written in batches below that size instead.
const BATCH = 32 * 1024;

/**
 * Writes one JSON line per value to `finalPath` through its temp file, in small batches (see above); fails as
 * writeFileAtomic.
 */
export async function writeJsonLinesAtomic(finalPath: string, values: Iterable<unknown>): Promise<void> {
  await orDiscard(finalPath, () => writeJsonLines(tempPathFor(finalPath), values));
  await commitTemp(finalPath);
}

/** One JSON line per value to `file`, in small batches (see above). */
async function writeJsonLines(file: string, values: Iterable<unknown>): Promise<void> {
  const fh = await open(file, 'w');
  try {
    let batch = '';
    for (const v of values) {
      batch += `${JSON.stringify(v)}\n`;
      if (batch.length >= BATCH) {
        await fh.write(batch);
        batch = '';
      }
    }
    if (batch !== '') await fh.write(batch);
  } finally {
    await fh.close();
  }
}

/**
 * As writeJsonLinesAtomic, for a writer that may have lost the directory to someone else meanwhile (a chunk job of a
 * plan set aside, docs/concurrency.md "Resuming a run"): the temp file is this write's own (no other writer opens or
 * removes it), and `commitIf`, asked once it is written, says whether it is moved onto `finalPath`. Returns whether it
 * was; a temp file gone when it is moved (its directory renamed away) is not an error when `commitIf` then says no.
 */
export async function writeJsonLinesIf(
  finalPath: string,
  values: Iterable<unknown>,
  commitIf: () => Promise<boolean>,
): Promise<boolean> {
  const temp = ownTempPathFor(finalPath);
  try {
    await writeJsonLines(temp, values);
    if (!(await commitIf())) return false;
    await rename(temp, finalPath);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' && !(await commitIf())) return false;
    throw err;
  } finally {
    // Gone once moved into place (or with its directory): nothing then.
    await rm(temp, { force: true }).catch(() => undefined);
  }
}
