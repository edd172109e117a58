import type { LimiterSnapshot, LimiterTally } from '../../api/api-limiter.ts';

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

/** What one chunk of a queued run saw of the API's limits (a push job's result): the run's figures, for the chunk. */
export interface ChunkApiFigures extends Pick<
  RunApiFigures,
  'concurrencyLimit' | 'rate' | 'refusals' | 'answers' | 'latencyMs'
> {
  /** Time during which at least one of the chunk's requests waited on the limits, ms. */
  limitedMs: number;
  /** The chunk's time, ms. */
  elapsedMs: number;
  /** When the chunk ended (epoch ms): the latest one's limit, rate and latency are the run's. */
  endedAt: number;
}

/** A chunk's figures: its own refusals and waits (`tally`), the worker's limiter at its end (`after`). */
export function chunkApiFigures(tally: LimiterTally, after: LimiterSnapshot, elapsedMs: number): ChunkApiFigures {
  return {
    concurrencyLimit: after.concurrencyLimit,
    rate: after.rate,
    refusals: tally.refusals,
    answers: tally.answers,
    latencyMs: after.latencyMs,
    limitedMs: Math.round(tally.limitedMs),
    elapsedMs: Math.round(elapsedMs),
    endedAt: Date.now(),
  };
}

/**
 * A queued run's figures from its chunks' (which ran in parallel, in several workers): refusals and answers summed;
 * `limitedMs` summed over the chunks and `limitedShare` the share of the chunks' time it was; the limit, rate and
 * latency of the worker that finished the last chunk. Undefined when no chunk reported any.
 */
export function mergeChunkApiFigures(chunks: readonly (ChunkApiFigures | undefined)[]): RunApiFigures | undefined {
  const known = chunks.filter((c): c is ChunkApiFigures => c !== undefined);
  if (known.length === 0) return undefined;
  const last = known.reduce((a, b) => (b.endedAt > a.endedAt ? b : a));
  const sum = (f: (c: ChunkApiFigures) => number) => known.reduce((n, c) => n + f(c), 0);
  const limitedMs = sum((c) => c.limitedMs);
  const elapsedMs = sum((c) => c.elapsedMs);
  return {
    concurrencyLimit: last.concurrencyLimit,
    rate: last.rate,
    refusals: sum((c) => c.refusals),
    answers: sum((c) => c.answers),
    latencyMs: last.latencyMs,
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
