// What a row's plan is made from (src/pipeline/sync/plan.ts), for the tests of planning and of undoing what a plan
// wrote: one owner's trade item keyed by GTIN, the row's draft, and the API's state as the plan reads it.
import type { TradeItemRecord } from '../../src/api/types.ts';
import type { ApiState, PlanOptions } from '../../src/pipeline/sync/plan.ts';
import type { Draft } from '../../src/pipeline/types.ts';

export const owner = '5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f';
export const gtin = '03017620422003';
/** An upsert of trade items keyed by GTIN for {@link owner}. */
export const opts: PlanOptions = { target: 'tradeItem', mode: 'upsert', ownerCompanyId: owner, key: 'gtin' };

/** Row 2 of a sheet: the trade item of {@link gtin} with `fields`, clearing `clear`. */
export function draft(fields: Record<string, unknown>, clear: string[] = []): Draft {
  return { row: 2, key: gtin, target: 'tradeItem', fields: { gtin, ...fields }, clear, issues: [], source: [] };
}

/** The owner's trade item of {@link gtin} as the API holds it, with `extra` over it. */
export const record = (extra: Partial<TradeItemRecord> = {}): TradeItemRecord => ({
  tradeItemId: 'a1a1a1a1-0000-4000-8000-000000000001',
  ownerCompanyId: owner,
  archived: false,
  gtin,
  tradeItemName: 'Pâte à tartiner',
  ...extra,
});

/** The API's state holding `items` (by GTIN) and `manufactured`, read in full. */
export function state(
  items: TradeItemRecord[] = [],
  manufactured: ApiState['manufacturedItems'] = new Map(),
): ApiState {
  return {
    tradeItems: new Map(items.map((i) => [i.gtin as string, i])),
    manufacturedItems: manufactured,
    complete: true,
  };
}
