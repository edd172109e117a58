/**
 * The two reads of a sheet that every run makes (imports, validate, reconcile): the key column first, then each row as
 * a draft (mapped, validated, its duplicate key marked); and the label resolver a run uses between them.
 */
import { createReferenceCache, RUN_CACHE_SETTINGS, type ReferenceCache } from '../../api/reference-cache.ts';
import { matchSheetHeaders } from '../map/headers.ts';
import { crossFieldChecker } from '../map/cross-field.ts';
import type { FieldFill } from '../map/field-fill.ts';
import { dropRefusedFields, mapRow, rowKeyReader } from '../map/map-row.ts';
import type { Mapping } from '../map/mapping.ts';
import { validateDraft } from '../map/validate.ts';
import { openSheet } from '../read/read-sheet.ts';
import { rowBatches } from '../read/row-batches.ts';
import { restoreRejectedSheet } from '../report/neutralize.ts';
import { DraftResolver } from '../resolve/resolve-drafts.ts';
import { createReferenceResolver, type ReferenceResolver } from '../resolve/reference-resolver.ts';
import type { Draft, Sheet, SheetRow } from '../types.ts';
import type { RunContext } from './run-context.ts';
import type { ImportRequest } from './run-state.ts';
import { SheetKeys } from './sheet-keys.ts';

/**
 * Opens the sheet of a request as its mapping reads it (worksheet, header row); a rejected file of ours is restored.
 */
export async function openMappedSheet(req: Pick<ImportRequest, 'file' | 'sheet'>, mapping: Mapping): Promise<Sheet> {
  const sheetName = req.sheet ?? mapping.sheet;
  return restoreRejectedSheet(
    await openSheet(req.file, { ...(sheetName ? { sheet: sheetName } : {}), headerRow: mapping.headerRow }),
  );
}

/** The first pass: every row's key (the key column only), duplicates found when it ends. */
export async function readSheetKeys(
  sheet: Sheet,
  mapping: Mapping,
  ctx: Pick<RunContext, 'signal' | 'onProgress'>,
  /** Counts the mapped fields each row fills (the scorecard's completeness), in the same pass. */
  fill?: FieldFill,
): Promise<SheetKeys> {
  const keys = new SheetKeys();
  const keyOf = rowKeyReader(sheet.headers, mapping, matchSheetHeaders(sheet, mapping), (row, text) =>
    keys.addUnreadable(row, text),
  );
  // Read whole even when the run is interrupted: every row gets its outcome (not attempted) in the report.
  for await (const batch of rowBatches(sheet.rows)) {
    for (const row of batch) {
      keys.add(row.row, keyOf(row));
      fill?.add(row);
      if (keys.rows % 5000 === 0)
        ctx.onProgress?.({ stage: 'keys', rowsRead: keys.rows, operationsSent: 0, errors: 0 });
    }
  }
  return keys.finish();
}

/**
 * The second pass's row → draft: mapped, validated, and marked when its key is on other rows too. `learn`: the keys are
 * not known yet (validate reads the sheet once, see openRun): each draft's key is added to `keys` instead, and no row
 * is marked — the run reads the sheet again if a key turns out to be on several rows.
 */
export function draftReader(sheet: Sheet, mapping: Mapping, keys: SheetKeys, learn = false): (row: SheetRow) => Draft {
  const columnIndex = matchSheetHeaders(sheet, mapping);
  const keyIdx = mapping.columns.findIndex((c) => c.field.path === (mapping.key === 'gtin' ? 'gtin' : 'tradeItemId'));
  const dupAt = { column: keyIdx >= 0 ? (sheet.headers[columnIndex[keyIdx] ?? -1] ?? null) : null, field: mapping.key };
  const crossFieldIssues = crossFieldChecker(mapping);
  return (row) => {
    const d = mapRow(row, sheet.headers, mapping, columnIndex);
    const refused = validateDraft(d);
    if (refused.length > 0) d.issues.push(...dropRefusedFields(d, refused, mapping));
    const cross = crossFieldIssues(d);
    if (cross.length > 0) d.issues.push(...cross);
    if (learn) {
      keys.add(d.row, d.key);
      return d;
    }
    const dup = keys.duplicateIssue(d.row, d.key, dupAt);
    if (dup) d.issues.push(dup);
    return d;
  };
}

/** The label resolver of a run, over the process's reference cache (or one of its own). */
export function draftResolverFor(
  ctx: RunContext,
  req: Pick<ImportRequest, 'language'>,
  mapping: Mapping,
  owner: string,
  dryRun: boolean,
): DraftResolver {
  return new DraftResolver(referenceResolverFor(ctx, req, mapping, owner, dryRun));
}

/** The reference resolver under a run's DraftResolver (the preview also asks it for the labels of the ids). */
export function referenceResolverFor(
  ctx: RunContext,
  req: Pick<ImportRequest, 'language'>,
  mapping: Mapping,
  owner: string,
  dryRun: boolean,
): ReferenceResolver {
  const cache: ReferenceCache =
    ctx.referenceCache ??
    createReferenceCache({ redis: ctx.redis ?? null, prefix: ctx.config.QUEUE_PREFIX, ...RUN_CACHE_SETTINGS });
  return createReferenceResolver({
    reference: ctx.clients.reference,
    brands: ctx.clients.product,
    cache,
    ownerCompanyId: owner,
    language: req.language ?? mapping.language,
    fallbackLanguages: req.language ? [] : mapping.fallbackLanguages,
    dryRun,
    createRetryMaxMs: ctx.config.CREATE_RETRY_MAX_MS,
  });
}
