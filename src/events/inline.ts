import { setTimeout as sleep } from 'node:timers/promises';
import { logger } from '../logger.ts';
import type { RunSummary } from '../pipeline/report/report.ts';
import { retryDelay } from './backoff.ts';
import type { ProductSyncEvent } from './catalog.ts';
import { deliverOnce } from './deliver.ts';
import { wants, type Endpoint } from './endpoints.ts';

/** How one event went to one endpoint (summary.json `events`, report.ts). */
export type DeliveryRecord = NonNullable<RunSummary['events']>[number];

/** Settings of an inline delivery. */
export interface InlineDelivery {
  /** How long the events are retried, from the first attempt (WEBHOOK_INLINE_SECONDS). */
  windowMs: number;
  baseMs: number;
  timeoutMs: number;
}

/**
 * Delivers `events` to every endpoint that wants them (the OpenLineage endpoint: those with an OpenLineage event in
 * `lineage`, by event id, which it is sent instead), each pair on its own (at the end of an inline run: no queue to
 * keep them), retrying with the queue's backoff for `windowMs` at most. Never throws: each pair's outcome is a record.
 */
export async function deliverInline(
  events: ProductSyncEvent[],
  endpoints: Endpoint[],
  opts: InlineDelivery,
  lineage: ReadonlyMap<string, unknown> = new Map(),
): Promise<DeliveryRecord[]> {
  const since = Date.now();
  const pairs = events.flatMap((event) =>
    endpoints.filter((e) => wants(e, event.type, lineage.get(event.id))).map((e) => ({ event, e })),
  );
  return Promise.all(
    pairs.map(async ({ event, e }): Promise<DeliveryRecord> => {
      for (let attempts = 1; ; attempts++) {
        try {
          await deliverOnce(e, event, opts.timeoutMs, lineage.get(event.id));
          return { id: event.id, type: event.type, endpoint: e.id, state: 'delivered', attempts };
        } catch (err) {
          const delay = retryDelay(attempts, { baseMs: opts.baseMs, windowMs: opts.windowMs, since });
          if (delay < 0) {
            const error = (err as Error).message;
            logger.warn(
              { event: event.type, id: event.id, endpoint: e.id, attempts, err: error },
              'event not delivered',
            );
            return { id: event.id, type: event.type, endpoint: e.id, state: 'failed', attempts, error };
          }
          await sleep(delay);
        }
      }
    }),
  );
}
