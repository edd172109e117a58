// The owner lease's stores (src/lease/lease*.ts): the lease file of runs without Redis and the Redis keys, both
// fenced — a grant's token only grows, a holder taken over learns it at its next renewal, a lease that ran out while
// nobody took it is renewed again, a held lease is never granted twice, even to racing processes. Time is a fake
// clock moved by hand (test/helpers/clock.ts): a TTL runs out in a call, not in real time.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { acquireLease, holderOf, Lease, leaseName, type LeaseStore } from '../src/lease/lease.ts';
import { fileLeaseStore } from '../src/lease/lease-file.ts';
import { redisLeaseKeys, redisLeaseStore } from '../src/lease/lease-redis.ts';
import { FakeClock } from './helpers/clock.ts';
import { until } from './helpers/wait.ts';

const OWNER = '5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f';
const API = 'http://api.test';
const redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: 1 });
afterAll(() => redis.disconnect());

/** A lease's TTL in these tests: long in real time (Redis's own expiry never strikes), run out by the fake clock. */
const TTL = 30_000;

/** A store on a fake clock, and `lapse(ms)`: `ms` pass, and the store forgets what expired meanwhile. */
interface TimedStore {
  store: LeaseStore;
  clock: FakeClock;
  lapse(ms: number): Promise<void>;
}

const stores: [string, () => TimedStore][] = [
  [
    'lease file',
    () => {
      const clock = new FakeClock();
      const store = fileLeaseStore(mkdtempSync(join(tmpdir(), 'ps-state-')), leaseName(OWNER, API), OWNER, API, clock);
      return { store, clock, lapse: (ms) => clock.advance(ms) };
    },
  ],
  [
    'Redis',
    () => {
      const clock = new FakeClock();
      const prefix = `lease-test-${process.pid}-${Math.random().toString(36).slice(2)}`;
      const store = redisLeaseStore(redis, prefix, leaseName(OWNER, API));
      // Redis expires the lease key by its own clock: past the TTL, the key is gone, as Redis's expiry removes it.
      const lapse = async (ms: number) => {
        await clock.advance(ms);
        if (ms > TTL) await redis.del(redisLeaseKeys(prefix, leaseName(OWNER, API)).lease);
      };
      return { store, clock, lapse };
    },
  ],
];

/** `store` with its renewals counted as they complete. */
function countingRenewals(store: LeaseStore): LeaseStore & { renewals: number } {
  const counted = {
    ...store,
    renewals: 0,
    async renew(...args: Parameters<LeaseStore['renew']>) {
      const r = await store.renew(...args);
      counted.renewals++;
      return r;
    },
  };
  return counted;
}

