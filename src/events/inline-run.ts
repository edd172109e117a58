import { join } from 'node:path';
import type { Config } from '../config.ts';
import { writeFileAtomic } from '../pipeline/report/atomic.ts';
import type { ProductSyncEvent } from './catalog.ts';
import type { Endpoint } from './endpoints.ts';
import { deliverInline, type DeliveryRecord } from './inline.ts';
import { runEndEvent, runFailedEvent, runStartedEvent, type EndedRun } from './run-events.ts';

/**
 * The events of an inline run (`import` without a worker), delivered at its end: run.started and its end event (or
 * run.failed when it ended without a report), retried for WEBHOOK_INLINE_SECONDS. With a report, summary.json gets
 * `events`: each event with its delivery state per endpoint. No endpoint configured: nothing is sent or written.
 */
export async function deliverInlineRun(
  config: Config,
  endpoints: readonly Endpoint[],
  outcome: { result: EndedRun } | { failed: unknown; file: string; mapping: string },
): Promise<DeliveryRecord[]> {
  if (endpoints.length === 0) return [];
  let events: ProductSyncEvent[];
  if ('result' in outcome) {
    const { result } = outcome;
    const s = result.summary;
    events = [
      runStartedEvent(
        result.runId,
        { origin: 'cli' },
        {
          runId: result.runId,
          file: s.source.file,
          mapping: s.mapping,
          startedAt: s.startedAt,
        },
      ),
      runEndEvent(result, { origin: 'cli' }),
    ];
  } else {
    events = [
      runFailedEvent(
        `${outcome.file}@${Date.now()}`,
        { origin: 'cli' },
        { file: outcome.file, mapping: outcome.mapping },
        outcome.failed,
      ),
    ];
  }
  const records = await deliverInline(events, [...endpoints], {
    windowMs: config.WEBHOOK_INLINE_SECONDS * 1000,
    baseMs: config.WEBHOOK_RETRY_BASE_MS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  });
  if ('result' in outcome) {
    const { result } = outcome;
    result.summary.events = records;
    await writeFileAtomic(join(result.reportDir, 'summary.json'), `${JSON.stringify(result.summary, null, 2)}\n`);
  }
  return records;
}

/** The endpoints' loader, for a caller that loads this module only when endpoints are configured. */
export { loadEndpoints } from './endpoints.ts';
