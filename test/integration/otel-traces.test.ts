// OpenTelemetry traces (issue 40): with OTEL_EXPORTER_OTLP_ENDPOINT set, `enqueue` and the worker export spans over
// OTLP/HTTP (JSON) to a collector — here a receiver started by the test — and a run is one trace: BullMQ's span of
// the enqueue, the worker's spans of the import job (its passes, its chunks, bullmq-otel's job spans) and the HTTP
// client spans of its API requests (undici's instrumentation), all under the trace id the enqueue started.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { BIN, runCli } from '../helpers/cli.ts';
import { queueEnv } from '../helpers/env.ts';
import { attr, orphans, useOtlpCollector } from '../helpers/otlp-collector.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const sandbox = useSandbox();
const collector = useOtlpCollector();

describe('OpenTelemetry traces', () => {
  it('one trace from `enqueue` to the worker’s API requests', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-otel-'));
    const env = queueEnv(sandbox.url, inject('redisUrl'), `ps-otel-${process.pid}`, dir, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      CHUNK_SIZE: '10',
    });
    const { file, mapping } = writeProductSheet(dir, 25, { owner: DEMO_COMPANY_ID, prefix: '042100' });
    const worker: ChildProcess = spawn(process.execPath, [BIN, 'worker', '--jobs-dir', join(dir, 'no-jobs')], {
      env: { ...process.env, ...env, OTEL_SERVICE_NAME: 'product-sync-worker' },
      stdio: 'ignore',
    });
    try {
      const r = await runCli(['enqueue', file, '--mapping', mapping, '--wait'], {
        env: { ...env, OTEL_SERVICE_NAME: 'product-sync-enqueue' },
      });
      expect(r.code, r.stderr).toBe(0);
      // The enqueue's span: BullMQ's, for the job it added (bullmq-otel); its trace is the run's.
      const added = () =>
        collector.spans.find(
          (s) => s.service === 'product-sync-enqueue' && /add/i.test(s.name) && /import/.test(s.name),
        );
      await until('the enqueue span', () => Boolean(added()), 10_000);
      const traceId = added()!.traceId;
      const inTrace = () => collector.spans.filter((s) => s.traceId === traceId && s.service === 'product-sync-worker');
      const httpSpans = () => inTrace().filter((s) => attr(s, 'http.request.method') !== undefined);
      await until(
        'the worker’s spans of the run',
        () =>
          ['pass.keys', 'pass.rows', 'report'].every((n) => inTrace().some((s) => s.name === n)) &&
          inTrace().filter((s) => s.name === 'chunk.push').length === 3 &&
          httpSpans().some((s) => attr(s, 'http.request.method') === 'POST'),
        20_000,
      );
      // The API requests of the chunks, as HTTP client spans (kind 3: CLIENT) to the sandbox, children of the trace.
      const posts = httpSpans().filter((s) => attr(s, 'http.request.method') === 'POST');
      expect(posts.every((s) => s.kind === 3 && String(attr(s, 'url.full')).startsWith(sandbox.url))).toBe(true);
      expect(posts.every((s) => s.parentSpanId)).toBe(true);
      // Every worker span of the trace hangs from a span of the trace: one tree, rooted at the enqueue.
      expect(orphans(collector, traceId, 'product-sync-worker')).toEqual([]);
    } finally {
      worker.kill('SIGTERM');
      await new Promise((resolve) => worker.once('exit', resolve));
    }
  }, 60_000);
});
