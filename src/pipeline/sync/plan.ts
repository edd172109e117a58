import { MANUFACTURED_ITEM_FIELDS, ROUTE_B_TRADE_ITEM_FIELDS } from '../../api/fields.ts';
import { acceptedFields } from '../../api/schemas.ts';
import type { ManufacturedItemRecord, TradeItemRecord } from '../../api/types.ts';
import { manufacturedItemIdFor, tradeItemIdFor } from '../../api/uuid.ts';
import { isEmptyValue, sameCanonical } from './canonical.ts';
import { issue } from '../../issue-codes.ts';
import type { Draft, Issue, Target } from '../types.ts';

/** How a run treats rows and the items missing from the sheet (docs/sync.md "Modes"). */
export type Mode = 'upsert' | 'full' | 'create-only' | 'update-only';

/** The modes, as data. */
export const MODES: readonly Mode[] = ['upsert', 'full', 'create-only', 'update-only'];

/** One API write of a plan. `id` is the trade item or manufactured item the write addresses. */
export type Step =
  | { kind: 'tradeItem.create'; body: Record<string, unknown> }
  | { kind: 'tradeItem.patch'; id: string; body: Record<string, unknown> }
  | { kind: 'tradeItem.put'; id: string; body: Record<string, unknown> }
  | { kind: 'tradeItem.unarchive'; id: string }
  | { kind: 'manufacturedItem.createUnderTradeItem'; tradeItemId: string; body: Record<string, unknown> }
  | { kind: 'manufacturedItem.createWithTradeItem'; body: Record<string, unknown> }
  | { kind: 'manufacturedItem.patch'; id: string; body: Record<string, unknown> }
  | { kind: 'manufacturedItem.put'; id: string; body: Record<string, unknown> };

/** What the plan says about one valid row. */
export type RowAction = 'create' | 'update' | 'unarchive' | 'unchanged' | 'skipped';

/** The plan of one row: the writes to send, in order, and the outcome they lead to. */
export interface RowPlan {
  row: number;
  key: string;
  action: RowAction;
  steps: Step[];
  tradeItemId: string | null;
  manufacturedItemId: string | null;
  changedFields: string[];
  issues: Issue[];
  /** What the writes replace, for the run's undo ledger (undo/ledger.ts); absent when nothing is sent. */
  undo?: PlanUndo;
}

/** One field a plan changes: the value the API held before (null when none) and the value sent. */
export interface FieldChange {
  item: 'tradeItem' | 'manufacturedItem';
  field: string;
  before: unknown;
  sent: unknown;
}

/** What a row's writes replace: taken from the API state the plan was made against (no extra read). */
export interface PlanUndo {
  /** The item's GTIN as the API holds it (or as created): how the undo finds it again. */
  gtin: string | null;
  supplierCompanyId: string | null;
  /** The items the row creates. */
  created: Array<'tradeItem' | 'manufacturedItem'>;
  /** Set when the row unarchives the trade item. */
  archivedBefore?: boolean;
  fields: FieldChange[];
}

/** An archive of owner items missing from a `full` sheet. */
export interface ArchiveEntry {
  tradeItemId: string;
  key: string | null;
  /** The item's GTIN as the API holds it (the undo ledger's lookup key). */
  gtin?: string | null;
}

/** What a run knows of the API before planning: the owner's items by key. */
export interface ApiState {
  /** Trade items by match key (GTIN-14, or tradeItemId when the mapping's key is tradeItemId). */
  tradeItems: Map<string, TradeItemRecord>;
  /** Manufactured items by `${tradeItemId}|${supplierCompanyId}` (lower-case ids). */
  manufacturedItems: Map<string, ManufacturedItemRecord>;
  /** True when `tradeItems` holds every item of the owner (a full scan), so absence means missing. */
  complete: boolean;
}

/** Plan settings. */
export interface PlanOptions {
  target: Target;
  mode: Mode;
  ownerCompanyId: string;
  key: 'gtin' | 'tradeItemId';
}

/** The archive guard's verdict (docs/sync.md "The archive guard"). */
export interface GuardVerdict {
  active: number;
  toArchive: number;
  ratio: number;
  maxRatio: number;
  tripped: boolean;
}

