/**
 * The owner lease without Redis: a lease file in the machine-wide state directory (STATE_DIR), named by a hash of
 * (product API, owner) — never in a report directory, so runs with different report directories see each other.
 *
 *   <state-dir>/leases/<hash>.json    {owner, api, seq, last, grant, holder, expiresAt}: the token counter and the last
 *                                     grant stay when the lease is free
 *   <state-dir>/leases/<hash>.mutex   exists while one process reads and rewrites the lease file (microseconds)
 *
 * Every change (grant, renewal, release) is a read-modify-write under the mutex, so a renewal can never write over a
 * grant another process just made. A mutex whose process is gone (same host), or older than MUTEX_STALE_MS, is broken.
 * The given clock times all of it: the lease's expiry, the wait for the mutex and the mutex's age.
 * Only processes of one machine share this directory: runs of one owner on several machines need Redis.
 */
import { randomUUID } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, renameSync, rmSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { realClock, type Clock } from '../clock.ts';
import { ProductSyncError } from '../errors.ts';
import { fileWriteError, isVirtualPath } from '../fs-errors.ts';
import type { BusyVerdict, Grant, LeaseHolder, LeaseStore, RenewResult } from './lease.ts';

interface LeaseFile {
  owner: string;
  api: string;
  seq: number;
  last: string | null;
  grant: Grant | null;
  holder: LeaseHolder | null;
  /** Wall-clock ms after which the grant is expired. */
  expiresAt: number;
  /** Wall-clock ms when the last grant took the file. */
  grantedAt?: number;
}

const MUTEX_STALE_MS = 30_000;
const MUTEX_WAIT_MS = 10_000;

/** The lease file of (owner, api) under `stateDir`; `name` is its hash (leaseName); timed by `clock`. */
export function fileLeaseStore(
  stateDir: string,
  name: string,
  owner: string,
  api: string,
  clock: Clock = realClock,
): FileLeaseStore {
  const dir = join(stateDir, 'leases');
  const file = join(dir, `${name}.json`);
  const mutex = `${file}.mutex`;

  const read = (): LeaseFile => {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as LeaseFile;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT')
        return { owner, api, seq: 0, last: null, grant: null, holder: null, expiresAt: 0 };
      // Written by rename only, so never half written: unreadable means damaged by hand; a new lease starts after its
      // counter.
      return { owner, api, seq: Date.now(), last: null, grant: null, holder: null, expiresAt: 0 };
    }
  };
  const write = (state: LeaseFile) => {
    const temp = `${file}.${process.pid}.tmp`;
    try {
      writeFileSync(temp, JSON.stringify(state));
      renameSync(temp, file);
    } catch (err) {
      rmSync(temp, { force: true });
      throw stateDirError(stateDir, err);
    }
  };

  /** Runs `change` on the lease file with the mutex held (synchronously: the mutex is held for microseconds). */
  const locked = async <T>(change: (state: LeaseFile) => T): Promise<T> => {
    try {
      // (Node's recursive mkdir never returns under /proc or /sys.)
      if (isVirtualPath(dir))
        throw Object.assign(new Error('virtual file system'), { code: 'EROFS', syscall: 'mkdir' });
      mkdirSync(dir, { recursive: true, mode: 0o700 });
    } catch (err) {
      throw stateDirError(stateDir, err);
    }
    const me = JSON.stringify({ pid: process.pid, host: hostname() });
    const deadline = clock.mono() + MUTEX_WAIT_MS;
    for (;;) {
      try {
        createWhole(mutex, me);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw stateDirError(stateDir, err);
        if (breakIfStale(mutex, clock)) continue;
        if (clock.mono() > deadline)
          throw new ProductSyncError(
            'PS_ERR_RUN_LOCKED',
            `the lease file ${file} stays locked by ${readText(mutex) ?? 'another process'}: remove ${mutex} if no product-sync runs on this machine`,
          );
        await clock.sleep(5 + Math.random() * 20);
      }
    }
    try {
      return change(read());
    } finally {
      try {
        unlinkSync(mutex);
      } catch {
        // broken by another process that took this one for dead
      }
    }
  };

  return {
    where: `the lease file ${file}`,
    mirror(grant, holder, ttlMs, verdict, since) {
      return locked((s): MirrorResult => {
        const now = clock.now();
        // Another grant took this machine's file after ours was made: that run wrote meanwhile, ours is outdated.
        if (since !== undefined && s.last && s.last !== grant.id && (s.grantedAt ?? 0) > since)
          return { taken: s.holder ?? undefined };
        if (s.grant && s.holder && s.expiresAt > now && s.grant.id !== grant.id && verdict(s.holder) === 'busy')
          return { busy: s.holder };
        const mine = s.grant?.id === grant.id ? s.grant : { id: grant.id, token: s.seq + 1 };
        write({
          grantedAt: s.last === grant.id ? (s.grantedAt ?? now) : now,
          owner,
          api,
          seq: Math.max(s.seq, mine.token),
          last: grant.id,
          grant: mine,
          holder,
          expiresAt: now + ttlMs,
        });
        return { ok: true };
      });
    },
    acquire(holder: LeaseHolder, ttlMs: number, verdict: (current: LeaseHolder) => BusyVerdict) {
      return locked((s) => {
        const now = clock.now();
        if (s.grant && s.holder && s.expiresAt > now) {
          const v = verdict(s.holder);
          if (v === 'busy') return { busy: s.holder };
          if (v === 'reuse') {
            write({ ...s, holder, expiresAt: now + ttlMs });
            return { grant: s.grant };
          }
        }
        const grant: Grant = { id: randomUUID(), token: s.seq + 1 };
        write({ owner, api, seq: grant.token, last: grant.id, grant, holder, expiresAt: now + ttlMs, grantedAt: now });
        // A grant still in the file was never released: it ran out, or its process is gone — taken over.
        return s.grant && s.holder ? { grant, takenFrom: s.holder } : { grant };
      });
    },
    renew(grant: Grant, holder: LeaseHolder, ttlMs: number): Promise<RenewResult> {
      return locked((s): RenewResult => {
        // Still the grant of the file — or its last one, expired while nobody took the lease: ours again.
        if (s.grant?.id === grant.id || (s.grant === null && s.last === grant.id)) {
          write({ ...s, grant, holder, expiresAt: clock.now() + ttlMs });
          return { ok: true };
        }
        return s.holder && s.grant ? { ok: false, holder: s.holder } : { ok: false };
      });
    },
    async release(grant: Grant) {
      await locked((s) => {
        if (s.grant?.id === grant.id) write({ ...s, grant: null, holder: null, expiresAt: 0 });
      });
    },
  };
}

