/**
 * `product-sync scorecard`: each mapping's or feed's runs in a report directory with their score and grade (from their
 * summary.json), and with `--out` the file a buyer sends to the supplier (docs/scorecard.md).
 */
import { resolve } from 'node:path';
import { loadConfig } from '../config.ts';
import { ProductSyncError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { reportLanguageOf } from '../pipeline/report-language.ts';
import { writeScorecardFile } from '../pipeline/report/scorecard-file.ts';
import { readScorecardRuns, type ScorecardRun } from '../pipeline/report/scorecard-history.ts';
import { textTable } from './text-table.ts';

/** Flags of `scorecard` (src/cli.ts). */
export interface ScorecardFlags {
  reportDir?: string;
  mapping?: string;
  feed?: string;
  out?: string;
  language?: string;
}

/** A mapping named as a run names it: a path or file name without its folder and extension. */
const mappingOf = (m: string) => m.replace(/^.*[\\/]/, '').replace(/\.(ya?ml|json)$/i, '');
const part = (v: number | null) => (v === null ? '–' : String(Math.round(v)));

/** The runs grouped by feed (runs a feed started), else by mapping, each group in time order. */
export function scorecardGroups(runs: readonly ScorecardRun[]): { title: string; runs: ScorecardRun[] }[] {
  const groups = new Map<string, ScorecardRun[]>();
  for (const r of runs) {
    const title = r.feed ? `feed ${r.feed}` : `mapping ${r.mapping}`;
    groups.set(title, [...(groups.get(title) ?? []), r]);
  }
  return [...groups].map(([title, list]) => ({ title, runs: list })).sort((a, b) => (a.title < b.title ? -1 : 1));
}

/** What the command prints: per group, its last grade and a table of its runs. */
export function formatScorecards(runs: readonly ScorecardRun[]): string {
  const out: string[] = [];
  for (const g of scorecardGroups(runs)) {
    const last = g.runs.at(-1)!.scorecard;
    out.push(`${g.title}: ${g.runs.length} run(s), last score ${last.score}, grade ${last.grade}`);
    const table = textTable(
      ['finished', 'run', 'rows', 'score', 'grade', 'validity', 'completeness', 'timeliness', 'stability'],
      g.runs.map((r) => [
        r.finishedAt.slice(0, 19).replace('T', ' '),
        r.runId,
        String(r.rows),
        String(r.scorecard.score),
        r.scorecard.grade,
        part(r.scorecard.parts.validity),
        part(r.scorecard.parts.completeness),
        part(r.scorecard.parts.timeliness),
        part(r.scorecard.parts.stability),
      ]),
    );
    out.push(...table.split('\n').map((l) => `  ${l}`));
  }
  return out.join('\n');
}

/** `product-sync scorecard [--report-dir DIR] [--mapping NAME | --feed NAME] [--out FILE.xlsx|.csv]`. */
export async function scorecardCommand(flags: ScorecardFlags): Promise<number> {
  if (flags.mapping !== undefined && flags.feed !== undefined)
    throw new ProductSyncError('PS_ERR_CLI_USAGE', 'scorecard takes --mapping or --feed, not both');
  const reportDir = resolve(flags.reportDir ?? loadConfig(process.env).REPORT_DIR);
  const runs = await readScorecardRuns(reportDir, {
    ...(flags.mapping !== undefined ? { mapping: mappingOf(flags.mapping) } : {}),
    ...(flags.feed !== undefined ? { feed: flags.feed } : {}),
  });
  if (runs.length === 0) {
    const which = flags.feed
      ? `of feed ${flags.feed} `
      : flags.mapping
        ? `of mapping ${mappingOf(flags.mapping)} `
        : '';
    process.stderr.write(`product-sync: no run ${which}with a scorecard in ${reportDir}\n`);
    return EXIT.invalidInvocation;
  }
  process.stdout.write(`${formatScorecards(runs)}\n`);
  if (flags.out) {
    // The supplier's language: --language, else the one its last run's report was written in.
    const lang = reportLanguageOf(flags.language ?? runs.at(-1)!.scorecard.language);
    await writeScorecardFile(resolve(flags.out), runs, lang);
    process.stdout.write(`scorecard file (${lang}): ${resolve(flags.out)}\n`);
  }
  return EXIT.ok;
}
