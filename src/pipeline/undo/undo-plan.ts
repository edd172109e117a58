/**
 * What undoing one ledger line takes (pure): the item as the API holds it now against what the run sent and what it
 * replaced. A field still holding the value sent is put back; one holding the value before is already undone; any
 * other value is a conflict, and the item is left as it is (docs/undo.md).
 */
import { acceptedFields } from '../../api/schemas.ts';
import type { ManufacturedItemRecord, TradeItemRecord } from '../../api/types.ts';
import { sameCanonical } from '../sync/canonical.ts';
import type { FieldChange, LedgerLine } from './ledger.ts';

/** A field someone changed since the run: left as it is. */
export interface UndoConflict {
  item: FieldChange['item'];
  field: string;
  before: unknown;
  sent: unknown;
  now: unknown;
}

/** The undo of one ledger line. */
export interface UndoDecision {
  /** restore: writes to send (or none left, when an earlier attempt sent them); the others send nothing. */
  verdict: 'restore' | 'conflict' | 'unchanged' | 'failed';
  /** What is done, in words (rows.csv): "restore tradeItemName", "archive (created by the run)"… */
  action: string;
  conflicts: UndoConflict[];
  /** Fields to put back, by item. */
  trade: Record<string, unknown>;
  manu: Record<string, unknown>;
  /** The archive state to set, or null. */
  archive: boolean | null;
  message?: string;
  /**
   * A restore that cannot take everything back (a manufactured item the run created under an existing trade item):
   * once its writes are sent the line is `failed`, with this message.
   */
  incomplete?: string;
  /** The undo's own ledger line (what its writes replace), for a restore. */
  ledger: LedgerLine | null;
}

const TRADE_PATCH = acceptedFields('tradeItem.patch');
const TRADE_PUT = acceptedFields('tradeItem.put');
const MANU_PATCH = acceptedFields('manufacturedItem.patch');
const MANU_PUT = acceptedFields('manufacturedItem.put');

const nothing = (verdict: UndoDecision['verdict'], action: string, message?: string): UndoDecision => ({
  verdict,
  action,
  conflicts: [],
  trade: {},
  manu: {},
  archive: null,
  ledger: null,
  ...(message ? { message } : {}),
});

/** Decides the undo of `line` against the records the API holds now (undefined: not found). */
export function decideUndo(
  line: LedgerLine,
  trade: TradeItemRecord | undefined,
  manu: ManufacturedItemRecord | undefined,
): UndoDecision {
  const createdTrade = line.created.includes('tradeItem');
  if (!line.tradeItemId) return nothing('failed', 'none', 'the run did not learn the id of this item');
  // Gone (an API that deletes, or another catalogue behind the same address): nothing can be put back, whether the run
  // created it or not — the undo did not happen for it (docs/undo.md).
  if (!trade)
    return nothing(
      'failed',
      'none',
      createdTrade ? 'the item the run created is not in the API any more' : 'the item is not in the API any more',
    );
  // A manufactured item created under an existing trade item cannot be taken back (no archive, no delete): its fields
  // stay, the trade item's are still put back, and the line ends `failed` saying so.
  const manuStays = line.created.includes('manufacturedItem') && !createdTrade;
  const d: UndoDecision = { ...nothing('unchanged', ''), trade: {}, manu: {} };
  const undone: FieldChange[] = [];
  for (const f of line.fields) {
    if (manuStays && f.item === 'manufacturedItem') continue;
    const rec = f.item === 'tradeItem' ? trade : manu;
    if (!rec) return nothing('failed', 'none', `the ${f.item} is not in the API any more`);
    const now = rec[f.field] ?? null;
    if (sameCanonical(now, f.sent)) {
      // A created item keeps its fields: it is archived below.
      if (createdTrade) continue;
      (f.item === 'tradeItem' ? d.trade : d.manu)[f.field] = f.before ?? null;
      undone.push({ item: f.item, field: f.field, before: f.sent, sent: f.before ?? null });
    } else if (createdTrade || !sameCanonical(now, f.before)) {
      // An item the run created had no value before: anything but what the run sent (a field cleared too) is an edit
      // made since, and the item is not archived.
      d.conflicts.push({ item: f.item, field: f.field, before: f.before ?? null, sent: f.sent, now });
    }
  }
  if (createdTrade && !trade.archived) d.archive = true;
  else if (!createdTrade && line.archived && trade.archived === line.archived.after) d.archive = line.archived.before;
  if (d.conflicts.length > 0)
    return {
      ...nothing('conflict', 'none'),
      conflicts: d.conflicts,
      message: `changed since the run: ${d.conflicts.map((c) => c.field).join(', ')}`,
    };
  const words = [
    ...Object.keys(d.trade).map((f) => `restore ${f}`),
    ...Object.keys(d.manu).map((f) => `restore ${f}`),
    ...(d.archive === true ? [createdTrade ? 'archive (created by the run)' : 'archive'] : []),
    ...(d.archive === false ? ['unarchive'] : []),
  ];
  if (manuStays) {
    const why =
      'the run created a manufactured item under an existing trade item: the API can neither archive nor delete one';
    if (words.length === 0) return nothing('failed', 'none', why);
    d.incomplete = `puts back what it can (${words.join('; ')}); ${why}`;
  }
  if (words.length === 0) return nothing('unchanged', 'none', 'already as before the run');
  d.verdict = 'restore';
  d.action = words.join('; ');
  d.ledger = {
    row: null,
    key: line.key,
    gtin: line.gtin,
    tradeItemId: line.tradeItemId,
    manufacturedItemId: line.manufacturedItemId,
    supplierCompanyId: line.supplierCompanyId,
    outcome: 'restored',
    created: [],
    archived: d.archive === null ? null : { before: !d.archive, after: d.archive },
    fields: undone,
  };
  return d;
}

