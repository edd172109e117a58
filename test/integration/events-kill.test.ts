import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { ownRedis, type OwnRedis } from '../helpers/redis-server.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { apiEnv } from '../helpers/env.ts';
import { expireJobLocks } from '../helpers/takeover.ts';

const owner = DEMO_COMPANY_ID;
const RUNS = 20;
let sandbox: RunningSandbox;
let redis: OwnRedis;
let receiver: Receiver;
let dir: string;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'ps-events-kill-'));
  redis = await ownRedis(dir);
  await redis.start();
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await redis?.stop();
  await sandbox?.close();
});

describe('run events across worker kills', () => {
  it(`loses no event when the worker is killed with SIGKILL at random points across ${RUNS} runs`, async () => {
    const e = {
      ...apiEnv(sandbox.url),
      REDIS_URL: redis.url,
      QUEUE_PREFIX: 'ps-ev-kill',
      REPORT_DIR: join(dir, 'reports'),
      UPLOAD_DIR: join(dir, 'uploads'),
      LOG_LEVEL: 'silent',
      // The default job lock, which no load lets lapse under a live worker; a killed one's locks are expired by the
      // test, and the next worker's frequent stalled-job check takes its jobs over.
      WORKER_STALLED_CHECK_MS: '200',
      WEBHOOK_URL: receiver.url,
      WEBHOOK_SECRET: receiver.secret,
      WEBHOOK_RETRY_BASE_MS: '50',
    };
    const spawnWorker = (): ChildProcess =>
      spawn(process.execPath, ['bin/product-sync.mjs', 'worker', '--jobs-dir', join(dir, 'no-jobs')], {
        env: { ...process.env, ...e },
        stdio: 'ignore',
      });
    const client = importQueueClient(loadConfig(e));
    let worker = spawnWorker();
    let killing = true;
    let kills = 0;
    // Kills the worker at random moments (whatever it is doing then: preparing, pushing, finishing a run, delivering)
    // and starts another; a few times, so no job is found stalled past BullMQ's limit.
    const killer = (async () => {
      while (killing && kills < 6) {
        await new Promise((r) => setTimeout(r, 700 + Math.floor(Math.random() * 1500)));
        if (!killing) break;
        const exited = new Promise((r) => worker.once('exit', r));
        worker.kill('SIGKILL');
        await exited;
        await expireJobLocks(redis.url, e.QUEUE_PREFIX);
        kills++;
        worker = spawnWorker();
      }
    })();
    try {
      const jobIds: string[] = [];
      for (let i = 0; i < RUNS; i++) {
        const { file, mapping } = writeProductSheet(dir, 2, {
          owner,
          file: `kill-${i}.csv`,
          prefix: `0356${String(i).padStart(2, '0')}`,
        });
        jobIds.push((await client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' })).jobId);
      }
      const results = await Promise.all(jobIds.map((id) => client.wait(id, 120_000)));
      killing = false;
      await killer;
      expect(kills).toBeGreaterThan(0);
      // Every run's events came, signed, whatever the kills did (duplicates allowed: at least once, same ids).
      const ended = (jobId: string) =>
        [...receiver.accepted().values()].filter(
          (r) => r.data.jobId === jobId && (r.type === 'run.finished' || r.type === 'run.aborted'),
        );
      const missing = () =>
        jobIds.filter(
          (jobId) =>
            ended(jobId).length !== 1 ||
            !['run.queued', 'run.started'].every((t) =>
              [...receiver.accepted().values()].some((r) => r.type === t && r.data.jobId === jobId),
            ),
        );
      await receiver.waitFor(() => missing().length === 0, 20_000).catch(() => undefined);
      expect(missing()).toEqual([]);
      results.forEach((res, i) => expect(ended(jobIds[i]!)[0]!.data.runId).toBe(res.runId));
      expect(receiver.received.filter((r) => !r.verified)).toEqual([]);
      // A redelivery carries the id of the first delivery: one event id per (run, type).
      const ids = new Map<string, Set<string>>();
      for (const r of receiver.received) {
        const k = `${String(r.data.jobId)}|${r.type}`;
        ids.set(k, (ids.get(k) ?? new Set()).add(r.id));
      }
      for (const [k, set] of ids) expect(set.size, k).toBe(1);
    } finally {
      killing = false;
      await killer;
      worker.kill('SIGKILL');
      await client.close();
    }
  }, 180_000);
});
