/**
 * What the requests of a run carry: its write fence (fence.ts), a tally of its requests, and what they see of the API's
 * limits. A run's clients are bound to it (`ApiClients.forRun`, clients.ts) and handed down through its context, so
 * every write of the run — the executor's, a brand created while resolving labels, its repairs, an undo's — goes
 * through them. Nothing is looked up from the async context: an AsyncLocalStorage would make every promise of the
 * process pay its hook (docs/performance.md "API limits: the adaptive limiter (issue 35)").
 */
import type { LimiterTally } from './api-limiter.ts';
import type { ApiName } from './endpoints.ts';
import type { Fence } from './fence.ts';

/** A run's scope, fixed when its clients are bound (a later fence: clients bound again, `forRun({ fence })`). */
export interface RunScope {
  /** What every write must pass (the run's lease, a job's lock); absent or null: the writes go as they are. */
  fence?: Fence | null;
  /** Called for every request sent (n = 1), and for one the fence refused after it was counted (n = -1). */
  count?: (api: ApiName, n: number) => void;
  /** What the product API's requests saw of its limits (a queued chunk's figures, api-limiter.ts). */
  tally?: LimiterTally;
}
