// Redis away when a command starts (docs/errors.md, docs/queue.md "When Redis is away"): the command exits at once with
// one clear line and the documented exit code, or waits for Redis when asked, or (serve) starts anyway and says so.
// Real processes (the CLI), a real Redis of each test's own that the test starts late, the sandbox as the API. Redis
// lost while a worker runs, or back without its data: redis-outage.test.ts.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { freePort } from '../global-setup.ts';
import { spawnCli } from '../helpers/cli.ts';
import { logLines, outageEnv } from '../helpers/outage.ts';
import { ownRedis } from '../helpers/redis-server.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { sleep, until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
const sandbox = useSandbox();

const cli = (args: string[], env: Record<string, string>) => spawnCli(args, { env });
const env = (dir: string, redisUrl: string, extra: Record<string, string> = {}) =>
  outageEnv(sandbox.url, dir, redisUrl, extra);

// The three cases at once: each has its processes (and Redis, or none) of its own, and mostly waits on them. The two
// that wait for a Redis started late may take longer than the default test time on a loaded machine (node starts beside
// the others'): their waits fail by name first.
describe.concurrent('Redis unreachable when a command starts', () => {
  it('worker, enqueue, feeds list and feeds run exit 2 within 15 s, in one line naming Redis and its URL (password redacted)', async ({
    expect,
  }) => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-noredis-'));
    const port = await freePort();
    const e = env(dir, `redis://:s3cret-pass@127.0.0.1:${port}`);
    const sheet = writeProductSheet(dir, 3, { owner });
    const jobs = join(dir, 'jobs');
    mkdirSync(jobs);
    writeFileSync(
      join(jobs, 'nightly.yaml'),
      `schedule: "0 2 * * *"\nsource: { dir: ${dir}, pattern: "*.csv" }\nmapping: ${sheet.mapping}\n`,
    );
    // One after the other: each one's time is its own, not four node starts sharing a loaded machine's cores.
    for (const args of [
      ['worker', '--jobs-dir', jobs],
      ['enqueue', sheet.file, '--mapping', sheet.mapping],
      ['feeds', 'list', '--jobs-dir', jobs],
      ['feeds', 'run', 'nightly', '--jobs-dir', jobs],
    ]) {
      const r = await cli(args, e).exit;
      expect(r.code, r.stderr).toBe(2);
      expect(r.ms).toBeLessThan(15_000);
      const lines = r.stderr.trim().split('\n');
      expect(lines, r.stderr).toHaveLength(1);
      expect(lines[0]).toMatch(
        new RegExp(
          `^product-sync: cannot reach Redis at redis://\\[redacted\\]@127\\.0\\.0\\.1:${port}: connect ECONNREFUSED .*needs it: start Redis or fix REDIS_URL, or give --wait-redis <seconds> to wait for it \\[PS_ERR_REDIS_UNREACHABLE\\]$`,
        ),
      );
      expect(r.stderr).not.toContain('s3cret-pass');
    }
  }, 90_000);

  // Giving up after the time asked, saying how long it waited: test/redis-health.test.ts, on a fake clock.
  it('--wait-redis waits: a worker starts once Redis answers', async ({ expect }) => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-waitredis-'));
    const redis = await ownRedis(dir, { aof: false });
    const worker = cli(['worker', '--jobs-dir', join(dir, 'no-jobs'), '--wait-redis', '20'], env(dir, redis.url));
    try {
      await until('the worker to say it waits', () => /does not answer: waiting up to 20 s/.test(worker.out.stderr));
      await sleep(1500);
      expect(worker.out.stdout).toBe('');
      await redis.start();
      await until('the worker to start', () => worker.out.stdout.includes('worker started'), 15_000);
      // Waiting was said once, however many attempts it took.
      expect(logLines(worker.out.stderr, /does not answer: waiting up to 20 s/)).toHaveLength(1);
      worker.child.kill('SIGTERM');
      expect((await worker.exit).code).toBe(0);
    } finally {
      worker.child.kill('SIGKILL');
      await redis.stop();
    }
  }, 60_000);

  it('serve starts anyway: /health answers 503 {redis: "down"} within 3 s, the pages show a banner, the queue routes answer 503; the outage is logged once, and its end once', async ({
    expect,
  }) => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-serve-noredis-'));
    const redis = await ownRedis(dir, { aof: false });
    const serve = cli(['serve', '--port', '0'], env(dir, redis.url, { LOG_LEVEL: 'info' }));
    try {
      await until('the console to listen', () => /console on http:\/\/127\.0\.0\.1:\d+\//.test(serve.out.stdout));
      const url = /console on (http:\/\/127\.0\.0\.1:\d+)\//.exec(serve.out.stdout)![1]!;
      const t0 = Date.now();
      const health = await fetch(`${url}/health`);
      expect(Date.now() - t0).toBeLessThan(3000);
      expect(health.status).toBe(503);
      expect(await health.json()).toEqual({ status: 'degraded', redis: 'down' });
      expect(await (await fetch(`${url}/`)).text()).toContain(
        '<p id="redis-banner" role="alert">Redis does not answer',
      );
      expect(await (await fetch(`${url}/mapper`)).text()).toContain(
        '<p id="redis-banner" role="alert">Redis does not answer',
      );
      const runs = await fetch(`${url}/runs`);
      expect(runs.status).toBe(503);
      expect(await runs.json()).toMatchObject({ code: 'PS_ERR_REDIS_UNREACHABLE', redis: 'down' });
      // Several reconnection attempts later: still one line.
      await sleep(2500);
      expect(logLines(serve.out.stderr, /does not answer: reconnecting/)).toHaveLength(1);
      await redis.start();
      await until('/health to say up', async () => (await fetch(`${url}/health`)).status === 200, 15_000);
      expect(await (await fetch(`${url}/health`)).json()).toEqual({ status: 'ok', redis: 'up' });
      expect(await (await fetch(`${url}/`)).text()).toContain('<p id="redis-banner" role="alert" hidden>');
      expect((await fetch(`${url}/runs`)).status).toBe(200);
      expect(logLines(serve.out.stderr, /answers again/)).toHaveLength(1);
      expect(logLines(serve.out.stderr, /does not answer/)).toHaveLength(1);
      serve.child.kill('SIGTERM');
      expect((await serve.exit).code).toBe(0);
    } finally {
      serve.child.kill('SIGKILL');
      await redis.stop();
    }
  }, 60_000);
});
