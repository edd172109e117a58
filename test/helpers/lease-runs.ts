// What the tests of runs across processes (the owner lease, its takeovers, signals, late creates) read back: the
// owner's items in the sandbox, the finished runs of a report directory, whether a report is true to the API, and the
// fence hook that holds a process right after its check (PS_TEST_FENCE_HOLD, src/api/fence.ts).
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, expect } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import type { RunningSandbox } from '../../src/sandbox/server.ts';
import { reportRows, useSandbox } from './sandbox.ts';
import { writeProductSheet } from './sheets.ts';
import { startReceiver, type Receiver } from './webhook-receiver.ts';

/** The owner every run of these tests imports for. */
export const OWNER = DEMO_COMPANY_ID;

/** A run's summary.json, as these tests read it. */
export interface RunSummary {
  runId: string;
  exitCode: number;
  startedAt: string;
  finishedAt: string;
  aborted?: string;
  abortCode?: string;
  counts: Record<string, number>;
  events?: { id: string; type: string; state: string }[];
  issues?: unknown[];
  source?: { file: string };
}

/**
 * The sandbox of a file (useSandbox), emptied before each test and answering without faults again after each: a test
 * sets the faults it needs and leaves no cleanup of its own.
 */
export function useRunSandbox(options: Parameters<typeof useSandbox>[0] = {}): RunningSandbox {
  const sandbox = useSandbox(options);
  beforeEach(() => sandbox.handle.reset());
  afterEach(() => sandbox.handle.setFaults({}));
  return sandbox;
}

/** A webhook receiver for the tests of a file (helpers/webhook-receiver.ts), started before them, closed after. */
export function useReceiver(): { readonly receiver: Receiver } {
  let receiver: Receiver | undefined;
  beforeAll(async () => {
    receiver = await startReceiver();
  });
  afterAll(async () => {
    await receiver?.close();
  });
  return {
    get receiver() {
      if (!receiver) throw new Error('the receiver starts in beforeAll: read it inside a test or a hook');
      return receiver;
    },
  };
}

/**
 * Two sheets of {@link OWNER} in `dir`, `rows` rows of the same GTINs: `queued.csv` (named `Queued <i>`) and
 * `inline.csv` (`Inline <i>`).
 */
export function queuedAndInlineSheets(dir: string, rows: number) {
  return {
    queued: writeProductSheet(dir, rows, { owner: OWNER, file: 'queued.csv', name: (i) => `Queued ${i}` }),
    inline: writeProductSheet(dir, rows, { owner: OWNER, file: 'inline.csv', name: (i) => `Inline ${i}` }),
  };
}

/** The trade items of {@link OWNER} in the sandbox. */
export function ownerItems(sandbox: RunningSandbox) {
  return sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === OWNER);
}

/** The finished runs under a report directory (those with a summary.json), with their summaries. */
export function finishedRuns(reportDir: string): { dir: string; summary: RunSummary }[] {
  if (!existsSync(reportDir)) return [];
  return readdirSync(reportDir)
    .filter((d) => existsSync(join(reportDir, d, 'summary.json')))
    .map((d) => ({
      dir: join(reportDir, d),
      summary: JSON.parse(readFileSync(join(reportDir, d, 'summary.json'), 'utf8')) as RunSummary,
    }));
}

/** The one run directory under `reportDir`, finished or not (a killed run resumes in the same directory). */
export function onlyRunDir(reportDir: string): string {
  const dirs = readdirSync(reportDir).filter((d) => existsSync(join(reportDir, d, 'run.json')));
  expect(dirs).toHaveLength(1);
  return join(reportDir, dirs[0]!);
}

/** The runs of several report directories, the one that finished first first. */
export function runsByEnd(...reportDirs: string[]): { dir: string; summary: RunSummary }[] {
  return reportDirs
    .flatMap((d) => finishedRuns(d))
    .sort((x, y) => x.summary.finishedAt.localeCompare(y.summary.finishedAt));
}

/** Asserts the runs (by end) ran one after the other: each started once the one before had written its report. */
export function expectOneAfterTheOther(runs: { summary: RunSummary }[]): void {
  for (let i = 1; i < runs.length; i++)
    expect(
      runs[i - 1]!.summary.finishedAt <= runs[i]!.summary.startedAt,
      JSON.stringify(runs.map((r) => [r.summary.startedAt, r.summary.finishedAt])),
    ).toBe(true);
}

/**
 * A report says only what its run did, and what the API holds: each row it reports created, updated or unchanged names
 * the one item the API holds for its GTIN; the others are not attempted or failed; the counts add up to the lines.
 */
export function expectReportTrue(sandbox: RunningSandbox, runDir: string): void {
  const byGtin = new Map(ownerItems(sandbox).map((t) => [String(t.gtin), t.tradeItemId]));
  const lines = reportRows(runDir);
  const summary = JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8')) as RunSummary;
  const seen: Record<string, number> = {};
  for (const [, key, outcome, tradeItemId] of lines) {
    seen[outcome!] = (seen[outcome!] ?? 0) + 1;
    if (outcome === 'created' || outcome === 'updated' || outcome === 'unchanged')
      expect(tradeItemId, `${runDir}: ${key} ${outcome}`).toBe(byGtin.get(key!));
    else expect(['not_attempted', 'failed'], `${key} ${outcome}`).toContain(outcome);
  }
  expect(summary.counts.created).toBe(seen.created ?? 0);
  expect(summary.counts.notAttempted).toBe(seen.not_attempted ?? 0);
  expect(lines.length).toBe(summary.counts.rows);
}

/**
 * The run.aborted the receiver accepted for `run` (issue 25): signed, listed as delivered in its summary, true to its
 * report (run id, reason, code, exit code, counts), and the run's only end event.
 */
export function expectAbortedEvent(receiver: Receiver, run: RunSummary, reason: string): void {
  const listed = run.events?.find((e) => e.type === 'run.aborted');
  expect(listed, JSON.stringify(run.events)).toMatchObject({ state: 'delivered' });
  const got = receiver.accepted().get(listed!.id);
  expect(got).toMatchObject({ type: 'run.aborted', verified: true });
  expect(got!.data).toMatchObject({
    runId: run.runId,
    reason,
    code: run.abortCode,
    exitCode: run.exitCode,
    counts: run.counts,
  });
  expect(run.aborted).toContain(String(got!.data.message));
  // One end event per run: run.started and run.aborted, no run.finished beside them.
  expect(
    [...receiver.accepted().values()].filter((r) => r.data.runId === run.runId && r.type.startsWith('run.')),
  ).toHaveLength(2);
}

/**
 * Holds the `nth` request of a process whose `METHOD path` starts with `match` right after its fence check (the
 * process blocked as if preempted) until `release()`: `env` is the value of PS_TEST_FENCE_HOLD, `held` the file the
 * process writes once held.
 */
export function fenceHold(
  dir: string,
  name: string,
  nth: number,
  match = 'POST /api/tradeItem',
): { env: string; held: string; release: () => void } {
  const held = join(dir, `${name}.held`);
  const release = join(dir, `${name}.release`);
  return {
    env: JSON.stringify({ match, nth, held, release }),
    held,
    release: () => writeFileSync(release, ''),
  };
}