/** A write of an undo. */
export type UndoWrite =
  | { kind: 'tradeItem.patch' | 'tradeItem.put'; id: string; body: Record<string, unknown> }
  | { kind: 'manufacturedItem.patch' | 'manufacturedItem.put'; id: string; body: Record<string, unknown> }
  | { kind: 'tradeItem.unarchive'; id: string };

/**
 * The write that puts `changes` back on `record`: a PATCH when every changed field may be patched, else a PUT of the
 * record's fields a PUT accepts (`putFields`) with the changes over them.
 */
function patchOrPut(
  changes: Record<string, unknown>,
  record: Record<string, unknown>,
  patchable: ReadonlySet<string>,
  putFields: ReadonlySet<string>,
): { put: boolean; body: Record<string, unknown> } {
  const put = Object.keys(changes).some((f) => !patchable.has(f));
  return { put, body: put ? { ...pick(record, putFields), ...changes } : changes };
}

function pick(record: Record<string, unknown>, allowed: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(record)) if (allowed.has(k) && v !== undefined) out[k] = v;
  return out;
}

/**
 * The requests that put a decision's fields back, in order: PATCH with those fields only, or PUT of the record as it is
 * now with them (a field PATCH does not take, such as harmonizedCode); then an unarchive. Archives are sent per batch
 * (a collection request), after these.
 */
export function undoWrites(
  d: UndoDecision,
  trade: TradeItemRecord | undefined,
  manu: ManufacturedItemRecord | undefined,
): UndoWrite[] {
  const writes: UndoWrite[] = [];
  if (trade && Object.keys(d.trade).length > 0) {
    const { put, body } = patchOrPut(d.trade, trade, TRADE_PATCH, TRADE_PUT);
    writes.push({ kind: put ? 'tradeItem.put' : 'tradeItem.patch', id: trade.tradeItemId, body });
  }
  if (manu && Object.keys(d.manu).length > 0) {
    const { put, body } = patchOrPut(d.manu, manu, MANU_PATCH, MANU_PUT);
    writes.push({ kind: put ? 'manufacturedItem.put' : 'manufacturedItem.patch', id: manu.manufacturedItemId, body });
  }
  if (trade && d.archive === false) writes.push({ kind: 'tradeItem.unarchive', id: trade.tradeItemId });
  return writes;
}
