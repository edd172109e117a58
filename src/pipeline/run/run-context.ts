/** What a run needs from its driver, and the progress it reports back: apart, for every step of a run reads them. */
import type { Redis } from 'ioredis';
import type { ApiClients } from '../../api/clients.ts';
import type { ApiLimiter, LimiterSnapshot } from '../../api/api-limiter.ts';
import type { Fence } from '../../api/fence.ts';
import type { ReferenceCache } from '../../api/reference-cache.ts';
import type { Config } from '../../config.ts';
import type { Logger } from '../../logger.ts';
import type { Throttle } from '../sync/throttle.ts';
import type { Lease, LeaseHolder } from '../../lease/lease.ts';

/** Progress of a run, for a progress bar or a job's progress. */
export interface RunProgress {
  stage: 'keys' | 'read' | 'push' | 'report';
  /** Rows read by the current pass. */
  rowsRead: number;
  /** Rows that have their outcome. */
  operationsSent: number;
  /** Write requests sent so far. */
  writes?: number;
  errors: number;
  /** Data rows of the sheet (after the first pass). */
  rowsTotal?: number;
  /** The product API's limits as learned so far (concurrency limit, pace, refusals, latency). */
  api?: LimiterSnapshot;
}

/** What a run needs from its driver (built once per process by src/runtime.ts). */
export interface RunContext {
  config: Config;
  clients: ApiClients;
  /** Shared reference cache (second level); null or absent: in-process only. */
  redis?: Redis | null;
  /** The process's reference cache, outliving one run (created per run when absent). */
  referenceCache?: ReferenceCache;
  logger?: Logger;
  signal?: AbortSignal;
  onProgress?: (p: RunProgress) => void;
  /** The rows in flight (the requests are bounded by `limiter`). */
  throttle?: Throttle;
  /** The product API's limiter the clients use (shown in progress and the summary). */
  limiter?: ApiLimiter;
  /** Rows per chunk (default CHUNK_SIZE). */
  chunkSize?: number;
  /**
   * The (owner, API) lease: how long a run waits for it (default 0: exit 2 at once); a queued run names its import job
   * (its chunk jobs take the lease over from run.json); `onWait` hears once whom the run waits for.
   */
  lease?: {
    waitMs?: number;
    queued?: { jobId: string };
    onWait?: (holder: LeaseHolder) => void;
    /** Called once the lease is taken (a worker registers a queued run's lease to keep it alive between jobs). */
    onGranted?: (lease: Lease, at: { owner: string; api: string }) => Promise<void>;
  };
  /** Fences the run's writes must pass besides its lease (a queue job's lock). */
  fences?: Fence[];
  /** Names the product API in the lease when its URL does not (the embedded sandbox, whose port changes). */
  apiId?: string;
  /**
   * The run's scorecard (report/scorecard.ts): the feed it came from, and whether it met the feed's `expect:` deadline
   * (absent when the feed expects nothing).
   */
  scorecard?: { feed?: string; deadline?: { met: boolean } };
}