const TRADE_PATCH = acceptedFields('tradeItem.patch');
const TRADE_PUT = acceptedFields('tradeItem.put');
const TRADE_CREATE = acceptedFields('tradeItem.create');
const MANU_A = acceptedFields('manufacturedItem.createUnderTradeItem');
const MANU_B = acceptedFields('manufacturedItem.createWithTradeItem');
const MANU_PATCH = acceptedFields('manufacturedItem.patch');
const MANU_PUT = acceptedFields('manufacturedItem.put');
const MANU_NAMES = new Set(MANUFACTURED_ITEM_FIELDS.map((f) => f.name).filter((n) => n !== 'createdBy'));
const ROUTE_B_TRADE = new Set(ROUTE_B_TRADE_ITEM_FIELDS);

/** Manufactured item map key. */
export function manufacturedKey(tradeItemId: string, supplierCompanyId: string): string {
  return `${tradeItemId.toLowerCase()}|${supplierCompanyId.toLowerCase()}`;
}

function pick(fields: Record<string, unknown>, allowed: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) if (allowed.has(k)) out[k] = v;
  return out;
}

/** Fields of `wanted` (with `clear` ones as null) whose value differs from `current`. */
function diff(
  wanted: Record<string, unknown>,
  clear: readonly string[],
  current: Record<string, unknown>,
  allowed: ReadonlySet<string>,
): Record<string, unknown> {
  const changes: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(wanted)) {
    if (allowed.has(k) && !sameCanonical(v, current[k])) changes[k] = v;
  }
  for (const k of clear) {
    if (allowed.has(k) && !(k in wanted) && !isEmptyValue(current[k])) changes[k] = null;
  }
  return changes;
}

/** The changes of `sent` as FieldChanges, with `before` from the record the plan was made against. */
function changesOf(
  item: FieldChange['item'],
  sent: Record<string, unknown>,
  record: Record<string, unknown> | null,
): FieldChange[] {
  return Object.entries(sent).map(([field, v]) => ({ item, field, before: record?.[field] ?? null, sent: v ?? null }));
}

function splitTradeAndManufactured(fields: Record<string, unknown>): {
  trade: Record<string, unknown>;
  manu: Record<string, unknown>;
} {
  const trade: Record<string, unknown> = {};
  const manu: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(fields)) (MANU_NAMES.has(k) ? manu : trade)[k] = v;
  return { trade, manu };
}

/**
 * The update steps that bring an existing trade item to the draft: PATCH, or PUT of the full record when harmonizedCode
 * changes.
 */
function tradeUpdateSteps(
  id: string,
  wanted: Record<string, unknown>,
  clear: readonly string[],
  record: Record<string, unknown>,
): { steps: Step[]; changed: string[]; changes: Record<string, unknown> } {
  const changes = diff(wanted, clear, record, TRADE_PUT);
  const changed = Object.keys(changes);
  if (changed.length === 0) return { steps: [], changed, changes };
  if ('harmonizedCode' in changes) {
    // PATCH does not take harmonizedCode: PUT replaces every updatable field, so send the whole record with the
    // changes.
    const body = { ...pick(record, TRADE_PUT), ...changes };
    for (const [k, v] of Object.entries(body)) if (v === undefined) delete body[k];
    return { steps: [{ kind: 'tradeItem.put', id, body }], changed, changes };
  }
  return { steps: [{ kind: 'tradeItem.patch', id, body: pick(changes, TRADE_PATCH) }], changed, changes };
}

function createOnlyWarnings(draft: Draft, record: Record<string, unknown>, fields: readonly string[]): Issue[] {
  const issues: Issue[] = [];
  for (const f of fields) {
    if (f in draft.fields && !sameCanonical(draft.fields[f], record[f]) && !isEmptyValue(record[f])) {
      issues.push(
        issue('FIELD_CREATE_ONLY', {
          row: draft.row,
          field: f,
          value: String(draft.fields[f]),
          message: `${f} can only be set when the item is created; the API keeps ${JSON.stringify(record[f])}`,
        }),
      );
    }
  }
  return issues;
}

