// A run's clients (ApiClients.forRun, src/api/run-scope.ts): its requests counted apart from the other runs a process
// has at once (a worker's jobs), its writes fenced, what its requests saw of the API's limits tallied apart.
import { describe, expect, it } from 'vitest';
import { ApiLimiter, newTally } from '../src/api/api-limiter.ts';
import { createApiClients, type ApiClients } from '../src/api/clients.ts';
import type { Fence } from '../src/api/fence.ts';
import { LeaseLostError } from '../src/errors.ts';
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';
import { rejection } from './helpers/errors.ts';
import { useApiClients } from './helpers/api-clients.ts';
import { useSandbox } from './helpers/sandbox.ts';

const sandbox = useSandbox();
const api = useApiClients(sandbox);

/** A run's requests: `product` brand lists and `reference` list reads, a few ms apart, in its own async flow. */
async function send(clients: ApiClients, product: number, reference: number): Promise<void> {
  const pause = () => new Promise((r) => setTimeout(r, Math.random() * 3));
  await Promise.all([
    (async () => {
      for (let i = 0; i < product; i++) {
        await pause();
        await clients.product.listBrands(DEMO_COMPANY_ID);
      }
    })(),
    (async () => {
      for (let i = 0; i < reference; i++) {
        await pause();
        await clients.reference.getList('languages');
      }
    })(),
  ]);
}

/** A fence that refuses every write. */
const lost: Fence = {
  check: () => {
    throw new LeaseLostError('taken over in the test');
  },
  ready: async () => lost.check(),
};

describe("a run's clients", () => {
  it('count, for each of several runs at once, only the requests made through its own clients', async () => {
    const clients = api();
    const counted = { product: 0, reference: 0 };
    const a = clients.forRun({ count: (kind, n) => void (counted[kind] += n) });
    const b = clients.forRun({});
    // A view bound again from a run's clients (a fence added) still counts for the run.
    const aFenced = a.forRun({ fence: { check: () => undefined, ready: async () => undefined } });
    await Promise.all([send(a, 12, 3), send(b, 7, 0), send(aFenced, 5, 2), send(clients, 4, 1)]);
    expect(a.stats).toEqual({ product: 17, reference: 5 });
    expect(counted).toEqual({ product: 17, reference: 5 });
    expect(aFenced.stats).toEqual({ product: 5, reference: 2 });
    expect(b.stats).toEqual({ product: 7, reference: 0 });
    expect(clients.stats).toEqual({ product: 17 + 7 + 4, reference: 6 });
  });

  it("refuse the run's writes once its fence does not hold, not its reads, nor another run's writes", async () => {
    const clients = api();
    const run = clients.forRun({ fence: lost });
    await rejection(run.product.createBrand({ companyId: DEMO_COMPANY_ID, name: 'Fenced brand' }), LeaseLostError);
    expect(run.product.fence).toBe(lost);
    // Refused before it was sent: not counted.
    expect(run.stats).toEqual({ product: 0, reference: 0 });
    expect((await run.product.listBrands(DEMO_COMPANY_ID)).some((b) => b.name === 'Fenced brand')).toBe(false);
    const other = clients.forRun({});
    const writes = clients.product.writes;
    await other.product.createBrand({ companyId: DEMO_COMPANY_ID, name: 'Unfenced brand' });
    expect((await run.product.listBrands(DEMO_COMPANY_ID)).some((b) => b.name === 'Unfenced brand')).toBe(true);
    // The process's clients know a write was sent (a command that fails after one has changed the catalogue).
    expect(clients.product.writes).toBe(writes + 1);
  });

  it("tally each run's answers from the API's limiter apart", async () => {
    const limiter = new ApiLimiter({ maxConcurrency: 8 });
    const clients = createApiClients({
      productApiUrl: sandbox.url,
      referenceApiUrl: sandbox.url,
      credentials: { token: 'sandbox-token' },
      limiter,
    });
    try {
      const [ta, tb] = [newTally(), newTally()];
      await Promise.all([send(clients.forRun({ tally: ta }), 9, 2), send(clients.forRun({ tally: tb }), 4, 0)]);
      expect([ta.answers, tb.answers]).toEqual([9, 4]);
      expect(limiter.snapshot().answers).toBe(13);
    } finally {
      await clients.close();
    }
  });
});
