/**
 * POST /uploads: a sheet and its mapping's name from the console's form, checked by the input gate as `import` would,
 * then queued as an import job (the same sheet twice is one run: the answer names it, and how to re-run it).
 */
import type { FastifyInstance } from 'fastify';
import { ProductSyncError } from '../errors.ts';
import { checkInput } from '../pipeline/run/input-gate.ts';
import { MODES } from '../pipeline/sync/plan.ts';
import type { importQueueClient } from '../queue/enqueue.ts';
import { apiRun } from './runs.ts';
import { handleUpload, refusedInput, type Upload } from './upload.ts';
import { traced } from '../tracing.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Registers POST /uploads. */
export function registerUploads(
  app: FastifyInstance,
  opts: {
    client: ReturnType<typeof importQueueClient>;
    uploadDir: string;
    mappingsDir: string;
    maxUpload: number;
  },
): void {
  const { client, uploadDir, mappingsDir, maxUpload } = opts;
  app.post('/uploads', (req, reply) =>
    handleUpload(req, reply, uploadDir, maxUpload, (upload) =>
      // Tracing on: the upload is the root of its run's trace (the job added in it carries the context to the worker).
      traced('console.upload', { file: upload.name, mapping: upload.fields.mapping }, () => queueUpload(upload)),
    ),
  );

  /** The stored upload checked and queued: the answer to send. */
  async function queueUpload(upload: Upload) {
    const { path, name, fields } = upload;
    const mapping = fields.mapping ?? '';
    // The names GET /mappings lists, and nothing else: never a path (nor a name with an extension, which loadMapping
    // would take for a path).
    if (!/^[A-Za-z0-9_-][A-Za-z0-9_.-]*$/.test(mapping) || /\.(ya?ml|json)$/i.test(mapping))
      return { code: 400, body: { error: `unknown mapping "${mapping}"` } };
    if (fields.owner && !UUID.test(fields.owner))
      return { code: 400, body: { error: `owner must be a company uuid, got "${fields.owner}"` } };
    if (fields.mode && !(MODES as readonly string[]).includes(fields.mode))
      return { code: 400, body: { error: `mode must be one of ${MODES.join(', ')}` } };
    const mode = fields.mode || 'upsert';
    // The input gate: what `import` refuses before sending anything is refused here, with its message, before
    // anything is queued (and the file is removed: only a kept answer keeps it).
    let mappingPath: string;
    try {
      mappingPath = (await checkInput({ file: path, mapping }, { mappingsDir })).mapping.file;
    } catch (err) {
      if (err instanceof ProductSyncError) return refusedInput(err, upload);
      throw err;
    }
    const waitLock = fields.waitLock ? Number(fields.waitLock) : undefined;
    if (waitLock !== undefined && !(waitLock >= 0))
      return { code: 400, body: { error: `waitLock must be a number of seconds, got "${fields.waitLock}"` } };
    const { jobId, existed } = await client.enqueue({
      request: {
        file: path,
        mapping: mappingPath,
        mode,
        dryRun: fields.dryRun === 'true',
        ...(fields.owner ? { owner: fields.owner } : {}),
      },
      origin: 'upload',
      fileName: name,
      step: 'prepare',
      ...(waitLock !== undefined ? { waitLockSeconds: waitLock } : {}),
    });
    if (!existed)
      return { code: 202, body: { id: jobId, existed, status: 'queued', url: `/runs/${jobId}` }, keep: true };
    // The same sheet already queued or run: its job reads the copy stored the first time, this one is not needed.
    // Nothing runs: a sheet that already ran is run again only when asked (its rerun link). The answer names its
    // latest run: re-runs are `<id>-r2`, `<id>-r3`… (enqueueImport).
    let latest = jobId;
    for (let n = 2; (await client.queue.getJob(`${jobId}-r${n}`)) !== undefined; n++) latest = `${jobId}-r${n}`;
    const run = await client.status(latest);
    const status = run ? apiRun(run).status : 'queued';
    const ran = status !== 'queued' && status !== 'running';
    return {
      code: 200,
      body: {
        id: latest,
        existed,
        status,
        url: `/runs/${latest}`,
        message: ran
          ? `this sheet already ran with this mapping, owner and mode (${status}): nothing was queued; re-run it to import it again`
          : `this sheet is already ${status} with this mapping, owner and mode: same run`,
        rerun: ran ? `/runs/${latest}/rerun` : null,
      },
    };
  }
}
