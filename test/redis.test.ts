import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';

describe('test redis', () => {
  it('answers on the suite private redis-server', async () => {
    const r = new Redis(inject('redisUrl'), { lazyConnect: true });
    await r.connect();
    const key = `ps-test:${process.pid}:${Date.now()}`;
    await r.set(key, 'x', 'EX', 10);
    expect(await r.get(key)).toBe('x');
    await r.del(key);
    r.disconnect();
  });
});
