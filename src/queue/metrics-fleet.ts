/**
 * The fleet's part of `/metrics`, read from Redis at each scrape (metrics-page.ts): BullMQ's metrics of every queue of
 * the catalog, each feed's last success and overdue mark, the events pending and dead. Its own module: a process that
 * serves only its own counters (an inline import) does not load BullMQ for it.
 */
import { Queue } from 'bullmq';
import type { Config } from '../config.ts';
import { QUEUES } from './catalog.ts';
import { queueConnection, queuePrefix, quietOnErrors } from './connection.ts';
import { feedStatuses } from './feed-status.ts';
import { chunksInProgress } from './owner-slots.ts';
import type { FleetMetrics } from '../metrics/metrics-page.ts';
import { gaugeText, mergePages } from '../metrics/prom-text.ts';

/** The queue of run events (issue 25's events half); its counts are read whether or not this build has it. */
export const EVENTS_QUEUE = 'events';

/** Opens the Redis side of the metrics: the catalog's queues (and `events`) on one connection. */
export function fleetMetrics(config: Config): FleetMetrics {
  const connection = queueConnection(config);
  const prefix = queuePrefix(config);
  const names = [...new Set<string>([...Object.values(QUEUES), EVENTS_QUEUE])];
  const queues = new Map(names.map((n) => [n, quietOnErrors(new Queue(n, { connection, prefix }))]));
  const exported = new Set<string>(Object.values(QUEUES));
  return {
    async text() {
      const feeds = await feedStatuses(queues.get(QUEUES.feeds)!, connection, prefix);
      const bull = await Promise.all([...exported].map((n) => queues.get(n)!.exportPrometheusMetrics()));
      const events = await queues
        .get(EVENTS_QUEUE)!
        .getJobCounts('waiting', 'delayed', 'active', 'prioritized', 'failed');
      const pending = events.waiting! + events.delayed! + events.active! + events.prioritized!;
      const inProgress = await chunksInProgress(connection, prefix);
      return mergePages([
        ...bull,
        gaugeText(
          'product_sync_feed_last_success_timestamp_seconds',
          'When a run of the feed last succeeded (ended neither aborted nor with failed rows), seconds since the epoch',
          feeds.filter((f) => f.lastSuccessAt).map((f) => [{ feed: f.id }, Date.parse(f.lastSuccessAt!) / 1000]),
        ),
        gaugeText(
          'product_sync_feed_overdue',
          'Whether the feed is overdue: no run succeeded since its previous expected time (1) or not (0)',
          feeds.map((f) => [{ feed: f.id }, f.overdue ? 1 : 0]),
        ),
        gaugeText(
          'product_sync_owner_chunks_in_progress',
          'Chunks of the owner being pushed across the fleet now (capped by OWNER_MAX_CHUNKS when set)',
          [...inProgress].map(([owner, n]) => [{ owner }, n]),
        ),
        gaugeText('product_sync_events_pending', 'Run events waiting to be delivered (waiting, delayed, being sent)', [
          [{}, pending],
        ]),
        gaugeText('product_sync_events_dead', 'Run events whose delivery gave up (kept as dead, redeliverable)', [
          [{}, events.failed!],
        ]),
      ]);
    },
    async close() {
      await Promise.all([...queues.values()].map((q) => q.close()));
      connection.disconnect();
    },
  };
}
