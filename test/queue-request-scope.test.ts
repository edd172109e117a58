import { describe, expect, it } from 'vitest';
import { RequestScopes } from '../src/queue/request-scope.ts';

describe('per-job request counts', () => {
  it('counts, for each of several concurrent jobs, only the requests made in its own async flow', async () => {
    const stats = { product: 5, reference: 0 };
    const scopes = new RequestScopes(stats);
    const send = async (api: 'product' | 'reference', n: number) => {
      for (let i = 0; i < n; i++) {
        await new Promise((r) => setTimeout(r, Math.random() * 3));
        stats[api] += 1;
      }
    };
    const [a, b] = await Promise.all([
      scopes.run(async (view) => {
        await Promise.all([send('product', 20), send('reference', 3)]);
        return view.product;
      }),
      scopes.run(async () => send('product', 7)),
    ]);
    await send('product', 4); // outside any job
    expect(a.requests).toEqual({ product: 20, reference: 3 });
    expect(a.value).toBe(20);
    expect(b.requests).toEqual({ product: 7, reference: 0 });
    expect(stats.product).toBe(5 + 20 + 7 + 4);
  });
});
