/**
 * A queued chunk as an OpenLineage run of its own (docs/operations.md "OpenLineage"): each push job that carries its
 * import's run (`lineage` in its data, set only when OPENLINEAGE_URL is) sends START when a worker begins sending it,
 * then COMPLETE once it is pushed or FAIL when it fails for good, with a `parent` facet naming the import's run. Its
 * runId comes from the push job's id and queued time: the same on every retry and after a worker was killed, and each
 * event is recorded under one id, so a chunk redone ends once.
 */
import type { Job } from 'bullmq';
import { logger } from '../logger.ts';
import { lineageDone, lineageFail, lineageStart, type LineageRun } from '../events/openlineage.ts';
import { lineageRun } from '../events/run-lineage.ts';
import type { PushJobData } from './catalog.ts';
import type { EventRecorder } from './events-queue.ts';

/** The OpenLineage run of a push job, or null (OpenLineage off, or a job queued without its parent run). */
function chunkRun(recorder: EventRecorder, job: Job): LineageRun | null {
  const d = job.data as Partial<PushJobData>;
  if (!recorder.lineage || !d.lineage) return null;
  return lineageRun(recorder.lineage, {
    key: chunkKey(job),
    kind: 'chunk',
    mapping: '',
    job: `${d.lineage.name}.push`,
    owner: d.owner ?? null,
    writes: true,
    parent: d.lineage,
    facts: { jobId: job.id, runId: d.runId, chunk: `${d.kind}-${d.index}` },
  });
}

const chunkKey = (job: Job) => `chunk:${job.id}@${job.timestamp}`;

/** START of the chunk's run (each attempt records it again under the same id: a no-op). */
export async function chunkStarted(recorder: EventRecorder, job: Job): Promise<void> {
  const run = chunkRun(recorder, job);
  if (run) await recorder.recordLineage('run.started', chunkKey(job), lineageStart(run, new Date().toISOString()));
}

/** COMPLETE: the chunk is pushed (its rows' outcomes are in its run's report). */
export async function chunkEnded(recorder: EventRecorder, job: Job): Promise<void> {
  const run = chunkRun(recorder, job);
  if (run) await recorder.recordLineage('run.finished', chunkKey(job), lineageDone(run, new Date().toISOString()));
}

/** FAIL: the push job failed for good (out of retries, or a failure no retry can fix). Never throws. */
export async function chunkFailed(recorder: EventRecorder, job: Job, err: unknown): Promise<void> {
  const run = chunkRun(recorder, job);
  if (!run) return;
  await recorder
    .recordLineage('run.failed', chunkKey(job), lineageFail(run, err, new Date().toISOString()))
    .catch((e: unknown) => logger.warn({ jobId: job.id, err: (e as Error).message }, 'cannot record a chunk FAIL'));
}
