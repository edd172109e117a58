// A redis-server of a test's own, on a free port, that the test stops and starts again (on the same port and data
// directory): with AOF it comes back with its data, without persistence it comes back empty.
import { spawn, type ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { freePort } from '../global-setup.ts';

/** A private redis-server: `url` is known before it first starts (a test may start a command before Redis). */
export interface OwnRedis {
  url: string;
  port: number;
  start(): Promise<void>;
  stop(signal?: NodeJS.Signals): Promise<void>;
}

/** A redis-server in `dir`: AOF (fsync always) unless `aof: false` (then no persistence at all); `args` are added. */
export async function ownRedis(dir: string, options: { aof?: boolean; args?: string[] } = {}): Promise<OwnRedis> {
  const port = await freePort();
  const persistence =
    options.aof === false ? ['--appendonly', 'no'] : ['--appendonly', 'yes', '--appendfsync', 'always'];
  let child: ChildProcess | undefined;
  const ping = async () => {
    for (let i = 0; i < 100; i++) {
      const r = new Redis(port, '127.0.0.1', { lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
      r.on('error', () => undefined);
      try {
        await r.connect();
        if ((await r.ping()) === 'PONG') return r.disconnect();
      } catch {
        r.disconnect();
      }
      await new Promise((res) => setTimeout(res, 50));
    }
    throw new Error('redis did not start');
  };
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async start() {
      child = spawn(
        'redis-server',
        [
          '--port',
          String(port),
          '--bind',
          '127.0.0.1',
          '--dir',
          dir,
          ...persistence,
          '--save',
          '',
          ...(options.args ?? []),
        ],
        { stdio: 'ignore' },
      );
      await ping();
    },
    async stop(signal = 'SIGKILL') {
      const c = child;
      if (!c) return;
      const exited = new Promise((r) => c.once('exit', r));
      c.kill(signal);
      await exited;
      child = undefined;
    },
  };
}
