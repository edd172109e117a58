import { AsyncLocalStorage } from 'node:async_hooks';

type Api = 'product' | 'reference';
type Counts = Record<Api, number>;

/**
 * Per-job request counts over one process-wide `ApiClients.stats`: a worker runs several jobs at once on one client, so
 * the difference of the shared counters over a job's lifetime would count the other jobs' requests too. Every increment
 * of the shared counters is also added to the counts of the job whose async context made the request.
 */
export class RequestScopes {
  readonly #als = new AsyncLocalStorage<Counts>();

  constructor(stats: { readonly product: number; readonly reference: number }) {
    for (const api of ['product', 'reference'] as const) {
      let value = stats[api];
      Object.defineProperty(stats, api, {
        enumerable: true,
        configurable: true,
        get: () => value,
        set: (next: number) => {
          const scope = this.#als.getStore();
          if (scope) scope[api] += next - value;
          value = next;
        },
      });
    }
  }

  /** Runs `work` with a stats view counting only the requests made inside it; returns its value and those counts. */
  async run<T>(work: (stats: Readonly<Counts>) => Promise<T>): Promise<{ value: T; requests: Counts }> {
    const counts: Counts = { product: 0, reference: 0 };
    const view = {
      get product() {
        return counts.product;
      },
      get reference() {
        return counts.reference;
      },
    };
    const value = await this.#als.run(counts, () => work(view));
    return { value, requests: { ...counts } };
  }
}
