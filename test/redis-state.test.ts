// The process's view of Redis (src/redis-state.ts): down while a watched connection has lost it, up again once every
// one has it back; a connection closed on purpose is forgotten, whatever state ioredis left it in.
import { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { RedisState } from '../src/redis-state.ts';
import { freePort } from './global-setup.ts';
import { until } from './helpers/wait.ts';

/** A connection to a port where nothing answers, waiting long between its attempts: it spends its time reconnecting. */
async function lostConnection(state: RedisState): Promise<Redis> {
  const conn = new Redis(await freePort(), '127.0.0.1', { maxRetriesPerRequest: null, retryStrategy: () => 60_000 });
  state.watch(conn, conn.options.host!);
  await until('the connection to wait to reconnect', () => conn.status === 'reconnecting');
  return conn;
}

describe('RedisState', () => {
  it('a connection disconnected while it waits to reconnect is forgotten: the state is up again', async () => {
    const state = new RedisState();
    const conn = await lostConnection(state);
    expect(state.down).toBe(true);
    conn.disconnect();
    // ioredis leaves it `reconnecting` and emits no 'end' (the cause): the state must not wait for one.
    expect(conn.status).toBe('reconnecting');
    expect(state.down).toBe(false);
  });

  it('stays down while another watched connection has lost Redis', async () => {
    const state = new RedisState();
    const [a, b] = [await lostConnection(state), await lostConnection(state)];
    a.disconnect();
    expect(state.down).toBe(true);
    b.disconnect();
    expect(state.down).toBe(false);
  });
});
