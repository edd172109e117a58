/**
 * The OpenLineage events of an undo (`product-sync undo`, the console's Undo), delivered at its end as an inline run's
 * are: START and one COMPLETE / ABORT, or START and FAIL when it ended without a report. An undo is a run of the job
 * of the import it takes back (its feed, else its mapping), reading that import's sheet and writing to the same API
 * dataset, with `outputStatistics` the items it put back. A dry run (a plan: nothing sent, no report) sends nothing;
 * an undo whose run cannot be read (a wrong run id) is no run of any job and sends nothing either.
 */
import { basename } from 'node:path';
import type { Config } from '../config.ts';
import { logger } from '../logger.ts';
import { undoneOrigin } from '../pipeline/undo/undo-runs.ts';
import type { UndoSummary } from '../pipeline/undo/undo-report.ts';
import { makeEvent, type ProductSyncEvent } from './catalog.ts';
import { loadEndpoints } from './endpoints.ts';
import { deliverInline, type DeliveryRecord } from './inline.ts';
import { lineageDone, lineageFail, lineageJobName, lineageStart, type LineageEvent } from './openlineage.ts';
import { lineageRun, lineageSettings } from './run-lineage.ts';

/** How an undo ended: its summary (its report written), or the error it failed with. */
export type UndoOutcome = { summary: UndoSummary; dir: string | null } | { failed: unknown };

/**
 * Sends the undo's events to OPENLINEAGE_URL (nothing when it is unset), retried for WEBHOOK_INLINE_SECONDS; never
 * throws. `target` and `reportDir` name the run undone, as the undo was asked.
 */
export async function deliverUndoLineage(
  config: Config,
  undo: { target: string; reportDir: string },
  outcome: UndoOutcome,
): Promise<DeliveryRecord[]> {
  const settings = lineageSettings(config);
  if (!settings) return [];
  try {
    const origin = await undoneOrigin(undo.target, undo.reportDir);
    if (!origin) return [];
    const ended = 'summary' in outcome ? outcome.summary : undefined;
    const reportDir = 'summary' in outcome ? (outcome.dir ?? undefined) : undefined;
    const at = new Date().toISOString();
    const key = ended ? `${ended.runId}@${ended.startedAt}` : `undo-${origin.runId}@${at}`;
    const run = lineageRun(settings, {
      key,
      kind: 'undo',
      mapping: origin.mapping,
      // The job of the run undone (an import's name: no `.undo`), its sheet and its API dataset.
      job: lineageJobName('import', basename(origin.mapping), origin.feed),
      source: origin.source,
      owner: origin.owner,
      writes: true,
      facts: {
        runId: ended?.runId,
        undoes: ended?.undoes ?? origin.runId,
        reportDir,
      },
    });
    const pairs: [ProductSyncEvent, LineageEvent][] = [
      [makeEvent('run.started', key, { undo: ended?.runId }), lineageStart(run, ended?.startedAt ?? at)],
      ended
        ? [
            makeEvent('run.finished', key, { undo: ended.runId }),
            lineageDone(run, ended.finishedAt, { aborted: ended.aborted, rowsWritten: ended.counts.restored }),
          ]
        : [makeEvent('run.failed', key, {}), lineageFail(run, (outcome as { failed: unknown }).failed, at)],
    ];
    const endpoints = (await loadEndpoints(config)).filter((e) => e.kind === 'openlineage');
    return await deliverInline(
      pairs.map(([e]) => e),
      endpoints,
      {
        windowMs: config.WEBHOOK_INLINE_SECONDS * 1000,
        baseMs: config.WEBHOOK_RETRY_BASE_MS,
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
      },
      new Map(pairs.map(([e, l]) => [e.id, l])),
    );
  } catch (err) {
    logger.warn({ err: (err as Error).message }, 'the undo’s OpenLineage events were not sent');
    return [];
  }
}
