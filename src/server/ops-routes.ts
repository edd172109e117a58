/**
 * The console's operations routes (issue 25): `GET /metrics` (Prometheus text: this console's counters, and the
 * queues, feeds and events that Redis holds for the whole fleet) and `GET /feeds` (each feed's schedule, next tick,
 * last success, overdue) with the page script that shows them. Behind the console's credentials like every route but
 * /health.
 */
import { readFile } from 'node:fs/promises';
import { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { buildFile } from '../build-dir.ts';
import type { Config } from '../config.ts';
import { QUEUES } from '../queue/catalog.ts';
import { queueConnection, queuePrefix, quietOnErrors } from '../queue/connection.ts';
import { feedStatuses } from '../queue/feed-status.ts';
import { fleetMetrics } from '../queue/metrics-fleet.ts';
import { metricsPage } from '../metrics/metrics-page.ts';
import { ProcessMetrics } from '../metrics/metrics.ts';
import { redisState } from '../redis-state.ts';
import { redact } from '../redact.ts';
import { METRICS_CONTENT_TYPE } from './metrics-server.ts';
import { redisDownAnswer } from './redis-banner.ts';
import { within } from '../within.ts';

/** Registers /metrics, /feeds and /feeds.js; `own`: this process's counters (a registry of its own by default). */
export function registerOpsRoutes(app: FastifyInstance, opts: { config: Config; metrics?: ProcessMetrics }): void {
  const own = opts.metrics ?? new ProcessMetrics();
  const fleet = fleetMetrics(opts.config);
  const connection = queueConnection(opts.config);
  const prefix = queuePrefix(opts.config);
  const feedsQueue = quietOnErrors(new Queue(QUEUES.feeds, { connection, prefix }));
  app.addHook('onClose', async () => {
    await within(Promise.all([fleet.close(), feedsQueue.close()]), 1000);
    connection.disconnect();
  });

  app.get('/metrics', async (_req, reply) => reply.type(METRICS_CONTENT_TYPE).send(await metricsPage(own, fleet)));

  app.get('/feeds', async (_req, reply) => {
    if (redisState.down) return reply.code(503).send(redisDownAnswer(redact(opts.config.REDIS_URL)));
    return { feeds: await feedStatuses(feedsQueue, connection, prefix) };
  });

  app.get('/feeds.js', async (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').send(await readFile(buildFile('server/public/feeds.js'), 'utf8')),
  );
}
