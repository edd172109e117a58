// The late create of the fence's last window (docs/concurrency.md, "The window that remains"), as the tests of
// late-create-duplicates.test.ts and late-create-queued.test.ts force it: run A is held right after its fence check
// (PS_TEST_FENCE_HOLD, helpers/lease-runs.ts fenceHold) while run B takes the lease over; A's held create then lands
// while B still runs ('before': B removes it) or after B ended ('after': A removes its own).
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { RunningSandbox } from '../../src/sandbox/server.ts';
import type { CliProcess, CliResult } from './cli.ts';
import { ownerItems, type RunSummary } from './lease-runs.ts';
import { reportRows } from './sandbox.ts';
import { until } from './wait.ts';

/** Where A's late create lands: while B still runs, or after B ended. */
export type LateOrder = 'before' | 'after';

/** The owner's live items, and the GTINs held by more than one live item. */
export function lateCreateCatalogue(sandbox: RunningSandbox) {
  const live = () => ownerItems(sandbox).filter((t) => !t.archived);
  const twice = () => {
    const n = new Map<string, number>();
    for (const t of live()) n.set(String(t.gtin), (n.get(String(t.gtin)) ?? 0) + 1);
    return [...n].filter(([, c]) => c > 1).map(([g]) => g);
  };
  return { live, twice };
}

/** The one finished run under `reportDir`: its summary and its rows.csv lines ([row, key, outcome, tradeItemId]). */
export function report(reportDir: string): { summary: RunSummary; lines: string[][] } {
  const runs = readdirSync(reportDir).filter((d) => existsSync(join(reportDir, d, 'summary.json')));
  expect(runs).toHaveLength(1);
  const dir = join(reportDir, runs[0]!);
  return {
    summary: JSON.parse(readFileSync(join(dir, 'summary.json'), 'utf8')) as RunSummary,
    lines: reportRows(dir),
  };
}

interface Held {
  held: string;
  release: () => void;
}

/**
 * Lets A's held create out in `order` (B held by `holdB` at a later create for 'before'), then checks the end: A lost
 * its lease (exit 3), B ended well, one live item per GTIN with B's values (`Fix …`), the one item A let out late
 * archived and reported `duplicate_removed` by A, and by B when B removed it. Returns B's report. B may be a command
 * run in-process (`{ exit }`) for 'after', where it is not held.
 */
export async function expectLateCreateRemoved(
  sandbox: RunningSandbox,
  order: LateOrder,
  a: { run: CliProcess; hold: Held; reports: string },
  b: { run: CliProcess | { exit: Promise<CliResult> }; hold: Held; reports: string },
  rows: number,
): Promise<{ summary: RunSummary; lines: string[][] }> {
  const { live, twice } = lateCreateCatalogue(sandbox);
  if (order === 'before') {
    await until('the second run to be held', () => existsSync(b.hold.held), 60_000);
    // A's create goes out now, after B created that GTIN: a second live item.
    a.hold.release();
    await until('the late create to land', () => twice().length === 1, 30_000);
    b.hold.release();
  } else {
    const rb = await b.run.exit;
    expect(rb.code, rb.stderr).toBe(0);
    expect(twice()).toHaveLength(0);
    a.hold.release();
  }
  const [ra, rb] = await Promise.all([a.run.exit, b.run.exit]);
  expect(ra.code, ra.stderr + ra.stdout).toBe(3);
  expect(rb.code, rb.stderr).toBe(0);
  // One live item per GTIN, B's values; the item A let out late is archived.
  expect(twice()).toEqual([]);
  expect(live()).toHaveLength(rows);
  expect(live().every((t) => String(t.tradeItemName).startsWith('Fix '))).toBe(true);
  const archived = ownerItems(sandbox).filter((t) => t.archived);
  expect(archived).toHaveLength(1);
  expect(String(archived[0]!.tradeItemName)).toMatch(/^Night /);
  const removedId = archived[0]!.tradeItemId;
  // Both reports say so where the removal is known: the lost run's always, the new holder's when it removed it.
  const ra2 = report(a.reports);
  const rb2 = report(b.reports);
  expect(ra2.summary.abortCode).toBe('PS_ERR_LEASE_LOST');
  expect(ra2.summary.counts.duplicateRemoved).toBe(1);
  expect(ra2.lines.filter((l) => l[2] === 'duplicate_removed').map((l) => l[3])).toEqual([removedId]);
  expect(rb2.summary.counts.duplicateRemoved).toBe(order === 'before' ? 1 : 0);
  expect(rb2.lines.filter((l) => l[2] === 'duplicate_removed').map((l) => l[3])).toEqual(
    order === 'before' ? [removedId] : [],
  );
  return rb2;
}
