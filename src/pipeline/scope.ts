/**
 * The scope of a mapping (or feed): which part of the owner's catalogue its sheets cover (docs/scopes.md). One owner's
 * catalogue is fed by many suppliers; full mode, reconcile and the archive guard act within the scope only, and a row
 * outside it is refused (SCOPE_OUTSIDE).
 *
 * Kinds, as data (SCOPE_KINDS): each says how the slice is read from the API (the search filter the spec has, or none:
 * filtered on our side) and what of a record and of a row decides membership. Several keys: an item must match each
 * (a list: any of its entries). `owner`: the whole catalogue, said on purpose.
 */
import * as z from 'zod';
import { ProductSyncError } from '../errors.ts';
import { issue, type Issue } from '../issue-codes.ts';
import { gtinKey } from './gtin.ts';
import type { Draft } from './types.ts';

/** A scope as written in a mapping or a feed file. */
export type ScopeSpec = 'owner' | { brands?: string[]; suppliers?: string[]; gtinPrefixes?: string[] };

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const SCOPE_HELP =
  'scope is owner (the whole catalogue, on purpose) or an object with brands, suppliers and/or gtinPrefixes';

/** The scope's shape in mapping and feed files (the JSON Schema is generated from it). */
export const scopeSchema = z
  .union(
    [
      z.literal('owner'),
      z
        .strictObject({
          /** Brand names (resolved like the brand column) or brand ids. */
          brands: z
            .array(z.union([z.string().trim().min(1, 'must not be empty'), z.number().transform(String)]))
            .min(1, 'names no brand')
            .optional(),
          /** supplierCompanyId of the manufactured items. */
          suppliers: z
            .array(z.string().regex(UUID, 'a supplier is a supplierCompanyId (uuid)'))
            .min(1, 'names no supplier')
            .optional(),
          /** GS1 company prefixes: leading digits of the GTIN-13 form. */
          gtinPrefixes: z
            .array(
              z.union([
                z.string().regex(/^\d{1,13}$/, 'a GTIN prefix is 1 to 13 digits (quote it to keep leading zeros)'),
                z.number().transform(String),
              ]),
            )
            .min(1, 'names no prefix')
            .optional(),
        })
        .refine((s) => s.brands || s.suppliers || s.gtinPrefixes, 'a scope names brands, suppliers or gtinPrefixes'),
    ],
    { error: (iss) => (iss.code === 'invalid_union' ? SCOPE_HELP : undefined) },
  )
  .describe(
    "Which part of the owner's catalogue the sheets cover: brands (names or ids), suppliers (supplierCompanyId), gtinPrefixes (GTIN-13 leading digits), several keys = all must match; or owner (the whole catalogue, on purpose). Full mode and reconcile need one (docs/scopes.md).",
  );

/** The kinds of scope, as data: what each filters by, on the API (where its spec has the filter) or on our side. */
export const SCOPE_KINDS = {
  brands: { field: 'brandId', apiFilter: 'BrandId (GET /api/tradeitems)' },
  suppliers: { field: 'supplierCompanyId', apiFilter: 'SupplierCompanyId (GET /api/manufactureditems)' },
  gtinPrefixes: { field: 'gtin', apiFilter: null },
} as const;

export type ScopeKind = keyof typeof SCOPE_KINDS;

/** The one line that says how to add a scope (full mode and reconcile refuse to start without one). */
export function scopeMissingError(what: 'full mode' | 'reconcile', mappingFile: string): ProductSyncError {
  return new ProductSyncError(
    'PS_ERR_SCOPE_MISSING',
    `${what} needs a scope: add "scope: { brands: [...] }" (or suppliers:, gtinPrefixes:) to ${mappingFile} or the feed, or "scope: owner" for the whole catalogue on purpose (docs/scopes.md); nothing was read or sent`,
  );
}

/** A scope in words (console, CLI, events). */
export function describeScope(spec: ScopeSpec): string {
  if (spec === 'owner') return "the owner's whole catalogue";
  const parts: string[] = [];
  if (spec.brands) parts.push(`brands ${spec.brands.join(', ')}`);
  if (spec.suppliers) parts.push(`suppliers ${spec.suppliers.join(', ')}`);
  if (spec.gtinPrefixes) parts.push(`GTIN prefixes ${spec.gtinPrefixes.join(', ')}`);
  return parts.join(' and ');
}

/** A scope ready to test records and rows: brand names resolved to ids (ids kept as given). */
export interface ResolvedScope {
  spec: ScopeSpec;
  /** Lower-case brand ids (null: no brand condition). */
  brandIds: ReadonlySet<string> | null;
  /** The brand names of the spec, as the resolver compares labels (a brand created by this run matches by name). */
  brandNames: ReadonlySet<string> | null;
  suppliers: ReadonlySet<string> | null;
  gtinPrefixes: readonly string[] | null;
  /** How brand labels compare (the brand resolver's own key). */
  nameKey: (name: string) => string;
}

/**
 * Resolves a scope against the owner's brands (archived included): each brand entry is an id (uuid) or a name (a name
 * no brand has yet matches its rows by name); `nameKey` is how brand labels compare (the brand resolver's).
 */
