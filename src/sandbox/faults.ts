import * as z from 'zod';
import { ApiLimits, parseDrop, type LimitSpec } from './limits.ts';

/**
 * Fault injection of the sandbox: latency, 429, 503, 500-after-commit, connection reset — all drawn from a seeded PRNG.
 */

/** What happens to one request. `ok` = no fault; `500after` and `reset` only ever apply to writes, after the commit. */
export type FaultKind = 'ok' | '429' | '503' | '500after' | 'reset';

/**
 * Fault settings (docs/api-contract.md §Fault injection). Rates are shares of requests in [0, 1]. The limits
 * (capacity, rps, burst, queue, drop: limits.ts) apply to the product API's routes.
 */
export interface FaultSpec extends LimitSpec {
  /** Share answered 429 with Retry-After, before any work. */
  rate429?: number;
  /** Share answered 503, before any work. */
  rate503?: number;
  /** Share of writes answered 500 after the write was committed. */
  rate500After?: number;
  /** Share of writes whose connection is destroyed after the write was committed. */
  rateReset?: number;
  /** Retry-After of a 429 (and 503), seconds; default 1. */
  retryAfterSeconds?: number;
  /** Fixed latency, or a [min, max] range drawn per request, milliseconds. */
  latencyMs?: number | [number, number];
  /** Seed of the PRNG; the same seed and the same request sequence give the same faults. */
  seed?: number;
  /** Scripted faults for the next faultable requests, in order, used before any random draw. */
  sequence?: FaultKind[];
  /**
   * Only requests to these routes (`METHOD /route`, as the request counts name them: `POST /api/brands`) get a fault;
   * the others still take their draws (and latency), so the draws stay reproducible.
   */
  routes?: string[];
}

const KINDS: readonly FaultKind[] = ['ok', '429', '503', '500after', 'reset'];

const share = z.number().min(0).max(1);
const ms = z.number().int().min(0);

/** Zod schema of a FaultSpec given as JSON (POST /__admin/faults); the shares must add up to at most 1. */
export const faultSpecSchema = z
  .strictObject({
    rate429: share.optional(),
    rate503: share.optional(),
    rate500After: share.optional(),
    rateReset: share.optional(),
    retryAfterSeconds: z.number().int().min(0).optional(),
    latencyMs: z.union([ms, z.tuple([ms, ms])]).optional(),
    seed: z.number().int().optional(),
    sequence: z.array(z.enum(['ok', '429', '503', '500after', 'reset'])).optional(),
    routes: z.array(z.string().min(1)).optional(),
    capacity: z.number().int().min(1).optional(),
    rps: z.number().positive().optional(),
    burst: z.number().min(1).optional(),
    queue: z.number().int().min(1).optional(),
    drop: z
      .strictObject({ factor: z.number().gt(0).max(1), fromS: z.number().min(0), toS: z.number().min(0) })
      .optional(),
  })
  .refine(
    (s) => (s.rate429 ?? 0) + (s.rate503 ?? 0) + (s.rate500After ?? 0) + (s.rateReset ?? 0) <= 1,
    'the shares add up to more than 1',
  );

function rate(key: string, raw: string): number {
  const n = Number(raw);
  if (!Number.isFinite(n) || n < 0 || n > 1)
    throw new Error(`fault spec: ${key} must be a share between 0 and 1, got "${raw}"`);
  return n;
}

/** `20` → 20, `5-50` → [5, 50]; throws on anything else. */
export function parseLatency(raw: string): number | [number, number] {
  const m = /^\s*(\d+)\s*(?:-\s*(\d+)\s*)?$/.exec(raw);
  if (!m) throw new Error(`latency must be "<ms>" or "<min>-<max>", got "${raw}"`);
  const min = Number(m[1]);
  if (m[2] === undefined) return min;
  const max = Number(m[2]);
  if (max < min) throw new Error(`latency range "${raw}": max is below min`);
  return [min, max];
}

/** The keys of the fault syntax that give a share of requests, and the spec's field each sets. */
const SHARE_KEYS = new Map<string, 'rate429' | 'rate503' | 'rate500After' | 'rateReset'>([
  ['429', 'rate429'],
  ['503', 'rate503'],
  ['500after', 'rate500After'],
  ['reset', 'rateReset'],
]);

/**
 * Parses the CLI fault syntax: comma-separated `key=value` pairs, keys `429`, `503`, `500after`, `reset` (shares),
 * `retryAfter` (seconds), `latency` (`20` or `5-50`), `seed` (integer), `sequence` (`429|503|ok|500after|reset`), and
 * the product API's limits: `capacity` (at once, 429 past it), `rps` and `burst` (a token bucket, 429 + Retry-After),
 * `queue` (served at once, the rest wait), `drop` (`0.25@5-15`: every limit at a quarter from 5 s to 15 s).
 * Example: `503=0.1,429=0.05,retryAfter=1,500after=0.02,reset=0.02,seed=42`. Throws naming the bad pair.
 */
