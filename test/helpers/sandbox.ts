import { expect } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/server.ts';

/** Asserts the owner has exactly `rows` trade items in the sandbox, one per GTIN (no duplicate was created). */
export function expectOneItemPerGtin(sandbox: RunningSandbox, owner: string, rows: number): void {
  const items = sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);
  expect(items).toHaveLength(rows);
  expect(new Set(items.map((t) => t.gtin)).size).toBe(rows);
}
