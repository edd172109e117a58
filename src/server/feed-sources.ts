/**
 * The console's "Feed sources" section: for each feed in `jobs/`, where its files come from (the source's label, never
 * a secret), when its source was last listed, how many files it saw, has done and has waiting, and its last tick's
 * source error. Read from each feed's hash in Redis (written by the feed tick, src/queue/feed-tick.ts).
 */
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { ProductSyncError } from '../errors.ts';
import { loadFeeds } from '../queue/feeds.ts';
import { openFeedsQueue } from '../queue/queues.ts';
import { redisState } from '../redis-state.ts';
import { redact } from '../redact.ts';
import { sourceKind, sourceLabel } from '../sources/open.ts';
import { redisDownAnswer } from './redis-banner.ts';
import { within } from '../within.ts';

/** One feed as GET /feed-sources lists it. */
export interface FeedSourceRow {
  id: string;
  kind: string;
  source: string;
  mode: string;
  lastListingAt: string | null;
  seen: number | null;
  done: number | null;
  waiting: number | null;
  lastTick: string | null;
  lastTickAt: string | null;
  lastTickError: string | null;
  lastTickErrorAt: string | null;
}

/** Registers GET /feed-sources (JSON) on the console. */
export function registerFeedSources(app: FastifyInstance, options: { config: Config; jobsDir: string }): void {
  const queue = openFeedsQueue(options.config);
  app.addHook('onClose', async () => {
    await within(queue.close(), 1000);
  });
  const count = (v: string | undefined) => (v === undefined ? null : Number(v));
  app.get('/feed-sources', async (_req, reply) => {
    if (redisState.down) return reply.code(503).send(redisDownAnswer(redact(options.config.REDIS_URL)));
    let feeds;
    try {
      feeds = await loadFeeds(options.jobsDir);
    } catch (err) {
      if (err instanceof ProductSyncError) return reply.code(500).send({ error: err.message, code: err.code });
      throw err;
    }
    const rows: FeedSourceRow[] = [];
    for (const f of feeds) {
      const last = await queue.last(f.id);
      rows.push({
        id: f.id,
        kind: sourceKind(f.source),
        source: sourceLabel(f.source),
        mode: f.mode,
        lastListingAt: last.lastListingAt ?? null,
        seen: count(last.seen),
        done: count(last.done),
        waiting: count(last.waiting),
        lastTick: last.tick ?? null,
        lastTickAt: last.tickAt ?? null,
        lastTickError: last.lastTickError ?? null,
        lastTickErrorAt: last.lastTickErrorAt ?? null,
      });
    }
    return { feeds: rows };
  });
}
