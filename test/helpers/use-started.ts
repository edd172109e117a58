// What a test file starts once for its tests (a server, a receiver): started in beforeAll, closed in afterAll, and read
// through an object that is there from the start.
import { afterAll, beforeAll } from 'vitest';

/**
 * What `start()` makes, for the tests of a file: started before them, closed after them. The returned object reads
 * through to it once the tests run; `what` names it in the error of a read outside a test or a hook.
 */
export function useStarted<T extends { close(): Promise<void> }>(start: () => Promise<T>, what: string): T {
  let running: T | undefined;
  beforeAll(async () => {
    running = await start();
  });
  afterAll(async () => {
    await running?.close();
  });
  return readThrough(() => running, `${what} starts in beforeAll: read it inside a test or a hook`);
}

/** An object that reads through to what `current()` returns once set (in a beforeAll): `unset` is thrown before. */
export function readThrough<T extends object>(current: () => T | undefined, unset: string): T {
  const get = (): T => {
    const t = current();
    if (!t) throw new Error(unset);
    return t;
  };
  return new Proxy({} as T, {
    get: (_, key) => {
      // Not a promise: `await` and vitest's matchers ask for `then` before any test runs.
      if (key === 'then') return undefined;
      const v: unknown = Reflect.get(get(), key);
      return typeof v === 'function' ? v.bind(get()) : v;
    },
  });
}
