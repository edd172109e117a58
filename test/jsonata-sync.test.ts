// The synchronous evaluator of a mapping's rules (src/pipeline/map/jsonata-sync.ts) against jsonata's own evaluate:
// many expressions × many rows (absent fields, arrays, numbers as strings, empty strings, nulls, objects, type
// errors). Wherever the compiled function returns, jsonata returns the same value (sequences included) and does not
// throw; it throws exactly where jsonata throws (the row then goes to jsonata, which gives the error).
import jsonata from 'jsonata';
import { describe, expect, it } from 'vitest';
import { compileSync } from '../src/pipeline/map/jsonata-sync.ts';

const HAND_MADE: Record<string, unknown>[] = [
  { gtin: '03000000000012', tradeItemName: 'Biscuits au beurre', netContents: [{ value: '250', unitOfMeasure: 'g' }] },
  { gtin: '00012345678905', tradeItemName: '', netContents: [{ value: 250, unitOfMeasure: 'G' }] },
  { gtin: '12345', tradeItemName: 'SABLÉS <b>', netContents: [] },
  { tradeItemName: 'Palets', netContents: [{ value: '1500' }, { value: '3', unitOfMeasure: 'kg' }] },
  { gtin: null, tradeItemName: 42, netContents: { value: '12.5', unitOfMeasure: 'ml' } },
  { gtin: '', tradeItemName: ['a', 'b'], netContents: [{ value: 'abc', unitOfMeasure: '' }] },
  { tradeItemName: 'Une très longue désignation de produit qui dépasse quarante caractères' },
  {},
  { gtin: 30000000000000, tradeItemName: true, netContents: [{ value: null, unitOfMeasure: null }] },
  { tradeItemName: { fr: 'Biscuit' }, netContents: [{ value: [1, 2], unitOfMeasure: ['g', 'kg'] }] },
  { tradeItemName: ' espaces ', brandName: 'ACME', status: 'ACTIVE', startDate: '2026-01-01', endDate: '2025-12-31' },
  {
    tradeItemName: 'x',
    packagingLevel: 'CASE',
    gtin: '1234567890123',
    netContents: [{ value: -5, unitOfMeasure: 'g' }],
  },
  // surrogates past a substring's reach, numbers as strings jsonata reads otherwise, nested lists
  { tradeItemName: 'ab🍪cd', gtin: '0x1F', netContents: [{ value: '1e999', unitOfMeasure: [['g']] }] },
  { tradeItemName: 'abc', gtin: '-0', netContents: [{ value: ' 12' }, [{ value: '007' }]] },
  { tradeItemName: [['nested']], gtin: '1.5e3', netContents: [[], { value: '-2.50' }] },
];

// And every combination of a few values of three fields (an absent one left out of the row).
const NAMES = [undefined, '', 'Palets', 'SABLÉS <b>', '🍪 cookies 🍪', 12, null, ['a', 'b']];
const CONTENTS = [undefined, [], [{ value: '250', unitOfMeasure: 'g' }], [{ value: 'x' }, { value: 5 }], { value: 7 }];
const GTINS = [undefined, '000123', '03000000000012', 3000000000001];
const ROWS = [
  ...HAND_MADE,
  ...NAMES.flatMap((tradeItemName) =>
    CONTENTS.flatMap((netContents) =>
      GTINS.map((gtin) =>
        Object.fromEntries(Object.entries({ tradeItemName, netContents, gtin }).filter(([, v]) => v !== undefined)),
      ),
    ),
  ),
];

