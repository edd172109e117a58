/**
 * Writes a stream of bytes to a local file, hashing it as it goes and stopping as soon as it passes a size limit:
 * what every source kind's `fetch` does with the bytes it receives.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ProductSyncError } from '../errors.ts';
import type { Fetched } from './source.ts';

/** The error for a file over the limit; `what` names it (`sftp host:22 /outgoing/a.csv`). */
export function tooLarge(what: string, maxBytes: number): ProductSyncError {
  return new ProductSyncError(
    'PS_ERR_SOURCE_TOO_LARGE',
    `${what} is larger than the limit of ${maxBytes} bytes: download stopped`,
  );
}

/**
 * Streams `body` into `dest` (created or replaced, its folder too); refuses with PS_ERR_SOURCE_TOO_LARGE once more
 * than `maxBytes` arrived (the partial file is removed). `what` names the file in that message.
 */
export async function writeHashed(
  body: Readable | AsyncIterable<Uint8Array>,
  dest: string,
  options: { maxBytes: number; what: string; signal?: AbortSignal },
): Promise<Fetched> {
  await mkdir(dirname(dest), { recursive: true });
  const hash = createHash('sha256');
  let size = 0;
  const count = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > options.maxBytes) return done(tooLarge(options.what, options.maxBytes));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(body, count, createWriteStream(dest), options.signal ? { signal: options.signal } : {});
  } catch (err) {
    if ('destroy' in body && typeof body.destroy === 'function') body.destroy();
    await rm(dest, { force: true }).catch(() => undefined);
    throw err;
  }
  return { sha256: hash.digest('hex'), size };
}

/** True for a name a writer uses while the file is still arriving (`.part`, `.tmp`): it waits for its final name. */
export function isPartialName(name: string): boolean {
  return /\.(part|tmp)$/i.test(name);
}
