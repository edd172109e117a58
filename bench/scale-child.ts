// One phase of bench/scale.ts in its own process, so the process's peak RSS is the phase's:
//   node --import tsx bench/scale-child.ts <validate|import> <sheet.csv> <mapping.yaml> <api url> <report dir> <expected rows>
// Builds the runtime as the CLI does, runs runValidate / runImport with an onProgress callback, samples RSS (a 250 ms timer
// for the peak, and at 25/50/75/100 % of rowsTotal read by the second pass), notes when `writes` first became > 0, and
// prints one JSON line (PhaseFigures) on stdout at the end. Logs go to stderr (src/logger.ts).
import { resolve } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { runImport, runValidate, type RunProgress } from '../src/pipeline/run/run.ts';
import { contextFromConfig } from '../src/runtime.ts';

/** The engine under test (the streaming rewrite), as the table names it. */
export const ENGINE = 'src/pipeline/run/run.ts';

/** What one phase measured (the JSON line the parent parses). */
export interface PhaseFigures {
  phase: string;
  engine: string;
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  /** RSS (MB) when the second pass had read 25, 50, 75 and 100 % of rowsTotal; null: the engine never reported it. */
  rssAtQuartersMB: (number | null)[];
  /** Seconds from the start of the run to each of those marks. */
  secondsAtQuarters: (number | null)[];
  peakMB: number;
  /** When rowsTotal was first reported (the end of the first pass), seconds from the start. */
  firstPassSeconds: number | null;
  /** The first progress report with writes > 0: how much of the second pass was read then, and when. */
  firstWrite: { pctRead: number | null; rowsRead: number; seconds: number } | null;
  /** `result.writes` (write requests the run sent). */
  writes: number;
  counts: Record<string, number>;
  exitCode: number;
  progressReports: number;
}

const mb = (bytes: number) => Math.round(bytes / 1e6);

if (process.argv[1] !== undefined && resolve(process.argv[1]) === import.meta.filename) {
  const [phase, file, mapping, url, reportDir, expectedArg] = process.argv.slice(2);
  if (phase !== 'validate' && phase !== 'import') throw new Error(`scale-child: unknown phase ${phase}`);
  const expected = Number(expectedArg);

  let peak = 0;
  const sample = () => (peak = Math.max(peak, process.memoryUsage.rss()));
  const timer = setInterval(sample, 250);
  const rssAt: (number | null)[] = [null, null, null, null];
  const secondsAt: (number | null)[] = [null, null, null, null];
  let firstPass: number | null = null;
  let firstWrite: PhaseFigures['firstWrite'] = null;
  let reports = 0;
  let t0 = 0;
  const since = () => (performance.now() - t0) / 1000;

  const onProgress = (p: RunProgress) => {
    reports++;
    // rowsTotal comes with the second pass (stage `keys` is the first one, counting rows and keys).
    const total = p.rowsTotal;
    if (total !== undefined && firstPass === null) firstPass = since();
    if (total !== undefined && total > 0) {
      for (let q = 0; q < 4; q++) {
        if (rssAt[q] === null && p.rowsRead >= (total * (q + 1)) / 4) {
          const rss = process.memoryUsage.rss();
          peak = Math.max(peak, rss);
          rssAt[q] = mb(rss);
          secondsAt[q] = Number(since().toFixed(2));
          process.stderr.write(`  ${phase}: ${(q + 1) * 25} % read, ${secondsAt[q]} s, RSS ${rssAt[q]} MB\n`);
        }
      }
    }
    if (firstWrite === null && (p.writes ?? 0) > 0) {
      firstWrite = {
        pctRead: total ? Number(((p.rowsRead / total) * 100).toFixed(2)) : null,
        rowsRead: p.rowsRead,
        seconds: Number(since().toFixed(2)),
      };
    }
  };

  const config = loadConfig({ ...process.env, PRODUCT_API_URL: url, REFERENCE_API_URL: url, API_TOKEN: 'sandbox-token', REPORT_DIR: reportDir });
  const cc = await contextFromConfig(config, {});
  const ctx = { ...cc.ctx, onProgress };
  sample();
  t0 = performance.now();
  const result = phase === 'validate'
    ? await runValidate({ file: file!, mapping: mapping! }, ctx)
    : await runImport({ file: file!, mapping: mapping! }, ctx);
  const seconds = since();
  clearInterval(timer);
  sample();
  await cc.close();
  // The kernel's high-water mark catches a spike between two samples.
  peak = Math.max(peak, process.resourceUsage().maxRSS * 1024);
  const rows = result.summary.counts.rows ?? expected;
  const figures: PhaseFigures = {
    phase, engine: ENGINE, rows, seconds: Number(seconds.toFixed(2)), rowsPerSecond: Math.round(rows / seconds),
    rssAtQuartersMB: rssAt, secondsAtQuarters: secondsAt, peakMB: mb(peak), firstPassSeconds: firstPass === null ? null : Number((firstPass as number).toFixed(2)),
    firstWrite, writes: result.writes ?? 0, counts: { ...result.summary.counts }, exitCode: result.exitCode, progressReports: reports,
  };
  process.stdout.write(`${JSON.stringify(figures)}\n`);
  process.exit(0);
}
