import { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { loadEndpoints, type Endpoint } from '../events/endpoints.ts';
import { QUEUES } from '../queue/catalog.ts';
import { queueConnection, queuePrefix, quietOnErrors } from '../queue/connection.ts';
import { deadEvents, redeliver } from '../queue/events-queue.ts';
import { within } from '../within.ts';

const JOB_ID = /^[A-Za-z0-9_.-]{1,200}$/;

/**
 * The console's dead events: GET /events/dead lists the deliveries out of retries (newest first), POST
 * /events/dead/:jobId/redeliver queues one again — the same event, so the same `webhook-id`, with a fresh retry window.
 */
export async function registerDeadEvents(app: FastifyInstance, config: Config): Promise<void> {
  const connection = queueConnection(config);
  const queue = quietOnErrors(new Queue(QUEUES.events, { connection, prefix: queuePrefix(config) }));
  // The URLs of the endpoints, shown next to their ids (an endpoint file that cannot be read shows ids only).
  let endpoints: Endpoint[] | undefined;
  const known = async () => (endpoints ??= await loadEndpoints(config).catch(() => []));
  app.addHook('onClose', async () => {
    await within(queue.close(), 1000);
    connection.disconnect();
  });

  app.get<{ Querystring: { limit?: string } }>('/events/dead', async (req, reply) => {
    const limit = req.query.limit === undefined ? 100 : Number(req.query.limit);
    if (!Number.isInteger(limit) || limit < 1 || limit > 1000)
      return reply.code(400).send({ error: 'limit must be a whole number from 1 to 1000' });
    return { events: await deadEvents(queue, await known(), limit) };
  });

  app.post<{ Params: { jobId: string } }>('/events/dead/:jobId/redeliver', async (req, reply) => {
    const { jobId } = req.params;
    if (!JOB_ID.test(jobId)) return reply.code(404).send({ error: 'no such dead event' });
    const outcome = await redeliver(queue, jobId);
    if (outcome === 'not-found') return reply.code(404).send({ error: 'no such dead event' });
    if (outcome === 'not-dead')
      return reply.code(409).send({ error: 'this event is not dead (delivered, or still being retried)' });
    return reply.code(202).send({ jobId, status: 'queued' });
  });
}
