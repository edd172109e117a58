// Import rows/s through the queue with 1, 2 and 4 worker processes against the sandbox (another process) at 20 ms
// latency. Starts its own redis-server on a free port. BENCH_WORKER_ROWS (default 20000), BENCH_LATENCY (default 20).
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';
import { writeProductSheet } from '../test/helpers/sheets.ts';
import { startFleet, startQueueServices } from './queue-fleet.ts';

const ROWS = Number(process.env.BENCH_WORKER_ROWS ?? 20_000);
const LATENCY = Number(process.env.BENCH_LATENCY ?? 20);
const COUNTS = (process.env.BENCH_WORKERS ?? '1,2,4').split(',').map(Number);

const services = await startQueueServices('workers', LATENCY);
const { file, mapping } = writeProductSheet(services.dir, ROWS, { owner: DEMO_COMPANY_ID });
const table: string[][] = [['workers', 'rows', 'seconds', 'rows/s']];
try {
  for (const n of COUNTS) {
    await services.admin('POST', '/__admin/reset');
    const fleet = await startFleet(services, String(n), n, { API_CONCURRENCY: '32', CHUNK_SIZE: '250' });
    const t0 = performance.now();
    const { jobId } = await fleet.client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' });
    const result = await fleet.client.wait(jobId, 600_000);
    const s = (performance.now() - t0) / 1000;
    await fleet.stop();
    if (result.summary.counts.created !== ROWS)
      throw new Error(`expected ${ROWS} created: ${JSON.stringify(result.summary.counts)}`);
    table.push([String(n), String(ROWS), s.toFixed(1), (ROWS / s).toFixed(0)]);
    console.log(table.at(-1)!.join(' | '));
  }
} finally {
  services.stop();
}
console.log(`\nqueue import, sandbox at ${LATENCY} ms latency, API_CONCURRENCY 32 per worker, chunks of 250:\n`);
for (const r of table) console.log(r.map((c) => c.padStart(8)).join('  '));
process.exit(0);