export function parseFaultSpec(text: string): FaultSpec {
  const spec: FaultSpec = {};
  for (const part of text
    .split(',')
    .map((p) => p.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq < 0) throw new Error(`fault spec: "${part}" is not key=value`);
    const key = part.slice(0, eq).trim();
    const value = part.slice(eq + 1).trim();
    const share = SHARE_KEYS.get(key.toLowerCase());
    if (share) {
      spec[share] = rate(key, value);
      continue;
    }
    switch (key.toLowerCase()) {
      case 'retryafter': {
        const n = Number(value);
        if (!Number.isInteger(n) || n < 0)
          throw new Error(`fault spec: retryAfter must be whole seconds, got "${value}"`);
        spec.retryAfterSeconds = n;
        break;
      }
      case 'latency':
        spec.latencyMs = parseLatency(value);
        break;
      case 'seed': {
        const n = Number(value);
        if (!Number.isInteger(n)) throw new Error(`fault spec: seed must be an integer, got "${value}"`);
        spec.seed = n;
        break;
      }
      case 'sequence': {
        const seq = value.split('|').map((s) => s.trim().toLowerCase());
        for (const s of seq)
          if (!KINDS.includes(s as FaultKind))
            throw new Error(`fault spec: unknown fault "${s}" in sequence (one of ${KINDS.join(', ')})`);
        spec.sequence = seq as FaultKind[];
        break;
      }
      case 'routes': {
        spec.routes = value
          .split('|')
          .map((r) => r.trim().replace(/\s+/g, ' '))
          .filter(Boolean);
        break;
      }
      case 'capacity':
      case 'queue':
      case 'rps':
      case 'burst': {
        const n = Number(value);
        const whole = key.toLowerCase() === 'capacity' || key.toLowerCase() === 'queue';
        if (
          !Number.isFinite(n) ||
          n < (key.toLowerCase() === 'rps' ? Number.MIN_VALUE : 1) ||
          (whole && !Number.isInteger(n))
        )
          throw new Error(
            `fault spec: ${key} must be a ${whole ? 'whole number ≥ 1' : 'positive number'}, got "${value}"`,
          );
        spec[key.toLowerCase() as 'capacity' | 'queue' | 'rps' | 'burst'] = n;
        break;
      }
      case 'drop':
        spec.drop = parseDrop(value);
        break;
      default:
        throw new Error(
          `fault spec: unknown key "${key}" (429, 503, 500after, reset, retryAfter, latency, seed, sequence, routes, capacity, rps, burst, queue, drop)`,
        );
    }
  }
  const total = (spec.rate429 ?? 0) + (spec.rate503 ?? 0) + (spec.rate500After ?? 0) + (spec.rateReset ?? 0);
  if (total > 1) throw new Error(`fault spec: the shares add up to ${total}, more than 1`);
  return spec;
}

/** mulberry32: a small, fast, seedable PRNG giving floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The decision for one request: its latency and its fault. */
export interface FaultDecision {
  latencyMs: number;
  fault: FaultKind;
}

/** Draws fault decisions: exactly two PRNG draws per request (latency, fault), so a sequence reproduces for a seed. */
export class FaultInjector {
  private random: () => number;
  private queue: FaultKind[];
  readonly drawn: Record<FaultKind, number> = { ok: 0, '429': 0, '503': 0, '500after': 0, reset: 0 };
  /** The product API's limits, when the spec sets any. */
  readonly limits: ApiLimits | null;

  constructor(
    readonly spec: FaultSpec,
    defaultSeed = 1,
  ) {
    this.random = mulberry32(spec.seed ?? defaultSeed);
    this.queue = [...(spec.sequence ?? [])];
    this.limits = ApiLimits.any(spec) ? new ApiLimits(spec, spec.retryAfterSeconds ?? 1) : null;
  }

  /** Retry-After seconds a 429 / 503 carries. */
  get retryAfterSeconds(): number {
    return this.spec.retryAfterSeconds ?? 1;
  }

  /**
   * The decision for the next request; `500after` / `reset` drawn for a read become `ok`, and so does any fault of a
   * request to a route the spec's `routes` do not list.
   */
  next(isWrite: boolean, route?: string): FaultDecision {
    const uLatency = this.random();
    const u = this.random();
    const lat = this.spec.latencyMs;
    const latencyMs =
      lat === undefined ? 0 : typeof lat === 'number' ? lat : Math.round(lat[0] + uLatency * (lat[1] - lat[0]));
    let fault: FaultKind = 'ok';
    const routes = this.spec.routes;
    if (routes && (route === undefined || !routes.includes(route))) {
      this.drawn.ok++;
      return { latencyMs, fault };
    }
    const scripted = this.queue.shift();
    if (scripted !== undefined) fault = scripted;
    else {
      const s = this.spec;
      const bounds: [FaultKind, number][] = [
        ['429', s.rate429 ?? 0],
        ['503', s.rate503 ?? 0],
        ['500after', s.rate500After ?? 0],
        ['reset', s.rateReset ?? 0],
      ];
      let acc = 0;
      for (const [kind, p] of bounds) {
        acc += p;
        if (u < acc) {
          fault = kind;
          break;
        }
      }
    }
    if (!isWrite && (fault === '500after' || fault === 'reset')) fault = 'ok';
    this.drawn[fault]++;
    return { latencyMs, fault };
  }
}
