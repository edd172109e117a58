/**
 * Whether Redis answers, for the whole process, from the events of its connections: a process holds several (queues,
 * workers, the lease, the rate budget), each reconnecting by itself after an outage and failing once per attempt.
 * The outage is logged once when the first connection loses Redis and once when every one of them has it back, never
 * once per attempt; listeners (the worker, the console) learn of each change.
 */
import type { EventEmitter } from 'node:events';
import { logger } from './logger.ts';
import { redact } from './redact.ts';

/** Why a connection failed, in one line (Node's dual-stack connect fails with an AggregateError without a message). */
export function redisReason(err: unknown): string {
  const e = err as { message?: unknown; errors?: unknown; code?: unknown } | null;
  // Without its final period: the reason is followed by more of a sentence.
  if (typeof e?.message === 'string' && e.message) return e.message.replace(/\.$/, '');
  if (Array.isArray(e?.errors) && e.errors.length > 0) return e.errors.map(redisReason).join('; ');
  return typeof e?.code === 'string' ? e.code : String(err);
}

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EPIPE',
  'ECONNABORTED',
]);

/** True for an error that says the connection to Redis failed (not that a command was refused). */
export function isConnectionError(err: unknown): boolean {
  const e = err as { code?: unknown; name?: unknown; message?: unknown; errors?: unknown } | null;
  if (typeof e?.code === 'string' && CONNECTION_CODES.has(e.code)) return true;
  if (e?.name === 'MaxRetriesPerRequestError') return true;
  if (Array.isArray(e?.errors) && e.errors.some(isConnectionError)) return true;
  return (
    typeof e?.message === 'string' &&
    /Connection is closed|Stream isn't writeable|connect E[A-Z]+|getaddrinfo|read ECONNRESET|write EPIPE/.test(
      e.message,
    )
  );
}

type Listener = (down: boolean) => void;

/** The process's view of Redis; {@link redisState} is the one instance. */
export class RedisState {
  /** Connections that lost Redis and have not had it back, with why. */
  readonly #down = new Map<EventEmitter, string>();
  readonly #listeners = new Set<Listener>();
  #url = '';
  /** The state last logged and told to listeners. */
  #toldDown = false;

  /** True while a watched connection has lost Redis and not had it back. */
  get down(): boolean {
    return this.#down.size > 0;
  }

  /** Why the first connection that lost Redis lost it (empty when none did). */
  get reason(): string {
    return this.#down.values().next().value ?? '';
  }

  /** The URL of the watched connections, its password redacted. */
  get url(): string {
    return redact(this.#url);
  }

  /** Watches an ioredis connection to `url` (which must have an error listener: this is one). */
  watch<T extends EventEmitter & { disconnect(reconnect?: boolean): void }>(conn: T, url: string): T {
    this.#url ||= url;
    conn.on('error', (err: Error) => this.#lost(conn, redisReason(err)));
    // Emitted only when ioredis will try again (not when it is closed on purpose).
    conn.on('reconnecting', () => this.#lost(conn, this.#down.get(conn) ?? 'connection closed'));
    conn.on('ready', () => {
      this.#down.delete(conn);
      this.#settle();
    });
    // A connection closed on purpose says nothing about Redis: it is forgotten without a change being told. ioredis
    // emits no 'end' for one disconnected while it waits to reconnect (its timer cleared, its status left
    // `reconnecting`): kept, it would hold the process's state down for good (no "answers again", no schedules
    // re-created), so its disconnect forgets it too.
    conn.on('end', () => this.#down.delete(conn));
    const disconnect = conn.disconnect.bind(conn);
    conn.disconnect = (reconnect?: boolean) => {
      if (!reconnect) this.#down.delete(conn);
      disconnect(reconnect);
    };
    return conn;
  }

  /** Calls `listener(down)` at each change of state; returns how to stop. */
  onChange(listener: Listener): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #lost(conn: EventEmitter, why: string): void {
    this.#down.set(conn, why);
    this.#settle();
  }

  #settle(): void {
    const down = this.down;
    if (down === this.#toldDown) return;
    this.#toldDown = down;
    if (down)
      logger.warn(
        { redis: this.url, err: this.reason },
        `Redis at ${this.url} does not answer: reconnecting (logged again when it answers)`,
      );
    else logger.info({ redis: this.url }, `Redis at ${this.url} answers again`);
    for (const l of this.#listeners) l(down);
  }
}

/** The process's Redis state. */
export const redisState = new RedisState();
