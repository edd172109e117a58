/**
 * The lease a run holds on (owner, product API) while it plans and pushes, so two runs never write one owner's items at
 * once (two would each plan a create for a shared GTIN, or report values the other overwrote).
 *
 * - With Redis (queue mode, and inline runs when REDIS_URL is set): `SET key holder NX PX ttl`, renewed while held,
 *   released by its holder only (compare-and-delete), taken over by anyone once it expired (a holder killed with -9).
 * - Without Redis: a lock file `<report-dir>/.locks/<owner>-<api>.lock` created exclusively, its mtime renewed while
 *   held; a lock whose process is gone (same host) or whose mtime is older than the ttl is taken over.
 */
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, statSync, unlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import type { Redis } from 'ioredis';
import { ProductSyncError } from '../../errors.ts';
import { sleep } from '../sync/throttle.ts';

/** A lease in hand. */
export interface Lease {
  /** Who holds it, as other runs are told. */
  readonly holder: string;
  /** Extends it (called by timers while held, and by chunk jobs in queue mode). */
  renew(): Promise<void>;
  release(): Promise<void>;
}

export interface LeaseOptions {
  owner: string;
  /** The product API's base URL (a lease is per owner and API). */
  api: string;
  /** The run taking it (named to others). */
  runId: string;
  redis?: Redis | null;
  prefix: string;
  reportDir: string;
  /** How long to wait for a busy lease (0: fail at once). */
  waitMs?: number;
  ttlMs?: number;
  /** Renew by timer while held (inline runs); queue runs renew from their chunk jobs. */
  autoRenew?: boolean;
  /** Queue mode: a lease held by this same run id is ours (the import job restarted after a worker died). */
  takeOverSameRun?: boolean;
}

// How long a lease is retried while Redis does not answer (a restart).
const REDIS_PATIENCE_MS = 20_000;

const RELEASE = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) else return 0 end";
const RENEW = "if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) else return 0 end";

const leaseName = (owner: string, api: string) => `${owner.toLowerCase()}-${createHash('sha256').update(api).digest('hex').slice(0, 12)}`;

/** The Redis key of a lease (queue chunk jobs renew it by the run's holder string). */
export const leaseKey = (prefix: string, owner: string, api: string): string => `${prefix}:lease:${leaseName(owner, api)}`;

/** Raised when another run holds the lease: exit 2 inline, a delayed retry in queue mode. */
export class LeaseBusyError extends ProductSyncError {
  constructor(readonly holder: string, owner: string) {
    super('PS_ERR_RUN_LOCKED', `another run is importing for owner ${owner} on this API: ${holder}. Wait for it, or give --wait-lock <seconds>`);
  }
}

/** Takes the lease of (owner, API), waiting up to `waitMs`; throws LeaseBusyError naming the holder when it cannot. */
export async function acquireLease(o: LeaseOptions): Promise<Lease> {
  const ttl = o.ttlMs ?? 60_000;
  const holder = `run ${o.runId} (pid ${process.pid} on ${hostname()}, since ${new Date().toISOString()})`;
  const deadline = Date.now() + (o.waitMs ?? 0);
  const attempt = o.redis ? redisAttempt(o.redis, leaseKey(o.prefix, o.owner, o.api), holder, ttl, (other) => Boolean(o.takeOverSameRun && other.startsWith(`run ${o.runId} (`)) || holderGone(other)) : fileAttempt(join(o.reportDir, '.locks', `${leaseName(o.owner, o.api)}.lock`), holder, ttl);
  const unreachableUntil = Date.now() + REDIS_PATIENCE_MS;
  for (;;) {
    let got: Awaited<ReturnType<Attempt>>;
    try {
      got = await attempt();
    } catch (err) {
      if (err instanceof ProductSyncError) throw err;
      // Redis restarting or unreachable: try again for a while, then fail retryably (a queued import is retried).
      if (Date.now() > unreachableUntil) throw new ProductSyncError('PS_ERR_QUEUE', `cannot take the run lease: Redis: ${(err as Error).message}`, { cause: err, retryable: true });
      await sleep(500);
      continue;
    }
    if ('lease' in got) {
      if (!o.autoRenew) return got.lease;
      const timer = setInterval(() => void got.lease.renew().catch(() => undefined), Math.max(1000, Math.floor(ttl / 3)));
      timer.unref();
      return { holder, renew: got.lease.renew, release: async () => {
        clearInterval(timer);
        await got.lease.release();
      } };
    }
    if (Date.now() >= deadline) throw new LeaseBusyError(got.busy, o.owner);
    await sleep(Math.min(1000, Math.max(50, deadline - Date.now())));
  }
}

