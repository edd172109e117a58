// Feeds under hostile conditions (issue 34), through a real worker process: a file written in two steps is taken once
// it settled, a file whose last row is cut is held, a file replaced in place (same name, size and mtime) is a new file,
// the same bytes under a new name are not run twice, a source that trickles bytes fails its tick at its deadline
// without holding the other feeds, and SIGTERM stops a worker whatever its source is doing. Settle times and
// deadlines are the feeds' own (short) settings: the test waits for conditions, never a fixed time.
import { appendFileSync, mkdirSync, mkdtempSync, readdirSync, renameSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { startTestHttps, type TestHttps } from '../helpers/https-server.ts';
import { ownRedis, type OwnRedis } from '../helpers/redis-server.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { queueEnv } from '../helpers/env.ts';
import { feedSheet, feedWatch, itemNames, SHEET_HEADER, sheetRows } from '../helpers/feeds.ts';
import { useProcesses } from '../helpers/processes.ts';
import { sleep, until } from '../helpers/wait.ts';

let sandbox: RunningSandbox;
let redis: OwnRedis;
let receiver: Receiver;
let https: TestHttps;
let conn: Redis;
let dir: string;
let mapping: string;
/** The workers: each killed with the test (or the file) that started it, however it ended. */
const procs = useProcesses();
/** What the worker printed so far (its log lines: JSON). */
let output: () => string = () => '';
const prefix = 'ps-hostile';
const queuePrefix = `{${prefix}}`;
/** Open trickling answers: ended when the test ends. */
const trickles = new Set<NodeJS.Timeout>();
/** Bytes sent so far on trickling answers, by path. */
const trickled = new Map<string, number>();
const same = feedSheet('Mirror', 1, '035109');

const drop = (feed: string) => join(dir, 'drops', feed);
/** `rows` rows of a sheet: header and lines, each ending with a line end. */
const sheet = (tag: string, family: string, rows: number, from = 0) => sheetRows(tag, rows, family, from);
const header = SHEET_HEADER;

function workerEnv(redisUrl: string, queue: string): Record<string, string> {
  return {
    ...queueEnv(sandbox.url, redisUrl, queue, dir),
    SOURCE_ALLOW_HOSTS: 'localhost',
    LOG_LEVEL: 'warn',
    LOG_FORMAT: 'json',
    WEBHOOK_URL: receiver.url,
    WEBHOOK_SECRET: receiver.secret,
    WEBHOOK_RETRY_BASE_MS: '50',
  };
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'ps-hostile-'));
  redis = await ownRedis(dir, { aof: false });
  await redis.start();
  receiver = await startReceiver();
  mapping = writeProductSheet(dir, 1, { owner: DEMO_COMPANY_ID, file: 'unused.csv' }).mapping;
  https = await startTestHttps((req, res) => {
    if (req.url === '/same.csv') return res.writeHead(200, { etag: '"same"' }).end(same);
    if (req.url?.startsWith('/trickle')) {
      // One byte every 200 ms, for ever: never idle long enough for a gap timeout.
      res.writeHead(200, { 'content-type': 'text/csv' });
      const path = req.url;
      const timer = setInterval(() => {
        res.write('x');
        trickled.set(path, (trickled.get(path) ?? 0) + 1);
      }, 200);
      trickles.add(timer);
      res.on('close', () => {
        clearInterval(timer);
        trickles.delete(timer);
      });
      return;
    }
    res.writeHead(404).end();
  });
  const jobs = join(dir, 'jobs');
  mkdirSync(jobs);
  const feed = (id: string, source: string, extra = '') => {
    mkdirSync(drop(id), { recursive: true });
    writeFileSync(join(jobs, `${id}.yaml`), `schedule: "0 2 * * *"\nsource: ${source}\nmapping: ${mapping}\n${extra}`);
  };
  const remote = (path: string) => `\n  https: { url: "${https.url}${path}", ca: ${https.caFile} }`;
  feed('twostep', `{ dir: ${drop('twostep')}, pattern: "*.csv", settleSeconds: 3 }`);
  feed('cut', `{ dir: ${drop('cut')}, pattern: "*.csv", settleSeconds: 1 }`);
  feed('replaced', `{ dir: ${drop('replaced')}, pattern: "*.csv", settleSeconds: 1 }`);
  feed('quick', `{ dir: ${drop('quick')}, pattern: "*.csv", settleSeconds: 0 }`);
  feed('slow', remote('/trickle/slow.csv'), 'deadlines: { downloadSeconds: 6, tickSeconds: 20 }\n');
  feed('mirror-a', remote('/same.csv'));
  feed('mirror-b', remote('/same.csv'));
  conn = new Redis(redis.url, { maxRetriesPerRequest: null });
  output = (await procs.worker(jobs, { env: workerEnv(redis.url, prefix) })).output;
}, 60_000);

