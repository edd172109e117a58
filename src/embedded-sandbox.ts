import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { writingTo } from './fs-errors.ts';
import { makeDir } from './make-dir.ts';
import { writeFileAtomic } from './pipeline/report/atomic.ts';
import { startSandbox } from './sandbox/index.ts';
import type { SandboxStore, StoredBrand, StoredManufacturedItem, StoredTradeItem } from './sandbox/store.ts';

interface StoreFile {
  tradeItems: StoredTradeItem[];
  manufacturedItems: StoredManufacturedItem[];
  brands: StoredBrand[];
}

function load(store: SandboxStore, data: StoreFile): void {
  for (const t of data.tradeItems) store.tradeItems.set(t.tradeItemId, t);
  for (const m of data.manufacturedItems) store.manufacturedItems.set(m.manufacturedItemId, m);
  for (const b of data.brands) store.brands.set(b.brandId, b);
}

/**
 * The sandbox of `--sandbox` runs: in-process on a free port, its store kept in `<reportDir>/.sandbox/store.json`
 * between runs.
 */
export async function startEmbeddedSandbox(
  reportDir: string,
  options: { persist?: boolean } = {},
): Promise<{ url: string; close(): Promise<void>; store: SandboxStore; storeFile: string }> {
  const persist = options.persist ?? true;
  const file = join(resolve(reportDir), '.sandbox', 'store.json');
  // Its directory made first: one that cannot be is said before anything is sent (exit 2), not after the run.
  if (persist)
    await writingTo('cannot create the directory of the sandbox store', dirname(file), () => makeDir(dirname(file)));
  const sb = await startSandbox({ port: 0 });
  const store = sb.handle.store;
  if (persist && existsSync(file)) load(store, JSON.parse(await readFile(file, 'utf8')) as StoreFile);
  return {
    url: sb.url,
    store,
    storeFile: file,
    async close() {
      await sb.close();
      if (!persist) return;
      const data: StoreFile = {
        tradeItems: [...store.tradeItems.values()],
        manufacturedItems: [...store.manufacturedItems.values()],
        brands: [...store.brands.values()],
      };
      await writingTo('cannot write the sandbox store', file, () => writeFileAtomic(file, JSON.stringify(data)));
    },
  };
}
