/**
 * The owner lease: one run at a time writes one owner's items on one product API, whatever started it (inline import,
 * queued import and its chunk jobs, feed tick, console upload). It is **fenced** (docs/concurrency.md):
 *
 * - every grant carries a token that only grows, and an id of its own; renewal (every TTL/3) succeeds only while the
 *   store still names this grant, so a holder that was paused past its TTL and taken over learns it at once;
 * - a holder knows from its own clocks how long its lease is certainly its own (renewal sent at t → held until t + TTL,
 *   by the monotonic clock and by the wall clock, the shorter): `check()` refuses a write when less than a margin is
 *   left, with no I/O, right where the request is about to be written (api/fence.ts);
 * - a lease that ran out while nobody else took it is renewed again (the store's last grant is still this one), so a
 *   long pause without a competitor costs nothing but that renewal.
 *
 * The store is Redis when REDIS_URL is set (lease-redis.ts), else a lock file in the machine-wide state directory
 * (lease-file.ts). Runs of one owner on several machines need Redis.
 */
import { createHash } from 'node:crypto';
import { hostname } from 'node:os';
import type { Fence } from '../api/fence.ts';
import { realClock, type Clock } from '../clock.ts';
import { LeaseLostError, ProductSyncError } from '../errors.ts';
import { logger } from '../logger.ts';

/** Who holds a lease, as other runs are told. */
export interface LeaseHolder {
  runId: string;
  /** An inline run lives in its process; a queued run lives in its jobs, on any worker. */
  kind: 'inline' | 'queued';
  host: string;
  pid: number;
  since: string;
  /** Queued runs: the import job. */
  jobId?: string;
  /** The run's directory (its journals): a run that takes the lease over from it checks its late creates there. */
  dir?: string;
}

/** One grant of a lease: `token` only grows from grant to grant; `id` names this grant alone. */
export interface Grant {
  id: string;
  token: number;
}

/** What a store answers to a renewal: still ours, or held by someone else now (who, when the store knows). */
export type RenewResult = { ok: true } | { ok: false; holder?: LeaseHolder };

/** What to do with a lease held by someone else: wait (busy), take it over with a new grant, or reuse its grant. */
export type BusyVerdict = 'busy' | 'replace' | 'reuse';

/** Where leases live (Redis, or the lock files of the state directory). */
export interface LeaseStore {
  /** Where this store keeps the lease (for messages). */
  readonly where: string;
  /**
   * Grants the lease, or answers who holds it; `verdict` decides about a current holder. `takenFrom`: the holder of the
   * grant before this one when that grant was never released (it expired, or its process was gone): a takeover.
   */
  acquire(
    holder: LeaseHolder,
    ttlMs: number,
    verdict: (current: LeaseHolder) => BusyVerdict,
  ): Promise<{ grant: Grant; takenFrom?: LeaseHolder } | { busy: LeaseHolder }>;
  /** Extends `grant` by `ttlMs` if it is still the current one (or the last one, expired meanwhile). */
  renew(grant: Grant, holder: LeaseHolder, ttlMs: number): Promise<RenewResult>;
  /** Frees the lease if `grant` is still the current one. */
  release(grant: Grant): Promise<void>;
  /**
   * Calls `onDrop` whenever the store's connection drops (Redis): what it said may be gone when it answers again (a
   * restart without persistence). Returns the unsubscribe.
   */
  watch?(onDrop: () => void): () => void;
}

/** The name of (API, owner): the same for every entry point, whatever its report directory. */
export function leaseName(owner: string, api: string): string {
  return `${owner.toLowerCase()}-${createHash('sha256').update(normaliseApi(api)).digest('hex').slice(0, 12)}`;
}

function normaliseApi(api: string): string {
  try {
    return new URL(api).toString().replace(/\/+$/, '');
  } catch {
    return api;
  }
}

/** The holder text other runs see: `run <id> (pid <n> on <host>, since <time>)`, queued runs with their job. */
export function describeHolder(h: LeaseHolder): string {
  return `run ${h.runId} (pid ${h.pid} on ${h.host}, since ${h.since}${h.kind === 'queued' ? `; queued, job ${h.jobId ?? '?'}` : ''})`;
}

/** A holder of this process. */
export function holderOf(runId: string, kind: LeaseHolder['kind'], jobId?: string, dir?: string): LeaseHolder {
  return {
    runId,
    kind,
    host: hostname(),
    pid: process.pid,
    since: new Date().toISOString(),
    ...(jobId ? { jobId } : {}),
    ...(dir ? { dir } : {}),
  };
}

/** True when a holder names an inline run of this host whose process no longer exists (killed): its lease is free. */
export function holderGone(h: LeaseHolder): boolean {
  if (h.kind !== 'inline' || h.host !== hostname() || h.pid === process.pid) return false;
  try {
    process.kill(h.pid, 0);
    return false;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'ESRCH';
  }
}

