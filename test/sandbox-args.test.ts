import { describe, expect, it } from 'vitest';
import { parseTokenArg, parseTokenList } from '../src/sandbox/auth.ts';
import { FaultInjector, parseFaultSpec, parseLatency } from '../src/sandbox/faults.ts';
import { DEMO_COMPANY_ID, OTHER_COMPANY_ID } from '../src/sandbox/defaults.ts';

describe('parseTokenArg', () => {
  it('reads value[:companyId[:internal]]', () => {
    expect(parseTokenArg('demo')).toEqual({ token: 'demo', companyId: DEMO_COMPANY_ID, internal: false });
    expect(parseTokenArg(`demo:${OTHER_COMPANY_ID.toUpperCase()}`)).toEqual({
      token: 'demo',
      companyId: OTHER_COMPANY_ID,
      internal: false,
    });
    expect(parseTokenArg(`svc:${OTHER_COMPANY_ID}:internal`)).toEqual({
      token: 'svc',
      companyId: OTHER_COMPANY_ID,
      internal: true,
    });
    expect(parseTokenList(`a, b:${OTHER_COMPANY_ID}`).map((t) => t.token)).toEqual(['a', 'b']);
  });
  it('refuses a company that is not a uuid and an unknown flag', () => {
    expect(() => parseTokenArg('demo:acme')).toThrow(/not a uuid/);
    expect(() => parseTokenArg(`demo:${OTHER_COMPANY_ID}:admin`)).toThrow(/internal/);
    expect(() => parseTokenArg('')).toThrow();
  });
});

describe('parseFaultSpec', () => {
  it('reads the documented syntax', () => {
    expect(
      parseFaultSpec('503=0.1,429=0.05,retryAfter=1,500after=0.02,reset=0.02,seed=42,latency=5-50,sequence=429|ok'),
    ).toEqual({
      rate503: 0.1,
      rate429: 0.05,
      retryAfterSeconds: 1,
      rate500After: 0.02,
      rateReset: 0.02,
      seed: 42,
      latencyMs: [5, 50],
      sequence: ['429', 'ok'],
    });
    expect(parseLatency('20')).toBe(20);
  });
  it('names the bad pair', () => {
    expect(() => parseFaultSpec('503=2')).toThrow(/503/);
    expect(() => parseFaultSpec('boom=1')).toThrow(/boom/);
    expect(() => parseFaultSpec('429=0.6,503=0.6')).toThrow(/more than 1/);
    expect(() => parseLatency('50-5')).toThrow();
  });
  it('draws the same decisions for the same seed, and only turns writes into after-commit faults', () => {
    const draw = (seed: number) => {
      const f = new FaultInjector({ rate429: 0.25, rate500After: 0.25, latencyMs: [0, 100], seed });
      return Array.from({ length: 50 }, (_, i) => f.next(i % 2 === 0));
    };
    const a = draw(3);
    expect(draw(3)).toEqual(a);
    expect(a.filter((d, i) => i % 2 === 1).some((d) => d.fault === '500after')).toBe(false);
    expect(a.some((d) => d.fault === '500after')).toBe(true);
    expect(a.every((d) => d.latencyMs >= 0 && d.latencyMs <= 100)).toBe(true);
  });
});
