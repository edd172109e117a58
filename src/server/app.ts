import { timingSafeEqual } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import multipart from '@fastify/multipart';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { buildFile } from '../build-dir.ts';
import type { Config } from '../config.ts';
import { ProductSyncError } from '../errors.ts';
import { checkInput } from '../pipeline/run/input-gate.ts';
import { MODES } from '../pipeline/sync/plan.ts';
import { importQueueClient, runStatus } from '../queue/enqueue.ts';
import { listRunIds } from '../queue/run-index.ts';
import type { ImportJobData } from '../queue/catalog.ts';
import { boardQueues } from '../queue/queues.ts';
import { redisState } from '../redis-state.ts';
import { redact } from '../redact.ts';
import { registerDeadEvents } from './dead-events.ts';
import { registerFeedSources } from './feed-sources.ts';
import type { ProcessMetrics } from '../metrics/metrics.ts';
import { registerMapper } from './mapper.ts';
import { registerOpsRoutes } from './ops-routes.ts';
import { redisDownAnswer, withRedisBanner } from './redis-banner.ts';
import { apiRun, runMatches, type ApiRun, type RunFilter } from './runs.ts';
import { registerJsonBody } from './json-body.ts';
import { registerSameOrigin } from './same-origin.ts';
import { handleUpload, refusedInput } from './upload.ts';
import { registerUndo } from './undo-routes.ts';

/** Pages of the run index a filtered runs list reads at most per request. */
const RUN_FILTER_PAGES = 20;

/** Settings of the console. */
export interface ConsoleOptions {
  config: Config;
  /** The address the console listens on (`--host`): a name it answers for (same-origin.ts). */
  host?: string;
  /** Largest upload, bytes (default 200 MB). */
  maxUploadBytes?: number;
  mappingsDir?: string;
  /** The feed definitions (the Feed sources section); default `jobs`. */
  jobsDir?: string;
  /** `Bearer <token>` required when set. */
  token?: string;
  /** Basic auth required when set. */
  basic?: { user: string; password: string };
  /** This console's own counters on /metrics (ops-routes.ts); a registry of its own when unset. */
  metrics?: ProcessMetrics;
}

// /health answers within this (a Redis that takes longer is down for the console).
const HEALTH_PING_MS = 2000;
const NEEDS_REDIS = /^\/(?:runs|uploads|events|admin\/queues\/api)(?:[/?]|$)/;
const REPORT_FILES = new Set([
  'summary.json',
  'rows.csv',
  'rows.xlsx',
  'rejected.csv',
  'rejected.xlsx',
  'reconcile.csv',
  'reconcile.json',
  'issues.csv',
]);
const RUN_ID = /^[a-z0-9-]{8,80}$/i;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/**
 * Builds the console app (no listen): uploads, runs, report downloads, the mapper, the pages, Bull Board (read-only),
 * health.
 */
