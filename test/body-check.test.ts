// The fast body checks (src/api/body-check.ts) against zod: the same verdict as bodySchema(op).safeParse on generated
// bodies for every operation, and validateDraft (fast check first) giving exactly the issues of the zod-only path.
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { bodyCheck } from '../src/api/body-check.ts';
import {
  MANUFACTURED_ITEM_FIELDS,
  NESTED_OBJECTS,
  TRADE_ITEM_FIELDS,
  type BodyOperation,
  type FieldType,
  type NestedName,
} from '../src/api/fields.ts';
import { bodySchema } from '../src/api/schemas.ts';
import { WEIGHT_UNITS } from '../src/api/units.ts';
import { schemaIssues, validateDraft } from '../src/pipeline/map/validate.ts';
import type { Draft } from '../src/pipeline/types.ts';

const OPERATIONS: BodyOperation[] = [
  'tradeItem.create',
  'tradeItem.patch',
  'tradeItem.put',
  'manufacturedItem.createUnderTradeItem',
  'manufacturedItem.createWithTradeItem',
  'manufacturedItem.patch',
  'manufacturedItem.put',
];

const UUIDS = [
  'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f',
  'C3D4E5F6-A7B8-4C9D-8E0F-1A2B3C4D5E6F',
  '00000000-0000-0000-0000-000000000000',
  'ffffffff-ffff-ffff-ffff-ffffffffffff',
  ...WEIGHT_UNITS.map((u) => u.id),
];
// Near misses: version 0, variant 7, one character short, braces, a weight unit id in capitals (a uuid, not one of the
// seven ids as stored).
const NOT_UUIDS = [
  'c3d4e5f6-a7b8-0c9d-8e0f-1a2b3c4d5e6f',
  'c3d4e5f6-a7b8-4c9d-7e0f-1a2b3c4d5e6f',
  'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6',
  '{c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f}',
  'kg',
  '',
];
const WEIGHTS = [...WEIGHT_UNITS.map((u) => u.id), ...WEIGHT_UNITS.map((u) => u.id.toUpperCase())];

const junk = fc.constantFrom<unknown>(
  undefined,
  null,
  0,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  true,
  '',
  '   ',
  '\u00a0',
  'x',
  [],
  {},
  new Date(0),
  ['x'],
  [{}],
  { value: 'x' },
  ...NOT_UUIDS,
);
const ABSENT = Symbol('absent');

/** `arb`'s value `present` of the time (0..1), else ABSENT. */
const maybe = <T>(arb: fc.Arbitrary<T>, present: number): fc.Arbitrary<T | typeof ABSENT> =>
  present <= 0
    ? fc.constant(ABSENT)
    : fc.oneof(
        { arbitrary: arb, weight: Math.round(present * 1000) },
        { arbitrary: fc.constant(ABSENT), weight: Math.round((1 - present) * 1000) },
      );

/** An object of optional parts, `extra` sometimes added under a key no table has. */
function objectOf(
  parts: fc.Arbitrary<readonly [string, unknown]>[],
  extra: number,
): fc.Arbitrary<Record<string, unknown>> {
  return fc.tuple(fc.tuple(...parts), maybe(junk, extra)).map(([kv, extra]) => {
    const o: Record<string, unknown> = {};
    for (const [k, v] of kv) if (v !== ABSENT) o[k] = v;
    if (extra !== ABSENT) o.bogus = extra;
    return o;
  });
}

/** A value of a field's type; `junkWeight` (out of 6 + it) of the time something else from the junk list. */
function valueOf(type: FieldType, junkWeight: number): fc.Arbitrary<unknown> {
  let good: fc.Arbitrary<unknown>;
  const item = (a: fc.Arbitrary<unknown>) =>
    junkWeight === 0 ? a : fc.oneof({ arbitrary: a, weight: 5 }, { arbitrary: junk, weight: junkWeight });
  switch (type.kind) {
    case 'string':
      good = fc.constantFrom('Biscuits', 'x', ' a ', '', ' ', '0406');
      break;
    case 'uuid':
      good = fc.constantFrom(...UUIDS);
      break;
    case 'number':
      good =
        junkWeight === 0
          ? fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }))
          : fc.oneof(fc.integer(), fc.double());
      break;
    case 'weightUnit':
      good = fc.constantFrom(...WEIGHTS);
      break;
    case 'array':
      good = fc.array(item(type.of === 'uuid' ? fc.constantFrom(...UUIDS) : fc.constantFrom('FR', 'x', '')), {
        maxLength: 3,
      });
      break;
    case 'object':
      good = nested(type.of, junkWeight);
      break;
    case 'objectArray':
      good = fc.array(item(nested(type.of, junkWeight)), { maxLength: 2 });
      break;
  }
  return junkWeight === 0 ? good : fc.oneof({ arbitrary: good, weight: 6 }, { arbitrary: junk, weight: junkWeight });
}

function nested(name: NestedName, junkWeight: number): fc.Arbitrary<unknown> {
  // Every field of the nested object (comment.id too, which only P and U accept), sometimes a key it does not have.
  const parts = NESTED_OBJECTS[name].map((f) =>
    maybe(valueOf(f.type, junkWeight), f.ops ? 0.15 : 0.5).map((v) => [f.name, v] as const),
  );
  return objectOf(parts, junkWeight === 0 ? 0 : 0.05);
}

