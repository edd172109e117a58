// A million-row run, memory and speed: generates a 5-column CSV of N rows (default 1 000 000; `--rows N`) and its
// mapping in a temp dir, starts the sandbox in another process at 0 ms latency, and runs three phases, each as the real
// CLI in its own process (`node bin/product-sync.mjs validate|import <csv> --mapping <yaml>`, the compiled dist/, built
// first by scripts/build.mjs): `validate`, `import`, and the no-change rerun `import` of the same sheet. The child is
// watched from here: its progress lines on stderr (src/commands/progress.ts, one a second) give rows read / total /
// writes, its /proc/<pid>/status (VmRSS, VmHWM) is sampled every 200 ms, and the run's summary.json gives the counts
// and exit code. Prints RSS at 25/50/75/100 % of the second pass, the peak, rows/s and when the first write was seen,
// then PASS/FAIL lines for the targets of the streaming engine (src/pipeline/run/run.ts):
//   peak RSS ≤ 300 MB (validate, import); RSS flat (100 % within 15 % of 25 %); rerun sends 0 writes; first write
//   before 5 % of the second pass.
// Exit code 1 when a target or a count check fails. `--keep` keeps the temp dir. `--queue` adds the same import in
// queue mode (a private redis-server and one worker process, after a sandbox reset) and prints Redis INFO memory.
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createConnection, createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Redis } from 'ioredis';
import { Pool } from 'undici';
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';
import type { RunSummary } from '../src/pipeline/report/report.ts';
import { BRANDS, ensureScaleSheet } from './product-rows.ts';

const args = process.argv.slice(2);
const flag = (name: string) => args.includes(name);
const option = (name: string): string | undefined => {
  const i = args.findIndex((a) => a === name || a.startsWith(`${name}=`));
  if (i < 0) return undefined;
  return args[i]!.includes('=') ? args[i]!.slice(name.length + 1) : args[i + 1];
};
const ROWS = Number(option('--rows') ?? process.env.BENCH_SCALE_ROWS ?? 1_000_000);
if (!Number.isInteger(ROWS) || ROWS < 4) throw new Error(`--rows: a whole number ≥ 4, got ${option('--rows')}`);
const QUEUE = flag('--queue');
const KEEP = flag('--keep');
const ROOT = resolve(import.meta.dirname, '..');

// Targets of the streaming engine.
const MAX_PEAK_MB = 300;
const FLAT_TOLERANCE = 0.15;
const FIRST_WRITE_BEFORE_PCT = 5;

/** The 5-column sheet of the whole-process benches (bench/product-rows.ts), in this run's temp dir. */
function writeSheet(dir: string, rows: number): Promise<{ file: string; mapping: string }> {
  return ensureScaleSheet(join(dir, `scale-${rows}.csv`), rows, DEMO_COMPANY_ID);
}

function freePort(): Promise<number> {
  return new Promise((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const p = (s.address() as { port: number }).port;
      s.close(() => resolve(p));
    });
  });
}

const children = new Set<ChildProcess>();
function track(child: ChildProcess): ChildProcess {
  children.add(child);
  child.once('exit', () => children.delete(child));
  return child;
}

async function sandbox(): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = track(
    spawn(process.execPath, ['bin/product-sync.mjs', 'sandbox', '--port', String(port), '--latency', '0', '--admin'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    }),
  );
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`sandbox exited (${code}) before listening`)));
    child.stdout!.on('data', (d: Buffer) => d.toString().includes('listening') && resolve());
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

/** The sheet's brands, created up front so validate has no per-row BRAND_WOULD_CREATE (the import links them). */
async function createBrands(url: string): Promise<void> {
  const pool = new Pool(url);
  try {
    for (let b = 0; b < BRANDS; b++) {
      const r = await pool.request({
        method: 'POST',
        path: '/api/brands',
        body: JSON.stringify({ companyId: DEMO_COMPANY_ID, name: `Marque ${b}` }),
        headers: { 'content-type': 'application/json', authorization: 'Bearer sandbox-token' },
      });
      const text = await r.body.text();
      if (r.statusCode >= 300) throw new Error(`brand create: ${r.statusCode} ${text}`);
    }
  } finally {
    await pool.close();
  }
}

