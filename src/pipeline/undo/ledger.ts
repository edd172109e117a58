/**
 * The undo ledger: one JSON line per item a run changed — the fields it changed with their values before (from the
 * planning pass) and the values sent, the items it created, the archive state it changed. `product-sync undo` reads it
 * (docs/undo.md); its format is in docs/reports.md.
 */
import type { ExecutedRow } from '../sync/execute.ts';
import type { ArchiveEntry, FieldChange, RowPlan } from '../sync/plan.ts';

export type { FieldChange } from '../sync/plan.ts';

/** One line of `undo.jsonl`. */
export interface LedgerLine {
  /** Sheet row (null for an archive of a `full` run, or a line of an undo). */
  row: number | null;
  key: string | null;
  gtin: string | null;
  tradeItemId: string | null;
  manufacturedItemId: string | null;
  supplierCompanyId: string | null;
  /**
   * The row's outcome: `failed` when some of its writes may have been made (the undo reads the item and puts back
   * only what still holds the value sent).
   */
  outcome: 'created' | 'updated' | 'unarchived' | 'archived' | 'restored' | 'failed';
  /** Items the row created (the undo archives them: the API cannot delete). */
  created: Array<'tradeItem' | 'manufacturedItem'>;
  /** The trade item's archive state before and after, when the run changed it. */
  archived: { before: boolean; after: boolean } | null;
  fields: FieldChange[];
}

const LEDGER_OUTCOMES: ReadonlySet<ExecutedRow['outcome']> = new Set(['created', 'updated', 'unarchived', 'failed']);

/**
 * The ledger line of a row once executed, or null when it changed nothing. `attempted`: some request of the row went
 * out (a failed row is kept then: part of it may be in the API).
 */
export function rowLedgerLine(plan: RowPlan, result: ExecutedRow, attempted: boolean): LedgerLine | null {
  const u = plan.undo;
  if (!u || plan.steps.length === 0 || !LEDGER_OUTCOMES.has(result.outcome)) return null;
  if (result.outcome === 'failed' && !attempted) return null;
  // A create whose id never came back made nothing the ledger can name.
  const created = u.created.filter((c) =>
    c === 'tradeItem' ? result.tradeItemId !== null : result.manufacturedItemId !== null,
  );
  return {
    row: plan.row,
    key: plan.key,
    gtin: u.gtin,
    tradeItemId: result.tradeItemId,
    manufacturedItemId: result.manufacturedItemId,
    supplierCompanyId: u.supplierCompanyId,
    outcome: result.outcome as LedgerLine['outcome'],
    created,
    archived: u.archivedBefore ? { before: true, after: false } : null,
    fields: u.fields,
  };
}

/** The ledger line of an archive a `full` run made. */
export function archiveLedgerLine(entry: ArchiveEntry): LedgerLine {
  return {
    row: null,
    key: entry.key,
    gtin: entry.gtin ?? (entry.key && /^\d{8,14}$/.test(entry.key) ? entry.key : null),
    tradeItemId: entry.tradeItemId,
    manufacturedItemId: null,
    supplierCompanyId: null,
    outcome: 'archived',
    created: [],
    archived: { before: false, after: true },
    fields: [],
  };
}
