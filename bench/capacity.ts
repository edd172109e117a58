// `npm run bench -- capacity`: an import with the defaults against each kind of API limit (sandbox --faults), next to
// the same import told the limit: rows a second, share of requests refused. One process (inline import); the sandbox
// runs in the same process (figures on a loaded machine are noisy: see docs/performance.md). Four workers and the
// recovery after a drop: bench/capacity-fleet.ts.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadConfig } from '../src/config.ts';
import { runImport } from '../src/pipeline/run/run.ts';
import { contextFromConfig } from '../src/runtime.ts';
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';
import { parseFaultSpec } from '../src/sandbox/faults.ts';
import { startSandbox } from '../src/sandbox/server.ts';
import { writeProductSheet } from '../test/helpers/sheets.ts';

const ROWS = Number(process.env.CAPACITY_ROWS ?? 4000);
const CASES: { kind: string; faults: string; told: Record<string, string> }[] = [
  { kind: '16 at once, 429 past it', faults: 'capacity=16,latency=20', told: { API_CONCURRENCY: '16' } },
  { kind: '200 a second, 429 + Retry-After', faults: 'rps=200,burst=20,latency=20', told: { API_MAX_RPS: '200' } },
  { kind: '16 at once, the rest queued', faults: 'queue=16,latency=20', told: { API_CONCURRENCY: '16' } },
  {
    kind: '16 at once, a quarter from 2 s to 6 s',
    faults: 'capacity=16,drop=0.25@2-6,latency=20',
    told: { API_CONCURRENCY: '16' },
  },
  { kind: 'no limit', faults: 'latency=20', told: {} },
];

const sandbox = await startSandbox({ port: 0 });
const lines: string[] = [];
for (const c of CASES) {
  const rates: number[] = [];
  const refused: number[] = [];
  for (const told of [{}, c.told]) {
    sandbox.handle.reset();
    sandbox.handle.setFaults(parseFaultSpec(c.faults));
    const dir = mkdtempSync(join(tmpdir(), 'ps-bench-capacity-'));
    const { file, mapping } = writeProductSheet(dir, ROWS, { owner: DEMO_COMPANY_ID });
    const config = loadConfig({
      PRODUCT_API_URL: sandbox.url,
      REFERENCE_API_URL: sandbox.url,
      API_TOKEN: 'sandbox-token',
      REPORT_DIR: join(dir, 'reports'),
      LOG_LEVEL: 'silent',
      ...told,
    });
    const cc = await contextFromConfig(config, {});
    const t0 = performance.now();
    const r = await runImport({ file, mapping }, cc.ctx);
    const s = (performance.now() - t0) / 1000;
    const api = r.summary.api;
    await cc.close();
    rates.push(ROWS / s);
    refused.push(api && api.answers ? api.refusals / api.answers : 0);
  }
  const line = `| ${c.kind} | ${rates[0]!.toFixed(0)} rows/s, ${(refused[0]! * 100).toFixed(1)} % refused | ${rates[1]!.toFixed(0)} rows/s, ${(refused[1]! * 100).toFixed(1)} % refused | ${(rates[0]! / rates[1]!).toFixed(2)} |`;
  lines.push(line);
  process.stdout.write(`${line}\n`);
}
await sandbox.close();
process.stdout.write(`\n${ROWS} rows, 20 ms latency, one process, ${new Date().toISOString()}\n`);
