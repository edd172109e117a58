// /metrics as one valid page (issue 25 item 3): BullMQ's page per queue and prom-client's registry merged so that each
// metric has one HELP and one TYPE, its samples together, and the page ends with a newline — checked by a strict
// reader written from the format's description (test/helpers/prom-check.ts), and by promtool where it is installed.
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import { fleetMetrics } from '../src/queue/metrics-fleet.ts';
import { metricsPage } from '../src/metrics/metrics-page.ts';
import { ProcessMetrics } from '../src/metrics/metrics.ts';
import { gaugeText, mergePages } from '../src/metrics/prom-text.ts';
import type { RunSummary } from '../src/pipeline/report/report.ts';
import { parsePromStrict, promtoolCheck, sampleValue } from './helpers/prom-check.ts';
import { runCounts } from './helpers/summary.ts';

/** What BullMQ 6.7's exportPrometheusMetrics writes for one queue (its own text, no final newline). */
const bullPage = (queue: string, waiting: number) =>
  [
    '# HELP bullmq_job_count Number of jobs in the queue by state',
    '# TYPE bullmq_job_count gauge',
    `bullmq_job_count{queue="${queue}", state="waiting"} ${waiting}`,
    `bullmq_job_count{queue="${queue}", state="failed"} 0`,
    '# HELP bullmq_job_completed_total Total number of completed jobs',
    '# TYPE bullmq_job_completed_total counter',
    `bullmq_job_completed_total{queue="${queue}"} 7`,
  ].join('\n');

const summary = (over: Partial<RunSummary>): RunSummary =>
  ({
    runId: 'r',
    startedAt: '2026-11-27T10:00:00.000Z',
    finishedAt: '2026-11-27T10:00:42.500Z',
    exitCode: 1,
    counts: runCounts({ rows: 10, created: 4, updated: 1, unchanged: 2, invalid: 3, valid: 7 }),
    issues: [
      { code: 'GTIN_LENGTH', column: 'GTIN', rows: 2 },
      { code: 'FIELD_REQUIRED', column: 'Désignation', rows: 1 },
      { code: 'GTIN_LENGTH', column: 'EAN', rows: 1 },
    ],
    ...over,
  }) as RunSummary;

describe('the metrics page', () => {
  it('merges the pages of several queues and the registry into one valid page; their mere concatenation is refused', async () => {
    const own = new ProcessMetrics();
    own.recordRun(summary({}), 'nightly');
    own.recordRequest('product', 'POST', 200, 0.02);
    own.recordRequest('product', 'POST', 200, 0.3);
    own.recordRequest('reference', 'GET', 'error', 1.2);
    const pages = [
      await own.text(),
      bullPage('import', 2),
      bullPage('push', 5),
      gaugeText('product_sync_feed_overdue', 'overdue', [[{ feed: 'a "quoted"\\feed' }, 1]]),
    ];
    // The strict reader is not lenient: what BullMQ's pages give when simply put one after the other is refused.
    expect(() => parsePromStrict(`${pages.join('\n')}\n`)).toThrow(/bullmq_job_count/);
    expect(() => parsePromStrict(bullPage('import', 1))).toThrow(/newline/);
    expect(parsePromStrict(`${bullPage('import', 1)}\n`).get('bullmq_job_count')?.samples).toHaveLength(2);

    const page = mergePages(pages);
    const families = parsePromStrict(page);
    expect(page.match(/^# TYPE bullmq_job_count /gm)).toHaveLength(1);
    expect(sampleValue(families, 'bullmq_job_count', { queue: 'push', state: 'waiting' })).toBe(5);
    expect(sampleValue(families, 'bullmq_job_completed_total', { queue: 'import' })).toBe(7);
    expect(sampleValue(families, 'product_sync_feed_overdue', { feed: 'a "quoted"\\feed' })).toBe(1);
    expect(sampleValue(families, 'product_sync_rows_total', { feed: 'nightly', outcome: 'created' })).toBe(4);
    expect(sampleValue(families, 'product_sync_rows_total', { feed: 'nightly', outcome: 'invalid' })).toBe(3);
    // Summed by code over the breakdown's columns.
    expect(sampleValue(families, 'product_sync_issues_total', { code: 'GTIN_LENGTH' })).toBe(3);
    expect(sampleValue(families, 'product_sync_run_duration_seconds_sum', { status: 'rows_failed' })).toBe(42.5);
    expect(
      sampleValue(families, 'product_sync_api_requests_total', { api: 'product', method: 'POST', status: '200' }),
    ).toBe(2);
    expect(
      sampleValue(families, 'product_sync_api_request_duration_seconds_count', { api: 'product', method: 'POST' }),
    ).toBe(2);
    expect(
      sampleValue(families, 'product_sync_api_request_duration_seconds_bucket', {
        api: 'product',
        method: 'POST',
        le: '0.025',
      }),
    ).toBe(1);
    expect(families.get('product_sync_api_request_duration_seconds')?.type).toBe('histogram');
    const promtool = promtoolCheck(page);
    if (promtool !== null) expect(promtool).toBe('');
  });
});

describe('docs/operations.md', () => {
  it("its example alert rules are valid Prometheus rules and name this page's metrics", () => {
    const doc = readFileSync(new URL('../docs/operations.md', import.meta.url), 'utf8');
    const rules = /## Alert rules[\s\S]*?```yaml\n([\s\S]*?)```/.exec(doc)?.[1];
    expect(rules).toContain('product_sync_feed_overdue');
    expect(rules).toContain('bullmq_job_failed_total');
    expect(rules).toContain('product_sync_feed_source_errors_total');
    const file = join(mkdtempSync(join(tmpdir(), 'ps-rules-')), 'rules.yml');
    writeFileSync(file, rules!);
    const r = spawnSync('promtool', ['check', 'rules', file], { encoding: 'utf8' });
    if (r.error) return; // promtool not installed: CI installs it (.ci/run)
    expect(r.status, `${r.stdout}${r.stderr}`).toBe(0);
    expect(r.stdout).toMatch(/SUCCESS: 2 rules found/);
  });
});

describe('a scrape without Redis', () => {
  it("answers with the process's counters and product_sync_redis_up 0, in bounded time", async () => {
    // Port 1: nothing listens there, the connection is refused.
    const config = loadConfig({ REDIS_URL: 'redis://127.0.0.1:1', QUEUE_PREFIX: 'ps-no-redis', LOG_LEVEL: 'silent' });
    const fleet = fleetMetrics(config);
    const own = new ProcessMetrics();
    own.recordRequest('reference', 'GET', 200, 0.01);
    try {
      const families = parsePromStrict(await metricsPage(own, fleet));
      expect(sampleValue(families, 'product_sync_redis_up')).toBe(0);
      expect(
        sampleValue(families, 'product_sync_api_requests_total', { api: 'reference', method: 'GET', status: '200' }),
      ).toBe(1);
      expect(families.has('bullmq_job_count')).toBe(false);
    } finally {
      await Promise.race([fleet.close(), new Promise((r) => setTimeout(r, 1000))]);
    }
  }, 15_000);
});
