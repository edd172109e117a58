// `npm run bench -- capacity-fleet`: four worker processes (queue mode, one queued import) against a product API that
// serves 32 requests at once and answers 429 past it, with the defaults and with each worker told its share
// (API_CONCURRENCY=8); then with the defaults while the capacity drops to a quarter for 10 s: the accepted rate a
// second before, during and after, and how long after the capacity's return it is back at 0.9 of before.
// Starts its own redis-server and sandbox process. CAPACITY_FLEET_ROWS (default 20000); the drop's run has a sheet of
// its own, CAPACITY_FLEET_DROP_ROWS (default 20000: a run long enough to see 10 s after the return).
// CAPACITY_FLEET_LOG=1: each worker serves /metrics (METRICS_PORT), and each second of a run is logged after it: every
// worker's concurrency limit and refusals, the fleet's pace hash (src/api/shared-rate.ts) and the in flight each
// process last reported.
import { Redis } from 'ioredis';
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';
import { writeProductSheet } from '../test/helpers/sheets.ts';
import { freePort, sleep, startFleet, startQueueServices } from './queue-fleet.ts';

const ROWS = Number(process.env.CAPACITY_FLEET_ROWS ?? 20_000);
const DROP_ROWS = Number(process.env.CAPACITY_FLEET_DROP_ROWS ?? 20_000);
const LOG = process.env.CAPACITY_FLEET_LOG === '1';
const WORKERS = 4;
const DROP_FROM_S = 4;

const services = await startQueueServices('fleet');
const admin = (method: 'GET' | 'POST', path: string, body?: unknown) =>
  services.admin(method, path, body) as Promise<{ total: number; faults: Record<string, number> }>;
const sheet = writeProductSheet(services.dir, ROWS, { owner: DEMO_COMPANY_ID });
const dropSheet = writeProductSheet(services.dir, DROP_ROWS, { owner: DEMO_COMPANY_ID, file: 'drop.csv' });
const redis = new Redis(services.redisUrl);

/** The fleet's shared pace of the run `name` (src/api/shared-rate.ts's hash), a second: '-' when it has none. */
async function fleetPace(name: string): Promise<string> {
  const keys = (await redis.keys(`bench-${name}:api-rate:*`)).filter((k) => !k.endsWith(':in-flight'));
  const pace = keys.length ? Number(await redis.hget(keys[0]!, 'pace')) : 0;
  return pace > 0 ? pace.toFixed(0) : '-';
}

/** A gauge of a worker's /metrics page (src/metrics/metrics.ts), '?' when it does not answer. */
async function gauge(port: number, names: string[]): Promise<string[]> {
  try {
    const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    return names.map((n) => text.match(new RegExp(`^${n} (\\S+)$`, 'm'))?.[1] ?? '?');
  } catch {
    return names.map(() => '?');
  }
}

/**
 * One second of the log: each worker's concurrency limit/refusals, the fleet's pace hash (pace, its ceiling, the
 * doubling time, the best rate at a refusal, the in flight of the last capacity-like refusal, the refusals) and each
 * process's last reported in flight.
 */
async function logLine(name: string, ports: number[]): Promise<string> {
  const limits = await Promise.all(
    ports.map(async (p) =>
      (await gauge(p, ['product_sync_api_concurrency_limit', 'product_sync_api_refusals'])).join('/'),
    ),
  );
  const keys = await redis.keys(`bench-${name}:api-rate:*`);
  const rate = keys.find((k) => !k.endsWith(':in-flight'));
  const h = rate ? await redis.hmget(rate, 'pace', 'ceil', 'dbl', 'best', 'cw', 'nref') : [];
  const [pace, ceil, dbl, best, cw, nref] = h.map((v) => Math.round(Number(v ?? 0)));
  const flight = rate ? Object.values(await redis.hgetall(`${rate}:in-flight`)).map((v) => v.split(':')[0]) : [];
  return `limit/refused ${limits.join(' ')} | pace ${pace} ceil ${ceil} dbl ${dbl} best ${best} cw ${cw} nref ${nref} | in flight ${flight.join(' ')}`;
}