type Attempt = () => Promise<{ lease: Lease } | { busy: string }>;

function redisAttempt(redis: Redis, key: string, holder: string, ttl: number, takeOver: (other: string) => boolean): Attempt {
  return async () => {
    for (let tries = 0; ; tries++) {
      if ((await redis.set(key, holder, 'PX', ttl, 'NX')) === 'OK') return { lease: heldLease(redis, key, holder, ttl) };
      const other = await redis.get(key);
      if (other === null) continue;
      if (tries > 0 || !takeOver(other)) return { busy: other };
      // Its holder is gone (killed on this host) or is this very run restarted: take it over.
      await redis.eval(RELEASE, 1, key, other);
    }
  };
}

/** A Redis lease known by its holder string (a queue run's chunk jobs renew it; its import job releases it). */
export function heldLease(redis: Redis, key: string, holder: string, ttl: number): Lease {
  return {
    holder,
    renew: async () => void (await redis.eval(RENEW, 1, key, holder, ttl)),
    release: async () => void (await redis.eval(RELEASE, 1, key, holder).catch(() => undefined)),
  };
}

/** True when a holder string names a process of this host that no longer exists. */
function holderGone(holder: string): boolean {
  const m = /\(pid (\d+) on (.+), since /.exec(holder);
  if (!m || m[2] !== hostname() || Number(m[1]) === process.pid) return false;
  try {
    process.kill(Number(m[1]), 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

function fileAttempt(file: string, holder: string, ttl: number): Attempt {
  const mine = JSON.stringify({ holder, pid: process.pid, host: hostname() });
  const release = () => {
    try {
      if (readFileSync(file, 'utf8') === mine) unlinkSync(file);
    } catch {
      // already gone
    }
  };
  return async () => {
    mkdirSync(join(file, '..'), { recursive: true });
    for (let tries = 0; ; tries++) {
      try {
        createWhole(file, mine);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new ProductSyncError('PS_ERR_REPORT', `cannot create the run lock ${file}: ${(err as Error).message}`, { cause: err });
        const seen = readText(file);
        const other = seen === undefined ? undefined : parseHolder(seen);
        // Only a stale lock is taken over: its holder gone, or not renewed for `ttl` (one whose text is not a holder's,
        // from a crash of an older version, by its age alone); a lock gone meanwhile is tried once more.
        const isStale = seen === undefined || (other ? stale(file, other, ttl) : olderThan(file, ttl));
        if (!isStale || tries > 0) return { busy: other?.holder ?? 'a run that just finished' };
        if (seen === undefined) continue;
        // The holder is gone (killed) or stopped renewing: take the lock over — unless another run did already (the
        // lock then holds another text than the stale one just read).
        try {
          if (readText(file) === seen) unlinkSync(file);
        } catch {
          // another run took it over first
        }
      }
    }
    // A run that ends by an exception or exit() without release still frees the lock.
    process.once('exit', release);
    return { lease: {
      holder,
      renew: async () => {
        const now = new Date();
        utimesSync(file, now, now);
      },
      release: async () => {
        process.removeListener('exit', release);
        release();
      },
    } };
  };
}

/**
 * Creates `file` holding `text`, whole or not at all (EEXIST when it exists): written under a temp name, then linked
 * to its name. A lock created with `wx` and written after would be seen empty by another run in between, which took
 * an unreadable lock for a stale one and removed it: both runs then held the lease.
 */
function createWhole(file: string, text: string): void {
  const temp = `${file}.${process.pid}.${Date.now()}.tmp`;
  writeFileSync(temp, text);
  try {
    linkSync(temp, file);
  } finally {
    unlinkSync(temp);
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

function parseHolder(text: string): { holder: string; pid: number; host: string } | undefined {
  try {
    return JSON.parse(text) as { holder: string; pid: number; host: string };
  } catch {
    return undefined;
  }
}

function stale(file: string, other: { pid: number; host: string }, ttl: number): boolean {
  if (other.host === hostname() && other.pid !== process.pid) {
    try {
      process.kill(other.pid, 0);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ESRCH') return true;
    }
  }
  return olderThan(file, ttl);
}

/** True when `file` was not touched for `ttl` ms (or is gone). */
function olderThan(file: string, ttl: number): boolean {
  try {
    return Date.now() - statSync(file).mtimeMs > ttl;
  } catch {
    return true;
  }
}
