// A takeover forced by the test instead of raced: once a worker is killed (or frozen and never resumed), its job
// locks and its owner lease are removed the way their expiry removes them. The live processes then keep normal
// locks and leases, which no load can let lapse under them, and the test waits for no TTL. A worker started with a
// short WORKER_STALLED_CHECK_MS moves a job whose lock is gone back to the queue at its next stalled-job check.
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { QUEUES } from '../../src/queue/catalog.ts';

/** Keys of `redisUrl` matching `pattern`. */
async function scanKeys(r: Redis, pattern: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await r.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/**
 * Deletes every job lock of the queues under QUEUE_PREFIX `prefix` (BullMQ's `{prefix}:<queue>:<job id>:lock`): what
 * their expiry does. Only when their workers are all dead or frozen: a live worker's lock is its fence. Returns how
 * many there were.
 */
export async function expireJobLocks(redisUrl: string, prefix: string): Promise<number> {
  const r = new Redis(redisUrl);
  try {
    const locks = (await Promise.all(Object.values(QUEUES).map((q) => scanKeys(r, `{${prefix}}:${q}:*:lock`)))).flat();
    if (locks.length > 0) await r.del(...locks);
    return locks.length;
  } finally {
    r.disconnect();
  }
}

/**
 * Expires the owner leases of `owner` under QUEUE_PREFIX `prefix`, as their TTL does: the Redis lease (its grants kept)
 * deleted, and the machine's lease file of STATE_DIR `stateDir` (held for the same grant) past its expiry. Only when
 * their holders are dead or frozen. Returns how many Redis leases there were.
 */
export async function expireOwnerLeases(
  redisUrl: string,
  prefix: string,
  stateDir: string,
  owner: string,
): Promise<number> {
  const r = new Redis(redisUrl);
  let leases: string[];
  try {
    leases = (await scanKeys(r, `${prefix}:lease:{${owner.toLowerCase()}-*}`)).filter((k) => k.endsWith('}'));
    if (leases.length > 0) await r.del(...leases);
  } finally {
    r.disconnect();
  }
  const dir = join(stateDir, 'leases');
  let files: string[] = [];
  try {
    files = readdirSync(dir).filter((f) => f.startsWith(`${owner.toLowerCase()}-`) && f.endsWith('.json'));
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  for (const f of files) {
    const file = join(dir, f);
    writeFileSync(file, JSON.stringify({ ...(JSON.parse(readFileSync(file, 'utf8')) as object), expiresAt: 0 }));
  }
  return leases.length;
}
