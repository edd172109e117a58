import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { contextFromConfig } from '../../src/runtime.ts';
import { loadConfig } from '../../src/config.ts';
import { runImport } from '../../src/pipeline/run/run.ts';
import type { RunningSandbox } from '../../src/sandbox/server.ts';

/** Asserts the owner has exactly `rows` trade items in the sandbox, one per GTIN (no duplicate was created). */
export function expectOneItemPerGtin(sandbox: RunningSandbox, owner: string, rows: number): void {
  const items = sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);
  // On failure, the message names the GTINs held more than once and their items (id, name), to tell what wrote them.
  const byGtin = new Map<string, string[]>();
  for (const t of items)
    byGtin.set(String(t.gtin), [...(byGtin.get(String(t.gtin)) ?? []), `${t.tradeItemId} ${t.tradeItemName}`]);
  const twice = [...byGtin].filter(([, ids]) => ids.length > 1);
  expect(items, `held more than once: ${JSON.stringify(twice.slice(0, 5))}`).toHaveLength(rows);
  expect(byGtin.size).toBe(rows);
}

/** Every line of the report names the item the API holds for its key. */
export function reportIdsMatchApi(sandbox: RunningSandbox, owner: string, reportDir: string, rows: number): void {
  const csv = readFileSync(join(reportDir, 'rows.csv'), 'utf8')
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/)
    .slice(1);
  expect(csv).toHaveLength(rows);
  const ids = new Map(
    sandbox.handle.store
      .dump()
      .tradeItems.filter((t) => t.ownerCompanyId === owner)
      .map((t) => [t.gtin, t.tradeItemId]),
  );
  for (const line of csv) {
    const [, key, , tradeItemId] = line.split(',');
    expect(tradeItemId).toBe(ids.get(key));
  }
}

/** A second import of the same sheet (inline, same API) finds everything in place: no write, every row unchanged. */
export async function expectRerunCreatesNothing(
  sandbox: RunningSandbox,
  e: Record<string, string>,
  file: string,
  mapping: string,
  rows: number,
): Promise<void> {
  const cc = await contextFromConfig(loadConfig(e), {});
  try {
    const writes = sandbox.handle.counts().writes;
    const rerun = await runImport({ file, mapping }, cc.ctx);
    expect(rerun.summary.counts).toMatchObject({ rows, unchanged: rows, created: 0, updated: 0, failed: 0 });
    expect(sandbox.handle.counts().writes).toBe(writes);
  } finally {
    await cc.close();
  }
}
