// The console's scorecard page of a feed (issue 38 item 4): three files of a feed with an `expect:` deadline go through
// the workers, each run's summary.json gets its scorecard (the feed and its deadline met); the page, reached from the
// feed list, shows the last grade and a chart with one point per run — read in Chromium.
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openFeedsQueue } from '../../src/queue/queues.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { hasChromium, startConsoleStack, withChromium, type ConsoleStack } from '../helpers/console.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

let stack: ConsoleStack;
let drop: string;

interface Scorecards {
  feed: string;
  grade: string;
  score: number;
  runs: { runId: string; score: number; grade: string; parts: Record<string, number | null> }[];
}

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ps-console-scorecard-'));
  drop = join(dir, 'drop');
  const jobs = join(dir, 'jobs');
  mkdirSync(drop);
  mkdirSync(jobs);
  writeFileSync(
    join(jobs, 'acme.yaml'),
    `schedule: "0 2 * * *"\nexpect: "0 6 * * *"\nsource: { dir: ${drop}, pattern: "acme-*.csv", settleSeconds: 0 }\nmapping: ${join(drop, 'products.yaml')}\n`,
  );
  stack = await startConsoleStack('scorecard', {}, { jobsDir: jobs });
});
afterAll(async () => {
  await stack?.close();
});

const scorecards = async (): Promise<Scorecards> =>
  (await (await fetch(`${stack.url}/scorecards?feed=acme`)).json()) as Scorecards;

/** Drops file `n` (rows without a name: invalid) and ticks the feed; waits for its run's scorecard. */
async function feedRun(n: number, unnamed: number): Promise<void> {
  writeProductSheet(drop, 10, {
    owner: DEMO_COMPANY_ID,
    file: `acme-${n}.csv`,
    prefix: `38800${n}`,
    name: (i) => (i < unnamed ? '' : `Sablés ${n}-${i}`),
  });
  const feeds = openFeedsQueue(stack.config);
  try {
    await feeds.tick('acme');
  } finally {
    await feeds.close();
  }
  await until(`run ${n} of the feed has its scorecard`, async () => (await scorecards()).runs.length === n, 60_000);
}

describe.skipIf(!hasChromium)('the scorecard page of a feed', () => {
  it('shows the last grade and one point per run, reached from the feed list', async () => {
    await feedRun(1, 0);
    await feedRun(2, 3);
    await feedRun(3, 6);
    const data = await scorecards();
    expect(data.runs.map((r) => r.grade)).toEqual([expect.stringMatching(/^[AB]$/), 'D', 'E']);
    // The feed expects its file by 06:00 and was not overdue: each run met its deadline.
    expect(data.runs.map((r) => r.parts.timeliness)).toEqual([100, 100, 100]);
    expect(data.grade).toBe('E');

    await withChromium({ viewport: { width: 1024, height: 800 } }, async (browser) => {
      const page = await browser.newPage();
      await page.goto(stack.url);
      const link = page.locator('#feeds tr[data-feed="acme"] a.scorecard-link');
      await link.waitFor();
      await link.click();
      await page.waitForURL(/\/scorecard\?feed=acme$/);
      await page.locator('#chart svg').waitFor();
      expect(await page.locator('#grade').textContent()).toBe('E');
      expect(await page.locator('#grade').getAttribute('class')).toBe('grade-E');
      const points = page.locator('#chart .point');
      expect(await points.count()).toBe(3);
      expect(await points.evaluateAll((ps) => ps.map((p) => p.getAttribute('data-run')))).toEqual(
        data.runs.map((r) => r.runId),
      );
      expect(await points.evaluateAll((ps) => ps.map((p) => Number(p.getAttribute('data-score'))))).toEqual(
        data.runs.map((r) => r.score),
      );
      // A real chart: points higher for higher scores (SVG y grows downwards), the grade bands behind them.
      const ys = await page
        .locator('#chart .point circle')
        .evaluateAll((cs) => cs.map((c) => Number(c.getAttribute('cy'))));
      expect(ys[0]!).toBeLessThan(ys[1]!);
      expect(ys[1]!).toBeLessThan(ys[2]!);
      expect(await page.locator('#chart .band').count()).toBe(5);
      expect(await page.locator('#runs tr').count()).toBe(3);
    });
  }, 180_000);
});
