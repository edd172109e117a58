// A feed over S3 (s3rver, an S3-compatible server from npm, started here) through two workers: three deltas put at
// once run once each and in order, each moved under done/ after its run; a listing with nothing new runs nothing.
import type { S3Client } from '@aws-sdk/client-s3';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.ts';
import type { ImportJobData } from '../../src/queue/catalog.ts';
import type { ImportJobResult } from '../../src/queue/enqueue.ts';
import { openFeedsQueue } from '../../src/queue/queues.ts';
import { startWorkers, type WorkerSet } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { ownS3, s3AdminClient, s3rverBin, type OwnS3 } from '../helpers/s3rver.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { queueEnv } from '../helpers/env.ts';

const missing = s3rverBin() ? null : 's3rver is not installed (a devDependency: npm ci)';
if (missing && process.env.CI) throw new Error(`CI must run the S3 feed tests: ${missing}`);
if (missing) console.log(`skipping the S3 feed tests: ${missing}`);

const redisUrl = inject('redisUrl');
const prefix = `ps-feed-s3-${process.pid}-${Date.now().toString(36)}`;

describe.skipIf(missing !== null)('a feed over S3, through two workers', () => {
  let sandbox: RunningSandbox;
  let s3: OwnS3;
  let admin: S3Client;
  let dir: string;
  let config: Config;
  let redis: Redis;
  const workers: WorkerSet[] = [];
  const saved = { ...process.env };

  const sheet = (tag: string) =>
    ['GTIN;Désignation;Poids net;Unité', ...[0, 1].map((i) => `${testGtin(i)};${tag} ${i};100;g`)].join('\n') + '\n';
  const keys = async () =>
    ((await admin.send(new ListObjectsV2Command({ Bucket: 'drops', Prefix: 'acme/' }))).Contents ?? [])
      .map((o) => o.Key!)
      .sort();
  const lastKey = `{${prefix}}:feed:acme:last`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ps-feed-s3-'));
    sandbox = await startSandbox({ port: 0 });
    s3 = await ownS3(join(dir, 's3'), ['drops']);
    admin = s3AdminClient(s3);
    const mapping = writeProductSheet(dir, 1, { owner: DEMO_COMPANY_ID }).mapping;
    mkdirSync(join(dir, 'jobs'));
    writeFileSync(
      join(dir, 'jobs', 'acme.yaml'),
      `schedule: "0 2 * * *"\nsource:\n  s3: { bucket: drops, prefix: acme/, endpoint: "${s3.endpoint}", pattern: "delta-*.csv" }\n` +
        `mapping: ${mapping}\nafterImport: { move: done/ }\n`,
    );
    config = loadConfig({
      ...queueEnv(sandbox.url, redisUrl, prefix, dir),
      SOURCE_ALLOW_HOSTS: '127.0.0.1',
      LOG_LEVEL: 'warn',
    });
    for (let i = 0; i < 2; i++) workers.push(await startWorkers(config, { jobsDir: join(dir, 'jobs') }));
    redis = new Redis(redisUrl);
  }, 60_000);
  afterAll(async () => {
    await Promise.all(workers.map((w) => w.close()));
    admin?.destroy();
    await s3?.stop();
    await sandbox?.close();
    const left = await redis.keys(`{${prefix}}*`);
    if (left.length > 0) await redis.del(...left);
    redis?.disconnect();
    process.env = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  /** Queues `n` ticks at once; resolves once a tick recorded something new. */
  async function tick(n = 1): Promise<Record<string, string>> {
    const before = await redis.hget(lastKey, 'tickAt');
    const q = openFeedsQueue(config);
    try {
      await Promise.all(Array.from({ length: n }, () => q.tick('acme')));
    } finally {
      await q.close();
    }
    for (let i = 0; i < 600; i++) {
      const last = await redis.hgetall(lastKey);
      if (last.tickAt && last.tickAt !== before && !/another tick/.test(last.tick ?? '')) return last;
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error('no tick recorded');
  }

  /** Once `count` files are done and the tick after the last run found nothing more. */
  async function settled(count: number): Promise<void> {
    for (let i = 0; i < 600; i++) {
      const done = Object.values(await redis.hgetall(`{${prefix}}:feed:acme:ledger`)).filter(
        (v) => (JSON.parse(v) as { state: string }).state === 'done',
      ).length;
      const tick = (await redis.hget(lastKey, 'tick')) ?? '';
      if (
        done >= count &&
        /^(nothing new|no file matches)/.test(tick) &&
        !(await redis.exists(`{${prefix}}:feed:acme:inflight`, `{${prefix}}:feed:acme:tick-lock`))
      )
        return;
      await new Promise((r) => setTimeout(r, 100));
    }
    throw new Error(`${count} files not done`);
  }

  it('runs three deltas put at once once each, oldest first, and moves each under done/', async () => {
    for (const n of [1, 2, 3])
      await admin.send(new PutObjectCommand({ Bucket: 'drops', Key: `acme/delta-${n}.csv`, Body: sheet(`delta${n}`) }));
    await tick(3);
    await settled(3);
    expect((await tick(2)).tick).toMatch(/^no file matches/);
    const q = new Queue('import', { connection: redis, prefix: `{${prefix}}` });
    const jobs = (await q.getJobs(['completed', 'failed'])).sort((a, b) => (a.processedOn ?? 0) - (b.processedOn ?? 0));
    await q.close();
    expect(
      jobs.map((j) => [(j.data as ImportJobData).fileName, (j.returnvalue as ImportJobResult | null)?.exitCode]),
    ).toEqual([
      ['delta-1.csv', 0],
      ['delta-2.csv', 0],
      ['delta-3.csv', 0],
    ]);
    const names = sandbox.handle.store
      .dump()
      .tradeItems.map((t) => String(t.tradeItemName ?? ''))
      .filter((n) => n.startsWith('delta'))
      .sort();
    expect(names).toEqual(['delta3 0', 'delta3 1']);
    expect(await keys()).toEqual(['acme/done/delta-1.csv', 'acme/done/delta-2.csv', 'acme/done/delta-3.csv']);
  }, 60_000);
});
