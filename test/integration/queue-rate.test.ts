import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { SharedRate } from '../../src/api/shared-rate.ts';

const key = `{ps-rate-${process.pid}}:api-rate`;
const keys: string[] = [];
const conns: Redis[] = [];
const connect = () => {
  const r = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
  conns.push(r);
  return r;
};
const keyFor = (name: string) => {
  keys.push(`${key}-${name}`);
  return `${key}-${name}`;
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
afterAll(async () => {
  if (keys.length) await conns[0]?.del(...keys);
  for (const c of conns) c.disconnect();
});

describe('shared API pace', () => {
  it('holds several processes together to API_MAX_RPS', async () => {
    // Two "processes" (own connections, own SharedRate) taking 30 starts each at 100/s in all: ≥ 0.59 s, not 0.3 s.
    const k = keyFor('max');
    const a = new SharedRate(connect(), k);
    const b = new SharedRate(connect(), k);
    const starts: number[] = [];
    const t0 = Date.now();
    const take = async (r: SharedRate) => {
      for (let i = 0; i < 30; i++) {
        await sleep((await r.reserve(100))!.wait);
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

  it('without a limit or a refusal, holds nothing back and has no pace', async () => {
    const k = keyFor('free');
    const a = new SharedRate(connect(), k);
    const t0 = Date.now();
    for (let i = 0; i < 200; i++) expect((await a.reserve(undefined))!.wait).toBe(0);
    expect(Date.now() - t0).toBeLessThan(2000);
    expect(a.pace).toBeNull();
  });

  it('a refusal one process saw sets a pace every process keeps to, from the rate the fleet got accepted', async () => {
    const k = keyFor('learn');
    const a = new SharedRate(connect(), k);
    const b = new SharedRate(connect(), k);
    // The fleet starts about 100 requests a second for 0.6 s…
    const t0 = Date.now();
    while (Date.now() - t0 < 600) {
      await a.reserve(undefined);
      await sleep(10);
    }
    // …then b is refused: the pace drops to a little under what was accepted.
    b.refused();
    await sleep(50);
    await a.reserve(undefined);
    expect(a.pace).not.toBeNull();
    expect(a.pace!).toBeGreaterThan(30);
    expect(a.pace!).toBeLessThan(110);
    // Both keep to it: 20 starts take about 20 / pace seconds.
    const pace = a.pace!;
    const t1 = Date.now();
    const take = async (r: SharedRate) => {
      for (let i = 0; i < 10; i++) await sleep((await r.reserve(undefined))!.wait);
    };
    await Promise.all([take(a), take(b)]);
    expect(Date.now() - t1).toBeGreaterThanOrEqual((19 / (pace * 1.1)) * 1000);
  });

  it("sums the fleet's requests in flight, and sets no pace for refusals of a capacity the fleet shares", async () => {
    const k = keyFor('capacity');
    const a = new SharedRate(connect(), k);
    const b = new SharedRate(connect(), k);
    expect((await a.reserve(undefined, 12))!.fleetInFlight).toBe(12);
    expect((await b.reserve(undefined, 8))!.fleetInFlight).toBe(20);
    expect((await a.reserve(undefined, 13))!.fleetInFlight).toBe(21);
    // The fleet starts about 100 requests a second throughout.
    const busy = async (ms: number) => {
      const t0 = Date.now();
      while (Date.now() - t0 < ms) {
        await a.reserve(undefined, 12);
        await sleep(10);
      }
    };
    await busy(600);
    // A capacity of 20: refused whenever the fleet has about 20 in flight, whichever process is refused.
    for (const [r, n] of [
      [a, 21],
      [b, 20],
      [a, 22],
      [b, 20],
    ] as const) {
      r.refused(n);
      await busy(300);
    }
    expect(a.pace).toBeNull();
    // Refused on with far fewer in flight: a rate limit, which a pace answers.
    b.refused(9);
    await busy(50);
    expect(a.pace).not.toBeNull();
  });

  it('tells each start how many processes the fleet has and how many refusals it was told of', async () => {
    const k = keyFor('share');
    const a = new SharedRate(connect(), k);
    const b = new SharedRate(connect(), k);
    expect(await a.reserve(undefined, 3)).toMatchObject({ fleetInFlight: 3, processes: 1, refusals: 0 });
    expect(await b.reserve(undefined, 5)).toMatchObject({ fleetInFlight: 8, processes: 2, refusals: 0 });
    b.refused(8);
    a.refused(8);
    await sleep(50);
    expect(await a.reserve(undefined, 4)).toMatchObject({ fleetInFlight: 9, processes: 2, refusals: 2 });
  });

  it('does not stall requests when Redis is unreachable (null: the process paces itself)', async () => {
    const down = new Redis('redis://127.0.0.1:1', {
      maxRetriesPerRequest: 0,
      lazyConnect: true,
      enableOfflineQueue: false,
    });
    down.on('error', () => undefined);
    conns.push(down);
    const r = new SharedRate(down, keyFor('down'));
    const t0 = Date.now();
    expect(await r.reserve(1)).toBeNull();
    r.refused();
    expect(await r.reserve(1)).toBeNull();
    expect(Date.now() - t0).toBeLessThan(500);
  });
});
