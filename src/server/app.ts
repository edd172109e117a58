import { existsSync } from 'node:fs';
import { mkdir, readdir, readFile } from 'node:fs/promises';
import { basename, extname, resolve } from 'node:path';
import multipart from '@fastify/multipart';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { buildFile } from '../build-dir.ts';
import type { Config } from '../config.ts';
import { importQueueClient } from '../queue/enqueue.ts';
import { boardQueues } from '../queue/queues.ts';
import { redisState } from '../redis-state.ts';
import { redact } from '../redact.ts';
import { authorizationMatches } from './console-access.ts';
import { registerDeadEvents } from './dead-events.ts';
import { registerFeedSources } from './feed-sources.ts';
import type { ProcessMetrics } from '../metrics/metrics.ts';
import { registerMapper } from './mapper.ts';
import { registerOpsRoutes } from './ops-routes.ts';
import { redisDownAnswer, withRedisBanner } from './redis-banner.ts';
import { registerJsonBody } from './json-body.ts';
import { registerRunRoutes } from './run-routes.ts';
import { registerScorecards } from './scorecard-routes.ts';
import { registerSameOrigin } from './same-origin.ts';
import { registerUploads } from './uploads-route.ts';
import { registerUndo } from './undo-routes.ts';
import { within } from '../within.ts';

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
    await within(Promise.all([board.close(), client.close()]), 1000);
  });

  // First of all: a request for another host (DNS rebinding) or a change from another site is refused before the
  // credentials are asked for (same-origin.ts).
  registerSameOrigin(app, {
    ...(options.host ? { bindHost: options.host } : {}),
    ...(config.PUBLIC_URL ? { publicUrl: config.PUBLIC_URL } : {}),
    ...(config.CONSOLE_HOSTS ? { consoleHosts: config.CONSOLE_HOSTS } : {}),
  });
  registerJsonBody(app);

  registerCredentials(app, options);

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

  registerPages(app, { board, mappingsDir, redisDown });
  // Each feed's source, last listing and files seen / done / waiting (feed-sources.ts).
  registerFeedSources(app, { config, jobsDir: resolve(options.jobsDir ?? 'jobs') });

  registerUploads(app, { client, uploadDir, mappingsDir, maxUpload });

  registerRunRoutes(app, { client, reportDir });
  // Each feed's and mapping's supplier scorecard over its runs (scorecard-routes.ts).
  registerScorecards(app, { reportDir });

  // Undo of a finished run (issue 27): its plan first, then the undo, run in this process under the owner lease.
  registerUndo(app, { config, reportDir, status: (id) => client.status(id) });

  await registerMapper(app, { config, uploadDir, mappingsDir, maxUpload, redisDown });
  await registerDeadEvents(app, config);
  registerOpsRoutes(app, { config, ...(options.metrics ? { metrics: options.metrics } : {}) });

  await registerBoard(app, board);
  return app;
}

/** Bearer token or basic auth on every route but /health, when the console has credentials (console-access.ts). */
function registerCredentials(app: FastifyInstance, access: Pick<ConsoleOptions, 'token' | 'basic'>): void {
  if (!access.token && !access.basic) return;
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    if (req.url === '/health') return;
    if (!authorizationMatches(req.headers.authorization, access)) {
      if (access.basic) reply.header('www-authenticate', 'Basic realm="product-sync"');
      return reply.code(401).send({ error: 'unauthorized' });
    }
  });
}

/** /health, the page and its script, the mappings the upload form offers. */
function registerPages(
  app: FastifyInstance,
  opts: { board: ReturnType<typeof boardQueues>; mappingsDir: string; redisDown: () => boolean },
): void {
  const { board, mappingsDir, redisDown } = opts;
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

  app.get('/mappings', async () => {
    const names = existsSync(mappingsDir)
      ? (await readdir(mappingsDir)).filter((f) => /\.(ya?ml|json)$/i.test(f)).map((f) => basename(f, extname(f)))
      : [];
    return { mappings: names.sort() };
  });
}

/** Bull Board at /admin/queues, read-only. */
async function registerBoard(app: FastifyInstance, board: ReturnType<typeof boardQueues>): Promise<void> {
  const boardAdapter = new FastifyAdapter();
  boardAdapter.setBasePath('/admin/queues');
  createBullBoard({
    queues: board.queues.map((q) => new BullMQAdapter(q, { readOnlyMode: true })),
    serverAdapter: boardAdapter,
    options: { uiConfig: { boardTitle: 'product-sync' } },
  });
  await app.register(boardAdapter.registerPlugin() as never, { prefix: '/admin/queues' });
}
