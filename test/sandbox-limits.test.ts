import { describe, expect, it } from 'vitest';
import { parseFaultSpec } from '../src/sandbox/faults.ts';
import { ApiLimits } from '../src/sandbox/limits.ts';

describe('sandbox limits', () => {
  it('are read from the fault syntax, and bad values are refused naming the key', () => {
    expect(parseFaultSpec('capacity=16,rps=200,burst=20,queue=8,drop=0.25@5-15,retryAfter=2')).toEqual({
      capacity: 16,
      rps: 200,
      burst: 20,
      queue: 8,
      drop: { factor: 0.25, fromS: 5, toS: 15 },
      retryAfterSeconds: 2,
    });
    expect(() => parseFaultSpec('capacity=0')).toThrow(/capacity/);
    expect(() => parseFaultSpec('queue=2.5')).toThrow(/queue/);
    expect(() => parseFaultSpec('rps=-1')).toThrow(/rps/);
    expect(() => parseFaultSpec('drop=2@5-1')).toThrow(/drop/);
  });

  it('a capacity refuses past N at once with its Retry-After, and admits again once one is answered', async () => {
    const limits = new ApiLimits({ capacity: 2 }, 3, () => 0);
    const a = await limits.admit();
    const b = await limits.admit();
    expect(a.ok && b.ok).toBe(true);
    expect(await limits.admit()).toEqual({ ok: false, retryAfterSeconds: 3 });
    if (a.ok) a.release();
    expect((await limits.admit()).ok).toBe(true);
  });

  it('a rate is a token bucket: a burst, then one per 1/rps, the Retry-After of the next token', async () => {
    let now = 0;
    const limits = new ApiLimits({ rps: 0.5, burst: 2 }, 1, () => now);
    expect((await limits.admit()).ok).toBe(true);
    expect((await limits.admit()).ok).toBe(true);
    // Empty: the next token comes in 2 s.
    expect(await limits.admit()).toEqual({ ok: false, retryAfterSeconds: 2 });
    now = 2000;
    expect((await limits.admit()).ok).toBe(true);
  });

  it('a queueing capacity serves N at once and holds the others (no refusal)', async () => {
    const limits = new ApiLimits({ queue: 1 }, 1, () => 0);
    const a = await limits.admit();
    let second = false;
    const b = limits.admit().then((x) => ((second = true), x));
    await new Promise((r) => setImmediate(r));
    expect(second).toBe(false);
    if (a.ok) a.release();
    expect((await b).ok).toBe(true);
  });

  it('a drop divides every limit for its time, counted from the first request', async () => {
    let now = 1000;
    const limits = new ApiLimits({ capacity: 8, drop: { factor: 0.25, fromS: 1, toS: 2 } }, 1, () => now);
    const held = [];
    for (let i = 0; i < 3; i++) held.push(await limits.admit());
    now = 2500;
    // A quarter of 8: 2 at once; 3 are in hand.
    expect((await limits.admit()).ok).toBe(false);
    now = 3100;
    expect((await limits.admit()).ok).toBe(true);
  });
});
