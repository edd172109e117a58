/**
 * The scorecards of a report directory over time: each run directory's summary.json with a `scorecard`, read by the
 * `scorecard` command, the console's scorecard page and a finishing run (its stability compares with the previous run
 * of its feed, else of its mapping).
 */
import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { RunSummary } from './report.ts';
import type { Scorecard } from './scorecard.ts';

/** A run with its scorecard. */
export interface ScorecardRun {
  runId: string;
  mapping: string;
  feed: string | null;
  file: string;
  mode: string;
  dryRun: boolean;
  finishedAt: string;
  rows: number;
  scorecard: Scorecard;
}

/** Which runs: those of a mapping (its name) or of a feed; all when neither is given. */
export interface ScorecardFilter {
  mapping?: string;
  feed?: string;
}

/** Run directories read at most when looking for a run's previous one (the most recent first). */
const PREVIOUS_LOOKUP_DIRS = 500;

function matches(s: RunSummary & { scorecard: Scorecard }, f: ScorecardFilter): boolean {
  if (f.feed !== undefined && s.scorecard.feed !== f.feed) return false;
  if (f.mapping !== undefined && s.mapping !== f.mapping) return false;
  return true;
}

async function readSummary(dir: string): Promise<(RunSummary & { scorecard: Scorecard }) | null> {
  try {
    const s = JSON.parse(await readFile(join(dir, 'summary.json'), 'utf8')) as RunSummary;
    return s.scorecard ? (s as RunSummary & { scorecard: Scorecard }) : null;
  } catch {
    // A directory without a (readable) summary is a run not finished, or not a run.
    return null;
  }
}

/** The run directories of `reportDir` with a summary.json, most recently written first. */
async function runDirs(reportDir: string): Promise<{ name: string; mtimeMs: number }[]> {
  if (!existsSync(reportDir)) return [];
  const entries = await readdir(reportDir, { withFileTypes: true });
  const out: { name: string; mtimeMs: number }[] = [];
  for (const e of entries) {
    if (!e.isDirectory() || e.name.startsWith('.')) continue;
    const st = await stat(join(reportDir, e.name, 'summary.json')).catch(() => null);
    if (st) out.push({ name: e.name, mtimeMs: st.mtimeMs });
  }
  return out.sort((a, b) => b.mtimeMs - a.mtimeMs || (a.name < b.name ? 1 : -1));
}

/** The runs of `reportDir` that have a scorecard and pass `filter`, oldest first. */
export async function readScorecardRuns(reportDir: string, filter: ScorecardFilter = {}): Promise<ScorecardRun[]> {
  const out: ScorecardRun[] = [];
  for (const d of await runDirs(reportDir)) {
    const s = await readSummary(join(reportDir, d.name));
    if (!s || !matches(s, filter)) continue;
    out.push({
      runId: s.runId,
      mapping: s.mapping,
      feed: s.scorecard.feed ?? null,
      file: s.source.file,
      mode: s.mode,
      dryRun: s.dryRun,
      finishedAt: s.finishedAt,
      rows: s.counts.rows,
      scorecard: s.scorecard,
    });
  }
  return out.sort((a, b) => (a.finishedAt < b.finishedAt ? -1 : a.finishedAt > b.finishedAt ? 1 : 0));
}

/**
 * The latest scorecard of the feed (when given), else of the mapping, in `reportDir` — another run than `runId` — to
 * compare a run's columns with.
 */
export async function previousScorecard(
  reportDir: string,
  of: { mapping: string; feed?: string },
  runId: string,
): Promise<{ runId: string; scorecard: Scorecard } | undefined> {
  const filter: ScorecardFilter = of.feed ? { feed: of.feed } : { mapping: of.mapping };
  const dirs = (await runDirs(reportDir)).filter((d) => d.name !== runId).slice(0, PREVIOUS_LOOKUP_DIRS);
  for (const d of dirs) {
    const s = await readSummary(join(reportDir, d.name));
    if (s && s.runId !== runId && matches(s, filter)) return { runId: s.runId, scorecard: s.scorecard };
  }
  return undefined;
}