/** What one phase measured. */
interface PhaseFigures {
  phase: string;
  engine: string;
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  /**
   * VmRSS (MB) at the first progress line at or past 25, 50, 75 and 100 % of rowsTotal read by the second pass; null:
   * never seen.
   */
  rssAtQuartersMB: (number | null)[];
  /** Seconds from the spawn to each of those marks. */
  secondsAtQuarters: (number | null)[];
  /** Max of the VmHWM samples (MB). */
  peakMB: number;
  /** When rowsTotal was first printed (the end of the first pass), seconds from the spawn. */
  firstPassSeconds: number | null;
  /** The first progress line with writes > 0: how much of the second pass was read then, and when. */
  firstWrite: { pctRead: number | null; rowsRead: number; seconds: number } | null;
  /** `writes` of the last progress line. */
  writes: number;
  counts: Record<string, number>;
  /** summary.json's exit code. */
  exitCode: number;
  progressReports: number;
}

/** The CLI as users run it (bin → dist/). */
const ENGINE = 'bin/product-sync.mjs → dist/ (src/pipeline/run/run.ts)';
const SAMPLE_MS = 200;
/** A progress line of src/commands/progress.ts (stderr not a TTY). */
const PROGRESS =
  /^\[(keys|read|push|report)\] rows read (\d+)(?:\/(\d+))? · operations sent \d+(?:\/\d+)? · writes (\d+) · errors \d+/;

/** VmRSS and VmHWM (bytes) of a process, or null once it is gone. */
function memOf(pid: number | undefined): { rss: number; hwm: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (k: string) => Number(new RegExp(`${k}:\\s+(\\d+) kB`).exec(status)?.[1] ?? NaN) * 1024;
    const rss = kb('VmRSS');
    const hwm = kb('VmHWM');
    return Number.isFinite(rss) && Number.isFinite(hwm) ? { rss, hwm } : null;
  } catch {
    return null;
  }
}

/** Peak RSS (MB) of another process so far (Linux: VmHWM), or null. */
function peakOf(pid: number | undefined): number | null {
  const m = memOf(pid);
  return m ? mb(m.hwm) : null;
}

const mb = (bytes: number) => Math.round(bytes / 1e6);

/** The summary.json of the newest run in reportDir written since `since` (ms epoch), or null. */
function newestSummary(reportDir: string, since: number): RunSummary | null {
  let best: { mtime: number; file: string } | null = null;
  for (const d of existsSync(reportDir) ? readdirSync(reportDir, { withFileTypes: true }) : []) {
    if (!d.isDirectory()) continue;
    const file = join(reportDir, d.name, 'summary.json');
    try {
      const mtime = statSync(file).mtimeMs;
      if (mtime >= since && (!best || mtime > best.mtime)) best = { mtime, file };
    } catch {
      // no summary.json: not a finished run
    }
  }
  return best ? (JSON.parse(readFileSync(best.file, 'utf8')) as RunSummary) : null;
}

/**
 * Runs one phase as users do: `node bin/product-sync.mjs validate|import <csv> --mapping <yaml>`, watched from here.
 */
