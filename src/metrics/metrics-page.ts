/**
 * The whole `/metrics` page of a process (docs/operations.md): its own counters (metrics.ts) and, when it has Redis,
 * what Redis holds for the whole fleet — BullMQ's metrics of every queue of the catalog, each feed's last success and
 * whether it is overdue, the events waiting to be delivered and the dead ones — merged into one valid page
 * (prom-text.ts). A Redis that does not answer in time leaves its part out (`product_sync_redis_up 0`): the scrape
 * still answers.
 */
import type { ProcessMetrics } from './metrics.ts';
import { gaugeText, mergePages } from './prom-text.ts';
import { redisState } from '../redis-state.ts';

/** How long the Redis part of a scrape may take before it is left out. */
const REDIS_MS = 3000;

/** What a `/metrics` page reads from Redis (metrics-fleet.ts); close() when done. */
export interface FleetMetrics {
  text(): Promise<string>;
  close(): Promise<void>;
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
