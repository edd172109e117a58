// A feed as the feed tests drive and read it through Redis (whatever runs the workers: this process, worker
// processes): queue ticks and wait for what they record, wait for its files to be done, list its runs; the sheets the
// tests drop and the item names the sandbox holds after.
import { basename } from 'node:path';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import type { ImportJobData } from '../../src/queue/catalog.ts';
import type { ImportJobResult } from '../../src/queue/enqueue.ts';
import { feedKeys, feedLedgerKeys } from '../../src/redis-keys.ts';
import type { RunningSandbox } from '../../src/sandbox/server.ts';
import { testGtin } from './sheets.ts';
import { until } from './wait.ts';

/** The header of the product sheets the feed tests drop (the mapping of `writeProductSheet` reads them). */
export const SHEET_HEADER = 'GTIN;Désignation;Poids net;Unité\n';

/** `rows` rows named `<tag> <i>` (GTINs `from`… of the family `family`), each ending with a line end. */
export function sheetRows(tag: string, rows: number, family = '035000', from = 0): string {
  return Array.from({ length: rows }, (_, i) => `${testGtin(from + i, family)};${tag} ${from + i};100;g\n`).join('');
}

/** A whole sheet: the header and `rows` rows named `<tag> <i>`. */
export const feedSheet = (tag: string, rows: number, family?: string): string =>
  SHEET_HEADER + sheetRows(tag, rows, family);

/** The names of the sandbox's items that start with `tag`, sorted. */
export function itemNames(sandbox: RunningSandbox, tag: string): string[] {
  return sandbox.handle.store
    .dump()
    .tradeItems.map((t) => String(t.tradeItemName ?? ''))
    .filter((n) => n.startsWith(tag))
    .sort();
}

/** An import job of a feed: the file it read (its name as shown, and the path's base name), when, its result. */
export interface FeedRun {
  file: string;
  fileName: string | undefined;
  queuedAt: number;
  processedOn: number;
  result: ImportJobResult | null;
}

/** The feeds of one queue prefix (`{name}`, braces included) on `redis`, as the tests read them. */
export interface FeedWatch {
  /** The feed's `last` hash (its last tick and run). */
  last(feed: string): Promise<Record<string, string>>;
  /** Queues `n` ticks of `feed` at once; resolves with what the next tick recorded (not "another tick…"). */
  tick(feed: string, n?: number): Promise<Record<string, string>>;
  /** Queues one tick and does not wait. */
  queueTick(feed: string): Promise<void>;
  /** Waits until the feed's `last` hash passes `check`; returns it. */
  recorded(
    feed: string,
    check: (last: Record<string, string>) => boolean,
    ms?: number,
  ): Promise<Record<string, string>>;
  /** Once `count` files are done, none is in flight, and the tick after the last run found nothing more to do. */
  settled(feed: string, count: number): Promise<void>;
  /** The feed's import jobs, in the order they were processed (then queued). */
  runs(feed: string): Promise<FeedRun[]>;
  /** Waits until the feed has `n` runs, all finished; returns them. */
  runsDone(feed: string, n: number): Promise<FeedRun[]>;
}

/** `describe` adds to a timeout's message (a worker's output, say). */
export function feedWatch(redis: Redis, prefix: string, describe: () => string = () => ''): FeedWatch {
  const last = (feed: string) => redis.hgetall(feedKeys(prefix, feed).last);
  const queueTick = async (feed: string) => {
    const q = new Queue('feeds', { connection: redis, prefix });
    try {
      await q.add('feed-tick', { feed }, { removeOnComplete: { count: 1000 } });
    } finally {
      await q.close();
    }
  };
  const recorded = async (feed: string, check: (l: Record<string, string>) => boolean, ms = 30_000) => {
    let seen: Record<string, string> = {};
    try {
      await until(`feed ${feed}'s record`, async () => check((seen = await last(feed))), ms);
    } catch (e) {
      throw new Error(`${(e as Error).message}; last: ${JSON.stringify(seen)}\n${describe()}`);
    }
    return seen;
  };
  const runs = async (feed: string): Promise<FeedRun[]> => {
    const q = new Queue('import', { connection: redis, prefix });
    const states = ['completed', 'failed', 'active', 'waiting', 'waiting-children', 'delayed'] as const;
    const jobs = (await q.getJobs([...states])).filter((j) => (j.data as ImportJobData).feed === feed);
    await q.close();
    return jobs
      .sort((a, b) => (a.processedOn ?? Infinity) - (b.processedOn ?? Infinity) || a.timestamp - b.timestamp)
      .map((j) => ({
        file: basename((j.data as ImportJobData).request.file),
        fileName: (j.data as ImportJobData).fileName,
        queuedAt: j.timestamp,
        processedOn: j.processedOn ?? 0,
        result: (j.returnvalue as ImportJobResult | null) ?? null,
      }));
  };
  return {
    last,
    queueTick,
    recorded,
    runs,
    async tick(feed, n = 1) {
      const before = (await last(feed)).tickAt;
      await Promise.all(Array.from({ length: n }, () => queueTick(feed)));
      return recorded(feed, (l) => l.tickAt !== undefined && l.tickAt !== before && !/another tick/.test(l.tick ?? ''));
    },
    async settled(feed, count) {
      const keys = feedLedgerKeys(prefix, feed);
      await until(
        `feed ${feed}: ${count} file(s) done, and a tick after`,
        async () => {
          const done = Object.values(await redis.hgetall(keys.ledger)).filter(
            (v) => (JSON.parse(v) as { state: string }).state === 'done',
          ).length;
          const tick = (await last(feed)).tick ?? '';
          return (
            done >= count &&
            /^(nothing new|no file matches)|waits? for the next tick/.test(tick) &&
            (await redis.exists(keys.inflight, keys.tickLock)) === 0
          );
        },
        60_000,
      );
    },
    async runsDone(feed, n) {
      let found: FeedRun[] = [];
      try {
        await until(
          `feed ${feed}: ${n} run(s) finished`,
          async () => (found = await runs(feed)).length >= n && found.every((r) => r.result),
          60_000,
        );
      } catch (e) {
        throw new Error(`${(e as Error).message}\n${describe()}`);
      }
      return found;
    },
  };
}