async function phase(
  label: string,
  kind: 'validate' | 'import',
  sheet: { file: string; mapping: string },
  url: string,
  reportDir: string,
): Promise<PhaseFigures> {
  console.log(`${label}…`);
  const startedAt = Date.now();
  const t0 = performance.now();
  const since = () => Number(((performance.now() - t0) / 1000).toFixed(2));
  // As the image and the bin's shebang run it (bin/product-sync.mjs explains the flag).
  const child = track(
    spawn(
      process.execPath,
      ['--max-semi-space-size=8', 'bin/product-sync.mjs', kind, sheet.file, '--mapping', sheet.mapping],
      {
        cwd: ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
        env: {
          ...process.env,
          PRODUCT_API_URL: url,
          REFERENCE_API_URL: url,
          API_TOKEN: 'sandbox-token',
          REPORT_DIR: reportDir,
          REDIS_URL: '',
          LOG_LEVEL: 'warn',
        },
      },
    ),
  );
  const exited = once(child, 'exit') as Promise<[number | null, NodeJS.Signals | null]>;
  let peak = 0;
  let lastRss: number | null = null;
  const sample = () => {
    const m = memOf(child.pid);
    if (m) {
      peak = Math.max(peak, m.hwm);
      lastRss = m.rss;
    }
    return m;
  };
  sample();
  const timer = setInterval(sample, SAMPLE_MS);

  const rssAt: (number | null)[] = [null, null, null, null];
  const secondsAt: (number | null)[] = [null, null, null, null];
  let firstPass: number | null = null;
  let firstWrite: PhaseFigures['firstWrite'] = null;
  let rowsTotal: number | null = null;
  let writes = 0;
  let reports = 0;
  const onLine = (line: string) => {
    const m = PROGRESS.exec(line);
    if (!m) {
      if (line.trim()) process.stderr.write(`  ${label} stderr: ${line}\n`);
      return;
    }
    reports++;
    const [, stage, readArg, totalArg, writesArg] = m;
    const rowsRead = Number(readArg);
    writes = Number(writesArg);
    // rowsTotal comes with the second pass (stage `keys` is the first one, counting rows and keys). Validate reads the
    // sheet once and never prints a total: the sheet's rows, known here, stand for it.
    const total =
      stage === 'keys' ? undefined : totalArg !== undefined ? Number(totalArg) : kind === 'validate' ? ROWS : undefined;
    if (total === undefined) return;
    rowsTotal = total;
    if (totalArg !== undefined) firstPass ??= since();
    if (total > 0) {
      for (let q = 0; q < 4; q++) {
        if (rssAt[q] === null && rowsRead >= (total * (q + 1)) / 4) {
          const rss = sample()?.rss ?? lastRss;
          rssAt[q] = rss === null ? null : mb(rss);
          secondsAt[q] = since();
          process.stderr.write(`  ${label}: ${(q + 1) * 25} % read, ${secondsAt[q]} s, RSS ${rssAt[q] ?? '?'} MB\n`);
        }
      }
    }
    if (firstWrite === null && writes > 0) {
      firstWrite = {
        pctRead: total ? Number(((rowsRead / total) * 100).toFixed(2)) : null,
        rowsRead,
        seconds: since(),
      };
    }
  };
  let pending = '';
  child.stderr!.setEncoding('utf8').on('data', (d: string) => {
    const lines = (pending + d).split('\n');
    pending = lines.pop()!;
    for (const l of lines) onLine(l);
  });
  // The summary on stdout comes right after the run, before the process winds down: RSS then is the run's end.
  let out = '';
  let atSummary: { rss: number; seconds: number } | null = null;
  child.stdout!.setEncoding('utf8').on('data', (d: string) => {
    out += d;
    const m = atSummary ? null : sample();
    if (m) atSummary = { rss: m.rss, seconds: since() };
  });

  const [code, signal] = await exited;
  clearInterval(timer);
  const seconds = since();
  if (pending) onLine(pending);
  for (const l of out.trim().split('\n')) if (l) console.log(`  ${l}`);
  const summary = newestSummary(reportDir, startedAt - 1000);
  if (!summary)
    throw new Error(`${label}: the CLI exited with ${code ?? signal} and wrote no summary.json in ${reportDir}`);
  if (code !== summary.exitCode)
    console.log(`  ${label}: note: process exit ${code ?? signal}, summary.json exitCode ${summary.exitCode}`);
  // Progress lines come one a second: a mark reached in the run's last second (typically 100 %) gets the RSS when the
  // summary appeared on stdout (else the last sample before exit), when the summary says every row was read.
  const total = rowsTotal ?? summary.counts.rows;
  const end: { rss: number; seconds: number; what: string } | null = atSummary
    ? { ...(atSummary as { rss: number; seconds: number }), what: 'when the summary was printed' }
    : lastRss !== null
      ? { rss: lastRss, seconds, what: 'of the last sample before exit' }
      : null;
  if (summary.counts.rows === total && end) {
    for (let q = 0; q < 4; q++) {
      if (rssAt[q] !== null) continue;
      rssAt[q] = mb(end.rss);
      secondsAt[q] = end.seconds;
      console.log(`  ${label}: no progress line at ${(q + 1) * 25} %: RSS ${end.what} (${rssAt[q]} MB)`);
    }
  }
  const rows = summary.counts.rows;
  return {
    phase: kind,
    engine: ENGINE,
    rows,
    seconds,
    rowsPerSecond: Math.round(rows / seconds),
    rssAtQuartersMB: rssAt,
    secondsAtQuarters: secondsAt,
    peakMB: mb(peak),
    firstPassSeconds: firstPass,
    firstWrite,
    writes,
    counts: { ...summary.counts },
    exitCode: summary.exitCode,
    progressReports: reports,
  };
}

/**
 * The same import through the queue: a private redis-server, one worker process; prints Redis INFO memory after the
 * run.
 */