export function resolveScope(
  spec: ScopeSpec,
  brands: readonly { brandId: string; name: string }[],
  nameKey: (name: string) => string,
): ResolvedScope {
  if (spec === 'owner') return { spec, brandIds: null, brandNames: null, suppliers: null, gtinPrefixes: null, nameKey };
  let brandIds: Set<string> | null = null;
  let brandNames: Set<string> | null = null;
  if (spec.brands) {
    brandIds = new Set();
    brandNames = new Set();
    for (const b of spec.brands) {
      const id = UUID.test(b) ? b.toLowerCase() : null;
      if (id === null) brandNames.add(nameKey(b));
      else brandIds.add(id);
      for (const r of brands) {
        if (id !== null && r.brandId.toLowerCase() === id) brandNames.add(nameKey(r.name));
        if (id === null && nameKey(r.name) === nameKey(b)) brandIds.add(r.brandId.toLowerCase());
      }
    }
  }
  return {
    spec,
    brandIds,
    brandNames,
    suppliers: spec.suppliers ? new Set(spec.suppliers.map((s) => s.toLowerCase())) : null,
    gtinPrefixes: spec.gtinPrefixes ?? null,
    nameKey,
  };
}

/** True when the scope is the whole catalogue. */
export function isWholeOwner(scope: ResolvedScope): boolean {
  return scope.spec === 'owner';
}

/** The GTIN-13 form of a GTIN (its GTIN-14 without the leading 0; a GTIN-14 with an indicator digit as it is). */
function gtin13(gtin: string): string | null {
  const g = gtinKey(gtin);
  if (g === null) return null;
  return g.startsWith('0') ? g.slice(1) : g;
}

function prefixMatch(gtin: unknown, prefixes: readonly string[]): boolean {
  if (typeof gtin !== 'string') return false;
  const g13 = gtin13(gtin);
  if (g13 === null) return false;
  return prefixes.some((p) => g13.startsWith(p) || gtinKey(gtin)!.startsWith(p));
}

/**
 * Does an API trade item belong to the scope? `supplierItems`: the trade item ids (lower case) having a manufactured
 * item of a scope supplier (read with the SupplierCompanyId filter), needed when the scope names suppliers.
 */
export function recordInScope(
  record: { tradeItemId: string; brandId?: unknown; gtin?: unknown },
  scope: ResolvedScope,
  supplierItems: ReadonlySet<string> | null,
): boolean {
  if (scope.spec === 'owner') return true;
  if (scope.brandIds) {
    const b = typeof record.brandId === 'string' ? record.brandId.toLowerCase() : null;
    if (b === null || !scope.brandIds.has(b)) return false;
  }
  if (scope.suppliers && !supplierItems?.has(record.tradeItemId.toLowerCase())) return false;
  if (scope.gtinPrefixes && !prefixMatch(record.gtin, scope.gtinPrefixes)) return false;
  return true;
}

/**
 * The SCOPE_OUTSIDE issue of a row the scope does not cover (a brand, a supplier or a GTIN outside it), pointing at the
 * cell that puts it outside; undefined when the row is inside. A row whose cell is empty is not refused: nothing says
 * it is another supplier's (docs/scopes.md).
 */
export function scopeIssue(draft: Draft, scope: ResolvedScope): Issue | undefined {
  if (scope.spec === 'owner') return undefined;
  const origins = draft.origins ?? {};
  const at = (field: string, value: string, why: string, column?: string): Issue =>
    issue('SCOPE_OUTSIDE', {
      row: draft.row,
      column: column ?? origins[field]?.column ?? null,
      field,
      value: origins[field]?.value ?? value,
      message: `outside the scope of this mapping (${describeScope(scope.spec)}): ${why}; nothing of the row is written`,
    });
  if (scope.brandIds) {
    // Before the brand labels are resolved (a brand outside the scope is never created for the row): the label, or the
    // id a column or default gives.
    const lookup = draft.lookups?.find((l) => l.field === 'brandId');
    const label = lookup ? lookup.values[0] : draft.fields.brandId;
    if (typeof label === 'string' && label.trim() !== '') {
      const inside = scope.brandIds.has(label.trim().toLowerCase()) || scope.brandNames!.has(scope.nameKey(label));
      if (!inside) return at('brandId', label, 'another brand', lookup?.column);
    }
  }
  if (scope.suppliers && typeof draft.fields.supplierCompanyId === 'string') {
    if (!scope.suppliers.has(draft.fields.supplierCompanyId.toLowerCase()))
      return at('supplierCompanyId', draft.fields.supplierCompanyId, 'another supplier');
  }
  if (
    scope.gtinPrefixes &&
    typeof draft.fields.gtin === 'string' &&
    !prefixMatch(draft.fields.gtin, scope.gtinPrefixes)
  )
    return at('gtin', draft.fields.gtin, `the GTIN starts with none of the prefixes ${scope.gtinPrefixes.join(', ')}`);
  return undefined;
}

/**
 * Why an undo must leave an item alone: the item as the API holds it now is outside the undone run's scope (another
 * supplier's since: its brand, supplier or GTIN changed); undefined when it is inside. The supplier of a manufactured
 * item is the one the ledger line names, or the record's; a trade item with neither is not held back.
 */
export function outsideForUndo(
  scope: ResolvedScope | undefined,
  trade: { tradeItemId: string; brandId?: unknown; gtin?: unknown } | undefined,
  supplier: string | null | undefined,
): string | undefined {
  if (!scope || scope.spec === 'owner' || !trade) return undefined;
  const id = trade.tradeItemId.toLowerCase();
  const suppliers =
    supplier == null || scope.suppliers?.has(supplier.toLowerCase()) ? new Set([id]) : new Set<string>();
  if (recordInScope(trade, scope, suppliers)) return undefined;
  return `left alone: the item is outside the run's scope now (${describeScope(scope.spec)})`;
}

/** What summary.json, run.finished and the console say of a run's scope. */
export interface ScopeSummary {
  /** The scope as written (`owner`, or its keys). */
  spec: ScopeSpec;
  /** In words. */
  text: string;
  /** Items of the owner's catalogue in the scope (archived ones included), and the active ones (null: not read). */
  items: number | null;
  active: number | null;
}
