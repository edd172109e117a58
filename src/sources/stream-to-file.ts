/**
 * Writes a download to a local file while hashing it (sha256) and counting its bytes: more than `maxBytes` stops the
 * download (PS_ERR_SOURCE_TOO_LARGE). On any failure the partial file is removed, so a caller never reads half a file.
 */
import { createHash } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Transform, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ProductSyncError } from '../errors.ts';
import type { FetchOptions, Fetched } from './source.ts';

/** The error for a file over the limit; `what` names it (`sftp host:22 /outgoing/a.csv`). */
export function tooLarge(what: string, maxBytes: number): ProductSyncError {
  return new ProductSyncError(
    'PS_ERR_SOURCE_TOO_LARGE',
    `${what} is larger than the limit of ${maxBytes} bytes: not downloaded`,
  );
}

/** Streams `body` into `dest` (created or replaced), hashing it; `what` names the file in errors. */
export async function streamToFile(
  body: Readable,
  dest: string,
  options: FetchOptions,
  what: string,
): Promise<Fetched> {
  const hash = createHash('sha256');
  let size = 0;
  const meter = new Transform({
    transform(chunk: Buffer, _enc, done) {
      size += chunk.length;
      if (size > options.maxBytes) return done(tooLarge(what, options.maxBytes));
      hash.update(chunk);
      done(null, chunk);
    },
  });
  try {
    await pipeline(body, meter, createWriteStream(dest), options.signal ? { signal: options.signal } : {});
  } catch (err) {
    body.destroy();
    await rm(dest, { force: true });
    throw err;
  }
  return { sha256: hash.digest('hex'), size };
}
