// End-to-end import rate into the sandbox (another process) next to a bare undici loop sending the same creates with the
// same concurrency (the ceiling), plus the no-change rerun. `BENCH_SIZES=10000,100000 BENCH_LATENCIES=0,20`.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync, createWriteStream } from 'node:fs';
import { once } from 'node:events';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { Pool } from 'undici';
import { loadConfig } from '../src/config.ts';
import { contextFromConfig } from '../src/commands/context.ts';
import { gtinCheckDigit } from '../src/pipeline/gtin.ts';
import { runImport } from '../src/pipeline/run.ts';
import { tradeItemIdFor } from '../src/api/uuid.ts';
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';

const SIZES = (process.env.BENCH_SIZES ?? '10000,100000').split(',').map(Number);
const LATENCIES = (process.env.BENCH_LATENCIES ?? '0,20').split(',').map(Number);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 64);
const dir = join(import.meta.dirname, '.data', 'import');
mkdirSync(dir, { recursive: true });

const gtin = (i: number) => {
  const body = `0350000${String(i).padStart(6, '0')}`;
  return body + gtinCheckDigit(body);
};

async function sheet(rows: number): Promise<string> {
  const file = join(dir, `products-${rows}.csv`);
  const out = createWriteStream(file);
  out.write('GTIN;Désignation;Poids net;Unité\n');
  for (let i = 0; i < rows; i++) {
    if (!out.write(`${gtin(i)};Biscuits au beurre ${i};${(i % 900) + 100};g\n`)) await once(out, 'drain');
  }
  out.end();
  await once(out, 'finish');
  return file;
}

const MAPPING = join(dir, 'bench.yaml');
writeFileSync(MAPPING, `name: bench
target: tradeItem
ownerCompanyId: ${DEMO_COMPANY_ID}
language: fr-FR
key: gtin
columns:
  - { column: GTIN, field: gtin, type: gtin }
  - { column: Désignation, field: tradeItemName }
  - { column: Poids net, field: "netContents[0].value", type: decimal }
  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit }
`);

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

async function sandbox(latency: number): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, ['bin/product-sync.mjs', 'sandbox', '--port', String(port), '--latency', String(latency), '--admin'], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve) => child.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve()));
  return { url: `http://127.0.0.1:${port}`, child };
}

async function bare(url: string, rows: number): Promise<number> {
  const pool = new Pool(url, { connections: CONCURRENCY });
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < rows) {
      const i = next++;
      const body = JSON.stringify({ gtin: gtin(i), tradeItemName: `Biscuits au beurre ${i}`, netContents: [{ value: String((i % 900) + 100), unitOfMeasure: 'GRM' }], ownerCompanyId: DEMO_COMPANY_ID, tradeItemId: tradeItemIdFor(DEMO_COMPANY_ID, gtin(i)) });
      const r = await pool.request({ method: 'POST', path: '/api/tradeItem', body, headers: { 'content-type': 'application/json', authorization: 'Bearer sandbox-token' } });
      await r.body.text();
      if (r.statusCode !== 200) throw new Error(`bare loop: ${r.statusCode}`);
    }
  }));
  const s = (performance.now() - t0) / 1000;
  await pool.close();
  return rows / s;
}

async function reset(url: string): Promise<void> {
  const pool = new Pool(url);
  const r = await pool.request({ method: 'POST', path: '/__admin/reset' });
  await r.body.text();
  await pool.close();
}

let peak = 0;
setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50).unref();

const table: string[][] = [['rows', 'latency', 'bare undici rows/s', 'import rows/s', 'import/bare', 'rerun s', 'rerun writes', 'rerun requests', 'peak RSS MB']];
for (const latency of LATENCIES) {
  const sb = await sandbox(latency);
  try {
    for (const rows of SIZES) {
      const file = await sheet(rows);
      await reset(sb.url);
      const ceiling = await bare(sb.url, rows);
      await reset(sb.url);
      const reportDir = join(dir, `reports-${rows}-${latency}`);
      rmSync(reportDir, { recursive: true, force: true });
      const config = loadConfig({ PRODUCT_API_URL: sb.url, REFERENCE_API_URL: sb.url, API_TOKEN: 'sandbox-token', API_CONCURRENCY: String(CONCURRENCY), REPORT_DIR: reportDir, LOG_LEVEL: 'warn' });
      const cc = await contextFromConfig(config, {});
      peak = 0;
      const t0 = performance.now();
      const first = await runImport({ file, mapping: MAPPING }, cc.ctx);
      const importRate = rows / ((performance.now() - t0) / 1000);
      if (first.summary.counts.created !== rows) throw new Error(`expected ${rows} created, got ${JSON.stringify(first.summary.counts)}`);
      const before = cc.ctx.clients.stats.product;
      const t1 = performance.now();
      const second = await runImport({ file, mapping: MAPPING }, cc.ctx);
      const rerun = (performance.now() - t1) / 1000;
      const rerunRequests = cc.ctx.clients.stats.product - before;
      await cc.close();
      table.push([String(rows), `${latency} ms`, ceiling.toFixed(0), importRate.toFixed(0), `${((importRate / ceiling) * 100).toFixed(0)} %`, rerun.toFixed(2), String(second.writes ?? 0), String(rerunRequests), (peak / 1e6).toFixed(0)]);
      console.log(table.at(-1)!.join(' | '));
    }
  } finally {
    sb.child.kill('SIGTERM');
  }
}
const widths = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
console.log(`\nimport into the sandbox (separate process), concurrency ${CONCURRENCY}:\n`);
for (const r of table) console.log(r.map((c, i) => c.padStart(widths[i]!)).join('  '));
process.exit(0);