// Every field name of both tables (each with its type).
const ALL_FIELDS = new Map<string, FieldType>();
for (const f of [...TRADE_ITEM_FIELDS, ...MANUFACTURED_ITEM_FIELDS]) ALL_FIELDS.set(f.name, f.type);

/**
 * A body for an operation accepting `accepted`: either its own fields with values of their types (the required ones
 * nearly always there), or anything — other operations' fields, junk values, keys no table has.
 */
function bodyFor(accepted: ReadonlySet<string>): fc.Arbitrary<Record<string, unknown>> {
  const usual = (name: string) =>
    ['tradeItemName', 'ownerCompanyId', 'supplierCompanyId'].includes(name) ? 0.97 : 0.3;
  const typed = objectOf(
    [...ALL_FIELDS]
      .filter(([name]) => accepted.has(name))
      .map(([name, type]) => maybe(valueOf(type, 0), usual(name)).map((v) => [name, v] as const)),
    0,
  );
  const wild = objectOf(
    [...ALL_FIELDS].map(([name, type]) =>
      maybe(valueOf(type, 1), accepted.has(name) ? usual(name) : 0.03).map((v) => [name, v] as const),
    ),
    0.03,
  );
  return fc.oneof({ arbitrary: typed, weight: 2 }, { arbitrary: wild, weight: 1 });
}

const acceptedBy = (op: BodyOperation) => new Set(Object.keys(bodySchema(op).shape));

describe('fast body checks', () => {
  it('accept exactly the bodies zod accepts, for every operation', () => {
    for (const op of OPERATIONS) {
      const check = bodyCheck(op);
      const schema = bodySchema(op);
      let valid = 0;
      let runs = 0;
      fc.assert(
        fc.property(bodyFor(acceptedBy(op)), (body) => {
          const want = schema.safeParse(body).success;
          runs++;
          if (want) valid++;
          expect(check(body), `${op} ${JSON.stringify(body)}`).toBe(want);
        }),
        { numRuns: 1000 },
      );
      // Both verdicts are exercised, or the comparison above proves nothing.
      expect(valid, op).toBeGreaterThan(runs * 0.05);
      expect(valid, op).toBeLessThan(runs * 0.95);
    }
  });

  it('say no to what zod refuses in the cases rows really bring', () => {
    const create = bodyCheck('tradeItem.create');
    const owner = 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f';
    expect(create({ tradeItemName: 'Biscuits', ownerCompanyId: owner })).toBe(true);
    expect(create({ tradeItemName: '  ', ownerCompanyId: owner })).toBe(false);
    expect(create({ tradeItemName: 'Biscuits' })).toBe(false);
    expect(
      create({ tradeItemName: 'Biscuits', ownerCompanyId: owner, productCategories: [{ categoryId: 'pas-un-uuid' }] }),
    ).toBe(false);
    expect(create({ tradeItemName: 'Biscuits', ownerCompanyId: owner, drainedNetWeight: { value: Number.NaN } })).toBe(
      false,
    );
    expect(create({ tradeItemName: 'Biscuits', ownerCompanyId: owner, comments: [{ id: 'x', value: 'y' }] })).toBe(
      false,
    );
    expect(bodyCheck('tradeItem.patch')({ comments: [{ id: 'x', value: 'y' }] })).toBe(true);
    expect(bodyCheck('tradeItem.patch')({ harmonizedCode: '0406' })).toBe(false);
  });
});

describe('validateDraft with the fast check first', () => {
  it('gives exactly the issues of the zod-only path, for both targets and explicit operations', () => {
    const lookups = fc.option(
      fc.constantFrom('supplierCompanyId', 'tradeItemName', 'productCategories[0].categoryId', 'countriesOfOrigin'),
      { nil: undefined, freq: 3 },
    );
    const draftArb = fc
      .tuple(
        fc.constantFrom('tradeItem' as const, 'manufacturedItem' as const),
        fc.constantFrom<BodyOperation | undefined>(undefined, ...OPERATIONS),
        lookups,
      )
      .chain(([target, op, lookup]) => {
        const accepted = op
          ? acceptedBy(op)
          : new Set([
              ...acceptedBy('manufacturedItem.createWithTradeItem'),
              ...acceptedBy('tradeItem.create'),
              ...(target === 'manufacturedItem' ? acceptedBy('manufacturedItem.createUnderTradeItem') : []),
            ]);
        return bodyFor(accepted).map((fields) => {
          const d: Draft = {
            row: 5,
            key: null,
            target,
            fields,
            clear: [],
            issues: [],
            source: [],
            origins: { tradeItemName: { column: 'Nom', value: 'x' } },
          };
          if (lookup)
            d.lookups = [
              {
                field: lookup,
                segments: [lookup],
                column: 'L',
                values: ['v'],
                array: false,
                lookup: { kind: 'markets' },
              },
            ];
          return { d, op };
        });
      });
    let empty = 0;
    let runs = 0;
    fc.assert(
      fc.property(draftArb, ({ d, op }) => {
        const want = op ? schemaIssues(d, op) : schemaIssues(d);
        runs++;
        if (want.length === 0) empty++;
        expect(op ? validateDraft(d, op) : validateDraft(d)).toEqual(want);
      }),
      { numRuns: 2000 },
    );
    expect(empty).toBeGreaterThan(runs * 0.05);
    expect(empty).toBeLessThan(runs * 0.95);
    // CPU-bound (2000 drafts, each checked twice): a loaded machine stretches it past the suite's default timeout.
  }, 120_000);
});
