/**
 * The runs of the console: the list (newest queued first, filtered by feed, mapping or file), one run, its re-run, a
 * held run applied anyway, and its report files.
 */
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { REPORT_FILES as REPORT_ALL_FILES } from '../pipeline/report/report.ts';
import type { ImportJobData } from '../queue/catalog.ts';
import { runStatus, type importQueueClient } from '../queue/enqueue.ts';
import { listRunIds } from '../queue/run-index.ts';
import { apiRun, runMatches, type ApiRun, type RunFilter } from './runs.ts';

/** Pages of the run index a filtered runs list reads at most per request. */
const RUN_FILTER_PAGES = 20;
/** The files a report can hold (report.ts): the only ones served. */
const REPORT_FILES = new Set<string>(REPORT_ALL_FILES);
const RUN_ID = /^[a-z0-9-]{8,80}$/i;

/** Registers GET /runs, GET /runs/:id, POST /runs/:id/rerun, POST /runs/:id/apply, GET /runs/:id/files/:name. */
export function registerRunRoutes(
  app: FastifyInstance,
  opts: { client: ReturnType<typeof importQueueClient>; reportDir: string },
): void {
  const { client, reportDir } = opts;
  app.get<{
    Querystring: { limit?: string; before?: string; feed?: string; mapping?: string; file?: string };
  }>('/runs', async (req, reply) => {
    const limit = req.query.limit === undefined ? 50 : Number(req.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 500)
      return reply.code(400).send({ error: 'limit must be a whole number from 1 to 500' });
    let before = req.query.before;
    if (before !== undefined && !/^\d+\.[A-Za-z0-9-]+$/.test(before))
      return reply.code(400).send({ error: 'before must be the next cursor of an earlier page' });
    const { feed, mapping, file } = req.query;
    const filter: RunFilter = {
      ...(feed ? { feed } : {}),
      ...(mapping ? { mapping } : {}),
      ...(file ? { file } : {}),
    };
    const filtered = Object.keys(filter).length > 0;
    // Filtered: pages are read until `limit` runs match or RUN_FILTER_PAGES pages were read (`next` goes on after).
    const runs: ApiRun[] = [];
    let next: string | null = null;
    for (let pages = 0; pages < (filtered ? RUN_FILTER_PAGES : 1); pages++) {
      const page = await listRunIds(client.queue, limit - runs.length, before);
      const statuses = await Promise.all(page.ids.map((id) => runStatus(client.queue, id)));
      for (const s of statuses) if (s !== null && runMatches(apiRun(s), filter)) runs.push(apiRun(s));
      next = page.next;
      if (next === null || runs.length >= limit) break;
      before = next;
    }
    return { runs, next };
  });

  app.get<{ Params: { id: string } }>('/runs/:id', async (req, reply) => {
    const s = await client.status(req.params.id);
    return s ? apiRun(s) : reply.code(404).send({ error: 'no such run' });
  });

  app.post<{ Params: { id: string } }>('/runs/:id/rerun', async (req, reply) => {
    const ended = await endedRun(client, req.params.id);
    if ('error' in ended) return reply.code(ended.code).send(ended.error);
    // The same file and mapping (and owner, mode, dry run, sheet, language) as a new run, with an id of its own.
    const { jobId, existed } = await client.enqueue(again(ended.data, ended.data.request), { rerun: true });
    return reply
      .code(existed ? 200 : 202)
      .send({ id: jobId, existed, rerunOf: ended.id, status: 'queued', url: `/runs/${jobId}` });
  });

  // A run its quality gate held, applied anyway: the same run queued again with its gate waived (docs/mapping.md
  // "Quality gates"). Like every run, it writes only under its owner's lease; the held run stays as it was. Applied
  // once: the same held sheet applied again answers with the run already queued (or run).
  app.post<{ Params: { id: string } }>('/runs/:id/apply', async (req, reply) => {
    const ended = await endedRun(client, req.params.id);
    if ('error' in ended) return reply.code(ended.code).send(ended.error);
    if (ended.status !== 'held')
      return reply
        .code(409)
        .send({ error: 'only a run its quality gate held can be applied anyway', status: ended.status });
    const { jobId, existed } = await client.enqueue(again(ended.data, { ...ended.data.request, waiveGate: true }));
    return reply
      .code(existed ? 200 : 202)
      .send({ id: jobId, existed, appliedFrom: ended.id, status: 'queued', url: `/runs/${jobId}` });
  });

  app.get<{ Params: { id: string; name: string } }>('/runs/:id/files/:name', async (req, reply) => {
    const s = await client.status(req.params.id);
    // The files live in the run's directory, named by the run (not by the job id the route takes).
    const runId = s?.result?.runId;
    const { name } = req.params;
    if (!s || !runId || !RUN_ID.test(runId) || !REPORT_FILES.has(name))
      return reply.code(404).send({ error: 'no such file' });
    const file = join(reportDir, runId, name);
    if (!existsSync(file)) return reply.code(404).send({ error: 'no such file' });
    reply.header('content-disposition', `attachment; filename="${runId}-${name}"`);
    return reply
      .type(
        name.endsWith('.json')
          ? 'application/json'
          : name.endsWith('.csv')
            ? 'text/csv; charset=utf-8'
            : 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
      )
      .send(createReadStream(file));
  });
}

/** An ended run's job data, or why it cannot be queued again (its HTTP status and body). */
async function endedRun(
  client: ReturnType<typeof importQueueClient>,
  id: string,
): Promise<{ id: string; data: ImportJobData; status: ApiRun['status'] } | { code: number; error: object }> {
  const job = await client.queue.getJob(id);
  const s = job ? await client.status(id) : null;
  if (!job || !s) return { code: 404, error: { error: 'no such run' } };
  const status = apiRun(s).status;
  if (status === 'queued' || status === 'running')
    return { code: 409, error: { error: `the run is ${status}: re-run it once it has ended`, status } };
  const data = job.data as ImportJobData;
  if (!existsSync(data.request.file))
    return { code: 410, error: { error: 'the sheet of this run is no longer kept: upload it again' } };
  return { id: s.id, data, status };
}

/** The job data that runs `data`'s sheet again with `request`. */
function again(data: ImportJobData, request: ImportJobData['request']): ImportJobData {
  return {
    request,
    origin: data.origin,
    ...(data.feed ? { feed: data.feed } : {}),
    ...(data.fileName ? { fileName: data.fileName } : {}),
    ...(data.sha256 ? { sha256: data.sha256 } : {}),
    ...(data.waitLockSeconds !== undefined ? { waitLockSeconds: data.waitLockSeconds } : {}),
    step: 'prepare',
  };
}
