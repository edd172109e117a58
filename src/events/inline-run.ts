import { join } from 'node:path';
import type { Config } from '../config.ts';
import { writeFileAtomic } from '../pipeline/report/atomic.ts';
import type { ProductSyncEvent } from './catalog.ts';
import type { Endpoint } from './endpoints.ts';
import { deliverInline, type DeliveryRecord } from './inline.ts';
import { runEndEvent, runFailedEvent, runStartedEvent, type EndedRun } from './run-events.ts';
import { lineageEnd, lineageFail, lineageStart, type LineageEvent, type LineageRun } from './openlineage.ts';
import { lineageRun, lineageSettings } from './run-lineage.ts';
import { lineageFacts } from '../pipeline/run/column-stats.ts';

/**
 * The events of an inline run (`import` without a worker), delivered at its end: run.started and its end event (or
 * run.failed when it ended without a report), retried for WEBHOOK_INLINE_SECONDS. With a report, summary.json gets
 * `events`: each event with its delivery state per endpoint. No endpoint configured: nothing is sent or written.
 */
export async function deliverInlineRun(
  config: Config,
  allEndpoints: readonly Endpoint[],
  outcome: { result: EndedRun; mapping?: string } | { failed: unknown; file: string; mapping: string },
  kind: LineageRun['kind'] = 'import',
): Promise<DeliveryRecord[]> {
  // Webhooks tell imports; the OpenLineage endpoint hears of every run that reads a sheet.
  const endpoints = kind === 'import' ? allEndpoints : allEndpoints.filter((e) => e.kind === 'openlineage');
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
  const opts = {
    windowMs: config.WEBHOOK_INLINE_SECONDS * 1000,
    baseMs: config.WEBHOOK_RETRY_BASE_MS,
    timeoutMs: config.WEBHOOK_TIMEOUT_MS,
  };
  const ol = endpoints.filter((e) => e.kind === 'openlineage');
  const hooks = endpoints.filter((e) => e.kind !== 'openlineage');
  const lineage = ol.length > 0 ? await inlineLineage(config, events, outcome, kind) : null;
  const records = (
    await Promise.all([
      deliverInline(events, hooks, opts),
      lineage ? deliverInline(lineage.events, ol, opts, lineage.bodies) : [],
    ])
  ).flat();
  if ('result' in outcome) {
    const { result } = outcome;
    result.summary.events = records;
    await writeFileAtomic(join(result.reportDir, 'summary.json'), `${JSON.stringify(result.summary, null, 2)}\n`);
  }
  return records;
}

/**
 * The OpenLineage events of an inline run, by the id of the event each goes with (empty without OPENLINEAGE_URL): its
 * START and its end, or START and FAIL for a run that ended without a report. The runId comes from the run id and its
 * start (kept in run.json across resumes): a run killed and resumed ends once, under the runId it started with.
 */
async function inlineLineage(
  config: Config,
  events: ProductSyncEvent[],
  outcome: { result: EndedRun; mapping?: string } | { failed: unknown; file: string; mapping: string },
  kind: LineageRun['kind'],
): Promise<{ events: ProductSyncEvent[]; bodies: Map<string, LineageEvent> }> {
  const settings = lineageSettings(config);
  const out = new Map<string, LineageEvent>();
  if (!settings) return { events: [], bodies: out };
  if ('result' in outcome) {
    const { result } = outcome;
    const s = result.summary;
    const facts = await lineageFacts(result.reportDir);
    const run = lineageRun(settings, {
      key: `${result.runId}@${s.startedAt}`,
      kind,
      // The mapping file's name (what a queued run and a failed one know too), else the mapping's own name.
      mapping: outcome.mapping ?? s.mapping,
      source: s.source.file,
      owner: facts.owner,
      writes: kind === 'import' && !s.dryRun,
      facts: { runId: result.runId, reportDir: result.reportDir },
    });
    const [started, ended] = events;
    out.set(started!.id, lineageStart(run, s.startedAt));
    // An import's end is an ABORT when its end event is run.aborted; other runs, when they were stopped.
    const aborted = kind === 'import' ? ended!.type === 'run.aborted' : s.aborted !== undefined;
    out.set(ended!.id, lineageEnd(run, { summary: s, stats: facts.stats, aborted }));
    return { events, bodies: out };
  }
  {
    const failed = events[0]!;
    const run = lineageRun(settings, {
      key: failed.id,
      kind,
      mapping: outcome.mapping,
      source: outcome.file,
      writes: false,
      facts: {},
    });
    // The run.failed event goes with the FAIL; the START goes with a twin of it (for the OpenLineage endpoint only).
    const twin: ProductSyncEvent = { ...failed, id: `${failed.id}-start`, type: 'run.started' };
    out.set(twin.id, lineageStart(run, failed.timestamp));
    out.set(failed.id, lineageFail(run, outcome.failed, failed.timestamp));
    return { events: [twin, failed], bodies: out };
  }
}

/** The endpoints' loader, for a caller that loads this module only when endpoints are configured. */
export { loadEndpoints } from './endpoints.ts';
