/**
 * What the requests made inside a run carry without being threaded through every call (AsyncLocalStorage): the run's
 * write fence (fence.ts), and a tally of its requests — so a write made anywhere in the run (the executor's, a brand
 * created while resolving labels) is fenced and counted for that run, even when one process runs several.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import type { ApiName } from './endpoints.ts';
import type { Fence } from './fence.ts';

/** A run's scope; its fields may be set once the run knows them (the fence after the lease is taken). */
export interface RunScope {
  fence?: Fence | null;
  /** Called for every request sent (n = 1), and for one the fence refused after it was counted (n = -1). */
  count?: (api: ApiName, n: number) => void;
}

const storage = new AsyncLocalStorage<RunScope>();

/** Runs `work` in `scope`. */
export function withRunScope<T>(scope: RunScope, work: () => Promise<T>): Promise<T> {
  return storage.run(scope, work);
}

/** Runs `work` with `fence` guarding its writes (null: as it is), in a scope of its own. */
export function withFence<T>(fence: Fence | null | undefined, work: () => Promise<T>): Promise<T> {
  if (!fence) return work();
  return storage.run({ ...storage.getStore(), fence }, work);
}

/** The scope of the code running now, if any. */
export function currentRunScope(): RunScope | undefined {
  return storage.getStore();
}