async function queueImport(dir: string, sheet: { file: string; mapping: string }, url: string): Promise<string[]> {
  const { loadConfig } = await import('../src/config.ts');
  const { importQueueClient } = await import('../src/queue/enqueue.ts');
  const redisPort = await freePort();
  const redisDir = join(dir, 'redis');
  mkdirSync(redisDir);
  const redis = track(
    spawn(
      'redis-server',
      ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', redisDir],
      { stdio: 'ignore' },
    ),
  );
  await new Promise<void>((resolve, reject) => {
    redis.once('error', (e) => reject(new Error(`cannot start redis-server: ${e.message}`)));
    const t0 = Date.now();
    const probe = () => {
      const sock = createConnection(redisPort, '127.0.0.1');
      sock.once('connect', () => {
        sock.end();
        resolve();
      });
      sock.once('error', () =>
        Date.now() - t0 > 10_000 ? reject(new Error('redis-server did not start')) : setTimeout(probe, 50),
      );
    };
    probe();
  });
  const reportDir = join(dir, 'reports-queue');
  mkdirSync(reportDir);
  const env = {
    PRODUCT_API_URL: url,
    REFERENCE_API_URL: url,
    API_TOKEN: 'sandbox-token',
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    QUEUE_PREFIX: 'bench-scale',
    REPORT_DIR: reportDir,
    LOG_LEVEL: process.env.LOG_LEVEL ?? 'warn',
  };
  const worker = track(
    spawn(
      process.execPath,
      ['--max-semi-space-size=8', 'bin/product-sync.mjs', 'worker', '--jobs-dir', join(dir, 'no-jobs')],
      { cwd: ROOT, env: { ...process.env, ...env }, stdio: ['ignore', 'pipe', 'inherit'] },
    ),
  );
  await new Promise<void>((resolve, reject) => {
    worker.once('exit', (code) => reject(new Error(`worker exited (${code}) before starting`)));
    worker.stdout!.on('data', (d: Buffer) => d.toString().includes('worker started') && resolve());
  });
  let workerPeak: number | null = null;
  const watch = setInterval(() => (workerPeak = peakOf(worker.pid) ?? workerPeak), 1000);
  const client = importQueueClient(loadConfig(env));
  const redisClient = new Redis(env.REDIS_URL);
  try {
    // A fresh owner state: the queue run creates every row again (reset, then the brands).
    const pool = new Pool(url);
    await (await pool.request({ method: 'POST', path: '/__admin/reset' })).body.text();
    await pool.close();
    await createBrands(url);
    console.log('queue import…');
    const t0 = performance.now();
    const { jobId } = await client.enqueue({
      request: { file: sheet.file, mapping: sheet.mapping },
      origin: 'cli',
      step: 'prepare',
    });
    const result = await client.wait(jobId, 4 * 3600_000);
    const seconds = (performance.now() - t0) / 1000;
    const info = await redisClient.info('memory');
    const field = (k: string) => new RegExp(`^${k}:(\\S+)`, 'm').exec(info)?.[1] ?? '?';
    workerPeak = peakOf(worker.pid) ?? workerPeak;
    return [
      `queue import: ${ROWS} rows in ${seconds.toFixed(1)} s (${Math.round(ROWS / seconds)} rows/s), counts ${JSON.stringify(result.summary.counts)}, worker peak RSS ${workerPeak ?? '?'} MB`,
      `${result.summary.counts.created === ROWS ? 'PASS' : 'FAIL'}  queue import: ${ROWS} created (${result.summary.counts.created})`,
      `redis INFO memory after the run: used_memory_peak ${field('used_memory_peak_human')} (${field('used_memory_peak')} B), used_memory ${field('used_memory_human')} (${field('used_memory')} B)`,
    ];
  } finally {
    clearInterval(watch);
    await client.close();
    redisClient.disconnect();
    worker.kill('SIGTERM');
    redis.kill('SIGTERM');
  }
}

const dir = mkdtempSync(join(tmpdir(), 'ps-bench-scale-'));
let sb: { url: string; child: ChildProcess } | undefined;
const cleanup = () => {
  for (const c of children) c.kill('SIGTERM');
  if (!KEEP) rmSync(dir, { recursive: true, force: true });
};
for (const signal of ['SIGINT', 'SIGTERM'] as const) {
  process.once(signal, () => {
    cleanup();
    process.exit(130);
  });
}