describe.each(stores)('the owner lease in the %s', (_name, makeStore) => {
  it('one holder at a time; the busy error names it; a released lease goes to the next with a greater token', async () => {
    const { store } = makeStore();
    const a = await acquireLease({ store, owner: OWNER, holder: holderOf('run-a', 'inline'), ttlMs: 60_000 });
    const busy = acquireLease({ store, owner: OWNER, holder: holderOf('run-b', 'inline'), ttlMs: 60_000 });
    await expect(busy).rejects.toMatchObject({
      code: 'PS_ERR_RUN_LOCKED',
      message: expect.stringMatching(new RegExp(`run run-a \\(pid ${process.pid} on ${hostname()}, since `)),
    });
    await a.release();
    const b = await acquireLease({ store, owner: OWNER, holder: holderOf('run-b', 'inline'), ttlMs: 60_000 });
    expect(b.token).toBeGreaterThan(a.token);
    await b.release();
  });

  it('a holder not renewed past its TTL is taken over, and its next check and renewal say it lost the lease', async () => {
    const { store, clock, lapse } = makeStore();
    const a = await acquireLease({ store, owner: OWNER, holder: holderOf('run-a', 'inline'), ttlMs: TTL, clock });
    await clock.advance(TTL - 2_500);
    expect(() => a.check()).not.toThrow();
    // Within the margin before the TTL (a tenth of it, at most 2 s), a write no longer goes.
    await clock.advance(1_000);
    expect(() => a.check()).toThrow(/lease lost: .*not renewed within/);
    await lapse(TTL + 1_000);
    // Its own clock already tells: the time it was granted for has run out.
    expect(() => a.check()).toThrow(/lease lost: .*not renewed within/);
    const b = await acquireLease({ store, owner: OWNER, holder: holderOf('run-b', 'inline'), ttlMs: 60_000, clock });
    expect(b.token).toBeGreaterThan(a.token);
    // Resumed, it tries to renew: refused, lost for good, naming the new holder.
    await expect(a.ready()).rejects.toMatchObject({
      code: 'PS_ERR_LEASE_LOST',
      message: expect.stringContaining('run run-b'),
    });
    expect(a.lost).not.toBeNull();
    // ... and its renewal never extends the new holder's lease.
    await b.ready();
    await b.release();
  });

  it('a lease that ran out while nobody took it is renewed again by its holder', async () => {
    const { store, clock, lapse } = makeStore();
    const a = await acquireLease({ store, owner: OWNER, holder: holderOf('run-a', 'inline'), ttlMs: TTL, clock });
    await lapse(TTL * 1.5);
    expect(() => a.check()).toThrow(/lease lost/);
    await a.ready();
    expect(() => a.check()).not.toThrow();
    await expect(
      acquireLease({ store, owner: OWNER, holder: holderOf('run-b', 'inline'), ttlMs: 60_000 }),
    ).rejects.toMatchObject({ code: 'PS_ERR_RUN_LOCKED' });
    await a.release();
  });

  it('keepAlive renews it every third of its TTL; a lease taken over meanwhile is marked lost and its listeners told', async () => {
    const { store: inner, clock, lapse } = makeStore();
    const store = countingRenewals(inner);
    const a = await acquireLease({ store, owner: OWNER, holder: holderOf('run-a', 'inline'), ttlMs: TTL, clock });
    a.keepAlive();
    // Seven thirds of the TTL, each renewed in time: still held, and never closer than two thirds to its end.
    for (let i = 1; i <= 7; i++) {
      await clock.advance(TTL / 3);
      await until(`renewal ${i}`, () => store.renewals >= i);
      expect(a.remainingMs()).toBeGreaterThan(TTL / 2);
    }
    expect(() => a.check()).not.toThrow();
    const lost: string[] = [];
    a.onLost((e) => lost.push(e.message));
    // Someone else writes a grant of their own (as a holder that judged it expired would).
    a.stop();
    await lapse(TTL + 1_000);
    const b = await acquireLease({ store, owner: OWNER, holder: holderOf('run-b', 'inline'), ttlMs: 60_000, clock });
    a.keepAlive();
    await clock.advance(TTL / 3);
    await until('the lease found lost', () => lost.length > 0);
    expect(lost).toEqual([expect.stringMatching(/lease lost: another run took the lease over \(run run-b/)]);
    await b.release();
  });

  it('a queued run that takes its own lease again reuses its grant; anyone else waits', async () => {
    const { store } = makeStore();
    const q = await acquireLease({
      store,
      owner: OWNER,
      holder: holderOf('run-q', 'queued', 'job-1'),
      ttlMs: 60_000,
      reuseSameRun: true,
    });
    const again = await acquireLease({
      store,
      owner: OWNER,
      holder: holderOf('run-q', 'queued', 'job-1'),
      ttlMs: 60_000,
      reuseSameRun: true,
    });
    expect(again.grant).toEqual(q.grant);
    await expect(
      acquireLease({ store, owner: OWNER, holder: holderOf('run-q', 'inline'), ttlMs: 60_000 }),
    ).rejects.toMatchObject({ message: expect.stringContaining('queued, job job-1') });
    await q.release();
  });

  it('an inline holder whose process is gone (same host) is taken over at once', async () => {
    const { store } = makeStore();
    const dead = Number(execFileSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))']));
    const ghost = await acquireLease({
      store,
      owner: OWNER,
      holder: { ...holderOf('run-dead', 'inline'), pid: dead },
      ttlMs: 60_000,
    });
    const b = await acquireLease({ store, owner: OWNER, holder: holderOf('run-b', 'inline'), ttlMs: 60_000 });
    expect(b.token).toBeGreaterThan(ghost.token);
    await b.release();
  });
});

