// Import rows/s through the queue with 1, 2 and 4 worker processes against the sandbox (another process) at 20 ms
// latency. Starts its own redis-server on a free port. BENCH_WORKER_ROWS (default 20000), BENCH_LATENCY (default 20).
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { loadConfig } from '../src/config.ts';
import { importQueueClient } from '../src/queue/enqueue.ts';
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';
import { writeProductSheet } from '../test/helpers/sheets.ts';

const ROWS = Number(process.env.BENCH_WORKER_ROWS ?? 20_000);
const LATENCY = Number(process.env.BENCH_LATENCY ?? 20);
const COUNTS = (process.env.BENCH_WORKERS ?? '1,2,4').split(',').map(Number);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const dir = mkdtempSync(join(tmpdir(), 'ps-bench-workers-'));
const redisPort = await freePort();
const redis = spawn('redis-server', ['--port', String(redisPort), '--save', '', '--appendonly', 'no', '--dir', dir], {
  stdio: 'ignore',
});
const apiPort = await freePort();
const sandbox = spawn(
  process.execPath,
  ['bin/product-sync.mjs', 'sandbox', '--port', String(apiPort), '--latency', String(LATENCY), '--admin'],
  { stdio: ['ignore', 'pipe', 'inherit'] },
);
await new Promise<void>((resolve) =>
  sandbox.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve()),
);
await sleep(300);
const url = `http://127.0.0.1:${apiPort}`;
const { file, mapping } = writeProductSheet(dir, ROWS, { owner: DEMO_COMPANY_ID });
const table: string[][] = [['workers', 'rows', 'seconds', 'rows/s']];
try {
  for (const n of COUNTS) {
    const pool = new Pool(url);
    await (await pool.request({ method: 'POST', path: '/__admin/reset' })).body.text();
    await pool.close();
    const reportDir = join(dir, `reports-${n}`);
    rmSync(reportDir, { recursive: true, force: true });
    mkdirSync(reportDir, { recursive: true });
    const env = {
      PRODUCT_API_URL: url,
      REFERENCE_API_URL: url,
      API_TOKEN: 'sandbox-token',
      REDIS_URL: `redis://127.0.0.1:${redisPort}`,
      QUEUE_PREFIX: `bench-${n}`,
      REPORT_DIR: reportDir,
      API_CONCURRENCY: '32',
      CHUNK_SIZE: '250',
      LOG_LEVEL: 'warn',
    };
    const workers: ChildProcess[] = Array.from({ length: n }, () =>
      spawn(process.execPath, ['bin/product-sync.mjs', 'worker', '--jobs-dir', join(dir, 'no-jobs')], {
        env: { ...process.env, ...env },
        stdio: 'ignore',
      }),
    );
    await sleep(2500);
    const client = importQueueClient(loadConfig(env));
    const t0 = performance.now();
    const { jobId } = await client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' });
    const result = await client.wait(jobId, 600_000);
    const s = (performance.now() - t0) / 1000;
    await client.close();
    for (const w of workers) w.kill('SIGTERM');
    if (result.summary.counts.created !== ROWS)
      throw new Error(`expected ${ROWS} created: ${JSON.stringify(result.summary.counts)}`);
    table.push([String(n), String(ROWS), s.toFixed(1), (ROWS / s).toFixed(0)]);
    console.log(table.at(-1)!.join(' | '));
    await sleep(1500);
  }
} finally {
  sandbox.kill('SIGTERM');
  redis.kill('SIGTERM');
}
console.log(`\nqueue import, sandbox at ${LATENCY} ms latency, API_CONCURRENCY 32 per worker, chunks of 250:\n`);
for (const r of table) console.log(r.map((c) => c.padStart(8)).join('  '));
process.exit(0);
