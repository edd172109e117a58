/**
 * A feed's ledger in Redis: which listed files it has handled, so each is processed exactly once however many workers
 * tick. A file is known by (name, size, mtime or version tag) and by its content: the entry holds the sha256 of the
 * bytes handled, and a file listed under a known (name, size, time) whose content may have changed since (a folder's
 * file whose inode or change time moved: `cp -p`, `touch -r`; an HTTPS download with other bytes) is hashed again —
 * other bytes are a new file. The feed's `imported` set of sha256s says whether bytes were imported under any name.
 * Beside it: the previous listing (each file's shape and since when it is so: a file settles `settleSeconds` after
 * its last change), the import in flight (one per feed, so the feed's files run in order), the files held back for a
 * cut last row, and the version last imported (an HTTPS source's conditional GET).
 */
import type { Redis } from 'ioredis';
import { feedLedgerKeys } from '../redis-keys.ts';
import type { SourceFile } from '../sources/source.ts';

/** What the ledger says of a file: queued (its import runs), done, skipped (mode full) or refused (input gate). */
export type LedgerState = 'queued' | 'done' | 'skipped' | 'refused';

export interface LedgerEntry {
  state: LedgerState;
  at: string;
  sha256?: string;
  /** The file's change marker when it was handled (SourceFile.change): another one means its bytes may differ. */
  change?: string;
  jobId?: string;
  runId?: string;
  /** Why it was skipped or refused, or a note on how it was done ("same content already imported"). */
  note?: string;
}

/** The import in flight of a feed: its job, the file, and the local copy to remove when it ends. */
export interface InFlight {
  jobId: string;
  file: SourceFile;
  sha256: string;
  /** The downloaded copy's folder (removed when the run ends), or null when the run reads the file in place. */
  copyDir: string | null;
  at: string;
}

/** The ledger's field of a listed file: (name, size, version tag or mtime). */
export function fileIdentity(file: SourceFile): string {
  return JSON.stringify([file.name, file.size, file.etag ?? file.mtimeMs]);
}

/** How a file looked in a listing (compared with the next listing's). */
export function listingShape(file: SourceFile): string {
  return `${file.size ?? ''}:${file.mtimeMs ?? ''}:${file.etag ?? ''}:${file.change ?? ''}`;
}

/** A file of the previous listing: its shape, and when a listing first saw it so after seeing it otherwise (ms). */
export interface ListedBefore {
  shape: string;
  changedAt?: number;
}

export class FeedLedger {
  readonly keys: ReturnType<typeof feedLedgerKeys>;
  constructor(
    private readonly redis: Redis,
    prefix: string,
    feed: string,
  ) {
    this.keys = feedLedgerKeys(prefix, feed);
  }

  /** The entries of `files` (null for a file never handled), in their order. */
  async entries(files: readonly SourceFile[]): Promise<(LedgerEntry | null)[]> {
    if (files.length === 0) return [];
    const raw = await this.redis.hmget(this.keys.ledger, ...files.map(fileIdentity));
    return raw.map((r) => (r ? (JSON.parse(r) as LedgerEntry) : null));
  }

  async record(file: SourceFile, entry: Omit<LedgerEntry, 'at'>): Promise<void> {
    await this.redis.hset(
      this.keys.ledger,
      fileIdentity(file),
      JSON.stringify({ ...(file.change ? { change: file.change } : {}), ...entry, at: new Date().toISOString() }),
    );
  }

  /** The previous listing (name → its shape and since when), read before this tick's replaces it. */
  async previousListing(): Promise<Map<string, ListedBefore>> {
    const before = await this.redis.hgetall(this.keys.listing);
    // A listing kept by an older version holds the bare shape.
    const parse = (raw: string): ListedBefore =>
      raw.startsWith('{') ? (JSON.parse(raw) as ListedBefore) : { shape: raw };
    return new Map(Object.entries(before).map(([name, raw]) => [name, parse(raw)]));
  }

  /** This tick's listing, replacing the previous one. */
  async saveListing(files: ReadonlyMap<string, ListedBefore>): Promise<void> {
    const multi = this.redis.multi().del(this.keys.listing);
    if (files.size > 0)
      multi.hset(this.keys.listing, Object.fromEntries([...files].map(([name, l]) => [name, JSON.stringify(l)])));
    await multi.exec();
  }

  /** Notes a file held back (cut last row) under its sha256; true the first time (then it is logged and told). */
  async hold(sha256: string, why: string): Promise<boolean> {
    const first = (await this.redis.hsetnx(this.keys.held, sha256, why)) === 1;
    // Kept a week: a held file that never changes is told again after that.
    await this.redis.expire(this.keys.held, 7 * 24 * 3600);
    return first;
  }

  async inFlight(): Promise<InFlight | null> {
    const raw = await this.redis.get(this.keys.inflight);
    return raw ? (JSON.parse(raw) as InFlight) : null;
  }

  async setInFlight(f: InFlight): Promise<void> {
    await this.redis.set(this.keys.inflight, JSON.stringify(f));
  }

  async clearInFlight(): Promise<void> {
    await this.redis.del(this.keys.inflight);
  }

  /** The version last imported (sent as a conditional GET by an HTTPS source). */
  async known(): Promise<SourceFile | null> {
    const raw = await this.redis.get(this.keys.known);
    return raw ? (JSON.parse(raw) as SourceFile) : null;
  }

  async setKnown(file: SourceFile): Promise<void> {
    await this.redis.set(this.keys.known, JSON.stringify(file));
  }

  /**
   * Takes the feed's tick lock (one tick of a feed at a time across every worker); false when another tick holds it —
   * then that tick is asked to tick again when it ends, so nothing this one would have seen waits for the schedule.
   */
  async lockTick(token: string, ttlMs: number): Promise<boolean> {
    if ((await this.redis.set(this.keys.tickLock, token, 'PX', ttlMs, 'NX')) === 'OK') return true;
    // Kept as long as the running tick may run (its lock is renewed), not only the lock's lifetime: a day.
    await this.redis.set(this.keys.tickAgain, '1', 'EX', 24 * 3600);
    // The holder may have ended between the two: then this tick runs after all.
    return (await this.redis.set(this.keys.tickLock, token, 'PX', ttlMs, 'NX')) === 'OK';
  }

  /** Extends the tick lock by `ttlMs` if it is still ours; false when it expired or another tick took it. */
  async renewTick(token: string, ttlMs: number): Promise<boolean> {
    const renewed = await this.redis.eval(
      "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end",
      1,
      this.keys.tickLock,
      token,
      String(ttlMs),
    );
    return renewed === 1;
  }

  /** Releases the tick lock (if still ours); true when another tick asked for one more meanwhile. */
  async unlockTick(token: string): Promise<boolean> {
    if ((await this.redis.get(this.keys.tickLock)) === token) await this.redis.del(this.keys.tickLock);
    return (await this.redis.getdel(this.keys.tickAgain)) !== null;
  }
}
