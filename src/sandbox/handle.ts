import type { TokenRegistry } from './auth.ts';
import type { FaultInjector, FaultSpec } from './faults.ts';
import type { RequestCounts, SandboxStore } from './store.ts';

/** In-process control of a sandbox (the same powers as the /__admin routes, always available to the embedder). */
export interface SandboxHandle {
  store: SandboxStore;
  tokens: TokenRegistry;
  /** The current fault injector (replaced by setFaults and reset). */
  readonly faults: FaultInjector;
  /** A copy of the request counts. */
  counts(): RequestCounts;
  /** Empties the store and the counts, and restores the start faults with a fresh PRNG. */
  reset(): void;
  /** Replaces the fault settings (and restarts the PRNG from the spec's seed). */
  setFaults(spec: FaultSpec): void;
  /** Creates ignore client-chosen ids from now on (true) or honour them (false, the default). */
  setAssignIds(on: boolean): void;
}
