import { commandFileWriteError } from '../fs-errors.ts';
import { checkSheetFile } from '../pipeline/read/read-sheet.ts';
import { runReconcile } from '../pipeline/reconcile.ts';
import { runImport, runValidate, type ImportRequest, type RunResult } from '../pipeline/run/run.ts';
import type { Mode } from '../pipeline/sync/plan.ts';
import { commandContext, type RunFlags } from '../runtime.ts';
import { progressReporter } from './progress.ts';
import { formatSummary } from './summary.ts';

/** Flags of import / validate / reconcile (src/cli.ts). */
export interface ImportFlags extends RunFlags {
  mapping: string;
  mode?: Mode;
  dryRun?: boolean;
  language?: string;
  sheet?: string;
  allowArchive?: boolean;
  maxArchiveRatio?: number;
  waitLock?: number;
  /** reconcile: exit 1 on differences (commander's --no-fail-on-diff sets it false). */
  failOnDiff?: boolean;
}

async function withRun(file: string, flags: ImportFlags, run: typeof runImport): Promise<number> {
  // A missing file, a directory, a FIFO or a device is refused before anything opens it (a FIFO would hang): exit 2.
  await checkSheetFile(file);
  const cc = await commandContext(flags);
  const progress = progressReporter();
  // A file the system refused after writes were sent: exit 3, and the message says the same command resumes.
  const told = (err: unknown) => commandFileWriteError(err, cc.ctx.clients.product.writes) ?? err;
  let result: RunResult;
  try {
    const req: ImportRequest = {
      file, mapping: flags.mapping, mode: flags.mode ?? 'upsert', dryRun: Boolean(flags.dryRun),
      ...(cc.owner ? { owner: cc.owner } : {}), ...(flags.reportDir ? { reportDir: flags.reportDir } : {}),
      ...(flags.language ? { language: flags.language } : {}), ...(flags.sheet ? { sheet: flags.sheet } : {}),
      ...(flags.allowArchive ? { allowArchive: true } : {}), ...(flags.failOnDiff === false ? { failOnDiff: false } : {}), ...(flags.maxArchiveRatio !== undefined ? { maxArchiveRatio: flags.maxArchiveRatio } : {}),
    };
    result = await run(req, { ...cc.ctx, onProgress: progress.update, ...(flags.waitLock ? { lease: { waitMs: flags.waitLock * 1000 } } : {}) });
  } catch (err) {
    progress.done();
    // The run's own error is the one to tell (closing may fail the same way: a full disk refuses the sandbox's store too).
    await cc.close().catch(() => undefined);
    throw told(err);
  }
  progress.done();
  process.stdout.write(`${formatSummary(result)}\n`);
  await cc.close().catch((err: unknown) => Promise.reject(told(err)));
  return result.exitCode;
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
