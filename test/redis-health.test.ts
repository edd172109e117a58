// A command's first question to Redis (src/queue/redis-health.ts): answered at once, or asked again every second for
// the `--wait-redis` seconds given — timed by a fake clock moved by hand, so giving up after 20 s takes no 20 s here.
import { createServer, type Socket } from 'node:net';
import { describe, expect, inject, it } from 'vitest';
import { requireRedis } from '../src/queue/redis-health.ts';
import { freePort } from './global-setup.ts';
import { FakeClock, stepClock } from './helpers/clock.ts';

describe('requireRedis', () => {
  it('resolves when Redis answers', async () => {
    await expect(requireRedis(inject('redisUrl'), { who: '`worker`' })).resolves.toBeUndefined();
  });

  it('without --wait-redis, waits for a Redis slow to answer (a loaded machine) longer than a second', async () => {
    // Answers the commands it is sent (the connection's INFO ready check, then PING) 700 ms late: over a second in all.
    const sockets = new Set<Socket>();
    const slow = createServer((socket) => {
      sockets.add(socket);
      socket.on('data', (d) => {
        const info = 'loading:0\r\n';
        // One answer per command of the chunk (RESP arrays: `*<n>`, then the command's name as a bulk string).
        const answers = [...d.toString().matchAll(/\*\d+\r\n\$\d+\r\n(\w+)/g)].map(([, name]) =>
          /^info$/i.test(name!) ? `$${info.length}\r\n${info}\r\n` : /^ping$/i.test(name!) ? '+PONG\r\n' : '+OK\r\n',
        );
        setTimeout(() => socket.writable && socket.write(answers.join('')), 700);
      });
    });
    await new Promise<void>((resolve) => slow.listen(0, '127.0.0.1', resolve));
    const { port } = slow.address() as { port: number };
    try {
      await expect(requireRedis(`redis://127.0.0.1:${port}`, { who: '`worker`' })).resolves.toBeUndefined();
    } finally {
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => slow.close(resolve));
    }
  });

  it('--wait-redis: asks again every second of its clock, then gives up saying how long it waited (exit 2)', async () => {
    const clock = new FakeClock();
    let outcome: unknown;
    void requireRedis(`redis://127.0.0.1:${await freePort()}`, { who: '`feeds list`', waitSeconds: 20, clock }).then(
      () => (outcome = 'answered'),
      (err: unknown) => (outcome = err),
    );
    // Each attempt is refused on a real connection, then waits a second of the fake clock.
    expect(await stepClock(clock, 1000, () => outcome !== undefined)).toBe(19);
    expect(outcome).toMatchObject({ code: 'PS_ERR_REDIS_UNREACHABLE' });
    expect((outcome as Error).message).toMatch(
      /^cannot reach Redis at redis:\/\/127\.0\.0\.1:\d+: connect ECONNREFUSED .* \(waited 20 s\); `feeds list` needs it: start Redis or fix REDIS_URL$/,
    );
  });
});