describe('the lease file', () => {
  it('lives in the state directory, named by a hash of (API, owner); racing processes never both get it', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'ps-state-race-'));
    const store = fileLeaseStore(stateDir, leaseName(OWNER, API), OWNER, API);
    // Each process loads, says "ready" and waits for the go file; all try at once; each stays alive (a gone holder is
    // taken over) until the done file exists, once every one of them has answered.
    const go = join(stateDir, 'go');
    const done = join(stateDir, 'done');
    const script = `
      const { existsSync } = await import('node:fs');
      const { fileLeaseStore } = await import(${JSON.stringify(new URL('../src/lease/lease-file.ts', import.meta.url).href)});
      const { acquireLease, holderOf, leaseName } = await import(${JSON.stringify(new URL('../src/lease/lease.ts', import.meta.url).href)});
      const store = fileLeaseStore(${JSON.stringify(stateDir)}, leaseName(${JSON.stringify(OWNER)}, ${JSON.stringify(API)}), ${JSON.stringify(OWNER)}, ${JSON.stringify(API)});
      const wait = async (file) => { while (!existsSync(file)) await new Promise((r) => setTimeout(r, 1)); };
      process.stdout.write('ready;');
      await wait(${JSON.stringify(go)});
      try { const l = await acquireLease({ store, owner: ${JSON.stringify(OWNER)}, holder: holderOf('p' + process.pid, 'inline'), ttlMs: 60000 }); process.stdout.write('got ' + l.token + ';'); }
      catch (e) { process.stdout.write('busy;'); }
      await wait(${JSON.stringify(done)});`;
    const { spawn } = await import('node:child_process');
    const outs = Array.from({ length: 4 }, () => ({ text: '', exited: undefined as Promise<void> | undefined }));
    for (const o of outs) {
      const c = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        stdio: ['ignore', 'pipe', 'inherit'],
      });
      c.stdout!.on('data', (d) => (o.text += String(d)));
      o.exited = new Promise((resolve) => c.once('exit', () => resolve()));
    }
    await until('every process ready', () => outs.every((o) => o.text.includes('ready;')), 60_000);
    writeFileSync(go, '');
    await until('every process answered', () => outs.every((o) => /got|busy/.test(o.text)), 60_000);
    writeFileSync(done, '');
    await Promise.all(outs.map((o) => o.exited));
    // The winner exits without releasing: its lease stays until its pid is found gone.
    expect(
      outs.filter((o) => o.text.includes('got')),
      outs.map((o) => o.text).join(' | '),
    ).toHaveLength(1);
    const files = readdirSync(join(stateDir, 'leases'));
    expect(files).toEqual([`${leaseName(OWNER, API)}.json`]);
    const kept = JSON.parse(readFileSync(join(stateDir, 'leases', files[0]!), 'utf8')) as {
      owner: string;
      api: string;
      seq: number;
    };
    expect(kept).toMatchObject({ owner: OWNER, api: API, seq: 1 });
    // Its process has exited: the next run takes it over with the next token.
    const next = await acquireLease({ store, owner: OWNER, holder: holderOf('run-next', 'inline'), ttlMs: 60_000 });
    expect(next.token).toBe(2);
    await next.release();
  });

  it('a mutex left by a dead process is broken', async () => {
    const stateDir = mkdtempSync(join(tmpdir(), 'ps-state-mutex-'));
    const store = fileLeaseStore(stateDir, leaseName(OWNER, API), OWNER, API);
    const first = await acquireLease({ store, owner: OWNER, holder: holderOf('run-a', 'inline'), ttlMs: 60_000 });
    await first.release();
    const file = join(stateDir, 'leases', `${leaseName(OWNER, API)}.json.mutex`);
    writeFileSync(file, JSON.stringify({ pid: 2147483646, host: hostname() }));
    const second = await acquireLease({ store, owner: OWNER, holder: holderOf('run-b', 'inline'), ttlMs: 60_000 });
    expect(second.token).toBe(2);
    await second.release();
  });

  /** A store on a fake clock whose mutex a live process of this host (the test's parent) holds. */
  function heldMutex(): { store: LeaseStore; clock: FakeClock } {
    const stateDir = mkdtempSync(join(tmpdir(), 'ps-state-held-'));
    const clock = new FakeClock();
    mkdirSync(join(stateDir, 'leases'));
    writeFileSync(
      join(stateDir, 'leases', `${leaseName(OWNER, API)}.json.mutex`),
      JSON.stringify({ pid: process.ppid, host: hostname() }),
    );
    return { store: fileLeaseStore(stateDir, leaseName(OWNER, API), OWNER, API, clock), clock };
  }

  it("a mutex a live process holds is waited for 10 s of the store's clock, then refused naming it", async () => {
    const { store, clock } = heldMutex();
    let outcome: unknown;
    acquireLease({ store, owner: OWNER, holder: holderOf('run-a', 'inline'), ttlMs: 60_000 }).then(
      (l) => (outcome = l),
      (err: unknown) => (outcome = err),
    );
    await clock.advance(9_000);
    expect(outcome).toBeUndefined();
    await clock.advance(1_100);
    expect(outcome).toMatchObject({
      code: 'PS_ERR_RUN_LOCKED',
      message: expect.stringContaining(String(process.ppid)),
    });
  });

  it("a mutex older than 30 s by the store's clock is broken, whoever holds it", async () => {
    const { store, clock } = heldMutex();
    clock.jumpWall(31_000);
    const lease = await acquireLease({ store, owner: OWNER, holder: holderOf('run-a', 'inline'), ttlMs: 60_000 });
    expect(lease.token).toBe(1);
    await lease.release();
  });
});