/** Raised when another run holds the lease: exit 2 inline; a queued import waits its turn. */
export class LeaseBusyError extends ProductSyncError {
  constructor(
    readonly holder: LeaseHolder,
    owner: string,
  ) {
    super(
      'PS_ERR_RUN_LOCKED',
      `another run is importing for owner ${owner} on this API: ${describeHolder(holder)}. Wait for it, or give --wait-lock <seconds>`,
    );
  }
}

/** Time a lease must still have for a write to go: a tenth of its TTL, at most 2 s. */
const marginOf = (ttlMs: number) => Math.min(2000, ttlMs / 10);

/** Settings of a {@link Lease}. */
export interface LeaseOptions {
  /** When the request that granted or last renewed it was sent, by both clocks (default: now). */
  sentAt?: { mono: number; wall: number };
  /** The holder of the grant before this one, never released: see {@link Lease.takenFrom}. */
  takenFrom?: LeaseHolder | undefined;
  /** The clocks it is timed by, and its renewal timer (the real ones by default). */
  clock?: Clock;
}

/** A lease in hand: a fence for the writes of its holder (api/fence.ts), renewed by a timer while kept alive. */
export class Lease implements Fence {
  readonly #store: LeaseStore;
  readonly grant: Grant;
  readonly holder: LeaseHolder;
  readonly ttlMs: number;
  #monoUntil: number;
  #wallUntil: number;
  #lost: LeaseLostError | null = null;
  #renewing: Promise<void> | undefined;
  #cancelTimer: (() => void) | undefined;
  readonly #clock: Clock;
  #warned = false;
  /** Set when the store's connection dropped: no write is let through until a renewal says the lease is still ours. */
  #unverified = false;
  /** Connection drops seen: a renewal answered across a drop does not confirm the lease. */
  #drops = 0;
  #unwatch: (() => void) | undefined;
  readonly #onLost = new Set<(err: LeaseLostError) => void>();
  /**
   * The holder whose grant this one took over (it expired or its process was gone, never released): that run may have
   * let a create out after its lease ran out (docs/concurrency.md, "The window that remains").
   */
  readonly takenFrom: LeaseHolder | undefined;

  /** `sentAt`: when the request that granted or last renewed it was sent (both clocks; default now). */
  constructor(
    store: LeaseStore,
    grant: Grant,
    holder: LeaseHolder,
    ttlMs: number,
    { sentAt, takenFrom, clock = realClock }: LeaseOptions = {},
  ) {
    this.#clock = clock;
    sentAt ??= { mono: clock.mono(), wall: clock.now() };
    this.takenFrom = takenFrom;
    this.#store = store;
    this.grant = grant;
    this.holder = holder;
    this.ttlMs = ttlMs;
    this.#monoUntil = sentAt.mono + ttlMs;
    this.#wallUntil = sentAt.wall + ttlMs;
    this.#unwatch = store.watch?.(() => {
      if (this.#lost) return;
      if (!this.#unverified)
        logger.warn(
          { runId: holder.runId },
          `the connection to ${store.where} dropped: the run sends nothing until its lease is confirmed there`,
        );
      this.#unverified = true;
      this.#drops++;
    });
  }

  get token(): number {
    return this.grant.token;
  }

  /** Where the lease lives (its store), for messages and to compare tokens of one store only. */
  get where(): string {
    return this.#store.where;
  }

  /** Why the lease was lost, or null while it holds. */
  get lost(): LeaseLostError | null {
    return this.#lost;
  }

