// Queue prefixes of a test file on the suite's Redis: a fresh one at each call (tests do not share keys), every key
// under them deleted once the file's tests are done (never a key the file did not create).
import { Redis } from 'ioredis';
import { afterAll, inject } from 'vitest';

/** Call at the top of a file; each call of the function it returns gives `ps-<name>-<pid>-<random>`. */
export function usePrefixes(name: string): () => string {
  const prefixes: string[] = [];
  afterAll(async () => {
    const r = new Redis(inject('redisUrl'));
    try {
      for (const p of prefixes) {
        const keys = await r.keys(`{${p}}*`);
        if (keys.length > 0) await r.del(...keys);
      }
    } finally {
      r.disconnect();
    }
  });
  return () => {
    const prefix = `ps-${name}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
    prefixes.push(prefix);
    return prefix;
  };
}