/** Plans one valid, resolved draft against the API state (pure). */
export function planRow(draft: Draft, state: ApiState, options: PlanOptions): RowPlan {
  const key = draft.key!;
  const owner = options.ownerCompanyId;
  const existing = state.tradeItems.get(key);
  const base: RowPlan = {
    row: draft.row,
    key,
    action: 'unchanged',
    steps: [],
    tradeItemId: existing?.tradeItemId ?? null,
    manufacturedItemId: null,
    changedFields: [],
    issues: [],
  };
  const { trade, manu } =
    options.target === 'manufacturedItem' ? splitTradeAndManufactured(draft.fields) : { trade: draft.fields, manu: {} };
  const gtin = typeof draft.fields.gtin === 'string' ? draft.fields.gtin : key;

  if (!existing) {
    if (options.mode === 'update-only')
      return { ...base, action: 'skipped', issues: [skipIssue(draft, 'not in the API and the mode is update-only')] };
    if (options.key === 'tradeItemId') {
      return {
        ...base,
        action: 'skipped',
        issues: [skipIssue(draft, 'no trade item has this tradeItemId; creates need a GTIN key')],
      };
    }
    const tradeItemId = tradeItemIdFor(owner, gtin);
    if (options.target === 'tradeItem') {
      const sent = pick(trade, TRADE_CREATE);
      const body = { ...sent, ownerCompanyId: owner, tradeItemId };
      return {
        ...base,
        action: 'create',
        tradeItemId,
        steps: [{ kind: 'tradeItem.create', body }],
        changedFields: Object.keys(sent),
        undo: { gtin, supplierCompanyId: null, created: ['tradeItem'], fields: changesOf('tradeItem', sent, null) },
      };
    }
    const supplier = String(manu.supplierCompanyId);
    const manufacturedItemId = manufacturedItemIdFor(owner, gtin, supplier);
    // Route B creates both, but takes only its own field list; the rest follows as a PUT (trade) and a PATCH
    // (manufactured).
    const bodyB = { ...pick({ ...trade, ...manu }, MANU_B), ownerCompanyId: owner, tradeItemId };
    const steps: Step[] = [{ kind: 'manufacturedItem.createWithTradeItem', body: bodyB }];
    const tradeRest = Object.fromEntries(
      Object.entries(trade).filter(([k]) => !ROUTE_B_TRADE.has(k) && TRADE_PUT.has(k)),
    );
    if (Object.keys(tradeRest).length > 0) {
      const putOrPatch =
        'harmonizedCode' in tradeRest
          ? ({ kind: 'tradeItem.put', id: tradeItemId, body: pick({ ...trade, ...tradeRest }, TRADE_PUT) } as const)
          : ({ kind: 'tradeItem.patch', id: tradeItemId, body: pick(tradeRest, TRADE_PATCH) } as const);
      steps.push(putOrPatch);
    }
    const manuRest = Object.fromEntries(Object.entries(manu).filter(([k]) => !MANU_B.has(k) && MANU_PATCH.has(k)));
    if (Object.keys(manuRest).length > 0)
      steps.push({ kind: 'manufacturedItem.patch', id: manufacturedItemId, body: manuRest });
    return {
      ...base,
      action: 'create',
      tradeItemId,
      manufacturedItemId,
      steps,
      changedFields: Object.keys(draft.fields),
      undo: {
        gtin,
        supplierCompanyId: supplier,
        created: ['tradeItem', 'manufacturedItem'],
        fields: [...changesOf('tradeItem', trade, null), ...changesOf('manufacturedItem', manu, null)],
      },
    };
  }

  if (options.mode === 'create-only')
    return { ...base, action: 'skipped', issues: [skipIssue(draft, 'already in the API and the mode is create-only')] };
  const steps: Step[] = [];
  let action: RowAction = 'unchanged';
  if (existing.archived) {
    steps.push({ kind: 'tradeItem.unarchive', id: existing.tradeItemId });
    action = 'unarchive';
  }
  const tradeUpdate = tradeUpdateSteps(
    existing.tradeItemId,
    trade,
    draft.clear.filter((f) => !MANU_NAMES.has(f)),
    existing,
  );
  steps.push(...tradeUpdate.steps);
  const changed = [...tradeUpdate.changed];
  const undo: PlanUndo = {
    gtin: typeof existing.gtin === 'string' ? existing.gtin : gtin,
    supplierCompanyId: null,
    created: [],
    ...(existing.archived ? { archivedBefore: true } : {}),
    fields: changesOf('tradeItem', tradeUpdate.changes, existing),
  };
  const issues = createOnlyWarnings(draft, existing, ['multipack', 'productLanguage']);
  let manufacturedItemId: string | null = null;

  if (options.target === 'manufacturedItem') {
    const supplier = String(manu.supplierCompanyId);
    const current = state.manufacturedItems.get(manufacturedKey(existing.tradeItemId, supplier));
    if (!current) {
      manufacturedItemId = manufacturedItemIdFor(owner, gtin, supplier);
      steps.push({
        kind: 'manufacturedItem.createUnderTradeItem',
        tradeItemId: existing.tradeItemId,
        body: { ...pick(manu, MANU_A), manufacturedItemId },
      });
      changed.push(...Object.keys(pick(manu, MANU_A)));
      undo.supplierCompanyId = supplier;
      undo.created.push('manufacturedItem');
      undo.fields.push(...changesOf('manufacturedItem', pick(manu, MANU_A), null));
    } else {
      manufacturedItemId = current.manufacturedItemId;
      const changes = diff(
        manu,
        draft.clear.filter((f) => MANU_NAMES.has(f)),
        current,
        MANU_PUT,
      );
      if (Object.keys(changes).length > 0) {
        steps.push({ kind: 'manufacturedItem.patch', id: current.manufacturedItemId, body: pick(changes, MANU_PATCH) });
        changed.push(...Object.keys(changes));
        undo.supplierCompanyId = supplier;
        undo.fields.push(...changesOf('manufacturedItem', pick(changes, MANU_PATCH), current));
      }
    }
  }
  if (action === 'unchanged' && changed.length > 0) action = 'update';
  return {
    ...base,
    action,
    steps,
    manufacturedItemId,
    changedFields: changed,
    issues,
    ...(steps.length > 0 ? { undo } : {}),
  };
}

