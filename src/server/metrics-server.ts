/**
 * The worker's `/metrics` (METRICS_PORT): a small node:http server of its own, beside the BullMQ workers, behind the
 * console's credentials (console-access.ts `metricsAccess`). GET /metrics only.
 */
import { createServer, type Server } from 'node:http';
import { ProductSyncError } from '../errors.ts';
import { logger } from '../logger.ts';
import type { Config } from '../config.ts';
import { metricsPage, type FleetMetrics } from '../metrics/metrics-page.ts';
import { ProcessMetrics } from '../metrics/metrics.ts';
import { authorizationMatches, metricsAccess, type ConsoleAccess } from './console-access.ts';

/** The content type of the Prometheus text format. */
export const METRICS_CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

/** A listening metrics server: its URL, and close(). */
export interface MetricsServer {
  url: string;
  close(): Promise<void>;
}

/** Listens on `host:port` (port 0: any free one) and serves the process's page, with the fleet's part when given. */
export async function startMetricsServer(opts: {
  host: string;
  port: number;
  access: ConsoleAccess;
  own: ProcessMetrics;
  fleet?: FleetMetrics;
}): Promise<MetricsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return void res.writeHead(405, { allow: 'GET, HEAD' }).end();
    if (!authorizationMatches(req.headers.authorization, opts.access)) {
      const headers: Record<string, string> = { 'content-type': 'text/plain' };
      if (opts.access.basic) headers['www-authenticate'] = 'Basic realm="product-sync"';
      return void res.writeHead(401, headers).end('unauthorized\n');
    }
    metricsPage(opts.own, opts.fleet).then(
      (text) => res.writeHead(200, { 'content-type': METRICS_CONTENT_TYPE }).end(req.method === 'HEAD' ? '' : text),
      (err: unknown) => {
        logger.warn({ err: (err as Error).message }, 'metrics page failed');
        res.writeHead(500, { 'content-type': 'text/plain' }).end('metrics unavailable\n');
      },
    );
  });
  server.listen(opts.port, opts.host);
  await new Promise<void>((resolve, reject) => {
    server.once('listening', resolve);
    server.once('error', (err) =>
      reject(
        new ProductSyncError(
          'PS_ERR_CONFIG_INVALID',
          `cannot serve /metrics on ${opts.host}:${opts.port} (METRICS_HOST, METRICS_PORT): ${err.message}`,
        ),
      ),
    );
  });
  const { port } = server.address() as { port: number };
  return {
    url: `http://${opts.host.includes(':') ? `[${opts.host}]` : opts.host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/** A process's metrics served on METRICS_PORT: what it counts, where, and close() (stops observing too). */
export interface ServedMetrics {
  own: ProcessMetrics;
  url: string;
  close(): Promise<void>;
}

/**
 * With METRICS_PORT set: counts this process's API requests and runs, and serves them on METRICS_HOST:METRICS_PORT
 * (with Redis's part when `fleet`: the worker); undefined without METRICS_PORT, and then nothing is counted.
 */
export async function serveMetrics(config: Config, opts: { fleet: boolean }): Promise<ServedMetrics | undefined> {
  if (config.METRICS_PORT === undefined) return undefined;
  const access = metricsAccess(config, config.METRICS_HOST);
  const own = new ProcessMetrics();
  // BullMQ is loaded for the fleet's part only (an inline import serves its own counters alone).
  const fleet = opts.fleet ? (await import('../queue/metrics-fleet.ts')).fleetMetrics(config) : undefined;
  let server: MetricsServer;
  try {
    server = await startMetricsServer({ host: config.METRICS_HOST, port: config.METRICS_PORT, access, own, fleet });
  } catch (err) {
    await fleet?.close();
    throw err;
  }
  const stopObserving = own.observeApiRequests();
  logger.info({ url: server.url }, 'metrics served');
  return {
    own,
    url: server.url,
    async close() {
      stopObserving();
      await server.close();
      await fleet?.close();
    },
  };
}
