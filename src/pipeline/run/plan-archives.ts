/**
 * `full` mode's archives: the owner's active items of the scope that the sheet does not name, in archive chunks, and
 * the archive guard (docs/sync.md).
 */
import { ProductSyncError } from '../../errors.ts';
import { type Mapping } from '../map/mapping.ts';
import { type ApiStateSource } from '../sync/api-state.ts';
import { archiveGuard, type ArchiveEntry } from '../sync/plan.ts';
import { describeScope } from '../scope.ts';
import { Withholder } from '../withheld.ts';
import type { Issue } from '../types.ts';
import { notAttemptedIssue, settleArchiveChunk, writeChunk } from './chunks.ts';
import { abortOf, type ImportRequest, type RunState } from './run-state.ts';
import type { SheetKeys } from './sheet-keys.ts';
import type { RunContext } from './run-context.ts';
import type { RunStop } from '../sync/execute.ts';

const ARCHIVE_CHUNK = 500;

/**
 * `full` mode: the owner's active items missing from the sheet, in archive chunks, the archive guard (docs/sync.md).
 * A tripped guard stops the run before anything is sent; a dry run reports the archives as planned. A resumed run keeps
 * the archive chunks its first attempt planned (the catalogue has changed since, by this very run).
 */
export async function planArchives(
  state: RunState,
  previous: RunState | undefined,
  api: ApiStateSource,
  keys: SheetKeys,
  req: ImportRequest,
  workDir: string,
  share: { stop: RunStop },
  mapping: Mapping,
  ctx: RunContext,
): Promise<void> {
  if (previous?.archiveChunks !== undefined && previous.rowChunks === state.rowChunks && previous.apiState) {
    state.archiveChunks = previous.archiveChunks;
    if (previous.scope) state.scope = previous.scope;
    if (previous.withheld) state.withheld = previous.withheld;
    if (previous.aborted) state.aborted = previous.aborted;
    if (state.aborted) share.stop.reason ??= new ProductSyncError('PS_ERR_ARCHIVE_GUARD', state.aborted.message);
    return;
  }
  let batch: ArchiveEntry[] = [];
  let total = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    await writeChunk(workDir, 'archives', state.archiveChunks++, batch);
    batch = [];
  };
  // Rows whose key could not be read are in the sheet all the same: the items they could stand for are withheld.
  const lifted = Boolean(req.archiveDespiteInvalidKeys);
  const withholder = new Withholder(keys.unreadable, keys.unreadableRows, mapping.key, lifted);
  if (lifted && !withholder.none)
    ctx.logger?.warn(
      { runId: state.runId, rows: keys.unreadableRows },
      `--archive-despite-invalid-keys: ${keys.unreadableRows} row(s) with unreadable keys do not withhold archives`,
    );
  for await (const e of api.missingFrom((k) => keys.has(k))) {
    const gtin = e.record.gtin ?? null;
    if (withholder.withhold({ tradeItemId: e.tradeItemId, key: e.key, gtin })) continue;
    batch.push({ tradeItemId: e.tradeItemId, key: e.key, gtin });
    total++;
    if (batch.length >= ARCHIVE_CHUNK) await flush();
  }
  await flush();
  const withheld = withholder.summary();
  if (withheld) state.withheld = withheld;
  const spec = req.scope ?? mapping.scope;
  if (spec !== undefined)
    state.scope = {
      spec,
      text: describeScope(spec),
      items: api.catalog.scope?.items ?? api.catalog.total,
      active: api.catalog.active,
    };
  const verdict = archiveGuard(api.catalog.active ?? 0, total, req.maxArchiveRatio ?? 0.1, Boolean(req.allowArchive));
  const settle = async (outcome: 'archived' | 'not_attempted', issues: Issue[]) => {
    for (let i = 0; i < state.archiveChunks; i++) await settleArchiveChunk(workDir, i, outcome, issues);
  };
  if (verdict.tripped) {
    const err = new ProductSyncError(
      'PS_ERR_ARCHIVE_GUARD',
      `archive guard tripped: the plan archives ${verdict.toArchive} of ${verdict.active} active items of the scope (${state.scope?.text ?? 'the owner'}) (${(verdict.ratio * 100).toFixed(1)} % > ${(verdict.maxRatio * 100).toFixed(1)} %); nothing was sent. Check the sheet is complete, or allow it with --allow-archive / --max-archive-ratio [PS_ERR_ARCHIVE_GUARD]`,
    );
    share.stop.reason ??= err;
    state.aborted = abortOf(err);
    await settle('not_attempted', [notAttemptedIssue(0, err.message)]);
  } else if (state.request.dryRun) {
    await settle('archived', []);
  }
}