function skipIssue(draft: Draft, why: string): Issue {
  return issue('ROW_SKIPPED', { row: draft.row, value: draft.key, message: `skipped: ${why}` });
}

/** The archive guard: refuses a plan archiving more than `maxRatio` of the owner's `active` items unless allowed. */
export function archiveGuard(active: number, toArchive: number, maxRatio: number, allow: boolean): GuardVerdict {
  const ratio = active === 0 ? 0 : toArchive / active;
  return { active, toArchive, ratio, maxRatio, tripped: !allow && toArchive > 0 && ratio > maxRatio };
}

/** What a create refused as a duplicate becomes when the item found does not hold what the create sent. */
export interface ConflictUpdate {
  /** The updates that bring the item found to what the create sent (empty: it holds it already, it is ours). */
  steps: Step[];
  changed: string[];
  /** The fields changed, with the values the item held (the undo ledger puts them back). */
  fields: FieldChange[];
}

const CREATE_IDS = new Set(['ownerCompanyId', 'tradeItemId', 'manufacturedItemId']);

/**
 * A create answered 409 (the id or key is taken): compares what it sent with the items found (`trade`, `manu`) and
 * plans the updates of the fields that differ, as a plan against those items would (pure).
 */
export function updateAfterConflict(
  step: Step,
  trade: Record<string, unknown> | null,
  manu: Record<string, unknown> | null,
): ConflictUpdate {
  const out: ConflictUpdate = { steps: [], changed: [], fields: [] };
  if (!('body' in step)) return out;
  const sent = Object.fromEntries(Object.entries(step.body).filter(([k]) => !CREATE_IDS.has(k)));
  const { trade: tradeSent, manu: manuSent } =
    step.kind === 'tradeItem.create' ? { trade: sent, manu: {} } : splitTradeAndManufactured(sent);
  if (trade && step.kind !== 'manufacturedItem.createUnderTradeItem') {
    const u = tradeUpdateSteps(String(trade.tradeItemId), tradeSent, [], trade);
    out.steps.push(...u.steps);
    out.changed.push(...u.changed);
    out.fields.push(...changesOf('tradeItem', u.changes, trade));
  }
  if (manu && step.kind !== 'tradeItem.create') {
    const changes = pick(diff(manuSent, [], manu, MANU_PUT), MANU_PATCH);
    if (Object.keys(changes).length > 0) {
      out.steps.push({ kind: 'manufacturedItem.patch', id: String(manu.manufacturedItemId), body: changes });
      out.changed.push(...Object.keys(changes));
      out.fields.push(...changesOf('manufacturedItem', changes, manu));
    }
  }
  return out;
}
