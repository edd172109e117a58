/**
 * Every Redis key product-sync writes besides BullMQ's own, built in one place: the queue's and the console's
 * (feeds, runs' chunks, queued leases, the runs index), the fleet's pace and the reference cache. `prefix` is the
 * queue prefix (`queuePrefix(config)`, or `QUEUE_PREFIX` where no queue is involved). The owner lease's keys are
 * `lease/lease-redis.ts`'s (one hash tag per lease, docs/concurrency.md).
 */
import { createHash } from 'node:crypto';

/**
 * A feed's bookkeeping: sha256 of the files it imported, the files the input gate refused (queue/feed-gate.ts), its
 * last tick / run (a hash: `lastSuccessAt`, `overdue`…, queue/feed-deadlines.ts).
 */
export function feedKeys(prefix: string, feed: string): { imported: string; refused: string; last: string } {
  return {
    imported: `${prefix}:feed:${feed}:imported`,
    refused: `${prefix}:feed:${feed}:refused`,
    last: `${prefix}:feed:${feed}:last`,
  };
}

/** A feed's ledger (queue/feed-ledger.ts): its files, the last listing, the file in flight, the tick's lock. */
export function feedLedgerKeys(prefix: string, feed: string) {
  const base = `${prefix}:feed:${feed}`;
  return {
    ledger: `${base}:ledger`,
    listing: `${base}:listing`,
    inflight: `${base}:inflight`,
    known: `${base}:known`,
    tickLock: `${base}:tick-lock`,
    tickAgain: `${base}:tick-again`,
    held: `${base}:held`,
  };
}

/** Hash of a run's finished chunks (`rows-3` → `sent:failed`), summed into the parent's progress. */
export function runChunksKey(prefix: string, runId: string): string {
  return `${prefix}:run:${runId}:chunks`;
}

/** The registry of queued runs' owner leases, kept alive between their jobs (lease/lease-keeper.ts). */
export function queuedLeasesKey(prefix: string): string {
  return `${prefix}:leases:queued`;
}

/**
 * The console's runs index (queue/run-index.ts), inside the import queue's own key space (`toKey` is the queue's):
 * the sorted set, the mark that the jobs kept before it were indexed, and the jobs' hashes' prefix.
 */
export function runIndexKeys(toKey: (name: string) => string): { index: string; built: string; jobs: string } {
  return { index: toKey('ps-runs-by-queued'), built: toKey('ps-runs-by-queued-built'), jobs: toKey('') };
}

/** An API's shared pace (api/shared-rate.ts): one per product API, whatever the owner. */
export function sharedRateKey(prefix: string, apiUrl: string): string {
  return `${prefix}:api-rate:${createHash('sha256').update(apiUrl).digest('hex').slice(0, 12)}`;
}

/** A reference-cache entry (api/reference-cache.ts). */
export function referenceKey(prefix: string, key: string): string {
  return `${prefix}:ref:${key}`;
}

/**
 * The per-owner cap's slots (queue/owner-slots.ts): a sorted set per (product API, owner), and the hash of those sets
 * (field: the set's key, value: its owner), read by `/metrics`.
 */
export function ownerSlotsKeys(prefix: string, owner: string, apiUrl: string): { slots: string; owners: string } {
  const api = createHash('sha256').update(apiUrl).digest('hex').slice(0, 12);
  return { slots: `${prefix}:owner-slots:${api}:${owner.toLowerCase()}`, owners: `${prefix}:owner-slots` };
}
