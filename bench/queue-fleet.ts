// What the queue benches (fairness, capacity-fleet, workers) start before they measure: a redis-server and a sandbox
// process of their own on free ports, then fleets of `product-sync worker` processes, each fleet on a queue prefix
// and a report directory of its own, with a client that enqueues and waits.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { importQueueClient } from '../src/queue/enqueue.ts';

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A TCP port nothing listens on now. */
export function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

/** The bench's redis-server and sandbox: `url` is the sandbox's, `dir` a temporary directory for sheets and reports. */
export interface QueueServices {
  dir: string;
  url: string;
  redisUrl: string;
  /** A request to the sandbox's admin routes (`/__admin/reset`, `/__admin/faults`, `/__admin/requests`): its JSON. */
  admin: (method: 'GET' | 'POST', path: string, body?: unknown) => Promise<unknown>;
  stop: () => void;
}

/** Starts a redis-server and a sandbox (`--admin`, at `latencyMs` when given) and waits until the sandbox listens. */
export async function startQueueServices(name: string, latencyMs?: number): Promise<QueueServices> {
  const dir = mkdtempSync(join(tmpdir(), `ps-bench-${name}-`));
  const redisPort = await freePort();
  const redis = spawn('redis-server', ['--port', String(redisPort), '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  const apiPort = await freePort();
  const latency = latencyMs === undefined ? [] : ['--latency', String(latencyMs)];
  const sandbox = spawn(
    process.execPath,
    ['bin/product-sync.mjs', 'sandbox', '--port', String(apiPort), ...latency, '--admin'],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await new Promise<void>((resolve, reject) => {
    sandbox.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve());
    sandbox.once('exit', (code) => reject(new Error(`the sandbox exited (${code}) before listening`)));
  });
  const url = `http://127.0.0.1:${apiPort}`;
  return {
    dir,
    url,
    redisUrl: `redis://127.0.0.1:${redisPort}`,
    admin: async (method, path, body) => {
      const res = await fetch(`${url}${path}`, {
        method,
        ...(body ? { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } } : {}),
      });
      const text = await res.text();
      return text ? JSON.parse(text) : null;
    },
    stop: () => {
      sandbox.kill('SIGTERM');
      redis.kill('SIGTERM');
    },
  };
}

/**
 * `workers` worker processes on the queue prefix `bench-<name>` (reports in `<dir>/reports-<name>`, emptied first),
 * with `env` over the connection settings (and `each(i)` over that for the i-th worker); `client` enqueues and waits;
 * `stop` closes it and waits for the workers.
 */
export async function startFleet(
  services: QueueServices,
  name: string,
  workers: number,
  env: Record<string, string>,
  each: (i: number) => Record<string, string> = () => ({}),
) {
  const reportDir = join(services.dir, `reports-${name}`);
  rmSync(reportDir, { recursive: true, force: true });
  mkdirSync(reportDir, { recursive: true });
  const fullEnv = {
    PRODUCT_API_URL: services.url,
    REFERENCE_API_URL: services.url,
    API_TOKEN: 'sandbox-token',
    REDIS_URL: services.redisUrl,
    QUEUE_PREFIX: `bench-${name}`,
    REPORT_DIR: reportDir,
    LOG_LEVEL: 'warn',
    ...env,
  };
  const procs: ChildProcess[] = Array.from({ length: workers }, (_, i) =>
    spawn(process.execPath, ['bin/product-sync.mjs', 'worker', '--jobs-dir', join(services.dir, 'no-jobs')], {
      env: { ...process.env, ...fullEnv, ...each(i) },
      stdio: 'ignore',
    }),
  );
  // The workers connect and register their queues; a job enqueued before would wait for them anyway.
  await sleep(2500);
  const client = importQueueClient(loadConfig(fullEnv));
  return {
    client,
    async stop() {
      await client.close();
      for (const w of procs) w.kill('SIGTERM');
      await Promise.all(procs.map((w) => new Promise((r) => (w.exitCode !== null ? r(null) : w.once('exit', r)))));
    },
  };
}

/** A fleet's client: enqueues imports and waits for their summaries. */
export type FleetClient = Awaited<ReturnType<typeof startFleet>>['client'];
