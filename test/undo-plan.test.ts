import { describe, expect, it } from 'vitest';
import type { ManufacturedItemRecord, TradeItemRecord } from '../src/api/types.ts';
import { rowLedgerLine, type LedgerLine } from '../src/pipeline/undo/ledger.ts';
import { planRow } from '../src/pipeline/sync/plan.ts';
import { decideUndo, undoWrites } from '../src/pipeline/undo/undo-plan.ts';
import { draft, gtin, opts, record as tradeItem, state } from './helpers/plan-inputs.ts';

const record = (extra: Partial<TradeItemRecord> = {}) => tradeItem({ harmonizedCode: '1806', ...extra });

/** The ledger line of a row planned against `before` and sent in full. */
function ledgerOf(fields: Record<string, unknown>, before: TradeItemRecord | null) {
  const plan = planRow(draft(fields), state(before ? [before] : []), opts);
  const line = rowLedgerLine(
    plan,
    {
      row: plan.row,
      key: plan.key,
      outcome: plan.action === 'create' ? 'created' : plan.action === 'unarchive' ? 'unarchived' : 'updated',
      tradeItemId: plan.tradeItemId,
      manufacturedItemId: null,
      changedFields: plan.changedFields,
      issues: [],
    },
    true,
  );
  return line!;
}

