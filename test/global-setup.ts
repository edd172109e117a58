import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { TestProject } from 'vitest/node';

declare module 'vitest' {
  export interface ProvidedContext {
    redisUrl: string;
  }
}

/**
 * A free TCP port on loopback, below the kernel's ephemeral range (32768 and up on Linux): the tests stop and restart
 * servers on their port, and a port of that range can meanwhile be taken by any outgoing connection — even a client
 * reconnecting to that very port, which then connects to itself and never reaches the restarted server.
 */
export async function freePort(): Promise<number> {
  for (;;) {
    const port = 20000 + Math.floor(Math.random() * 12000);
    const free = await new Promise<boolean>((resolve) => {
      const s = createServer();
      s.once('error', () => resolve(false));
      s.listen(port, '127.0.0.1', () => s.close(() => resolve(true)));
    });
    if (free) return port;
  }
}

/** What the setup started, shared by the projects of one vitest run (each runs this setup), stopped by the last. */
interface Suite {
  redisUrl: Promise<string>;
  users: number;
  stop(): void;
}
const SUITE = Symbol.for('product-sync.test-suite');
type WithSuite = typeof globalThis & { [SUITE]?: Suite };

/**
 * Starts a private `redis-server` for the suite (never touching a database it did not create), or uses TEST_REDIS_URL;
 * builds dist/ first. Once per vitest run: the projects (vitest.config.ts) share both.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const g = globalThis as WithSuite;
  if (!g[SUITE]) {
    let stop = () => {};
    g[SUITE] = {
      users: 0,
      stop: () => stop(),
      redisUrl: startSuite((s) => (stop = s)),
    };
  }
  const suite = g[SUITE];
  suite.users++;
  const url = await suite.redisUrl;
  project.provide('redisUrl', url);
  if (!process.env.TEST_REDIS_URL) process.env.TEST_REDIS_SERVER_PORT = new URL(url).port;
  return async () => {
    if (--suite.users > 0) return;
    suite.stop();
    delete g[SUITE];
  };
}

async function startSuite(onStop: (stop: () => void) => void): Promise<string> {
  // Tests that spawn bin/product-sync.mjs run dist/: built from src/ once here.
  execFileSync(process.execPath, [fileURLToPath(new URL('../scripts/build.mjs', import.meta.url))], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  if (process.env.TEST_REDIS_URL) return process.env.TEST_REDIS_URL;
  const port = await freePort();
  const dir = mkdtempSync(join(tmpdir(), 'ps-redis-'));
  const child: ChildProcess = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir],
    {
      stdio: 'ignore',
    },
  );
  await new Promise<void>((resolve, reject) => {
    child.once('error', (e) =>
      reject(new Error(`cannot start redis-server (install it, or set TEST_REDIS_URL): ${e.message}`)),
    );
    const t0 = Date.now();
    const probe = () => {
      const sock = createConnection(port);
      sock.once('connect', () => {
        sock.end();
        resolve();
      });
      sock.once('error', () =>
        Date.now() - t0 > 10_000 ? reject(new Error('redis-server did not start')) : setTimeout(probe, 50),
      );
    };
    probe();
  });
  onStop(() => {
    child.kill('SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });
  return `redis://127.0.0.1:${port}`;
}
