/**
 * Is Redis there, asked in bounded time. The queue's own connections wait for Redis for ever (BullMQ needs
 * `maxRetriesPerRequest: null`: a command waits out an outage), so a command that needs Redis asks first, on a
 * connection of its own that neither queues commands nor reconnects, before any BullMQ object exists.
 */
import type { Redis } from 'ioredis';
import { realClock, type Clock } from '../clock.ts';
import { logger } from '../logger.ts';
import { redact } from '../redact.ts';
import { redisUnreachable } from '../runtime.ts';
import { redisReason } from '../redis-state.ts';

// How long one attempt may take to connect and get an answer to PING.
const ATTEMPT_MS = 5000;
// Between attempts while waiting (--wait-redis).
const RETRY_MS = 1000;

function withinMs<T>(promise: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms / 1000} s`)), ms);
  });
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}

/** Resolves when Redis at `url` answers PING within `ms`; rejects with why not (the connection's own error). */
export async function probeRedis(url: string, ms = ATTEMPT_MS): Promise<void> {
  const { Redis: RedisClient } = await import('ioredis');
  const probe = new RedisClient(url, {
    lazyConnect: true,
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
    connectTimeout: ms,
  });
  // connect() rejects with "Connection is closed."; the error event said why.
  let why: unknown;
  probe.on('error', (err: Error) => (why ??= err));
  try {
    await withinMs(
      (async () => {
        await probe.connect();
        await probe.ping();
      })(),
      ms,
      'connect',
    );
  } catch (err) {
    throw why ?? err;
  } finally {
    probe.disconnect();
  }
}

/** True when `conn` answers PING within `ms` (a connection still connecting may make it in time). */
export async function answersWithin(conn: Redis, ms: number): Promise<boolean> {
  if (conn.status === 'end') return false;
  return withinMs(conn.ping(), ms, 'ping').then(
    (r) => r === 'PONG',
    () => false,
  );
}

/**
 * Resolves once Redis at `url` answers; else throws PS_ERR_REDIS_UNREACHABLE (exit 2) naming it (password redacted)
 * and what `who` needs it for. `waitSeconds` (the commands' `--wait-redis`): keep asking that long first, said once,
 * timed by `clock` (one attempt's own time limit is the connection's).
 */
export async function requireRedis(
  url: string,
  opts: { who: string; waitSeconds?: number; clock?: Clock },
): Promise<void> {
  const clock = opts.clock ?? realClock;
  const waitMs = (opts.waitSeconds ?? 0) * 1000;
  const deadline = clock.mono() + waitMs;
  let waiting = false;
  for (;;) {
    // Without --wait-redis, the one attempt has its whole time (a loaded machine may take more than a second to
    // connect); while waiting, no attempt runs past the deadline by more than a second.
    const attemptMs = waitMs > 0 ? Math.max(1000, Math.min(ATTEMPT_MS, deadline - clock.mono())) : ATTEMPT_MS;
    try {
      await probeRedis(url, attemptMs);
      if (waiting) logger.info({ redis: redact(url) }, `Redis at ${redact(url)} answers`);
      return;
    } catch (err) {
      if (clock.mono() + RETRY_MS >= deadline) {
        const waited = waitMs > 0 ? ` (waited ${opts.waitSeconds} s)` : '';
        throw redisUnreachable(
          url,
          err,
          `${waited}; ${opts.who} needs it: start Redis or fix REDIS_URL${waitMs > 0 ? '' : ', or give --wait-redis <seconds> to wait for it'}`,
        );
      }
      if (!waiting)
        logger.warn(
          { redis: redact(url), err: redisReason(err) },
          `Redis at ${redact(url)} does not answer: waiting up to ${opts.waitSeconds} s (--wait-redis)`,
        );
      waiting = true;
      await clock.sleep(RETRY_MS);
    }
  }
}
