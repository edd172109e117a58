import { createHash } from 'node:crypto';

// What the data of a run's last event (run.finished, run.aborted) holds first (the run, how it started) and next (what
// it ran, how it ended).
const RUN_OF = ['runId', 'jobId?', 'origin?', 'feed?', 'kind'] as const;
const RUN_END = ['exitCode', 'file', 'mapping', 'mode', 'dryRun', 'startedAt', 'finishedAt', 'counts'] as const;

/**
 * The event catalogue (docs/operations.md): every event product-sync sends, what it means and what its `data` holds.
 * Rules as data: the docs, the endpoint filters and the tests read this table.
 */
export const EVENT_TYPES = {
  'run.queued': {
    when: 'an import was queued (upload, `enqueue`, a feed tick)',
    data: ['jobId', 'origin', 'feed?', 'file', 'fileName?', 'mapping', 'mode', 'dryRun'],
  },
  'run.started': {
    when: 'a worker (or the inline `import`) started the run',
    data: ['jobId?', 'runId?', 'origin', 'feed?', 'file', 'mapping', 'startedAt'],
  },
  'run.finished': {
    when: 'the run ended and its report is written: every row succeeded (status ok), some did not (status issues), or its quality gate held it, nothing written (status held, with held: the gate, the invalid share, the rules that failed)',
    data: [
      ...RUN_OF,
      'status',
      ...RUN_END,
      'scope?',
      'withheld?',
      'held?',
      'issues',
      'scorecard?',
      'reportDir',
      'links?',
    ],
  },
  'run.failed': {
    when: 'the run failed before a report could be written (bad mapping, unreadable file, retries exhausted)',
    data: ['jobId?', 'runId?', 'feed?', 'file', 'mapping', 'error'],
  },
  'run.aborted': {
    when: 'the run stopped early: archive guard tripped, lease lost, interrupted, API unavailable; its report lists what was not attempted',
    data: [...RUN_OF, 'reason', 'code', 'message', ...RUN_END, 'reportDir', 'links?'],
  },
  'feed.missed': {
    when: "a feed's expected time (`expect:`) passed with no successful run since the expected time before it",
    data: ['feed', 'expect', 'timezone', 'expectedAt', 'windowStart', 'lastSuccessAt'],
  },
  'feed.recovered': {
    when: 'a feed that was overdue has a successful run again',
    data: ['feed', 'runId', 'jobId?', 'overdueSince', 'recoveredAt'],
  },
  'feed.no_new_file': {
    when: 'a feed tick found nothing new to import (no file, a file still arriving, the newest already imported, or refused)',
    data: ['feed', 'tickAt', 'reason', 'file'],
  },
} as const;

/** A type of event. */
export type EventType = keyof typeof EVENT_TYPES;

/** Every event type, in catalogue order. */
export const EVENT_TYPE_NAMES = Object.keys(EVENT_TYPES) as EventType[];

/** An event as sent: the JSON body of a webhook (`id` goes in the `webhook-id` header). */
export interface ProductSyncEvent {
  id: string;
  type: EventType;
  /** ISO 8601, when the event happened. */
  timestamp: string;
  data: Record<string, unknown>;
}

/**
 * The id of an event: deterministic from what it reports (`key`: a run id, a job id and its queued time, a feed and its
 * expected time) and its type, so a step redone after a crash records the same event, not a second one.
 */
export function eventId(type: EventType, key: string): string {
  return `evt_${createHash('sha256').update(`${type}\n${key}`).digest('hex').slice(0, 32)}`;
}

/** An event of `type` about `key` (see {@link eventId}). */
export function makeEvent(
  type: EventType,
  key: string,
  data: Record<string, unknown>,
  at: Date = new Date(),
): ProductSyncEvent {
  return { id: eventId(type, key), type, timestamp: at.toISOString(), data: dropUndefined(data) };
}

/** The body of the webhook of `event`: `{type, timestamp, data}`. */
export function eventBody(event: ProductSyncEvent): string {
  return JSON.stringify({ type: event.type, timestamp: event.timestamp, data: event.data });
}

function dropUndefined(o: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined));
}
