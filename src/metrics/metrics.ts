/**
 * The metrics a process counts itself (issue 25, docs/operations.md), on a prom-client registry of its own (not the
 * global default: each worker, console or test has its own): rows and issues of the runs it finished, counted from
 * their summary so they agree with summary.json; the API requests it sent; how long its runs took.
 */
import { Counter, Gauge, Histogram, Registry, type Metric } from 'prom-client';
import { shownLimiter, type LimiterSnapshot } from '../api/api-limiter.ts';
import type { ApiName } from '../api/endpoints.ts';
import { observeRequests } from '../api/request-observer.ts';
import { COUNT_KEY, OUTCOMES } from '../pipeline/outcomes.ts';
import type { RunSummary } from '../pipeline/report/report.ts';

/** The row outcomes of summary.json `counts` (its camelCase keys), one per row (`valid` is a total, not an outcome). */
export const ROW_OUTCOMES = OUTCOMES.filter((o) => o !== 'valid').map((o) => COUNT_KEY[o]);

/** Upper bounds of `product_sync_api_request_duration_seconds`'s buckets, seconds. */
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30] as const;

/** How a finished run ended, by its exit code, as `product_sync_run_duration_seconds{status}` says it. */
export function runStatusLabel(exitCode: number): string {
  return exitCode === 0 ? 'ok' : exitCode === 1 ? 'rows_failed' : exitCode === 3 ? 'aborted' : `exit_${exitCode}`;
}

