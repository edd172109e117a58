import { resolve } from 'node:path';
import { loadConfig, type Config } from '../config.ts';
import { writingTo } from '../fs-errors.ts';
import { makeDir } from '../make-dir.ts';
import { ensureReportDir } from '../runtime.ts';
import { logger } from '../logger.ts';
import { checkInput } from '../pipeline/run/input-gate.ts';
import type { Mode } from '../pipeline/sync/plan.ts';
import { importQueueClient } from '../queue/enqueue.ts';
import { loadFeeds } from '../queue/feeds.ts';
import { openFeedsQueue } from '../queue/queues.ts';
import { startWorkers } from '../queue/workers.ts';
import { formatSummary } from './summary.ts';

function config(): Config {
  return loadConfig(process.env);
}

/** Resolves on the first SIGTERM or SIGINT. */
function stopSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (s: string) => resolve(s);
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  });
}

/** `product-sync worker`: BullMQ workers until SIGTERM (then finishes the chunk in hand, closes, exits 0). */
export async function workerCommand(opts: { concurrency?: number; jobsDir: string }): Promise<number> {
  const cfg = config();
  // Its runs write there: one that cannot be written is refused now (exit 2), not by every job.
  await ensureReportDir(cfg.REPORT_DIR);
  // Listening before the workers start: a SIGTERM while they start (jobs may already be taken) still closes them cleanly.
  const stopping = stopSignal();
  const set = await startWorkers(cfg, { jobsDir: opts.jobsDir, importConcurrency: opts.concurrency ?? cfg.WORKER_CONCURRENCY, lockDurationMs: cfg.WORKER_LOCK_MS });
  process.stdout.write(`worker started (feeds: ${set.feeds.map((f) => f.id).join(', ') || 'none'})\n`);
  const signal = await stopping;
  logger.info({ signal }, 'worker stopping: finishing the jobs in hand');
  await set.close();
  return 0;
}

/** `product-sync enqueue`: queues an import, prints its id; `--wait` prints the summary and exits with the run's code. */
export async function enqueueCommand(file: string, opts: { mapping: string; owner?: string; mode?: Mode; dryRun?: boolean; wait?: boolean; waitLock?: number }): Promise<number> {
  // What the inline import would refuse before sending anything is refused here too, before anything is queued (exit 2,
  // the import's message): the input gate, before Redis is even reached.
  await checkInput({ file, mapping: opts.mapping });
  const client = importQueueClient(config());
  try {
    const { jobId, existed } = await client.enqueue({
      request: { file, mapping: opts.mapping, mode: opts.mode ?? 'upsert', dryRun: Boolean(opts.dryRun), ...(opts.owner ? { owner: opts.owner } : {}) },
      origin: 'cli',
      step: 'prepare',
      ...(opts.waitLock !== undefined ? { waitLockSeconds: opts.waitLock } : {}),
    });
    process.stdout.write(`${jobId}${existed ? ' (already queued: the same sheet, mapping and owner run once)' : ''}\n`);
    if (!opts.wait) return 0;
    const result = await client.wait(jobId);
    process.stdout.write(`${formatSummary(result as never)}\n`);
    return result.exitCode;
  } finally {
    await client.close();
  }
}

/** `product-sync feeds list`: each feed's schedule, next run and last run. */
export async function feedsListCommand(opts: { jobsDir: string }): Promise<number> {
  const cfg = config();
  const feeds = await loadFeeds(opts.jobsDir);
  const queue = openFeedsQueue(cfg);
  try {
    const schedulers = await queue.schedulers();
    for (const f of feeds) {
      const s = schedulers.get(f.id);
      const last = await queue.last(f.id);
      const next = s?.next ? new Date(s.next).toISOString() : 'not scheduled (start a worker)';
      const lastRun = last.finishedAt ? `${last.finishedAt} run ${last.runId} exit ${last.exitCode} (${last.file})` : 'never';
      const lastTick = last.tickAt ? `${last.tickAt} ${last.tick ?? ''}` : 'never';
      process.stdout.write(`${f.id}\n  schedule ${f.schedule} (${f.timezone})  source ${f.source.dir}/${f.source.pattern}  mapping ${f.mapping}  mode ${f.mode}\n  next ${next}\n  last run ${lastRun}\n  last tick ${lastTick}\n`);
    }
    if (feeds.length === 0) process.stdout.write(`no feeds in ${opts.jobsDir}/\n`);
    return 0;
  } finally {
    await queue.close();
  }
}

/** `product-sync feeds run <name>`: one tick now (a worker picks it up). */
export async function feedsRunCommand(name: string, opts: { jobsDir: string }): Promise<number> {
  const cfg = config();
  const feeds = await loadFeeds(opts.jobsDir);
  if (!feeds.some((f) => f.id === name)) {
    process.stderr.write(`product-sync: no feed "${name}" in ${opts.jobsDir}/ (have: ${feeds.map((f) => f.id).join(', ') || 'none'})\n`);
    return 2;
  }
  const queue = openFeedsQueue(cfg);
  try {
    const jobId = await queue.tick(name);
    process.stdout.write(`feed ${name}: tick queued (${jobId})\n`);
    return 0;
  } finally {
    await queue.close();
  }
}

/** `product-sync serve`: the web console until SIGTERM. */
export async function serveCommand(opts: { port: number; host: string }): Promise<number> {
  const { buildConsole } = await import('../server/app.ts');
  const cfg = config();
  // Made here, with a plain refusal (exit 2), before the console makes them with Node's mkdir -p, which never returns under /proc.
  await ensureReportDir(cfg.REPORT_DIR);
  await writingTo('cannot create the upload directory given by UPLOAD_DIR', resolve(cfg.UPLOAD_DIR), () => makeDir(cfg.UPLOAD_DIR));
  const basic = cfg.CONSOLE_USER && cfg.CONSOLE_PASSWORD ? { user: cfg.CONSOLE_USER, password: cfg.CONSOLE_PASSWORD } : undefined;
  const stopping = stopSignal();
  const app = await buildConsole({ config: cfg, ...(cfg.CONSOLE_TOKEN ? { token: cfg.CONSOLE_TOKEN } : {}), ...(basic ? { basic } : {}) });
  await app.listen({ port: opts.port, host: opts.host });
  process.stdout.write(`console on http://${opts.host}:${opts.port}/ (queues at /admin/queues)\n`);
  await stopping;
  await app.close();
  return 0;
}
