/**
 * The whole `/metrics` page of a process (docs/operations.md): its own counters (metrics.ts) and, when it has Redis,
 * what Redis holds for the whole fleet — BullMQ's metrics of every queue of the catalog, each feed's last success and
 * whether it is overdue, the events waiting to be delivered and the dead ones — merged into one valid page
 * (prom-text.ts). A Redis that does not answer in time leaves its part out (`product_sync_redis_up 0`): the scrape
 * still answers.
 */
import { Queue } from 'bullmq';
import type { Config } from '../config.ts';
import { QUEUES } from './catalog.ts';
import { queueConnection, queuePrefix, quietOnErrors } from './connection.ts';
import { feedStatuses } from './feed-status.ts';
import type { ProcessMetrics } from './metrics.ts';
import { gaugeText, mergePages } from './prom-text.ts';
import { redisState } from './redis-state.ts';

/** The queue of run events (issue 25's events half); its counts are read whether or not this build has it. */
export const EVENTS_QUEUE = 'events';

/** How long the Redis part of a scrape may take before it is left out. */
const REDIS_MS = 3000;

/** What a `/metrics` page reads from Redis, on a connection of its own; close() when done. */
export interface FleetMetrics {
  text(): Promise<string>;
  close(): Promise<void>;
}

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

/** The page: the process's metrics, and the fleet's when `fleet` is given and Redis answers in time. */
export async function metricsPage(own: ProcessMetrics, fleet?: FleetMetrics): Promise<string> {
  const pages = [await own.text()];
  if (fleet) {
    let timer: NodeJS.Timeout | undefined;
    const fleetText = redisState.down
      ? undefined
      : await Promise.race([
          fleet.text().catch(() => undefined),
          new Promise<undefined>((r) => (timer = setTimeout(() => r(undefined), REDIS_MS))),
        ]).finally(() => clearTimeout(timer));
    pages.push(
      gaugeText('product_sync_redis_up', 'Whether Redis answered this scrape (0: its queues and feeds are left out)', [
        [{}, fleetText === undefined ? 0 : 1],
      ]),
    );
    if (fleetText) pages.push(fleetText);
  }
  return mergePages(pages);
}
