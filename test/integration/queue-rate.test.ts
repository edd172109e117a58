import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SharedRate } from '../../src/queue/shared-rate.ts';

const key = `{ps-rate-${process.pid}}:api-rate`;
const conns: Redis[] = [];
const connect = () => {
  const r = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  conns.push(r);
  return r;
};
afterAll(async () => {
  await conns[0]?.del(key, `${key}-pause`);
  for (const c of conns) c.disconnect();
});

describe('shared API rate', () => {
  it('holds several processes together to one rate', async () => {
    // Two "processes" (own connections, own SharedRate) taking 30 starts each at 100/s in all: ≥ 0.59 s, not 0.3 s.
    const a = new SharedRate(connect(), key, 100);
    const b = new SharedRate(connect(), key, 100);
    const starts: number[] = [];
    const t0 = Date.now();
    const take = async (r: SharedRate) => {
      for (let i = 0; i < 30; i++) {
        await r.take();
        starts.push(Date.now() - t0);
      }
    };
    await Promise.all([take(a), take(b), take(a)]);
    const elapsed = Date.now() - t0;
    expect(starts).toHaveLength(90);
    expect(elapsed).toBeGreaterThanOrEqual(880);
    // No second of the run holds more than the rate (plus one for the window's edge).
    for (const s of starts) expect(starts.filter((x) => x >= s && x < s + 1000).length).toBeLessThanOrEqual(101);
  });

  it('makes every process wait out a pause (a 429 seen by one of them)', async () => {
    const k = `${key}-pause`;
    const a = new SharedRate(connect(), k, 1000);
    const b = new SharedRate(connect(), k, 1000);
    await a.pause(400);
    const t0 = Date.now();
    await b.take();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(350);
  });

  it('without a rate, does not hold starts back, but still carries a pause', async () => {
    const k = `${key}-free`;
    const a = new SharedRate(connect(), k);
    const b = new SharedRate(connect(), k);
    let t0 = Date.now();
    for (let i = 0; i < 200; i++) await a.take();
    expect(Date.now() - t0).toBeLessThan(1000);
    await b.pause(300);
    t0 = Date.now();
    await a.take();
    expect(Date.now() - t0).toBeGreaterThanOrEqual(250);
    await conns[0]!.del(k);
  });

  it('does not stall requests when Redis is unreachable', async () => {
    const down = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      enableOfflineQueue: false,
    });
    down.on('error', () => undefined);
    conns.push(down);
    const r = new SharedRate(down, key, 1);
    const t0 = Date.now();
    await r.take();
    await r.take();
    expect(Date.now() - t0).toBeLessThan(500);
  });
});