export async function buildConsole(options: ConsoleOptions): Promise<FastifyInstance> {
  const { config } = options;
  const uploadDir = resolve(config.UPLOAD_DIR);
  const reportDir = resolve(config.REPORT_DIR);
  const mappingsDir = resolve(options.mappingsDir ?? 'mappings');
  const maxUpload = options.maxUploadBytes ?? 200 * 1024 * 1024;
  await mkdir(uploadDir, { recursive: true });
  const app = Fastify({ logger: false, bodyLimit: 1024 * 1024 });
  const client = importQueueClient(config);
  const board = boardQueues(config);
  app.addHook('onClose', async () => {
    // Closing a queue waits for Redis: without it, the connections are dropped instead.
    await Promise.race([Promise.all([board.close(), client.close()]), new Promise((r) => setTimeout(r, 1000).unref())]);
  });

  // First of all: a request for another host (DNS rebinding) or a change from another site is refused before the
  // credentials are asked for (same-origin.ts).
  registerSameOrigin(app, {
    ...(options.host ? { bindHost: options.host } : {}),
    ...(config.PUBLIC_URL ? { publicUrl: config.PUBLIC_URL } : {}),
    ...(config.CONSOLE_HOSTS ? { consoleHosts: config.CONSOLE_HOSTS } : {}),
  });
  registerJsonBody(app);

  if (options.token || options.basic) {
    app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
      if (req.url === '/health') return;
      const auth = req.headers.authorization ?? '';
      const okBearer = options.token !== undefined && auth.startsWith('Bearer ') && same(auth.slice(7), options.token);
      let okBasic = false;
      if (options.basic && auth.startsWith('Basic ')) {
        const [user, ...rest] = Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':');
        okBasic = same(user ?? '', options.basic.user) && same(rest.join(':'), options.basic.password);
      }
      if (!okBearer && !okBasic) {
        if (options.basic) reply.header('www-authenticate', 'Basic realm="product-sync"');
        return reply.code(401).send({ error: 'unauthorized' });
      }
    });
  }

  // The console's connections report an outage at once (redis-state.ts); a first connection still on its way is not
  // one.
  const redisDown = () => redisState.down;
  // After the credentials are checked: routes that read or write the queue answer 503 at once while Redis is
  // away, instead of waiting for it to return.
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    if (NEEDS_REDIS.test(req.url) && redisDown())
      return reply.code(503).send(redisDownAnswer(redact(config.REDIS_URL)));
  });

  await app.register(multipart, { limits: { fileSize: maxUpload, files: 1, fields: 10 } });

  app.get('/health', async (_req, reply) => {
    const up = !redisDown() && (await board.answers(HEALTH_PING_MS));
    return reply.code(up ? 200 : 503).send({ status: up ? 'ok' : 'degraded', redis: up ? 'up' : 'down' });
  });

  app.get('/', async (_req, reply) =>
    reply
      .type('text/html; charset=utf-8')
      .send(withRedisBanner(await readFile(buildFile('server/public/index.html'), 'utf8'), redisDown())),
  );
  // The page's script (runs, uploads, undo, dead events), type-checked with the other browser code.
  app.get('/console.js', async (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').send(await readFile(buildFile('server/public/console.js'), 'utf8')),
  );

  // Each feed's source, last listing and files seen / done / waiting (feed-sources.ts).
  registerFeedSources(app, { config, jobsDir: resolve(options.jobsDir ?? 'jobs') });

  app.get('/mappings', async () => {
    const names = existsSync(mappingsDir)
      ? (await readdir(mappingsDir)).filter((f) => /\.(ya?ml|json)$/i.test(f)).map((f) => basename(f, extname(f)))
      : [];
    return { mappings: names.sort() };
  });

  app.post('/uploads', (req, reply) =>
    handleUpload(req, reply, uploadDir, maxUpload, async (upload) => {
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
    }),
  );

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
    const job = await client.queue.getJob(req.params.id);
    const s = job ? await client.status(req.params.id) : null;
    if (!job || !s) return reply.code(404).send({ error: 'no such run' });
    const status = apiRun(s).status;
    if (status === 'queued' || status === 'running')
      return reply.code(409).send({ error: `the run is ${status}: re-run it once it has ended`, status });
    const data = job.data as ImportJobData;
    if (!existsSync(data.request.file))
      return reply.code(410).send({ error: 'the sheet of this run is no longer kept: upload it again' });
    // The same file and mapping (and owner, mode, dry run, sheet, language) as a new run, with an id of its own.
    const { jobId, existed } = await client.enqueue(
      {
        request: data.request,
        origin: data.origin,
        ...(data.feed ? { feed: data.feed } : {}),
        ...(data.fileName ? { fileName: data.fileName } : {}),
        ...(data.sha256 ? { sha256: data.sha256 } : {}),
        ...(data.waitLockSeconds !== undefined ? { waitLockSeconds: data.waitLockSeconds } : {}),
        step: 'prepare',
      },
      { rerun: true },
    );
    return reply
      .code(existed ? 200 : 202)
      .send({ id: jobId, existed, rerunOf: s.id, status: 'queued', url: `/runs/${jobId}` });
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

  // Undo of a finished run (issue 27): its plan first, then the undo, run in this process under the owner lease.
  registerUndo(app, { config, reportDir, status: (id) => client.status(id) });

  await registerMapper(app, { config, uploadDir, mappingsDir, maxUpload, redisDown });
  await registerDeadEvents(app, config);
  registerOpsRoutes(app, { config, ...(options.metrics ? { metrics: options.metrics } : {}) });

  const boardAdapter = new FastifyAdapter();
  boardAdapter.setBasePath('/admin/queues');
  createBullBoard({
    queues: board.queues.map((q) => new BullMQAdapter(q, { readOnlyMode: true })),
    serverAdapter: boardAdapter,
    options: { uiConfig: { boardTitle: 'product-sync' } },
  });
  await app.register(boardAdapter.registerPlugin() as never, { prefix: '/admin/queues' });
  return app;
}
