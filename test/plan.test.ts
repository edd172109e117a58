import { describe, expect, it } from 'vitest';
import { tradeItemIdFor } from '../src/api/uuid.ts';
import { archiveGuard, manufacturedKey, planRow } from '../src/pipeline/sync/plan.ts';
import { draft, gtin, opts, owner, record, state } from './helpers/plan-inputs.ts';

const supplier = 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f';

describe('planRow', () => {
  it('creates a missing item with a deterministic id and the owner', () => {
    const p = planRow(draft({ tradeItemName: 'Nutella 400 g' }), state(), opts);
    expect(p.action).toBe('create');
    expect(p.steps).toEqual([
      {
        kind: 'tradeItem.create',
        body: { gtin, tradeItemName: 'Nutella 400 g', ownerCompanyId: owner, tradeItemId: tradeItemIdFor(owner, gtin) },
      },
    ]);
  });

  it('sends nothing when every field already matches, ignoring key order and empty nested values', () => {
    const p = planRow(
      draft({ tradeItemName: 'Pâte à tartiner', netContents: [{ value: '400', unitOfMeasure: 'GRM' }] }),
      state([record({ netContents: [{ unitOfMeasure: 'GRM', value: '400' }], brandId: null })]),
      opts,
    );
    expect(p).toMatchObject({ action: 'unchanged', steps: [], changedFields: [] });
  });

  it('patches only the fields that differ, and clears a field only under the clear policy', () => {
    const p = planRow(
      draft({ tradeItemName: 'Pâte à tartiner', variant: 'Bio' }, ['comments', 'productRange']),
      state([record({ comments: [{ value: 'old' }], productRange: null })]),
      opts,
    );
    expect(p.action).toBe('update');
    expect(p.steps).toEqual([
      { kind: 'tradeItem.patch', id: record().tradeItemId, body: { variant: 'Bio', comments: null } },
    ]);
    expect(p.changedFields.sort()).toEqual(['comments', 'variant']);
  });

  it('uses PUT with the whole record when harmonizedCode changes (PATCH does not take it)', () => {
    const p = planRow(
      draft({ harmonizedCode: '1806' }),
      state([record({ harmonizedCode: '1704', variant: 'Bio', archived: false })]),
      opts,
    );
    expect(p.steps).toHaveLength(1);
    const step = p.steps[0]!;
    expect(step.kind).toBe('tradeItem.put');
    expect(step).toMatchObject({
      body: { harmonizedCode: '1806', variant: 'Bio', tradeItemName: 'Pâte à tartiner', gtin },
    });
    expect(Object.keys((step as { body: object }).body)).not.toContain('ownerCompanyId');
  });

  it('unarchives an archived item that reappears', () => {
    const p = planRow(draft({ tradeItemName: 'Pâte à tartiner' }), state([record({ archived: true })]), opts);
    expect(p.action).toBe('unarchive');
    expect(p.steps).toEqual([{ kind: 'tradeItem.unarchive', id: record().tradeItemId }]);
  });

  it('skips per mode: create-only leaves existing items, update-only leaves missing ones', () => {
    expect(planRow(draft({ tradeItemName: 'x' }), state([record()]), { ...opts, mode: 'create-only' }).action).toBe(
      'skipped',
    );
    expect(planRow(draft({ tradeItemName: 'x' }), state(), { ...opts, mode: 'update-only' }).action).toBe('skipped');
  });

  it('creates a manufactured item by route B with follow-up writes for fields route B does not take', () => {
    const d = {
      ...draft({
        tradeItemName: 'Comté AOP',
        packagingFormat: 'Sous vide',
        supplierCompanyId: supplier,
        countriesOfOrigin: ['FR'],
        manufacturedItemName: 'Comté 18 mois',
      }),
      target: 'manufacturedItem' as const,
    };
    const p = planRow(d, state(), { ...opts, target: 'manufacturedItem' });
    expect(p.steps.map((s) => s.kind)).toEqual([
      'manufacturedItem.createWithTradeItem',
      'tradeItem.patch',
      'manufacturedItem.patch',
    ]);
    expect(p.steps[0]).toMatchObject({
      body: {
        tradeItemName: 'Comté AOP',
        supplierCompanyId: supplier,
        manufacturedItemName: 'Comté 18 mois',
        ownerCompanyId: owner,
      },
    });
    expect((p.steps[0] as { body: object }).body).not.toHaveProperty('packagingFormat');
    expect(p.steps[1]).toMatchObject({ body: { packagingFormat: 'Sous vide' } });
    expect(p.steps[2]).toMatchObject({ body: { countriesOfOrigin: ['FR'] } });
  });

  it('creates a manufactured item by route A under an existing trade item, and patches it when it exists', () => {
    const d = {
      ...draft({ tradeItemName: 'Pâte à tartiner', supplierCompanyId: supplier, countriesOfOrigin: ['IT'] }),
      target: 'manufacturedItem' as const,
    };
    const a = planRow(d, state([record()]), { ...opts, target: 'manufacturedItem' });
    expect(a.steps.map((s) => s.kind)).toEqual(['manufacturedItem.createUnderTradeItem']);
    const m = new Map([
      [
        manufacturedKey(record().tradeItemId, supplier),
        {
          manufacturedItemId: 'm1',
          tradeItemId: record().tradeItemId,
          supplierCompanyId: supplier,
          archived: false,
          countriesOfOrigin: ['FR'],
        },
      ],
    ]);
    const p = planRow(d, state([record()], m), { ...opts, target: 'manufacturedItem' });
    expect(p.steps).toEqual([{ kind: 'manufacturedItem.patch', id: 'm1', body: { countriesOfOrigin: ['IT'] } }]);
  });
});

describe('archives and the guard', () => {
  it('trips above maxRatio unless allowed', () => {
    expect(archiveGuard(20, 2, 0.1, false).tripped).toBe(false);
    expect(archiveGuard(20, 3, 0.1, false).tripped).toBe(true);
    expect(archiveGuard(20, 3, 0.1, true).tripped).toBe(false);
  });
});
