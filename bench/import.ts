// The ceiling of the `import` bench (bench/run.ts): the creates an import of the test sheet (test/helpers/sheets.ts
// writeProductSheet) sends, one POST a row with the same body shape, from a bare undici loop at the same concurrency.
// `npm run bench -- import` compares the import's rate, as a whole `product-sync import` process, with this loop's.
import { Pool } from 'undici';
import { tradeItemIdFor } from '../src/api/uuid.ts';
import { testGtin } from '../test/helpers/sheets.ts';

/** Seconds for a bare loop of `rows` creates for `owner` at `concurrency` requests in flight. */
export async function bareLoop(url: string, rows: number, owner: string, concurrency: number): Promise<number> {
  const pool = new Pool(url, { connections: concurrency });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < rows) {
        const i = next++;
        const gtin = testGtin(i).padStart(14, '0');
        const body = JSON.stringify({
          gtin,
          tradeItemName: `Biscuits au beurre ${i}`,
          netContents: [{ value: String((i % 900) + 100), unitOfMeasure: 'GRM' }],
          ownerCompanyId: owner,
          tradeItemId: tradeItemIdFor(owner, gtin),
        });
        const r = await pool.request({
          method: 'POST',
          path: '/api/tradeItem',
          body,
          headers: { 'content-type': 'application/json', authorization: 'Bearer sandbox-token' },
        });
        await r.body.text();
        if (r.statusCode !== 200) throw new Error(`bare loop: ${r.statusCode}`);
      }
    }),
  );
  const s = (performance.now() - t0) / 1000;
  await pool.close();
  return s;
}