  /** Milliseconds the lease is certainly held, by the more pessimistic of the two clocks. */
  remainingMs(): number {
    return Math.min(this.#monoUntil - this.#clock.mono(), this.#wallUntil - this.#clock.now());
  }

  check(): void {
    if (this.#lost) throw this.#lost;
    if (this.remainingMs() < marginOf(this.ttlMs)) {
      throw new LeaseLostError(
        `the lease of ${this.holder.runId} was not renewed within its ${this.ttlMs / 1000} s (the process was paused, or ${this.#store.where} did not answer)`,
      );
    }
  }

  async ready(): Promise<void> {
    if (this.#lost) throw this.#lost;
    // The store's connection dropped since the last renewal: it may have come back without the lease (a Redis restarted
    // without persistence), and someone else may hold it now. Nothing is sent until a renewal says it is ours; the
    // lease is lost when the store names another grant, or when its time runs out first.
    while (this.#unverified) {
      try {
        await this.renew();
      } catch (err) {
        if (err instanceof LeaseLostError) throw err;
      }
      if (!this.#unverified) break;
      this.check();
      await this.#clock.sleep(Math.max(50, Math.min(1000, this.ttlMs / 20)));
    }
    if (this.remainingMs() < this.ttlMs / 3) {
      try {
        await this.renew();
      } catch (err) {
        // The store did not answer: the lease holds as long as its time runs (check() below says when it does not).
        if (err instanceof LeaseLostError) throw err;
      }
    }
    this.check();
  }

  /**
   * Renews now (one renewal at a time); marks the lease lost if the store names another grant. Store errors are thrown.
   */
  renew(): Promise<void> {
    return (this.#renewing ??= (async () => {
      try {
        if (this.#lost) throw this.#lost;
        const sentAt = { mono: this.#clock.mono(), wall: this.#clock.now() };
        const wasUnverified = this.#unverified;
        const drops = this.#drops;
        const r = await this.#store.renew(this.grant, this.holder, this.ttlMs);
        if (!r.ok) {
          throw this.markLost(
            `another run took the lease over${r.holder ? ` (${describeHolder(r.holder)})` : ''} while this one was paused or could not renew it: this run stopped sending`,
          );
        }
        this.#monoUntil = sentAt.mono + this.ttlMs;
        this.#wallUntil = sentAt.wall + this.ttlMs;
        this.#warned = false;
        if (wasUnverified)
          logger.info({ runId: this.holder.runId }, `the lease is still this run's in ${this.#store.where}`);
        if (drops === this.#drops) this.#unverified = false;
      } finally {
        this.#renewing = undefined;
      }
    })());
  }

  /** Renews every TTL/3 (sooner again after a failed attempt) until released or lost. */
  keepAlive(): this {
    if (this.#cancelTimer || this.#lost) return this;
    const every = Math.max(100, Math.floor(this.ttlMs / 3));
    const tick = (delay: number) => {
      this.#cancelTimer = this.#clock.after(delay, () => {
        this.renew().then(
          () => tick(every),
          (err: unknown) => {
            if (this.#lost) return;
            if (!this.#warned)
              logger.warn(
                { runId: this.holder.runId, err: (err as Error).message },
                `cannot renew the run's lease in ${this.#store.where}: trying again`,
              );
            this.#warned = true;
            tick(Math.max(100, Math.floor(this.ttlMs / 10)));
          },
        );
      });
    };
    tick(every);
    return this;
  }

  /** Stops renewing (the lease stays in the store until it expires or someone releases it). */
  stop(): void {
    this.#cancelTimer?.();
    this.#cancelTimer = undefined;
    this.#unwatch?.();
    this.#unwatch = undefined;
  }

  /** Called once when the lease is found lost. */
  onLost(listener: (err: LeaseLostError) => void): void {
    if (this.#lost) listener(this.#lost);
    else this.#onLost.add(listener);
  }

  /** Marks the lease lost (renewal refused, or the run learnt it otherwise); returns the error writes now get. */
  markLost(reason: string): LeaseLostError {
    if (this.#lost) return this.#lost;
    this.#lost = new LeaseLostError(reason);
    this.stop();
    logger.warn(
      { runId: this.holder.runId, fencingToken: this.token, reason },
      'the run lost its lease: it stops sending',
    );
    for (const l of this.#onLost) l(this.#lost);
    this.#onLost.clear();
    return this.#lost;
  }

  /** Stops renewing and frees the lease (unless it was lost: then it is another run's). */
  async release(): Promise<void> {
    this.stop();
    if (this.#lost) return;
    this.#lost = new LeaseLostError('released');
    await this.#store
      .release(this.grant)
      .catch((err: unknown) =>
        logger.warn(
          { err: (err as Error).message },
          `cannot release the run's lease in ${this.#store.where}: it expires by itself`,
        ),
      );
  }
}

/** Settings of {@link acquireLease}. */
export interface AcquireOptions {
  store: LeaseStore;
  owner: string;
  holder: LeaseHolder;
  ttlMs: number;
  /** How long to wait for a busy lease (0: fail at once). */
  waitMs?: number;
  /** A queued run taking its own lease again (its import job restarted): the grant is reused, not replaced. */
  reuseSameRun?: boolean;
  /** Called once while waiting, with the holder waited for. */
  onWait?: (holder: LeaseHolder) => void;
  /** The clocks the lease is timed by (the real ones by default). */
  clock?: Clock;
}

/** Takes the lease, waiting up to `waitMs`; throws LeaseBusyError naming the holder when it cannot. */
export async function acquireLease(o: AcquireOptions): Promise<Lease> {
  const clock = o.clock ?? realClock;
  const deadline = clock.now() + (o.waitMs ?? 0);
  const verdict = (current: LeaseHolder): BusyVerdict => {
    if (o.reuseSameRun && current.kind === 'queued' && o.holder.kind === 'queued' && current.runId === o.holder.runId)
      return 'reuse';
    return holderGone(current) ? 'replace' : 'busy';
  };
  let told = false;
  for (;;) {
    const sentAt = { mono: clock.mono(), wall: clock.now() };
    const got = await o.store.acquire(o.holder, o.ttlMs, verdict);
    if ('grant' in got)
      return new Lease(o.store, got.grant, o.holder, o.ttlMs, { sentAt, takenFrom: got.takenFrom, clock });
    if (clock.now() >= deadline) throw new LeaseBusyError(got.busy, o.owner);
    if (!told) o.onWait?.(got.busy);
    told = true;
    await clock.sleep(Math.min(1000, Math.max(50, deadline - clock.now())));
  }
}
