// OpenTelemetry traces of a console upload (issue 40): with OTEL_EXPORTER_OTLP_ENDPOINT set, `serve` and the worker
// export spans over OTLP/HTTP to a collector started by the test, and an upload is one trace: the console's
// `console.upload` span at its root, BullMQ's span of the job it added, the worker's spans of the run and the HTTP
// client spans of its API requests.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { BIN } from '../helpers/cli.ts';
import { queueEnv } from '../helpers/env.ts';
import { attr, orphans, useOtlpCollector } from '../helpers/otlp-collector.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const sandbox = useSandbox();
const collector = useOtlpCollector();

/** A loopback port free now (for `serve --port`). */
async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((resolve) => s.listen(0, '127.0.0.1', resolve));
  const { port } = s.address() as { port: number };
  await new Promise((resolve) => s.close(resolve));
  return port;
}

describe('OpenTelemetry traces of a console upload', () => {
  it('one trace from the upload to the worker’s API requests', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-otel-upload-'));
    mkdirSync(join(dir, 'mappings'));
    // The console finds mappings by name in ./mappings.
    const { file } = writeProductSheet(join(dir, 'mappings'), 25, { owner: DEMO_COMPANY_ID, prefix: '045100' });
    const env = queueEnv(sandbox.url, inject('redisUrl'), `ps-otel-upload-${process.pid}`, dir, {
      OTEL_EXPORTER_OTLP_ENDPOINT: collector.url,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_BSP_SCHEDULE_DELAY: '100',
      CHUNK_SIZE: '10',
      LOG_LEVEL: 'silent',
    });
    const start = (args: string[], service: string): ChildProcess =>
      spawn(process.execPath, [BIN, ...args], {
        cwd: dir,
        env: { ...process.env, ...env, OTEL_SERVICE_NAME: service },
        stdio: 'ignore',
      });
    const port = await freePort();
    const processes = [
      start(['worker', '--jobs-dir', join(dir, 'no-jobs')], 'product-sync-worker'),
      start(['serve', '--port', String(port)], 'product-sync-console'),
    ];
    try {
      const url = `http://127.0.0.1:${port}`;
      await until(
        'the console answers',
        () =>
          fetch(`${url}/mappings`).then(
            (r) => r.ok,
            () => false,
          ),
        60_000,
      );
      const form = new FormData();
      form.append('mapping', 'products');
      form.append('file', new Blob([readFileSync(file)]), 'products.csv');
      const res = await fetch(`${url}/uploads`, { method: 'POST', body: form });
      expect(res.status, await res.clone().text()).toBe(202);
      // The upload's span, the root of the run's trace.
      const upload = () =>
        collector.spans.find((s) => s.service === 'product-sync-console' && s.name === 'console.upload');
      await until('the upload span', () => Boolean(upload()), 15_000);
      const root = upload()!;
      expect(root.parentSpanId ?? '').toBe('');
      expect(attr(root, 'mapping')).toBe('products');
      const traceId = root.traceId;
      const inTrace = (service: string) =>
        collector.spans.filter((s) => s.traceId === traceId && s.service === service);
      // The job added under it (bullmq-otel), in the console's process.
      expect(inTrace('product-sync-console').some((s) => /add/i.test(s.name) && /import/.test(s.name))).toBe(true);
      const posts = () =>
        inTrace('product-sync-worker').filter((s) => attr(s, 'http.request.method') === 'POST' && s.kind === 3);
      await until(
        'the worker’s spans of the run, its API requests among them',
        () =>
          ['pass.keys', 'pass.rows', 'report'].every((n) => inTrace('product-sync-worker').some((s) => s.name === n)) &&
          inTrace('product-sync-worker').filter((s) => s.name === 'chunk.push').length === 3 &&
          posts().length > 0,
        30_000,
      );
      expect(posts().every((s) => String(attr(s, 'url.full')).startsWith(sandbox.url))).toBe(true);
      // One tree: every span of the worker and of the console in the trace hangs from a span of it.
      expect(orphans(collector, traceId, 'product-sync-worker')).toEqual([]);
      expect(orphans(collector, traceId, 'product-sync-console')).toEqual(['console.upload']);
    } finally {
      for (const p of processes) {
        const exited = new Promise((resolve) => p.once('exit', resolve));
        p.kill('SIGTERM');
        await exited;
      }
    }
  }, 150_000);
});
