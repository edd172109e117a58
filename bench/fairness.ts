// `npm run bench -- fairness [--rows N] [--latency MS] [--workers 1,4]`: queue mode serving two owners. Owner A
// enqueues a run of N rows (default 60 000); two seconds later owner B enqueues a one-row run and waits for it. Per
// worker count (default one worker, then four, each with the defaults): A's time alone, then A's time beside B and B's
// wait (from B's enqueue to B's summary). Issue 37's targets: B ≤ 5 s with one worker, A beside B within 10 % of
// alone. Starts its own redis-server and sandbox process (at `--latency` ms, default 20).
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { DEMO_COMPANY_ID, OTHER_COMPANY_ID } from '../src/sandbox/defaults.ts';
import { writeProductSheet } from '../test/helpers/sheets.ts';
import { sleep, startFleet, startQueueServices, type FleetClient } from './queue-fleet.ts';

const argv = process.argv.slice(2);
const flag = (name: string, fallback: string): string => {
  const i = argv.findIndex((a) => a === `--${name}` || a.startsWith(`--${name}=`));
  if (i < 0) return fallback;
  return argv[i]!.includes('=') ? argv[i]!.split('=')[1]! : (argv[i + 1] ?? fallback);
};
const ROWS = Number(flag('rows', '60000'));
const LATENCY = Number(flag('latency', '20'));
const WORKER_COUNTS = flag('workers', '1,4').split(',').map(Number);
const B_AFTER_MS = 2000;

const services = await startQueueServices('fair', LATENCY);
const dir = services.dir;
mkdirSync(join(dir, 'a'));
mkdirSync(join(dir, 'b'));
const a = writeProductSheet(join(dir, 'a'), ROWS, { owner: DEMO_COMPANY_ID });
const b = writeProductSheet(join(dir, 'b'), 1, { owner: OTHER_COMPANY_ID, prefix: '036000' });

let round = 0;
/** A fresh fleet of `n` worker processes on a prefix of its own, against a reset sandbox. */
async function fleet(n: number) {
  round++;
  await services.admin('POST', '/__admin/reset');
  return startFleet(services, `fair-${round}`, n, {});
}

/** Enqueues `sheet` and waits for its summary: seconds from enqueue to summary, and to its prepare step's start. */
async function timed(client: FleetClient, sheet: typeof a, rows: number) {
  const t0 = performance.now();
  const { jobId } = await client.enqueue({ request: sheet, origin: 'cli', step: 'prepare' });
  const result = await client.wait(jobId, 3_600_000);
  if (result.summary.counts.created !== rows)
    throw new Error(`expected ${rows} created: ${JSON.stringify(result.summary.counts)}`);
  const s = await client.status(jobId);
  const started = s?.processedAt ? (Date.parse(s.processedAt) - Date.parse(s.createdAt)) / 1000 : NaN;
  return { seconds: (performance.now() - t0) / 1000, started };
}

const lines: string[] = [];
try {
  for (const n of WORKER_COUNTS) {
    const alone = await fleet(n);
    const aAlone = (await timed(alone.client, a, ROWS)).seconds;
    await alone.stop();
    console.log(`${n} worker(s): A alone ${aAlone.toFixed(1)} s`);

    const both = await fleet(n);
    const aBeside = timed(both.client, a, ROWS);
    await sleep(B_AFTER_MS);
    const bRun = await timed(both.client, b, 1);
    const bWait = bRun.seconds;
    const aTime = (await aBeside).seconds;
    await both.stop();
    console.log(
      `${n} worker(s): B's one row waited ${bWait.toFixed(1)} s (its prepare began after ${bRun.started.toFixed(1)} s); A beside B ${aTime.toFixed(1)} s (${((aTime / aAlone - 1) * 100).toFixed(1)} % vs alone)`,
    );
    lines.push(
      `| ${n} | ${ROWS} | ${bWait.toFixed(1)} s | ${aAlone.toFixed(1)} s | ${aTime.toFixed(1)} s | ${((aTime / aAlone - 1) * 100).toFixed(1)} % |`,
    );
  }
} finally {
  services.stop();
}
console.log(
  `\n| workers | A's rows | B's wait (1 row) | A alone | A beside B | A's change |\n|---|---|---|---|---|---|`,
);
console.log(lines.join('\n'));
console.log(
  `\nAPI at ${LATENCY} ms, the workers' defaults (CHUNK_SIZE, WORKER_CONCURRENCY), ${new Date().toISOString()}`,
);
process.exit(0);
