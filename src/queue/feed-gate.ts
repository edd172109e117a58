/**
 * The input gate of a feed tick: the file a tick picked goes through checkInput (what `import` refuses before sending
 * anything) before its import is queued. A refused file is not queued; the refusal is remembered under the file's
 * sha256 and the mapping file's version, so the next ticks skip it and say why without reading it again — until a new
 * file arrives, or the mapping is changed (a fixed mapping gives the file another chance).
 */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import type { Redis } from 'ioredis';
import { isRetryable, ProductSyncError } from '../errors.ts';
import { logger } from '../logger.ts';
import { mappingFile } from '../pipeline/map/mapping.ts';
import { checkInput } from '../pipeline/run/input-gate.ts';
import type { Feed, FeedPick } from './feeds.ts';

/** The version of a feed's mapping a refusal holds for: its file's sha256, or `missing` when there is no such file. */
async function mappingVersion(nameOrPath: string): Promise<string> {
  try {
    return createHash('sha256')
      .update(await readFile(mappingFile(nameOrPath)))
      .digest('hex')
      .slice(0, 16);
  } catch {
    return 'missing';
  }
}

/**
 * A tick's pick through the input gate: unchanged when the file passes (or when the tick skips anyway), else a skip
 * naming the refusal (`<message> [PS_ERR_…]`), recorded in the hash `refusedKey` (field `<sha256>:<mapping version>`).
 */
export async function gateFeedPick(
  pick: FeedPick,
  feed: Feed,
  redis: Pick<Redis, 'hget' | 'hset'>,
  refusedKey: string,
): Promise<FeedPick> {
  if ('skip' in pick) return pick;
  const field = `${pick.sha256}:${await mappingVersion(feed.mapping)}`;
  const earlier = await redis.hget(refusedKey, field);
  if (earlier !== null)
    return {
      file: pick.file,
      skip: `file refused earlier, not queued until it or the mapping changes: ${earlier}`,
    };
  try {
    await checkInput({ file: pick.file, mapping: feed.mapping });
    return pick;
  } catch (err) {
    if (!(err instanceof ProductSyncError) || isRetryable(err)) throw err;
    const reason = `${err.message} [${err.code}]`;
    // A file removed since it was picked is not remembered: the same bytes dropped again are checked again.
    if (existsSync(pick.file)) await redis.hset(refusedKey, field, reason);
    logger.warn(
      { feed: feed.id, file: pick.file, code: err.code, err: err.message },
      'feed file refused by the input gate: not queued',
    );
    return { file: pick.file, skip: `file refused, not queued: ${reason}` };
  }
}
