// OpenLineage events of a queued run (issue 40) delivered through the events queue: a worker killed with SIGKILL in
// the middle of the run, another one resuming it — still START and exactly one terminal event under one runId,
// valid against schemas/openlineage-events.json (our schema after the specification), its counts those of
// summary.json, the API key sent as a bearer token.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { BIN } from '../helpers/cli.ts';
import { queueEnv } from '../helpers/env.ts';
import { startLineageReceiver, type LineageReceiver } from '../helpers/openlineage-receiver.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { expireJobLocks } from '../helpers/takeover.ts';
import { until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
let sandbox: RunningSandbox;
let receiver: LineageReceiver;
beforeAll(async () => {
  // Each write takes a while: the run is still under way when its worker is killed.
  sandbox = await startSandbox({ port: 0, latencyMs: 20 });
  receiver = await startLineageReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await sandbox?.close();
});

describe('OpenLineage events of a queued run', () => {
  it('a worker killed mid-run and another resuming it: START, then one terminal event, same runId', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-ol-queue-'));
    const prefix = `ps-ol-${process.pid}`;
    const env = queueEnv(sandbox.url, inject('redisUrl'), prefix, dir, {
      OPENLINEAGE_URL: receiver.url,
      OPENLINEAGE_API_KEY_ENV: 'TEST_LINEAGE_KEY',
      TEST_LINEAGE_KEY: 'lineage-key-1234',
      // The default job lock and lease, which no load lets lapse under a live worker: the killed one's job locks are
      // expired by the test, the next worker's frequent stalled-job check takes its jobs over, and the resumed run
      // takes its own lease again.
      WORKER_STALLED_CHECK_MS: '200',
      WEBHOOK_RETRY_BASE_MS: '50',
      CHUNK_SIZE: '50',
      API_CONCURRENCY: '2',
      LOG_LEVEL: 'silent',
    });
    const spawnWorker = (): ChildProcess =>
      spawn(process.execPath, [BIN, 'worker', '--jobs-dir', join(dir, 'no-jobs')], {
        env: { ...process.env, ...env },
        stdio: 'ignore',
      });
    const { file, mapping } = writeProductSheet(dir, 600, { owner, prefix: '041100' });
    // The test's own client records run.queued: it reads the key's variable too.
    process.env.TEST_LINEAGE_KEY = env.TEST_LINEAGE_KEY;
    const client = importQueueClient(loadConfig(env));
    let worker = spawnWorker();
    try {
      const { jobId } = await client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' });
      // Killed once its START is out and before its end.
      await until('START received', () => receiver.received.some((r) => r.event.eventType === 'START'), 20_000);
      const exited = new Promise((r) => worker.once('exit', r));
      worker.kill('SIGKILL');
      await exited;
      expect(receiver.received.filter((r) => r.event.eventType !== 'START')).toEqual([]);
      await expireJobLocks(inject('redisUrl'), prefix);
      worker = spawnWorker();
      const result = await client.wait(jobId, 120_000);
      await until(
        'terminal event received',
        () => receiver.received.some((r) => r.event.eventType !== 'START'),
        20_000,
      );
      // Anything still in flight had time to arrive twice.
      await new Promise((r) => setTimeout(r, 300));
      expect(receiver.received.filter((r) => r.errors.length > 0).map((r) => r.errors)).toEqual([]);
      expect(receiver.received.every((r) => r.authorization === 'Bearer lineage-key-1234')).toBe(true);
      // The run's own events; its chunks are runs of their own (parent facet), each ended once too.
      const all = [...receiver.runs().values()];
      const runs = all.filter((events) => !events[0]!.run.facets?.parent);
      expect(runs).toHaveLength(1);
      const chunks = all.filter((events) => events[0]!.run.facets?.parent);
      expect(chunks).toHaveLength(12);
      for (const c of chunks) expect(c.map((e) => e.eventType)).toEqual(['START', 'COMPLETE']);
      const events = runs[0]!;
      expect(events.map((e) => e.eventType)).toEqual(['START', 'COMPLETE']);
      const end = events[1]!;
      const summary = JSON.parse(readFileSync(join(result.reportDir, 'summary.json'), 'utf8')) as {
        counts: Record<string, number>;
      };
      expect(summary.counts.created).toBe(600);
      expect(end.inputs[0]!.inputFacets!.dataQualityMetrics!.rowCount).toBe(summary.counts.rows);
      expect(end.outputs[0]!.outputFacets!.outputStatistics!.rowCount).toBe(600);
      expect(end.run.facets!.productSync).toMatchObject({ jobId, runId: result.runId });
    } finally {
      worker.kill('SIGKILL');
      await client.close();
    }
  }, 180_000);
});
