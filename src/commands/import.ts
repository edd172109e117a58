import { commandFileWriteError } from '../fs-errors.ts';
import { checkSheetFile } from '../pipeline/read/read-sheet.ts';
import { runReconcile } from '../pipeline/run/reconcile.ts';
import { runImport, runValidate, type ImportRequest, type RunResult } from '../pipeline/run/run.ts';
import type { Mode } from '../pipeline/sync/plan.ts';
import { RunInterrupted } from '../errors.ts';
import { loadConfig } from '../config.ts';
import { commandContext, type CommandContext, type RunFlags } from '../runtime.ts';
import { stderrLiveLine } from '../terminal.ts';
import { progressReporter } from './progress.ts';
import { formatSummary } from './summary.ts';
import { traced } from '../tracing.ts';

/** Flags of import / validate / reconcile (src/cli.ts). */
export interface ImportFlags extends RunFlags {
  mapping: string;
  mode?: Mode;
  dryRun?: boolean;
  language?: string;
  sheet?: string;
  allowArchive?: boolean;
  maxArchiveRatio?: number;
  archiveDespiteInvalidKeys?: boolean;
  /** Apply the run even over its mapping's quality gate. */
  waiveGate?: boolean;
  waitLock?: number;
  /** reconcile: exit 1 on differences (commander's --no-fail-on-diff sets it false); invalid rows alone are 4. */
  failOnDiff?: boolean;
}

async function withRun(file: string, flags: ImportFlags, run: typeof runImport): Promise<number> {
  // A missing file, a directory, a FIFO or a device is refused before anything opens it (a FIFO would hang): exit 2.
  await checkSheetFile(file);
  // An import takes the owner lease: with REDIS_URL set, in Redis, which must answer.
  const cc = await commandContext(flags, process.env, { writes: run === runImport });
  // Webhook endpoints of an import's events (docs/operations.md): a bad WEBHOOKS_FILE is exit 2, before anything is
  // sent.
  // Loaded only when endpoints are configured: the delivery's HTTP client is no part of a run's start-up otherwise.
  // OPENLINEAGE_URL: every run (import, validate, reconcile) tells its OpenLineage events at its end.
  const kind = run === runImport ? 'import' : run === runValidate ? 'validate' : 'reconcile';
  const events =
    (run === runImport && (cc.ctx.config.WEBHOOK_URL || cc.ctx.config.WEBHOOKS_FILE)) || cc.ctx.config.OPENLINEAGE_URL
      ? await import('../events/inline-run.ts')
      : null;
  const endpoints = events
    ? await events.loadEndpoints(cc.ctx.config).catch(async (err: unknown) => {
        await cc.close().catch(() => undefined);
        throw err;
      })
    : [];
  // METRICS_PORT: a long inline run serves its own /metrics while it runs (loaded only then: prom-client is no part
  // of a run's start-up otherwise).
  const metrics = process.env.METRICS_PORT?.trim()
    ? await (
        await import('../server/metrics-server.ts')
      )
        .serveMetrics(loadConfig(process.env), { fleet: false })
        .catch(async (err: unknown) => {
          await cc.close().catch(() => undefined);
          throw err;
        })
    : undefined;
  const progress = progressReporter();
  const stop = onInterrupt(cc);
  // A file the system refused after writes were sent: exit 3, and the message says the same command resumes.
  const told = (err: unknown) => commandFileWriteError(err, cc.ctx.clients.product.writes) ?? err;
  let result: RunResult;
  try {
    const req: ImportRequest = {
      file,
      mapping: flags.mapping,
      mode: flags.mode ?? 'upsert',
      dryRun: Boolean(flags.dryRun),
      ...(cc.owner ? { owner: cc.owner } : {}),
      ...(flags.reportDir ? { reportDir: flags.reportDir } : {}),
      ...(flags.language ? { language: flags.language } : {}),
      ...(flags.sheet ? { sheet: flags.sheet } : {}),
      ...(flags.allowArchive ? { allowArchive: true } : {}),
      ...(flags.archiveDespiteInvalidKeys ? { archiveDespiteInvalidKeys: true } : {}),
      ...(flags.waiveGate ? { waiveGate: true } : {}),
      ...(flags.failOnDiff === false ? { failOnDiff: false } : {}),
      ...(flags.maxArchiveRatio !== undefined ? { maxArchiveRatio: flags.maxArchiveRatio } : {}),
    };
    // Tracing on: the run is one trace, this its root span.
    result = await traced(`product-sync ${kind}`, { file, mapping: flags.mapping }, () =>
      run(req, {
        ...cc.ctx,
        signal: stop.signal,
        onProgress: progress.update,
        ...(flags.waitLock ? { lease: { waitMs: flags.waitLock * 1000 } } : {}),
      }),
    );
  } catch (err) {
    progress.done();
    stop.dispose();
    await events
      ?.deliverInlineRun(cc.ctx.config, endpoints, { failed: err, file, mapping: flags.mapping }, kind)
      .catch(() => undefined);
    await metrics?.close();
    // The run's own error is the one to tell (closing may fail the same way: a full disk refuses the sandbox's store
    // too).
    await cc.close().catch(() => undefined);
    throw told(err);
  }
  progress.done();
  stop.dispose();
  // The run's events, at its end (no queue keeps them): summary.json lists how each went.
  const records =
    (await events?.deliverInlineRun(cc.ctx.config, endpoints, { result, mapping: flags.mapping }, kind)) ?? [];
  const undelivered = records.filter((r) => r.state !== 'delivered');
  if (undelivered.length > 0)
    process.stderr.write(
      `product-sync: ${undelivered.length} webhook event(s) not delivered: see "events" in ${result.reportDir}/summary.json\n`,
    );
  metrics?.own.recordRun(result.summary);
  await metrics?.close();
  process.stdout.write(`${formatSummary(result)}\n`);
  await cc.close().catch((err: unknown) => Promise.reject(told(err)));
  return result.exitCode;
}