/** The lease file, which can also mirror a grant of another store (lease-store.ts). */
export interface FileLeaseStore extends LeaseStore {
  /**
   * Holds the file for `grant` (a grant of the Redis lease, by its id) unless another grant holds it unexpired and
   * `verdict` says busy: granted, extended or taken over, as one step under the mutex.
   */
  mirror(
    grant: Grant,
    holder: LeaseHolder,
    ttlMs: number,
    verdict: (current: LeaseHolder) => BusyVerdict,
    since?: number,
  ): Promise<MirrorResult>;
}

/**
 * What mirroring answers: held; busy (another grant holds it unexpired); or taken — with `since` (the wall-clock ms the
 * grant was made), another grant took the file after it: another run of this machine wrote since.
 */
export type MirrorResult = { ok: true } | { busy: LeaseHolder } | { taken: LeaseHolder | undefined };

/** The state directory refused (PS_ERR_FILE_WRITE, naming STATE_DIR and why). */
function stateDirError(stateDir: string, err: unknown): unknown {
  return fileWriteError(err, 'cannot keep the owner lease in STATE_DIR', stateDir);
}

/**
 * Creates `file` holding `text` whole or not at all (EEXIST when it exists): written under a temp name, then linked.
 */
function createWhole(file: string, text: string): void {
  const temp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  try {
    writeFileSync(temp, text);
    linkSync(temp, file);
  } finally {
    rmSync(temp, { force: true });
  }
}

function readText(file: string): string | undefined {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return undefined;
  }
}

/**
 * Removes a mutex whose process is gone (same host) or that is older than MUTEX_STALE_MS by `clock`'s wall time: true
 * when it is gone (taken again at once).
 */
function breakIfStale(mutex: string, clock: Clock): boolean {
  const text = readText(mutex);
  if (text === undefined) return true;
  let stale = false;
  try {
    const m = JSON.parse(text) as { pid: number; host: string };
    if (m.host === hostname() && m.pid !== process.pid) {
      try {
        process.kill(m.pid, 0);
      } catch (err) {
        stale = (err as NodeJS.ErrnoException).code === 'ESRCH';
      }
    }
  } catch {
    // not a mutex's text: judged by its age
  }
  try {
    stale ||= clock.now() - statSync(mutex).mtimeMs > MUTEX_STALE_MS;
    if (stale && readText(mutex) === text) unlinkSync(mutex);
    return stale;
  } catch (err) {
    // gone meanwhile
    return (err as NodeJS.ErrnoException).code === 'ENOENT';
  }
}