afterAll(async () => {
  for (const t of trickles) clearInterval(t);
  conn?.disconnect();
  await https?.close();
  await receiver?.close();
  await redis?.stop();
  await sandbox?.close();
});

const lastKey = (feed: string) => `${queuePrefix}:feed:${feed}:last`;
const watch = () => feedWatch(conn, queuePrefix, output);
const tick = (feed: string) => watch().tick(feed);
const recorded = (feed: string, check: (last: Record<string, string>) => boolean) => watch().recorded(feed, check);
const feedRuns = (feed: string) => watch().runs(feed);
const runsDone = (feed: string, n: number) => watch().runsDone(feed, n);
const names = (tag: string) => itemNames(sandbox, `${tag} `);

// Each test drives feeds of its own on the one worker: they run at once.
describe.concurrent('feeds under hostile conditions (real worker)', () => {
  it('a file written in two steps is taken only once it has settled since its last change, whole', async () => {
    const file = join(drop('twostep'), 'delta.csv');
    // The first step stops mid-row, as a stalled upload does.
    writeFileSync(file, header + sheet('Twostep', '035101', 4) + `${testGtin(4, '035101')};Twost`);
    expect((await tick('twostep')).tick).toMatch(/^delta\.csv modified too recently/);
    // Unchanged since that listing, but changed less than settleSeconds ago: it still waits (it was taken before).
    expect((await tick('twostep')).tick).toMatch(
      /^delta\.csv modified too recently \(still arriving\?\): it settles at /,
    );
    appendFileSync(file, `ep 4;100;g\n${sheet('Twostep', '035101', 3, 5)}`);
    // Taken by the tick that comes back once it settled (the schedule is a day away), whole.
    const [run] = await runsDone('twostep', 1);
    expect(run!.result!.summary.counts).toMatchObject({ rows: 8, invalid: 0, failed: 0 });
    expect(names('Twostep')).toEqual(Array.from({ length: 8 }, (_, i) => `Twostep ${i}`));
    expect(await feedRuns('twostep')).toHaveLength(1);
  }, 90_000);

  it('a file whose last row is cut is held and told, not imported; once complete it is imported', async () => {
    const file = join(drop('cut'), 'cut.csv');
    writeFileSync(file, header + sheet('Cut', '035102', 3) + `${testGtin(3, '035102')};Cu`);
    // Settled long ago (its writer stalled for good, as far as the settle time can tell).
    const old = new Date(Date.now() - 3600_000);
    utimesSync(file, old, old);
    const held = await tick('cut');
    expect(held.tick).toMatch(
      /^cut\.csv held, not imported: its last line has no line end and not all its fields \(cut while it was written\?\)/,
    );
    expect(held).toMatchObject({ seen: '1', done: '0', waiting: '1' });
    // Told in the log once, and again at each tick in the feed's status (the console and `feeds list` show it).
    expect((await tick('cut')).tick).toMatch(/^cut\.csv held/);
    expect(output().match(/cut\.csv held, not imported/g)).toHaveLength(1);
    expect(await feedRuns('cut')).toHaveLength(0);
    // A short last row is held too, though it ends with a line end.
    writeFileSync(file, header + sheet('Cut', '035102', 3) + `${testGtin(3, '035102')};Cu\n`);
    utimesSync(file, old, old);
    await watch().queueTick('cut');
    await recorded('cut', (l) =>
      /^cut\.csv held, not imported: its last row has 2 field\(s\), the header 4/.test(l.tick ?? ''),
    );
    expect(await feedRuns('cut')).toHaveLength(0);
    // The writer finishes: imported whole, once settled.
    writeFileSync(file, header + sheet('Cut', '035102', 5));
    await watch().queueTick('cut');
    const [run] = await runsDone('cut', 1);
    expect(run!.result!.summary.counts).toMatchObject({ rows: 5, invalid: 0 });
    expect(names('Cut')).toEqual(Array.from({ length: 5 }, (_, i) => `Cut ${i}`));
  }, 90_000);

  it('a file replaced in place (same name, size and mtime) is a new file; the same bytes under a new name are not run twice', async () => {
    const file = join(drop('replaced'), 'catalog.csv');
    const at = new Date(Date.now() - 3600_000);
    writeFileSync(file, header + sheet('ReplA', '035103', 3));
    utimesSync(file, at, at);
    expect((await tick('replaced')).tick).toMatch(/^queued import-/);
    await runsDone('replaced', 1);
    expect(names('ReplA')).toHaveLength(3);
    // Other bytes, same length, the mtime put back (`cp -p`, `touch -r`).
    writeFileSync(file, header + sheet('ReplB', '035103', 3));
    utimesSync(file, at, at);
    await watch().queueTick('replaced');
    const runs = await runsDone('replaced', 2);
    expect(runs.map((r) => r.file)).toEqual(['catalog.csv', 'catalog.csv']);
    expect(names('ReplB')).toEqual(['ReplB 0', 'ReplB 1', 'ReplB 2']);
    // The same bytes under another name: recognised, not run again.
    await recorded('replaced', (l) => l.tick === 'nothing new' || /^nothing new/.test(l.tick ?? ''));
    renameSync(file, join(drop('replaced'), 'catalog-copy.csv'));
    expect((await tick('replaced')).tick).toBe('nothing new; catalog-copy.csv: same content already imported');
    expect(await feedRuns('replaced')).toHaveLength(2);
  }, 90_000);

  it('a source trickling bytes fails its tick at its deadline (run.failed) and never holds another feed', async () => {
    await watch().queueTick('slow');
    await until('the slow download under way', () => (trickled.get('/trickle/slow.csv') ?? 0) > 0, 20_000);
    // While the slow tick downloads, another feed's tick runs and queues its file.
    writeFileSync(join(drop('quick'), 'q.csv'), header + sheet('Quick', '035104', 2));
    const quick = await tick('quick');
    expect(quick.tick).toMatch(/^queued import-/);
    expect(await conn.hget(lastKey('slow'), 'lastTickError')).toBeNull();
    // The slow tick ends at its download deadline, with one clear line.
    const slow = await recorded('slow', (l) => l.lastTickError !== undefined);
    expect(slow.lastTickError).toBe(
      `listing ${https.url}/trickle/slow.csv took longer than its deadline of 6 s (deadlines.downloadSeconds): stopped [PS_ERR_SOURCE_TIMEOUT]`,
    );
    await receiver.waitFor((r) =>
      [...r.accepted().values()].some((e) => e.type === 'run.failed' && e.data.feed === 'slow'),
    );
    const failed = [...receiver.accepted().values()].find((e) => e.type === 'run.failed' && e.data.feed === 'slow')!;
    expect(failed.data).toMatchObject({ error: { code: 'PS_ERR_SOURCE_TIMEOUT' } });
    expect(output().match(/feed slow: listing .* took longer than its deadline/g)).toHaveLength(1);
    await runsDone('quick', 1);
  }, 90_000);

  it('a feed that finds another feed`s identical file already queued removes its downloaded copy at once', async () => {
    expect((await tick('mirror-a')).tick).toMatch(/^queued import-/);
    const b = await tick('mirror-b');
    expect(b.tick).toMatch(/^queued import-/);
    // The one job reads mirror-a's copy; mirror-b's is gone already, not at its next tick.
    const runs = await feedRuns('mirror-a');
    expect(runs).toHaveLength(1);
    const copies = join(dir, 'uploads', 'feeds', 'mirror-b');
    expect(readdirSync(copies)).toEqual([]);
  }, 60_000);
});