// How long requests in flight may take to settle after SIGINT / SIGTERM before they are cut.
const SETTLE_MS = 10_000;

/**
 * SIGINT / SIGTERM during a run: the first stops it — nothing more is sent, what is in flight settles (cut after
 * SETTLE_MS), the report is written with `aborted: "interrupted"`, and the command exits 130 / 143; a second signal
 * exits at once (the journal is written before and after each request, so the same command resumes).
 */
function onInterrupt(cc: CommandContext): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  let cut: NodeJS.Timeout | undefined;
  const handler = (sig: 'SIGINT' | 'SIGTERM') => {
    const reason = new RunInterrupted(sig);
    if (controller.signal.aborted) {
      // The progress line stays as it was, the message below it: the process ends here.
      stderrLiveLine().end();
      stderrLiveLine().above(`product-sync: ${sig} again: exiting now (the same command resumes the run)\n`);
      process.exit(reason.exitCode);
    }
    // Above the progress line, which goes on showing the run settle.
    stderrLiveLine().above(
      `product-sync: ${sig}: stopping — nothing more is sent; requests in flight settle, then the report is written (${sig} again to quit at once)\n`,
    );
    controller.abort(reason);
    cut = setTimeout(() => void cc.ctx.clients.close(), SETTLE_MS);
    cut.unref();
  };
  process.on('SIGINT', handler);
  process.on('SIGTERM', handler);
  return {
    signal: controller.signal,
    dispose() {
      clearTimeout(cut);
      process.removeListener('SIGINT', handler);
      process.removeListener('SIGTERM', handler);
    },
  };
}

/** `product-sync import`: the whole pipeline inline. */
export function importCommand(file: string, flags: ImportFlags): Promise<number> {
  return withRun(file, flags, runImport);
}

/** `product-sync validate`: read, map, validate, resolve; writes the issues report only. */
export function validateCommand(file: string, flags: ImportFlags): Promise<number> {
  return withRun(file, flags, runValidate);
}

/** `product-sync reconcile`: sheet vs API field by field; writes nothing to the API. */
export function reconcileCommand(file: string, flags: ImportFlags): Promise<number> {
  return withRun(file, flags, runReconcile);
}
