import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { startSandbox } from '../sandbox/index.ts';
import type { SandboxStore, StoredBrand, StoredManufacturedItem, StoredTradeItem } from '../sandbox/store.ts';

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

/** The sandbox of `--sandbox` runs: in-process on a free port, its store kept in `<reportDir>/.sandbox/store.json` between runs. */
export async function startEmbeddedSandbox(reportDir: string, options: { persist?: boolean } = {}): Promise<{ url: string; close(): Promise<void>; store: SandboxStore; storeFile: string }> {
  const persist = options.persist ?? true;
  const file = join(resolve(reportDir), '.sandbox', 'store.json');
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
      await mkdir(join(resolve(reportDir), '.sandbox'), { recursive: true });
      const data: StoreFile = { tradeItems: [...store.tradeItems.values()], manufacturedItems: [...store.manufacturedItems.values()], brands: [...store.brands.values()] };
      await writeFile(`${file}.tmp`, JSON.stringify(data));
      await rename(`${file}.tmp`, file);
    },
  };
}