describe('the undo of one ledger line', () => {
  it('puts back with PATCH the fields that still hold what the run sent, and with PUT when harmonizedCode is one', () => {
    const before = record();
    const line = ledgerOf({ tradeItemName: 'Pâte', harmonizedCode: '1704' }, before);
    expect(line.fields).toEqual([
      { item: 'tradeItem', field: 'tradeItemName', before: 'Pâte à tartiner', sent: 'Pâte' },
      { item: 'tradeItem', field: 'harmonizedCode', before: '1806', sent: '1704' },
    ]);
    const now = record({ tradeItemName: 'Pâte', harmonizedCode: '1704', brandName: 'kept' });
    const d = decideUndo(line, now, undefined);
    expect(d.verdict).toBe('restore');
    const [put] = undoWrites(d, now, undefined);
    expect(put).toMatchObject({
      kind: 'tradeItem.put',
      body: { tradeItemName: 'Pâte à tartiner', harmonizedCode: '1806' },
    });

    const onlyName = decideUndo(
      ledgerOf({ tradeItemName: 'Pâte' }, before),
      record({ tradeItemName: 'Pâte' }),
      undefined,
    );
    expect(undoWrites(onlyName, record({ tradeItemName: 'Pâte' }), undefined)).toEqual([
      { kind: 'tradeItem.patch', id: before.tradeItemId, body: { tradeItemName: 'Pâte à tartiner' } },
    ]);
    // The undo's own ledger swaps before and sent: its undo gives the run's value back.
    expect(onlyName.ledger!.fields).toEqual([
      { item: 'tradeItem', field: 'tradeItemName', before: 'Pâte', sent: 'Pâte à tartiner' },
    ]);
  });

  it("puts a field that had no value before back to none: null in the PATCH (the contract's merge clears it)", () => {
    const sent = [{ value: '500', unitOfMeasure: 'g' }];
    const line = ledgerOf({ productRange: 'Gamme', netContents: sent }, record());
    expect(line.fields.map((f) => [f.field, f.before])).toEqual([
      ['productRange', null],
      ['netContents', null],
    ]);
    // The API answers keys in another order and nulls for the rest: still what the run sent.
    const now = record({ productRange: 'Gamme', netContents: [{ unitOfMeasure: 'g', value: '500', extra: null }] });
    const d = decideUndo(line, now, undefined);
    expect(undoWrites(d, now, undefined)).toEqual([
      { kind: 'tradeItem.patch', id: now.tradeItemId, body: { productRange: null, netContents: null } },
    ]);
    // Already cleared: nothing to send. The list changed since: left alone.
    expect(decideUndo(line, record({ productRange: '', netContents: [] }), undefined).verdict).toBe('unchanged');
    const reordered = [...sent, { value: '1', unitOfMeasure: 'kg' }].reverse();
    expect(decideUndo(line, record({ productRange: 'Gamme', netContents: reordered }), undefined).verdict).toBe(
      'conflict',
    );
  });

  it('puts back the trade item of a row that created a manufactured item under it, and says the latter stays', () => {
    const line: LedgerLine = {
      row: 2,
      key: gtin,
      gtin,
      tradeItemId: record().tradeItemId,
      manufacturedItemId: 'b2b2b2b2-0000-4000-8000-000000000002',
      supplierCompanyId: 'c3c3c3c3-0000-4000-8000-000000000003',
      outcome: 'updated',
      created: ['manufacturedItem'],
      archived: null,
      fields: [
        { item: 'tradeItem', field: 'tradeItemName', before: 'Pâte à tartiner', sent: 'Pâte' },
        { item: 'manufacturedItem', field: 'manufacturedItemName', before: null, sent: 'Usine' },
      ],
    };
    const manu = {
      manufacturedItemId: line.manufacturedItemId!,
      manufacturedItemName: 'Usine',
    } as unknown as ManufacturedItemRecord;
    const now = record({ tradeItemName: 'Pâte' });
    const d = decideUndo(line, now, manu);
    expect(d.verdict).toBe('restore');
    expect(d.incomplete).toMatch(/restore tradeItemName.*can neither archive nor delete/);
    expect(undoWrites(d, now, manu)).toEqual([
      { kind: 'tradeItem.patch', id: now.tradeItemId, body: { tradeItemName: 'Pâte à tartiner' } },
    ]);
    // Once the trade item is back: nothing left to send, the line stays failed.
    expect(decideUndo(line, record(), manu)).toMatchObject({ verdict: 'failed', trade: {}, manu: {} });
  });

  it('leaves an item changed since alone and reports before, sent and now; one already as before needs nothing', () => {
    const line = ledgerOf({ tradeItemName: 'Pâte', harmonizedCode: '1704' }, record());
    const edited = record({ tradeItemName: 'Hand edit', harmonizedCode: '1704' });
    const d = decideUndo(line, edited, undefined);
    expect(d.verdict).toBe('conflict');
    expect(d.conflicts).toEqual([
      { item: 'tradeItem', field: 'tradeItemName', before: 'Pâte à tartiner', sent: 'Pâte', now: 'Hand edit' },
    ]);
    expect(undoWrites(d, edited, undefined)).toEqual([]);
    expect(decideUndo(line, record(), undefined).verdict).toBe('unchanged');
  });

  it('archives what the run created, unless changed since; re-archives what it unarchived', () => {
    const created = ledgerOf({ tradeItemName: 'Nouveau' }, null);
    expect(created.created).toEqual(['tradeItem']);
    const item = record({ tradeItemId: created.tradeItemId!, tradeItemName: 'Nouveau', harmonizedCode: null });
    expect(decideUndo(created, item, undefined)).toMatchObject({ verdict: 'restore', archive: true });
    expect(decideUndo(created, { ...item, archived: true }, undefined).verdict).toBe('unchanged');
    expect(decideUndo(created, { ...item, tradeItemName: 'Edited' }, undefined).verdict).toBe('conflict');
    // Someone cleared a field of it since: an edit too (the item had no "before" to be back at).
    const withBrand = ledgerOf({ tradeItemName: 'Nouveau', productRange: 'Gamme' }, null);
    const cleared = decideUndo(withBrand, { ...item, productRange: null }, undefined);
    expect(cleared).toMatchObject({ verdict: 'conflict', archive: null });
    expect(cleared.conflicts).toEqual([
      { item: 'tradeItem', field: 'productRange', before: null, sent: 'Gamme', now: null },
    ]);
    // Gone from the API: the undo could not take it back — failed, as docs/undo.md says, never `unchanged`.
    expect(decideUndo(created, undefined, undefined)).toMatchObject({
      verdict: 'failed',
      message: 'the item the run created is not in the API any more',
    });

    const unarchived = ledgerOf({ tradeItemName: 'Pâte à tartiner' }, record({ archived: true }));
    expect(unarchived.archived).toEqual({ before: true, after: false });
    const d = decideUndo(unarchived, record(), undefined);
    expect(d).toMatchObject({ verdict: 'restore', archive: true });
    expect(d.ledger!.archived).toEqual({ before: false, after: true });
  });
});