/** One queued import of `rows` rows (its sheet `file`) by four workers; the accepted requests of each second. */
async function run(
  name: string,
  faults: string,
  told: Record<string, string>,
  { file, mapping, rows } = { ...sheet, rows: ROWS },
) {
  await admin('POST', '/__admin/reset');
  await admin('POST', '/__admin/faults', { spec: faults });
  const ports = LOG ? await Promise.all(Array.from({ length: WORKERS }, () => freePort())) : [];
  const each = (i: number): Record<string, string> => (LOG ? { METRICS_PORT: String(ports[i]) } : {});
  const { client, stop: stopFleet } = await startFleet(services, name, WORKERS, { CHUNK_SIZE: '250', ...told }, each);
  const accepted = async () => {
    const c = await admin('GET', '/__admin/requests');
    return c.total - (c.faults['429'] ?? 0);
  };
  const perSecond: number[] = [];
  const paces: string[] = [];
  const lines: string[] = [];
  let stop = false;
  const sampling = (async () => {
    let last = await accepted();
    while (!stop) {
      await sleep(1000);
      const now = await accepted();
      perSecond.push(now - last);
      paces.push(await fleetPace(name));
      if (LOG) lines.push(`${name} ${perSecond.length} s: ${now - last} accepted | ${await logLine(name, ports)}`);
      last = now;
    }
  })();
  const t0 = performance.now();
  const { jobId } = await client.enqueue({ request: { file, mapping }, origin: 'cli', step: 'prepare' });
  const result = await client.wait(jobId, 1_200_000);
  const s = (performance.now() - t0) / 1000;
  stop = true;
  await sampling;
  await stopFleet();
  if (result.summary.counts.created !== rows)
    throw new Error(`expected ${rows} created: ${JSON.stringify(result.summary.counts)}`);
  const api = result.summary.api;
  const refused = api && api.answers ? api.refusals / api.answers : 0;
  if (LOG) console.log(lines.join('\n'));
  console.log(
    `${name}: ${s.toFixed(1)} s, ${(rows / s).toFixed(0)} rows/s, ${(refused * 100).toFixed(1)} % refused; accepted/s: ${perSecond.join(' ')}; the fleet's pace/s: ${paces.join(' ')}`,
  );
  return { s, refused, perSecond };
}

try {
  const untuned = await run('untuned', 'capacity=32,latency=20', {});
  const told = await run('told', 'capacity=32,latency=20', { API_CONCURRENCY: '8' });
  console.log(
    `\n| 32 at once, 429 past it; four workers, one queued import of ${ROWS} rows | ${(ROWS / untuned.s).toFixed(0)} rows/s, ${(untuned.refused * 100).toFixed(1)} % refused | each API_CONCURRENCY=8: ${(ROWS / told.s).toFixed(0)} rows/s, ${(told.refused * 100).toFixed(1)} % refused | ${(told.s / untuned.s).toFixed(2)} |`,
  );
  // The drop starts DROP_FROM_S after the first limited request (about when the import's pushes begin).
  const drop = await run(
    'drop',
    `capacity=32,drop=0.25@${DROP_FROM_S}-${DROP_FROM_S + 10},latency=20`,
    {},
    {
      ...dropSheet,
      rows: DROP_ROWS,
    },
  );
  const r = drop.perSecond;
  const start = r.findIndex((n) => n > 50);
  const before = Math.max(...r.slice(start + 1, start + DROP_FROM_S));
  const back = start + DROP_FROM_S + 10;
  const after = r.slice(back);
  const within = after.findIndex((n) => n >= 0.9 * before);
  console.log(
    `drop to a quarter for 10 s: before ${before}/s; during ${r.slice(start + DROP_FROM_S + 1, back).join(' ')}; after ${after.join(' ')}; back at 0.9 of before ${within < 0 ? 'not within the run' : `${within + 1} s after the return`}`,
  );
} finally {
  redis.disconnect();
  services.stop();
}
console.log(
  `\n${ROWS} rows (the drop's ${DROP_ROWS}), 20 ms latency, four workers, chunks of 250, ${new Date().toISOString()}`,
);
process.exit(0);