/** The registry of one process and its instruments. */
export class ProcessMetrics {
  readonly registry = new Registry();
  readonly #rows = new Counter({
    name: 'product_sync_rows_total',
    help: 'Rows of the runs this process finished, by feed (empty for runs not started by a feed) and outcome',
    labelNames: ['feed', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly #issues = new Counter({
    name: 'product_sync_issues_total',
    help: 'Rows with an issue in the runs this process finished, by issue code (summary.json issues[].rows summed by code)',
    labelNames: ['code'] as const,
    registers: [this.registry],
  });
  // A request is tallied in plain numbers (a Map lookup and a few additions: prom-client's own inc() and observe() cost
  // microseconds each, hashing their labels every time); the registry reads the tallies when it is scraped.
  readonly #requestTally = new Map<string, { api: string; method: string; status: string; n: number }>();
  readonly #timeTally = new Map<
    string,
    { api: string; method: string; buckets: Float64Array; sum: number; n: number }
  >();
  readonly #requests = new Counter({
    name: 'product_sync_api_requests_total',
    help: 'Requests sent to the product and reference APIs, by API, method and answer status (error: no answer)',
    labelNames: ['api', 'method', 'status'] as const,
    registers: [this.registry],
    collect: () => {
      for (const t of this.#requestTally.values()) {
        if (t.n > 0) this.#requests.inc({ api: t.api, method: t.method, status: t.status }, t.n);
        t.n = 0;
      }
    },
  });
  readonly #runSeconds = new Histogram({
    name: 'product_sync_run_duration_seconds',
    help: 'Duration of the runs this process finished (summary.json startedAt to finishedAt), by how they ended',
    labelNames: ['status'] as const,
    buckets: [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14400],
    registers: [this.registry],
  });

  readonly #scorecard = new Gauge({
    name: 'product_sync_scorecard_score',
    help: 'Supplier scorecard score (0-100, docs/scorecard.md) of the last run this process finished, by mapping and feed (empty for runs not started by a feed)',
    labelNames: ['mapping', 'feed'] as const,
    registers: [this.registry],
  });

  readonly #sourceErrors = new Counter({
    name: 'product_sync_feed_source_errors_total',
    help: 'Feed ticks of this process whose source could not be listed or read (each one sent run.failed), by feed',
    labelNames: ['feed'] as const,
    registers: [this.registry],
  });

  /** The product API's limits as this process's limiter learned them (src/api/api-limiter.ts), read when scraped. */
  readonly limitGauges: Gauge[] = [
    this.#limiterGauge(
      'product_sync_api_concurrency_limit',
      'Product API requests allowed in flight (learned)',
      (a) => a.concurrencyLimit,
    ),
    this.#limiterGauge(
      'product_sync_api_rate_limit',
      'Product API starts a second it is paced at (0: unpaced)',
      (a) => a.rate ?? 0,
    ),
    this.#limiterGauge(
      'product_sync_api_refusals',
      'Product API 429 / 503 answers this process got',
      (a) => a.refusals,
    ),
    this.#limiterGauge('product_sync_api_latency_seconds', 'Product API latency, last window average', (a) =>
      a.latencyMs === null ? 0 : a.latencyMs / 1000,
    ),
    this.#limiterGauge(
      'product_sync_api_limited_seconds',
      'Seconds this process waited on the product API limits (learned limit or pace, Retry-After)',
      (a) => a.limitedMs / 1000,
    ),
  ];

  constructor() {
    this.registry.registerMetric(this.#requestSecondsMetric());
  }

  #limiterGauge(name: string, help: string, read: (a: LimiterSnapshot) => number): Gauge {
    const gauge: Gauge = new Gauge({
      name,
      help,
      registers: [this.registry],
      collect: () => {
        const a = shownLimiter()?.snapshot();
        if (a) gauge.set(read(a));
      },
    });
    return gauge;
  }

  readonly #queueWait = new Histogram({
    name: 'product_sync_queue_wait_seconds',
    help: 'Time a job of this process waited in line before it started, by queue and owner: import (queued to its owner lease granted), push (a chunk added to started)',
    labelNames: ['queue', 'owner'] as const,
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 900, 3600, 14400],
    registers: [this.registry],
  });

  /** Counts how long a job waited in line (docs/queue.md, "Fairness"). */
  recordQueueWait(queue: 'import' | 'push', owner: string, seconds: number): void {
    if (Number.isFinite(seconds) && seconds >= 0) this.#queueWait.observe({ queue, owner }, seconds);
  }

  /** Counts a feed tick whose source failed: no run could start, so no run counts it. */
  recordSourceError(feed: string): void {
    this.#sourceErrors.inc({ feed });
  }

  /** Counts a finished run from its summary: rows by outcome, issue rows by code, its duration. */
  recordRun(summary: RunSummary, feed?: string): void {
    for (const outcome of ROW_OUTCOMES) {
      // Every outcome is written, zeros too: a rate over a series that appears late misses its first step.
      this.#rows.inc({ feed: feed ?? '', outcome }, summary.counts[outcome] ?? 0);
    }
    const byCode = new Map<string, number>();
    for (const e of summary.issues ?? []) byCode.set(e.code, (byCode.get(e.code) ?? 0) + e.rows);
    for (const [code, rows] of byCode) this.#issues.inc({ code }, rows);
    if (summary.scorecard) this.#scorecard.set({ mapping: summary.mapping, feed: feed ?? '' }, summary.scorecard.score);
    const seconds = (Date.parse(summary.finishedAt) - Date.parse(summary.startedAt)) / 1000;
    if (Number.isFinite(seconds) && seconds >= 0)
      this.#runSeconds.observe({ status: runStatusLabel(summary.exitCode) }, seconds);
  }

  /** Counts one API request (the observer of src/api/request-observer.ts). */
  recordRequest(api: ApiName, method: string, status: number | 'error', seconds: number): void {
    const key = `${api} ${method} ${status}`;
    let r = this.#requestTally.get(key);
    if (!r) this.#requestTally.set(key, (r = { api, method, status: String(status), n: 0 }));
    r.n += 1;
    const timeKey = `${api} ${method}`;
    let t = this.#timeTally.get(timeKey);
    if (!t)
      this.#timeTally.set(
        timeKey,
        (t = { api, method, buckets: new Float64Array(REQUEST_BUCKETS.length), sum: 0, n: 0 }),
      );
    t.n += 1;
    t.sum += seconds;
    for (let i = 0; i < REQUEST_BUCKETS.length; i++) {
      if (seconds <= REQUEST_BUCKETS[i]!) {
        t.buckets[i]! += 1;
        break;
      }
    }
  }

  /**
   * `product_sync_api_request_duration_seconds` as a metric of the registry: a histogram read from the tallies (each
   * bucket counted alone above, made cumulative here).
   */
  #requestSecondsMetric(): Metric {
    const name = 'product_sync_api_request_duration_seconds';
    const help = 'Time from sending a request to the API to having its whole answer, by API and method';
    const values = () =>
      [...this.#timeTally.values()].flatMap((t) => {
        const labels = { api: t.api, method: t.method };
        let cumulative = 0;
        return [
          ...REQUEST_BUCKETS.map((le, i) => ({
            labels: { ...labels, le },
            value: (cumulative += t.buckets[i]!),
            metricName: `${name}_bucket`,
          })),
          { labels: { ...labels, le: '+Inf' }, value: t.n, metricName: `${name}_bucket` },
          { labels, value: t.sum, metricName: `${name}_sum` },
          { labels, value: t.n, metricName: `${name}_count` },
        ];
      });
    return {
      name,
      help,
      type: 'histogram',
      aggregator: 'sum',
      get: async () => ({ name, help, type: 'histogram', aggregator: 'sum', values: values() }),
      reset: () => this.#timeTally.clear(),
    } as unknown as Metric;
  }

  /** Makes this registry the observer of every API request the process sends; returns the undo. */
  observeApiRequests(): () => void {
    observeRequests((api, method, status, seconds) => this.recordRequest(api, method, status, seconds));
    return () => observeRequests(undefined);
  }

  /** The registry in Prometheus text format. */
  text(): Promise<string> {
    return this.registry.metrics();
  }
}