describe('SIGTERM whatever a source is doing', () => {
  it('stops a worker whose feed tick is downloading from a trickling source within the grace period', async () => {
    const jobs = join(dir, 'jobs-sigterm');
    mkdirSync(jobs);
    mkdirSync(drop('trickle'), { recursive: true });
    // Default deadlines (half an hour for a download): only the stop cuts it.
    writeFileSync(
      join(jobs, 'trickle.yaml'),
      `schedule: "0 2 * * *"\nsource:\n  https: { url: "${https.url}/trickle/sigterm.csv", ca: ${https.caFile} }\nmapping: ${mapping}\n`,
    );
    const worker = await procs.worker(jobs, { env: workerEnv(redis.url, 'ps-hostile-sigterm') });
    await feedWatch(conn, '{ps-hostile-sigterm}').queueTick('trickle');
    await until('the download under way', () => (trickled.get('/trickle/sigterm.csv') ?? 0) >= 2, 20_000);
    const signalled = Date.now();
    worker.child.kill('SIGTERM');
    const ended = await Promise.race([worker.exit, sleep(20_000).then(() => ({ code: 'still running' }))]);
    expect(ended.code, worker.output()).toBe(0);
    // docs/queue.md: a tick in hand is cut at once; the worker exits within 10 s.
    expect(Date.now() - signalled, 'ms from SIGTERM to exit').toBeLessThan(10_000);
    expect(await conn.hget('{ps-hostile-sigterm}:feed:trickle:last', 'tick')).toMatch(
      /^the worker stopped during the tick/,
    );
  }, 60_000);
});
