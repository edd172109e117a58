/**
 * The owner lease in Redis (REDIS_URL set): every machine and every entry point sees it.
 *
 *   <prefix>:lease:{<name>}          hash {id, token, holder}, expiring after the TTL (renewed while held)
 *   <prefix>:lease:{<name>}:grants   hash {seq, last, holder, released}: the token counter, the id and holder of the
 *                                    last grant, and the last grant released, kept for good (a grant taken over — never
 *                                    released — tells the next holder whose late creates to look for)
 *
 * Both keys carry the `{name}` hash tag, so in Redis Cluster they share a slot and one script can touch both. Grants
 * are compared by id (a random uuid), not by token: after a Redis restart without persistence the counter starts
 * again, and only the id tells one grant from another.
 */
import { randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import type { BusyVerdict, Grant, LeaseHolder, LeaseStore, RenewResult } from './lease.ts';

// KEYS: lease, grants. ARGV: holder json, ttl ms, new grant id, id to replace ('' none), id to reuse ('' none).
// Reply: {1, token, id, holder json of a previous grant never released, or ''} granted; {2, token, id} reused;
// {0, holder json, its grant id} busy.
const ACQUIRE = `
local cur = redis.call('hmget', KEYS[1], 'id', 'holder', 'token')
if cur[1] then
  if cur[1] == ARGV[5] then
    redis.call('hset', KEYS[1], 'holder', ARGV[1])
    redis.call('pexpire', KEYS[1], ARGV[2])
    return {2, tonumber(cur[3]), cur[1]}
  end
  if cur[1] ~= ARGV[4] then return {0, cur[2], cur[1]} end
end
local prev = redis.call('hmget', KEYS[2], 'last', 'released', 'holder')
local taken = ''
if prev[1] and prev[1] ~= prev[2] and prev[3] then taken = prev[3] end
local token = redis.call('hincrby', KEYS[2], 'seq', 1)
redis.call('hset', KEYS[2], 'last', ARGV[3], 'holder', ARGV[1])
redis.call('del', KEYS[1])
redis.call('hset', KEYS[1], 'id', ARGV[3], 'token', token, 'holder', ARGV[1])
redis.call('pexpire', KEYS[1], ARGV[2])
return {1, token, ARGV[3], taken}`;

// KEYS: lease, grants. ARGV: grant id, ttl ms, holder json. Reply: 1 renewed, 2 revived (expired, nobody granted
// since), else the holder json or false.
const RENEW = `
local id = redis.call('hget', KEYS[1], 'id')
if id == ARGV[1] then
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 1
end
if not id and redis.call('hget', KEYS[2], 'last') == ARGV[1] then
  redis.call('hset', KEYS[1], 'id', ARGV[1], 'token', redis.call('hget', KEYS[2], 'seq'), 'holder', ARGV[3])
  redis.call('pexpire', KEYS[1], ARGV[2])
  return 2
end
return redis.call('hget', KEYS[1], 'holder')`;

const RELEASE = `
if redis.call('hget', KEYS[2], 'last') == ARGV[1] then redis.call('hset', KEYS[2], 'released', ARGV[1]) end
if redis.call('hget', KEYS[1], 'id') == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0`;

/** The Redis keys of the lease of `name` (see leaseName). */
export function redisLeaseKeys(prefix: string, name: string): { lease: string; grants: string } {
  const lease = `${prefix}:lease:{${name}}`;
  return { lease, grants: `${lease}:grants` };
}

function parseHolder(json: unknown): LeaseHolder {
  try {
    return JSON.parse(String(json)) as LeaseHolder;
  } catch {
    return { runId: 'unknown', kind: 'inline', host: 'unknown', pid: 0, since: 'unknown' };
  }
}

/** The lease of `name` in Redis under `prefix` (QUEUE_PREFIX). */
export function redisLeaseStore(redis: Redis, prefix: string, name: string): LeaseStore {
  const keys = redisLeaseKeys(prefix, name);
  const run = (script: string, ...args: (string | number)[]) => redis.eval(script, 2, keys.lease, keys.grants, ...args);
  return {
    where: `Redis (${keys.lease})`,
    async acquire(holder: LeaseHolder, ttlMs: number, verdict: (current: LeaseHolder) => BusyVerdict) {
      const json = JSON.stringify(holder);
      const id = randomUUID();
      let replace = '';
      let reuse = '';
      for (let attempt = 0; ; attempt++) {
        const reply = (await run(ACQUIRE, json, Math.ceil(ttlMs), id, replace, reuse)) as [
          number,
          number | string,
          string?,
          string?,
        ];
        if (reply[0] !== 0) {
          const grant: Grant = { id: String(reply[2]), token: Number(reply[1]) };
          return reply[3] ? { grant, takenFrom: parseHolder(reply[3]) } : { grant };
        }
        const current = parseHolder(reply[1]);
        const v = attempt === 0 ? verdict(current) : 'busy';
        if (v === 'busy') return { busy: current };
        // Taken over (its process is gone) or reused (this very run, restarted): that grant, and no later one.
        if (v === 'replace') replace = String(reply[2]);
        else reuse = String(reply[2]);
      }
    },
    async renew(grant: Grant, holder: LeaseHolder, ttlMs: number): Promise<RenewResult> {
      const reply = await run(RENEW, grant.id, Math.ceil(ttlMs), JSON.stringify(holder));
      if (reply === 1 || reply === 2) return { ok: true };
      return reply ? { ok: false, holder: parseHolder(reply) } : { ok: false };
    },
    async release(grant: Grant) {
      await run(RELEASE, grant.id);
    },
    watch(onDrop: () => void) {
      redis.on('close', onDrop);
      return () => void redis.off('close', onDrop);
    },
  };
}
