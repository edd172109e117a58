// The feed tick's lock outlives a tick that takes longer than the lock's lifetime (a slow download): it is renewed
// while the tick runs, so a second tick meanwhile finds it taken and the file is queued once.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { runFeedTick, type FeedTickDeps } from '../../src/queue/feed-tick.ts';
import { loadFeeds } from '../../src/queue/feeds.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startTestHttps, type TestHttps } from '../helpers/https-server.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';

const redisUrl = inject('redisUrl');
const prefix = `{ps-feed-lock-${process.pid}-${Date.now().toString(36)}}`;
let dir: string;
let https: TestHttps;
let redis: Redis;
let importQueue: Queue;
/** Releases the first (slow) answer; `asked` resolves once the server holds it. */
let release!: () => void;
let asked!: Promise<void>;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ps-feed-lock-'));
  let gotRequest!: () => void;
  asked = new Promise((r) => (gotRequest = r));
  const held = new Promise<void>((r) => (release = r));
  let requests = 0;
  // The first request is answered once the test releases it; any later one at once.
  https = await startTestHttps((_req, res) => {
    gotRequest();
    const answer = () =>
      res.writeHead(200, { etag: '"v1"' }).end(`GTIN;Désignation;Poids net;Unité\n${testGtin(0)};slow 0;100;g\n`);
    if (++requests === 1) void held.then(answer);
    else answer();
  });
  const mapping = writeProductSheet(dir, 1, { owner: DEMO_COMPANY_ID }).mapping;
  mkdirSync(join(dir, 'jobs'));
  writeFileSync(
    join(dir, 'jobs', 'slow.yaml'),
    `schedule: "0 2 * * *"\nsource:\n  https: { url: "${https.url}/slow.csv", ca: ${https.caFile} }\nmapping: ${mapping}\n`,
  );
  redis = new Redis(redisUrl);
  importQueue = new Queue('import', { connection: redis, prefix });
});
afterAll(async () => {
  release?.();
  await importQueue?.close();
  await https?.close();
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length > 0) await redis.del(...keys);
  redis?.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

describe('feed tick lock', () => {
  it('is renewed while a tick runs longer than its lifetime: a second tick meanwhile queues nothing', async () => {
    const [feed] = await loadFeeds(join(dir, 'jobs'));
    const requeued: string[] = [];
    const deps: FeedTickDeps = {
      redis,
      prefix,
      importQueue,
      copyRoot: join(dir, 'copies'),
      allowHosts: ['localhost'],
      maxBytes: 1_000_000,
      tickLockMs: 600,
      requeue: async (f) => void requeued.push(f),
    };
    const first = runFeedTick(feed!, deps);
    await asked;
    // Several lifetimes of the lock pass while the first tick waits for its download.
    await new Promise((r) => setTimeout(r, 2000));
    const second = await runFeedTick(feed!, deps);
    expect(second).toEqual({
      enqueued: null,
      skipped: 'another tick of this feed is running (it ticks again when it ends)',
    });
    // Its request for one more tick outlives the lock's lifetime too: the first tick may run much longer still.
    await new Promise((r) => setTimeout(r, 1000));
    release();
    expect((await first).enqueued).toMatch(/^import-/);
    expect(await importQueue.getJobCounts('waiting')).toEqual({ waiting: 1 });
    // The second tick asked for one more once the first ended.
    expect(requeued).toEqual(['slow']);
  }, 30_000);
});