describe('the Redis lease', () => {
  it('keeps its two keys in one Redis Cluster slot ({name} hash tag); the token survives the lease', async () => {
    const keys = redisLeaseKeys('ps', leaseName(OWNER, API));
    expect(keys.lease).toMatch(/^ps:lease:\{[0-9a-f-]+\}$/);
    expect(keys.grants).toBe(`${keys.lease}:grants`);
    const prefix = `lease-keys-${process.pid}`;
    const store = redisLeaseStore(redis, prefix, leaseName(OWNER, API));
    const a = await acquireLease({ store, owner: OWNER, holder: holderOf('run-a', 'inline'), ttlMs: 60_000 });
    const k = redisLeaseKeys(prefix, leaseName(OWNER, API));
    expect(await redis.hget(k.lease, 'token')).toBe(String(a.token));
    expect(Number(await redis.pttl(k.lease))).toBeGreaterThan(50_000);
    await a.release();
    expect(await redis.exists(k.lease)).toBe(0);
    expect(await redis.hget(k.grants, 'seq')).toBe(String(a.token));
    // A Redis restarted without persistence: the counter is gone, but a stale holder's grant id still tells it apart.
    await redis.del(k.grants);
    const b = await acquireLease({ store, owner: OWNER, holder: holderOf('run-b', 'inline'), ttlMs: 60_000 });
    const stale = new Lease(store, { id: a.grant.id, token: b.token }, a.holder, 60_000);
    await expect(stale.renew()).rejects.toMatchObject({ code: 'PS_ERR_LEASE_LOST' });
    await b.release();
  });
});
