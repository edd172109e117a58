// Feeds over SFTP (Debian's OpenSSH server started here) through two worker processes (the built CLI): a new file
// runs and is moved into done/, an unchanged listing runs nothing, three deltas dropped at once run once each and in
// order, a file growing between two listings waits, a wrong host key ends the tick with one line and the workers go
// on. Then the credentials (the SFTP key and password, an HTTPS header's value) are looked for in everything the
// workers wrote: their log output, the report folder, and every key of the queue prefix in Redis.
import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { startTestHttps, type TestHttps } from '../helpers/https-server.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { ownSshd, sshdMissing, type OwnSshd } from '../helpers/sshd.ts';
import { queueEnv } from '../helpers/env.ts';
import { feedSheet, feedWatch, itemNames } from '../helpers/feeds.ts';
import { useProcesses } from '../helpers/processes.ts';

const missing = sshdMissing() ?? (existsSync('dist/cli.js') ? null : 'dist/ missing (npm run build)');
if (missing && process.env.CI) throw new Error(`CI must run the SFTP feed tests: ${missing}`);
if (missing) console.log(`skipping the SFTP feed tests: ${missing}`);

const redisUrl = inject('redisUrl');
const prefix = `ps-feed-sftp-${process.pid}-${Date.now().toString(36)}`;
/** Secret values that must appear nowhere the workers write. */
const password = `pw-${randomBytes(12).toString('hex')}`;
const headerToken = `hdr-${randomBytes(12).toString('hex')}`;
/** The worker processes: killed with the file, however it ends. */
const procs = useProcesses();