const EXPRESSIONS = [
  // the bench's and the docs' rules
  '$length(tradeItemName) <= 60',
  '$length(tradeItemName) <= 40',
  '$number(netContents[0].value) < 5000',
  '$length(netContents[0].unitOfMeasure) > 0',
  "$substring(gtin, 0, 3) != '000'",
  "$not($contains(tradeItemName, '<'))",
  "$contains(tradeItemName, ' ') or $error('one word only')",
  // paths
  'tradeItemName',
  'netContents',
  'netContents.value',
  'netContents[0]',
  'netContents[-1].value',
  'netContents[1].unitOfMeasure',
  "netContents[unitOfMeasure = 'g'].value",
  'netContents[$number(value) > 100]',
  'netContents[0].value.x',
  '$.tradeItemName',
  '$$.gtin',
  'missing.deep.path',
  // literals, comparisons, logic
  'true',
  'null',
  "'text'",
  "tradeItemName = 'Palets'",
  "tradeItemName != ''",
  'tradeItemName > 0',
  "tradeItemName < 'M'",
  "gtin = '03000000000012' and tradeItemName",
  'gtin or tradeItemName',
  'netContents and netContents[0]',
  'netContents = netContents',
  // arithmetic, strings
  '$number(netContents[0].value) * 2 + 1',
  'netContents[0].value + 1',
  '-$number(netContents[0].value)',
  '-tradeItemName',
  '$number(netContents[0].value) % 7 / 3 - 1',
  "tradeItemName & ' / ' & gtin",
  "netContents & '!'",
  // functions
  '$length(gtin) in [8, 12, 13, 14]',
  '$substring(tradeItemName, 2)',
  '$substring(tradeItemName, -3, 2)',
  '$substring(tradeItemName, 1.5, 2.5)',
  '$substring(tradeItemName, -40, 3)',
  '$substring(tradeItemName, 0, -1)',
  '$substring(tradeItemName, 3, 0)',
  "netContents[0].unitOfMeasure in ['g', 'kg', 'ml']",
  '$uppercase(tradeItemName) = tradeItemName',
  '$lowercase(tradeItemName)',
  '$trim(tradeItemName) = tradeItemName',
  "$substringBefore(gtin, '0')",
  '$string(netContents)',
  '$string(netContents[0].value) = "250"',
  '$exists(gtin)',
  '$exists(netContents[0].unitOfMeasure) and $length(netContents[0].unitOfMeasure) > 0',
  '$boolean(tradeItemName)',
  '$count(netContents) <= 1',
  '$sum(netContents.$number(value))',
  '$max([1, $number(netContents[0].value)])',
  '$round($number(netContents[0].value) / 3, 2)',
  '$abs($number(netContents[0].value))',
  "$join(['a', tradeItemName], '-')",
  '$type(tradeItemName)',
  "$pad(gtin, 14, '0')",
  '$number(gtin)',
  '$length()',
  '$contains(tradeItemName, /<[a-z]+>/i)',
  '$contains(tradeItemName, /^[A-ZÉ ]+$/)',
  // conditions, blocks
  "status = 'ACTIVE' ? endDate >= startDate : true",
  '$exists(endDate) ? endDate > startDate',
  '(tradeItemName; gtin)',
  'tradeItemName ?: gtin',
  "gtin ?? 'none'",
  '$assert($length(gtin) = 14, "bad length")',
  // the shapes the generated function reads itself, and what it leaves to the evaluators
  '$substring(tradeItemName, 0, 2)',
  '$substring(tradeItemName, 1, 2)',
  '$substring(tradeItemName, 2, 3)',
  '$substring(tradeItemName, 0)',
  'tradeItemName[0]',
  'tradeItemName[1]',
  'netContents[0][0].value',
  'netContents[1][0]',
  'netContents[0].unitOfMeasure[0]',
  'netContents.value[1]',
  '$number(gtin) + 1',
  '$number(netContents[1].value) >= 7',
  'gtin & tradeItemName',
  '$not(tradeItemName)',
  'tradeItemName ? 1 : 0',
  "netContents[0].unitOfMeasure = 'g' and $number(netContents[0].value) > 100",
  '$',
  '()',
];
// Outside the subset: jsonata evaluates them.
const OUTSIDE = [
  "netContents[0] = {'value': '250', 'unitOfMeasure': 'g'}",
  '$map(netContents, function($v) { $v.value })',
  '($x := tradeItemName; $length($x))',
  '$match(tradeItemName, /a/)',
  'netContents^(value)',
  '**.value',
];

type Outcome = { threw: true } | { threw: false; value: unknown };
const canon = (v: unknown): unknown =>
  Array.isArray(v)
    ? { seq: (v as { sequence?: boolean }).sequence === true, items: v.map(canon) }
    : v === undefined
      ? '<undefined>'
      : v;

async function byJsonata(expr: jsonata.Expression, row: unknown): Promise<Outcome> {
  try {
    return { threw: false, value: canon(await expr.evaluate(row)) };
  } catch {
    return { threw: true };
  }
}
function bySync(f: (row: unknown) => unknown, row: unknown): Outcome {
  try {
    return { threw: false, value: canon(f(row)) };
  } catch {
    return { threw: true };
  }
}

describe('the synchronous JSONata subset', () => {
  it('gives what jsonata gives on every row where it gives anything, and throws wherever jsonata throws', async () => {
    let compared = 0;
    let handedBack = 0;
    const needless: string[] = [];
    const notCompiled: string[] = [];
    for (const text of [...EXPRESSIONS, ...OUTSIDE]) {
      const expr = jsonata(text);
      const sync = await compileSync(expr);
      if (!sync) {
        notCompiled.push(text);
        continue;
      }
      for (const row of ROWS) {
        const want = await byJsonata(expr, row);
        const got = bySync(sync, row);
        if (got.threw) {
          handedBack++;
          if (!want.threw) needless.push(`${text} on ${JSON.stringify(row)}`);
          continue;
        }
        compared++;
        expect({ text, row, outcome: got }).toEqual({ text, row, outcome: want });
      }
    }
    expect(notCompiled).toEqual(OUTSIDE);
    // Identical throws behaviour: it hands a row back exactly where jsonata throws (type errors, $error, $assert).
    expect(needless).toEqual([]);
    expect(handedBack).toBeGreaterThan(0);
    expect(compared).toBeGreaterThan(5000);
  });

  it('hands a row to jsonata only where it must: the common rules never throw on well-typed rows', async () => {
    for (const text of EXPRESSIONS.slice(0, 6)) {
      const sync = (await compileSync(jsonata(text)))!;
      for (const row of ROWS.slice(0, 2)) expect(() => sync(row), text).not.toThrow();
    }
  });
});
