import type { LimiterSnapshot } from '../../api/api-limiter.ts';

/** What a run saw of the product API's limits (summary.json `api`). */
export interface RunApiFigures {
  /** Requests allowed in flight at the end (learned; API_CONCURRENCY at most). */
  concurrencyLimit: number;
  /** Starts a second the API was paced at at the end, null when unpaced. */
  rate: number | null;
  /** 429 / 503 answers during the run. */
  refusals: number;
  /** Answers during the run (refusals included). */
  answers: number;
  /** Average latency of the last window, ms. */
  latencyMs: number | null;
  /** Milliseconds the run's requests waited on the API's limits (a learned limit or pace, a Retry-After). */
  limitedMs: number;
  /** That time as a share of the run's. */
  limitedShare: number;
}

/** The figures of a run from the limiter's snapshots at its start and end. */
export function runApiFigures(before: LimiterSnapshot, after: LimiterSnapshot, elapsedMs: number): RunApiFigures {
  const limitedMs = Math.max(0, after.limitedMs - before.limitedMs);
  return {
    concurrencyLimit: after.concurrencyLimit,
    rate: after.rate,
    refusals: after.refusals - before.refusals,
    answers: after.answers - before.answers,
    latencyMs: after.latencyMs,
    limitedMs,
    limitedShare: elapsedMs > 0 ? Math.round((limitedMs / elapsedMs) * 1000) / 1000 : 0,
  };
}

/** The closing line of a run held back by the API's limits for more than a tenth of its time; null otherwise. */
export function limitedLine(api: RunApiFigures | undefined): string | null {
  if (!api || api.limitedShare <= 0.1) return null;
  const pace = api.rate === null ? '' : `, ${api.rate} requests/s`;
  return `  the product API's limits held this run back ${Math.round(api.limitedShare * 100)} % of its time (${api.concurrencyLimit} at once${pace}, ${api.refusals} refused of ${api.answers}): the API, not product-sync, set the pace`;
}