let failures = 0;
try {
  console.log(`${ROWS} rows; temp dir ${dir}${KEEP ? ' (kept)' : ''}`);
  // dist/ current before the first phase (the bin would otherwise build it inside a measured process).
  const built = spawnSync(process.execPath, ['scripts/build.mjs'], { cwd: ROOT, stdio: 'inherit' });
  if (built.status !== 0) throw new Error(`node scripts/build.mjs exited with ${built.status}`);
  const t0 = performance.now();
  const sheet = await writeSheet(dir, ROWS);
  console.log(
    `sheet: ${Math.round(statSync(sheet.file).size / 1e6)} MB, written in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  sb = await sandbox();
  await createBrands(sb.url);
  const reportDir = join(dir, 'reports');
  const phases: [string, PhaseFigures][] = [];
  phases.push(['validate', await phase('validate', 'validate', sheet, sb.url, reportDir)]);
  phases.push(['import', await phase('import', 'import', sheet, sb.url, reportDir)]);
  phases.push(['rerun (no change)', await phase('rerun (no change)', 'import', sheet, sb.url, reportDir)]);
  const sandboxPeak = peakOf(sb.child.pid);

  const flat = (f: PhaseFigures): boolean | null => {
    const [q1, , , q4] = f.rssAtQuartersMB;
    return q1 == null || q4 == null ? null : Math.abs(q4 - q1) <= FLAT_TOLERANCE * q1;
  };
  const table: string[][] = [
    [
      'phase',
      'rows',
      'seconds',
      'rows/s',
      'RSS MB at 25/50/75/100 %',
      'peak RSS MB',
      'flat?',
      'first write at (% read, s)',
      'writes',
    ],
  ];
  for (const [label, f] of phases) {
    const fl = flat(f);
    const fw = f.firstWrite ? `${f.firstWrite.pctRead ?? '?'} %, ${f.firstWrite.seconds} s` : '—';
    table.push([
      label,
      String(f.rows),
      f.seconds.toFixed(1),
      String(f.rowsPerSecond),
      f.rssAtQuartersMB.map((m) => m ?? '?').join(' / '),
      String(f.peakMB),
      fl === null ? '?' : fl ? 'yes' : 'no',
      fw,
      String(f.writes),
    ]);
  }
  const w = table[0]!.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  console.log(
    `\n${ROWS} rows, engine ${phases[0]![1].engine}, sandbox (separate process) at 0 ms latency, each phase in its own process:\n`,
  );
  for (const r of table) console.log(r.map((c, i) => (i === 0 ? c.padEnd(w[i]!) : c.padStart(w[i]!))).join('  '));
  for (const [label, f] of phases) {
    console.log(
      `  ${label}: counts ${JSON.stringify(f.counts)}, exit ${f.exitCode}, first pass ${f.firstPassSeconds ?? '?'} s, quarters at ${f.secondsAtQuarters.map((s) => s ?? '?').join(' / ')} s`,
    );
  }
  if (sandboxPeak !== null) console.log(`  sandbox peak RSS ${sandboxPeak} MB`);

  const [validate, first, rerun] = phases.map(([, f]) => f) as [PhaseFigures, PhaseFigures, PhaseFigures];
  const checks: [string, boolean][] = [
    [`validate peak RSS ${validate.peakMB} MB ≤ ${MAX_PEAK_MB} MB`, validate.peakMB <= MAX_PEAK_MB],
    [`import peak RSS ${first.peakMB} MB ≤ ${MAX_PEAK_MB} MB`, first.peakMB <= MAX_PEAK_MB],
    ...phases.map(([label, f]): [string, boolean] => [
      `${label} RSS flat (100 % within ${FLAT_TOLERANCE * 100} % of 25 %: ${f.rssAtQuartersMB[0] ?? '?'} → ${f.rssAtQuartersMB[3] ?? '?'} MB)`,
      flat(f) === true,
    ]),
    [`rerun sends 0 writes (${rerun.writes})`, rerun.writes === 0],
    [
      `import first write before ${FIRST_WRITE_BEFORE_PCT} % of the second pass (${first.firstWrite ? `${first.firstWrite.pctRead ?? '?'} %` : 'none'})`,
      first.firstWrite?.pctRead != null && first.firstWrite.pctRead < FIRST_WRITE_BEFORE_PCT,
    ],
    // Sanity of the counts: every row valid, created once, then unchanged.
    [
      `validate: ${ROWS} rows, 0 invalid (${validate.counts.rows}, ${validate.counts.invalid})`,
      validate.counts.rows === ROWS && validate.counts.invalid === 0,
    ],
    [
      `import: ${ROWS} created (${first.counts.created}), exit 0 (${first.exitCode})`,
      first.counts.created === ROWS && first.exitCode === 0,
    ],
    [
      `rerun: ${ROWS} unchanged (${rerun.counts.unchanged}), exit 0 (${rerun.exitCode})`,
      rerun.counts.unchanged === ROWS && rerun.exitCode === 0,
    ],
  ];
  console.log('');
  for (const [text, ok] of checks) {
    console.log(`${ok ? 'PASS' : 'FAIL'}  ${text}`);
    if (!ok) failures++;
  }
  if (QUEUE) {
    console.log('');
    for (const line of await queueImport(dir, sheet, sb.url)) {
      console.log(line);
      if (line.startsWith('FAIL')) failures++;
    }
  }
} catch (err) {
  failures++;
  console.log(`FAIL  ${(err as Error).stack ?? err}`);
} finally {
  cleanup();
}
process.exit(failures > 0 ? 1 : 0);