describe.skipIf(missing !== null)('feeds over SFTP, through worker processes', () => {
  let sandbox: RunningSandbox;
  let sshd: OwnSshd;
  let https: TestHttps;
  let dir: string;
  let redis: Redis;
  const workers: { child: ChildProcess; output: () => string; exited: Promise<void> }[] = [];

  const drop = (feed: string) => join(dir, 'sftp', feed);
  const sheet = (tag: string, rows = 3) => feedSheet(tag, rows);

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ps-feed-sftp-'));
    sandbox = await startSandbox({ port: 0 });
    sshd = await ownSshd(dir);
    https = await startTestHttps((req, res) => {
      if (req.url === '/feed.csv' && req.headers['x-feed-token'] === headerToken)
        return res.writeHead(200, { etag: '"h1"' }).end(sheet('hdr', 1));
      res.writeHead(403).end();
    });
    const mapping = writeProductSheet(dir, 1, { owner: DEMO_COMPANY_ID }).mapping;
    const jobs = join(dir, 'jobs');
    mkdirSync(jobs);
    const sftpFeed = (id: string, fingerprint: string, extra: string, afterImport = '') => {
      mkdirSync(drop(id), { recursive: true });
      writeFileSync(
        join(jobs, `${id}.yaml`),
        [
          'schedule: "0 2 * * *"',
          'source:',
          `  sftp: { host: 127.0.0.1, port: ${sshd.port}, user: ${sshd.user}, passwordEnv: PS_T_SFTP_PASSWORD,`,
          `          privateKeyEnv: PS_T_SFTP_KEY, hostKeyFingerprint: "${fingerprint}", dir: ${drop(id)}, ${extra} }`,
          `mapping: ${mapping}`,
          afterImport,
          '',
        ].join('\n'),
      );
    };
    sftpFeed(
      'deltas',
      sshd.hostFingerprint,
      'pattern: "delta-*.csv", settleSeconds: 0',
      'afterImport: { move: done/ }',
    );
    sftpFeed('growing', sshd.hostFingerprint, 'pattern: "g-*", settleSeconds: 5');
    sftpFeed('impostor', sshd.otherFingerprint, 'pattern: "*.csv"');
    writeFileSync(
      join(jobs, 'remote.yaml'),
      `schedule: "0 2 * * *"\nsource:\n  https: { url: "${https.url}/feed.csv", ca: ${https.caFile}, headers: { X-Feed-Token: PS_T_FEED_TOKEN } }\nmapping: ${mapping}\n`,
    );
    const env = {
      ...queueEnv(sandbox.url, redisUrl, prefix, dir),
      SOURCE_ALLOW_HOSTS: '127.0.0.1,localhost',
    };
    // Two worker processes on one Redis, logging everything they log (debug, JSON) where the test reads it.
    for (let i = 0; i < 2; i++) {
      const { child, out } = procs.spawn(['worker', '--jobs-dir', jobs], {
        env: {
          ...env,
          LOG_LEVEL: 'debug',
          LOG_FORMAT: 'json',
          PS_T_SFTP_KEY: sshd.userKey,
          PS_T_SFTP_PASSWORD: password,
          PS_T_FEED_TOKEN: headerToken,
        },
      });
      const output = () => out.stdout + out.stderr;
      workers.push({ child, output, exited: new Promise((r) => child.once('exit', () => r())) });
    }
    redis = new Redis(redisUrl);
    // Both workers up: each registered its import worker.
    const q = new Queue('import', { connection: redis, prefix: `{${prefix}}` });
    for (let i = 0; (await q.getWorkersCount()) < 2; i++) {
      if (i > 300) throw new Error(`workers did not start: ${workers.map((w) => w.output()).join('\n')}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    await q.close();
  }, 60_000);

  afterAll(async () => {
    for (const w of workers) w.child.kill('SIGTERM');
    await Promise.all(workers.map((w) => w.exited));
    await https?.close();
    await sshd?.stop();
    await sandbox?.close();
    const keys = await redis.keys(`{${prefix}}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis?.disconnect();
    rmSync(dir, { recursive: true, force: true });
  });

  const watch = () => feedWatch(redis, `{${prefix}}`);
  /** Queues `n` ticks of `feed` at once; resolves once a tick recorded something new. */
  const tick = (feed: string, n = 1) => watch().tick(feed, n);
  /** Once `count` files of `feed` are done and the tick after the last run found nothing more to do. */
  const settled = (feed: string, count: number) => watch().settled(feed, count);
  /** The feed's import jobs, in the order they were processed: the file each read, its outcome. */
  const feedRuns = async (feed: string) =>
    (await watch().runs(feed)).map((r) => ({ file: r.fileName, exitCode: r.result?.exitCode }));
  const names = (tag: string) => itemNames(sandbox, tag);

  it('runs a new remote file, moves it into done/ on the server, and runs nothing for an unchanged listing', async () => {
    writeFileSync(join(drop('deltas'), 'delta-1.csv'), sheet('delta1'));
    expect((await tick('deltas')).tick).toMatch(/^queued import-\S+: sftp:\/\/.*delta-1\.csv$/);
    await settled('deltas', 1);
    expect(names('delta1')).toEqual(['delta1 0', 'delta1 1', 'delta1 2']);
    expect(readdirSync(drop('deltas'))).toEqual(['done']);
    expect(readdirSync(join(drop('deltas'), 'done'))).toEqual(['delta-1.csv']);
    // The downloaded copy is gone once the run ended.
    expect(readdirSync(join(dir, 'uploads', 'feeds', 'deltas'))).toEqual([]);
    // Moved away: the folder lists nothing more.
    expect((await tick('deltas')).tick).toMatch(/^no file matches/);
    expect(await feedRuns('deltas')).toEqual([{ file: 'delta-1.csv', exitCode: 0 }]);
  }, 60_000);

  it('runs three deltas dropped at once once each, oldest first, however many ticks come', async () => {
    sandbox.handle.reset();
    for (const n of [2, 3, 4]) writeFileSync(join(drop('deltas'), `delta-${n}.csv`), sheet(`delta${n}`));
    await tick('deltas', 3);
    await settled('deltas', 4);
    expect((await tick('deltas', 2)).tick).toMatch(/^no file matches/);
    expect(await feedRuns('deltas')).toEqual(
      ['delta-1.csv', 'delta-2.csv', 'delta-3.csv', 'delta-4.csv'].map((file) => ({ file, exitCode: 0 })),
    );
    // Applied in order: the last delta's names are what the API holds.
    expect(names('delta')).toEqual(['delta4 0', 'delta4 1', 'delta4 2']);
    expect(readdirSync(join(drop('deltas'), 'done')).sort()).toEqual([
      'delta-1.csv',
      'delta-2.csv',
      'delta-3.csv',
      'delta-4.csv',
    ]);
  }, 90_000);

  it('leaves a remote file that is still being written for a later tick', async () => {
    const g1 = join(drop('growing'), 'g-1.csv');
    writeFileSync(g1, sheet('growing', 2));
    expect((await tick('growing')).tick).toMatch(/^g-1\.csv modified too recently/);
    appendFileSync(g1, `${testGtin(2)};growing 2;100;g\n`);
    expect((await tick('growing')).tick).toMatch(/^g-1\.csv changed since the previous listing/);
    expect(await feedRuns('growing')).toEqual([]);
    // Unchanged since the previous listing, but changed less than settleSeconds ago: it still waits (issue 34); the
    // tick that comes back once it settled takes it.
    expect((await tick('growing')).tick).toMatch(
      /^g-1\.csv modified too recently \(still arriving\?\): it settles at /,
    );
    await settled('growing', 1);
    expect((await feedRuns('growing')).map((r) => r.file)).toEqual(['g-1.csv']);
    expect(names('growing ')).toEqual(['growing 0', 'growing 1', 'growing 2']);
  }, 60_000);

  it('ends the tick of a server with another host key in one line, and the workers go on', async () => {
    writeFileSync(join(drop('impostor'), 'x.csv'), sheet('impostor', 1));
    const last = await tick('impostor');
    expect(last.lastTickError).toBe(
      `SFTP server 127.0.0.1:${sshd.port} presented the ssh-ed25519 host key ${sshd.hostFingerprint}, but the feed ` +
        `pins ${sshd.otherFingerprint}: connection refused before logging in (if the supplier changed its key, check ` +
        'the new fingerprint with them and update hostKeyFingerprint; docs/sources.md) [PS_ERR_SOURCE_HOST_KEY]',
    );
    expect(await feedRuns('impostor')).toEqual([]);
    expect(readdirSync(drop('impostor'))).toEqual(['x.csv']);
    expect((await tick('growing')).tick).toBe('nothing new');
  }, 30_000);

  it('writes no credential in a log line, a report or Redis', async () => {
    // An HTTPS feed with a header secret runs too (the server answers only with the right header).
    expect((await tick('remote')).tick).toMatch(/^queued /);
    await settled('remote', 1);
    expect(names('hdr')).toEqual(['hdr 0']);

    const keyLines = sshd.userKey.split('\n').filter((l) => l && !l.startsWith('-----'));
    const secrets = [password, headerToken, ...keyLines];
    expect(secrets.length).toBeGreaterThan(2);

    const logs = workers.map((w) => w.output()).join('\n');
    // The workers did log (debug): a test over an empty output would prove nothing.
    expect(logs).toMatch(/feed file queued/);

    const reports: string[] = [];
    const walk = (d: string): void => {
      for (const e of readdirSync(d)) {
        const p = join(d, e);
        if (statSync(p).isDirectory()) walk(p);
        else reports.push(readFileSync(p, 'utf8'));
      }
    };
    walk(join(dir, 'reports'));
    expect(reports.length).toBeGreaterThan(5);

    const stored: string[] = [];
    for (const key of await redis.keys(`{${prefix}}*`)) {
      const type = await redis.type(key);
      if (type === 'string') stored.push(key, (await redis.get(key)) ?? '');
      else if (type === 'hash') stored.push(key, JSON.stringify(await redis.hgetall(key)));
      else if (type === 'list') stored.push(key, ...(await redis.lrange(key, 0, -1)));
      else if (type === 'set') stored.push(key, ...(await redis.smembers(key)));
      else if (type === 'zset') stored.push(key, ...(await redis.zrange(key, '0', '-1')));
      else if (type === 'stream') stored.push(key, JSON.stringify(await redis.xrange(key, '-', '+')));
    }
    // The feeds' hashes, ledgers and the import jobs' data are among them.
    expect(stored.join('\n')).toMatch(/feed:deltas:ledger/);
    expect(stored.join('\n')).toMatch(/fileName\W+delta-4\.csv/);

    for (const secret of secrets) {
      expect(logs.includes(secret), 'a secret in the workers` log output').toBe(false);
      expect(
        reports.some((r) => r.includes(secret)),
        'a secret in a report',
      ).toBe(false);
      expect(
        stored.some((s) => s.includes(secret)),
        'a secret in Redis',
      ).toBe(false);
    }
  }, 60_000);
});
