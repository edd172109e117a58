// OpenLineage events of queued runs' chunks and of scheduled feed runs (issue 40): each push job is a run of its own
// (START, then COMPLETE) whose `parent` facet names its import's run and job, the import's own events unchanged; a
// run queued by a tick of a feed's schedule carries that tick's due time as nominalTime, an ad-hoc run none. Real
// workers on the suite's Redis, a receiver checking every event against schemas/openlineage-events.json.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { startWorkers, type WorkerSet } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { queueEnv } from '../helpers/env.ts';
import { jobTypeOf, useLineageReceiver, type LineageEventBody } from '../helpers/openlineage-receiver.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
const sandbox = useSandbox();
const receiver = useLineageReceiver();

const parentOf = (e: LineageEventBody) =>
  e.run.facets?.parent as { run: { runId: string }; job: { namespace: string; name: string } } | undefined;

/** The runs (START first) of the import job `jobId` and of its chunks, once every one of them has ended. */
async function runAndChunks(jobId: string, chunks: number) {
  const all = () => [...receiver.runs().values()];
  const ended = (events: LineageEventBody[]) => events.some((e) => e.eventType !== 'START');
  const run = () => all().find((events) => events[0]!.run.facets?.productSync?.jobId === jobId);
  const chunkRuns = () => all().filter((events) => parentOf(events[0]!)?.run.runId === run()?.[0]!.run.runId);
  await until(
    `the run ${jobId} and its ${chunks} chunks ended`,
    () => Boolean(run() && ended(run()!) && chunkRuns().length === chunks && chunkRuns().every(ended)),
    30_000,
  );
  expect(receiver.received.filter((r) => r.errors.length > 0).map((r) => r.errors)).toEqual([]);
  return { run: run()!, chunks: chunkRuns() };
}

describe('OpenLineage events of queued chunks and scheduled runs', () => {
  it('each chunk is a run whose parent is its import’s run; a scheduled run has its tick’s due time', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-ol-chunks-'));
    const drop = join(dir, 'drop');
    mkdirSync(drop);
    mkdirSync(join(dir, 'jobs'));
    const env = queueEnv(sandbox.url, inject('redisUrl'), `ps-ol-chunks-${process.pid}`, dir, {
      OPENLINEAGE_URL: receiver.url,
      WEBHOOK_RETRY_BASE_MS: '50',
      LOG_LEVEL: 'silent',
    });
    const config = loadConfig(env);
    // Ad hoc: a sheet queued as `enqueue` queues it, in chunks of 10 rows.
    const { file, mapping } = writeProductSheet(dir, 25, { owner, prefix: '044100' });
    // Scheduled: a feed whose schedule ticks every second, its drop folder holding one sheet.
    writeProductSheet(drop, 5, { owner, prefix: '044200', file: 'feed-1.csv' });
    writeFileSync(
      join(dir, 'jobs', 'nightly.yaml'),
      `schedule: "* * * * * *"\nsource: { dir: ${drop}, pattern: "*.csv", settleSeconds: 0 }\nmapping: ${mapping}\n`,
    );
    let workers: WorkerSet | undefined;
    const client = importQueueClient(config);
    try {
      workers = await startWorkers(config, { jobsDir: join(dir, 'jobs'), chunkSize: 10 });
      const { jobId } = await client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' });
      const adHoc = await runAndChunks(jobId, 3);
      // The import's own run: START then COMPLETE, as before; no nominalTime (nothing scheduled it).
      expect(adHoc.run.map((e) => e.eventType)).toEqual(['START', 'COMPLETE']);
      expect(adHoc.run[0]!.run.facets!.nominalTime).toBeUndefined();
      const parentRunId = adHoc.run[0]!.run.runId;
      // Each chunk: its own runId, START then COMPLETE, its parent the import's run and job, writing to the API.
      expect(new Set(adHoc.chunks.map((c) => c[0]!.run.runId)).size).toBe(3);
      for (const events of adHoc.chunks) {
        expect(events.map((e) => e.eventType)).toEqual(['START', 'COMPLETE']);
        expect(events.every((e) => e.run.runId === events[0]!.run.runId && e.run.runId !== parentRunId)).toBe(true);
        expect(parentOf(events[1]!)).toMatchObject({
          run: { runId: parentRunId },
          job: { namespace: 'product-sync', name: 'products' },
        });
        expect(events[1]!.job.name).toBe('products.push');
        expect(jobTypeOf(events[1]!)).toBe('CHUNK');
        expect(events[1]!.outputs[0]).toMatchObject({ name: owner });
      }
      expect(adHoc.chunks.map((c) => c[1]!.run.facets!.productSync!.chunk).sort()).toEqual([
        'rows-0',
        'rows-1',
        'rows-2',
      ]);
      // The feed's run, queued by a tick of its schedule: nominalTime is when that tick was due (a whole second, the
      // schedule's), at or before its START.
      await until(
        'the feed’s run',
        () => [...receiver.runs().values()].some((events) => events[0]!.job.name === 'nightly'),
        30_000,
      );
      const feedRun = [...receiver.runs().values()].find((events) => events[0]!.job.name === 'nightly')!;
      const nominal = feedRun[0]!.run.facets!.nominalTime as { nominalStartTime: string } | undefined;
      expect(nominal?.nominalStartTime).toMatch(/:\d\d\.000Z$/);
      expect(Date.parse(nominal!.nominalStartTime)).toBeLessThanOrEqual(Date.parse(feedRun[0]!.eventTime));
      expect(receiver.received.filter((r) => r.errors.length > 0).map((r) => r.errors)).toEqual([]);
    } finally {
      await client.close();
      await workers?.close();
    }
  }, 90_000);
});
