// What OpenLineage events and OpenTelemetry traces cost a run (issue 40), as whole processes: `product-sync validate`
// of a BENCH_LINEAGE_ROWS-row CSV (default 100 000) against the embedded sandbox, and of a 1-row CSV (the start of a
// command), with both off (the default), with OPENLINEAGE_URL set (a local receiver that accepts every event: the
// column counts of the second pass, the events at the end), and with OTEL_EXPORTER_OTLP_ENDPOINT set (a local
// collector: the SDK loaded at start, spans exported). Best of BENCH_LINEAGE_RUNS (3) runs each, taken in turns.
// "off" is what every run pays: compare it with a checkout without issue 40 (`npm run bench -- coldstart validate
// --baseline <dir>`) for the change itself.
import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';
import { writeProductSheet } from '../test/helpers/sheets.ts';

const ROOT = resolve(import.meta.dirname, '..');
const ROWS = Number(process.env.BENCH_LINEAGE_ROWS ?? 100_000);
const RUNS = Number(process.env.BENCH_LINEAGE_RUNS ?? 3);

const dir = mkdtempSync(join(tmpdir(), 'ps-bench-lineage-'));
const big = writeProductSheet(dir, ROWS, { owner: DEMO_COMPANY_ID, file: 'big.csv' });
const small = writeProductSheet(dir, 1, { owner: DEMO_COMPANY_ID, file: 'small.csv' });

// One server for both: it answers every POST (an OpenLineage event, an OTLP export) at once.
let posts = 0;
const server = createServer((req, res) => {
  req.resume();
  req.on('end', () => {
    posts++;
    res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
  });
});
await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

const variants: Record<string, Record<string, string>> = {
  off: {},
  openlineage: { OPENLINEAGE_URL: `${url}/api/v1/lineage` },
  otel: { OTEL_EXPORTER_OTLP_ENDPOINT: url },
};

async function once(file: string, extra: Record<string, string>): Promise<number> {
  const env: Record<string, string | undefined> = {
    ...process.env,
    REPORT_DIR: join(dir, 'reports'),
    STATE_DIR: join(dir, 'state'),
    LOG_LEVEL: 'warn',
  };
  for (const k of ['OPENLINEAGE_URL', 'OTEL_EXPORTER_OTLP_ENDPOINT', 'REDIS_URL']) delete env[k];
  const t0 = performance.now();
  // Asynchronous: the receiver in this process must answer while the command runs.

  const child = spawn(
    process.execPath,
    [
      '--max-semi-space-size=8',
      join(ROOT, 'bin/product-sync.mjs'),
      'validate',
      file,
      '--mapping',
      big.mapping,
      '--sandbox',
    ],
    { env: { ...env, ...extra }, stdio: ['ignore', 'ignore', 'inherit'] },
  );
  const code = await new Promise<number | null>((r) => child.once('exit', r));
  if (code !== 0 && code !== 1) throw new Error(`validate exited ${code}`);
  return performance.now() - t0;
}

spawnSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
for (const [label, file] of [
  [`validate ${ROWS} rows`, big.file],
  ['validate 1 row (start)', small.file],
] as const) {
  const best: Record<string, number> = {};
  for (let i = 0; i < RUNS; i++)
    for (const [name, extra] of Object.entries(variants))
      best[name] = Math.min(best[name] ?? Infinity, await once(file, extra));
  const off = best.off!;
  console.log(
    `${label}: ${Object.entries(best)
      .map(
        ([n, ms]) => `${n} ${Math.round(ms)} ms${n === 'off' ? '' : ` (${(((ms - off) / off) * 100).toFixed(1)} %)`}`,
      )
      .join(' · ')}`,
  );
}
console.log(`(${posts} events and exports received; best of ${RUNS} runs each)`);
server.close();
