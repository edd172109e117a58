import { RunInterrupted } from '../errors.ts';
import { runUndo, type UndoItem, type UndoResult } from '../pipeline/undo/undo.ts';
import { commandContext, type RunFlags } from '../runtime.ts';

/** Flags of `product-sync undo` (src/cli.ts). */
export interface UndoFlags extends RunFlags {
  dryRun?: boolean;
  force?: boolean;
  waitLock?: number;
}

const DRY_WORDS: Record<UndoItem['outcome'], string> = {
  restored: 'would restore',
  conflict: 'conflict',
  unchanged: 'unchanged',
  failed: 'cannot undo',
};

const shown = (v: unknown): string => (v === null || v === undefined ? '(none)' : JSON.stringify(v));

/** One item of a dry run's plan (items already as before are not listed, only counted). */
function planLine(item: UndoItem): string | null {
  if (item.outcome === 'unchanged') return null;
  const head = `  ${DRY_WORDS[item.outcome]}: line ${item.line}, GTIN ${item.gtin ?? '?'}, trade item ${item.tradeItemId ?? '?'}`;
  if (item.outcome === 'restored') return `${head}: ${item.action}`;
  if (item.outcome === 'failed') return `${head}: ${item.message ?? ''}`;
  return [
    head,
    ...item.conflicts.map(
      (c) => `      ${c.field}: before ${shown(c.before)}, run sent ${shown(c.sent)}, now ${shown(c.now)}`,
    ),
  ].join('\n');
}

function formatUndo(r: UndoResult): string {
  const s = r.summary;
  const c = s.counts;
  const lines = [
    s.dryRun
      ? `undo of ${s.undoes} (dry run: nothing was sent)`
      : `undo ${s.runId} of run ${s.undoes}${s.forcedOver ? ` (--force over ${s.forcedOver.join(', ')})` : ''}`,
    `  items ${c.items}: ${s.dryRun ? 'to restore' : 'restored'} ${c.restored}, conflict ${c.conflict}, unchanged ${c.unchanged}, failed ${c.failed}`,
    `  requests: product ${s.requests.product}, writes ${s.writes}`,
  ];
  if (s.aborted) lines.push(`  ABORTED: ${s.aborted}`);
  if (r.dir) lines.push(`  report: ${r.dir} (conflicts: conflicts.csv)`);
  lines.push(`  exit code ${r.exitCode}`);
  return lines.join('\n');
}

/** `product-sync undo <run-id | run-dir>`: takes a finished run back (docs/undo.md). */
export async function undoCommand(target: string, flags: UndoFlags): Promise<number> {
  const cc = await commandContext(flags, process.env, { writes: !flags.dryRun });
  const controller = new AbortController();
  const onSignal = (sig: 'SIGINT' | 'SIGTERM') => {
    if (controller.signal.aborted) process.exit(new RunInterrupted(sig).exitCode);
    process.stderr.write(`product-sync: ${sig}: stopping after the writes in flight (${sig} again to quit at once)\n`);
    controller.abort(new RunInterrupted(sig));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  // OPENLINEAGE_URL: the undo's OpenLineage events at its end (loaded only then; a dry run sends none).
  const lineage = !flags.dryRun && cc.ctx.config.OPENLINEAGE_URL ? await import('../events/undo-lineage.ts') : null;
  const undone = { target, reportDir: cc.ctx.config.REPORT_DIR };
  try {
    if (flags.dryRun) process.stdout.write(`plan of the undo of ${target}:\n`);
    const result = await runUndo(
      {
        target,
        reportDir: cc.ctx.config.REPORT_DIR,
        ...(flags.dryRun ? { dryRun: true } : {}),
        ...(flags.force ? { force: true } : {}),
      },
      {
        ...cc.ctx,
        signal: controller.signal,
        ...(flags.waitLock ? { lease: { waitMs: flags.waitLock * 1000 } } : {}),
        ...(flags.dryRun
          ? {
              onItem: (item: UndoItem) => {
                const line = planLine(item);
                if (line) process.stdout.write(`${line}\n`);
              },
            }
          : {}),
      },
    );
    const records = await lineage?.deliverUndoLineage(cc.ctx.config, undone, result);
    const undelivered = (records ?? []).filter((r) => r.state !== 'delivered');
    if (undelivered.length > 0)
      process.stderr.write(`product-sync: ${undelivered.length} OpenLineage event(s) of the undo not delivered\n`);
    process.stdout.write(`${formatUndo(result)}\n`);
    return result.exitCode;
  } catch (err) {
    await lineage?.deliverUndoLineage(cc.ctx.config, undone, { failed: err });
    throw err;
  } finally {
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    await cc.close().catch(() => undefined);
  }
}
