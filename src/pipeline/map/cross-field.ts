/**
 * The cross-field rules of the catalogue (src/rule-catalogue.ts, PS-GTIN-008/009 and PS-XF-*): checks over several
 * fields of a draft that the API's field rules cannot make one field at a time. They report warnings (the row goes on),
 * each naming its rule id; a mapping's gate can hold a run on any of them (`gate.rules`). A mapping that fills none of
 * the fields a check reads does not run it.
 */
import { issue, type FixedSeverityCode } from '../../issue-codes.ts';
import type { Mapping } from './mapping.ts';
import type { Draft, Issue } from '../types.ts';

type Fields = Record<string, unknown>;
type Origins = NonNullable<Draft['origins']>;

const ISO_DATE = /^\d{4}-\d{2}-\d{2}/;
const MARKUP = /<\/?[a-z][^<>]*>|&(?:[a-z]+|#\d+|#x[0-9a-f]+);/i;
const LOWER = /\p{Ll}/u;
const UPPER = /\p{Lu}/gu;

const text = (v: unknown): string | null => (typeof v === 'string' && v.trim() !== '' ? v : null);
const given = (v: unknown): boolean => v !== undefined && v !== null && v !== '';
const num = (v: unknown): number | null => {
  if (typeof v === 'number') return v;
  if (typeof v !== 'string' || v.trim() === '') return null;
  const n = Number(v.includes(',') ? v.replace(',', '.') : v);
  return Number.isFinite(n) ? n : null;
};

type Check = (f: Fields, add: Add) => void;

/**
 * Each check with the top-level fields it reads that can make it fail: a draft with none of them passes it (a GTIN
 * alone is not a level mismatch, a season flag alone can be).
 */
const CHECKS: readonly { fails: readonly string[]; check: Check }[] = [
  { fails: ['isConsumerUnit', 'isTradeItemBaseUnit'], check: gtinLevel },
  { fails: ['netContents', 'netContentValue', 'netContentUnit', 'drainedNetWeight'], check: netContent },
  {
    fails: [
      'seasonalAvailabilityStartDate',
      'seasonalAvailabilityEndDate',
      'isTradeItemSeasonal',
      'targetMarketsList',
      'variableWeight',
    ],
    check: datesAndRanges,
  },
  { fails: ['tradeItemName', 'manufacturedItemName'], check: names },
];

const NONE: readonly Issue[] = [];
const EVERY_CHECK: readonly Check[] = CHECKS.map((c) => c.check);

/** The issues of the cross-field rules on a draft (none when every rule holds). */
export function crossFieldIssues(d: Draft): readonly Issue[] {
  return runChecks(d, EVERY_CHECK);
}

/**
 * {@link crossFieldIssues} for the drafts of `mapping`: the checks none of whose fields the mapping's columns or
 * defaults fill are left out, once per mapping (they cannot fail on its drafts).
 */
export function crossFieldChecker(mapping: Pick<Mapping, 'columns' | 'defaults'>): (d: Draft) => readonly Issue[] {
  const filled = new Set<string | number>();
  for (const { field } of [...mapping.columns, ...mapping.defaults]) {
    filled.add(field.top);
    if (field.unit) filled.add(field.unit.segments[0]!);
  }
  const checks = CHECKS.filter((c) => c.fails.some((f) => filled.has(f))).map((c) => c.check);
  if (checks.length === 0) return () => NONE;
  return (d) => runChecks(d, checks);
}

/** The draft being checked and what its checks found: one for every row (the checks are synchronous). */
const at: { d: Draft | null; out: Issue[] | undefined } = { d: null, out: undefined };

function runChecks(d: Draft, checks: readonly Check[]): readonly Issue[] {
  at.d = d;
  at.out = undefined;
  for (let c = 0; c < checks.length; c++) checks[c]!(d.fields, add);
  const out = at.out;
  at.d = null;
  at.out = undefined;
  return out ?? NONE;
}

function add(rule: string, code: FixedSeverityCode, field: string, value: unknown, message: string): void {
  const d = at.d!;
  // A field whose cell already has an issue (a value that did not read, a refused one) is not judged again with its
  // neighbours: the cell's own issue says what to fix. Looked for only when a rule fails: most rows break none.
  const root = rootOf(field);
  if (d.issues.some((i) => i.field && rootOf(i.field) === root)) return;
  const origin = originOf(d.origins, field);
  const i = issue(code, {
    row: d.row,
    column: origin?.column ?? null,
    field,
    value: origin?.value ?? (value === undefined || value === null ? null : String(value)),
    message,
  });
  i.rule = rule;
  (at.out ??= []).push(i);
}

/** The top-level field of a path: `netContents` of `netContents[0].value`. */
const rootOf = (field: string): string => /^[^.[]*/.exec(field)![0];

type Add = (rule: string, code: FixedSeverityCode, field: string, value: unknown, message: string) => void;

function originOf(origins: Origins | undefined, field: string): { column: string; value: string | null } | undefined {
  if (!origins) return undefined;
  if (origins[field]) return origins[field];
  for (const [p, o] of Object.entries(origins)) if (p.startsWith(`${field}.`) || p.startsWith(`${field}[`)) return o;
  return undefined;
}

const UNIT_FLAGS = [
  ['isConsumerUnit', 'a consumer unit', 'PS-GTIN-008'],
  ['isTradeItemBaseUnit', 'a base unit', 'PS-GTIN-009'],
] as const;

function gtinLevel(f: Fields, add: Add): void {
  const gtin = f.gtin;
  if (typeof gtin !== 'string' || gtin.length !== 14) return;
  const indicator = gtin.charCodeAt(0) - 48;
  if (indicator < 1 || indicator > 8) return;
  for (const [flag, what, rule] of UNIT_FLAGS) {
    if (f[flag] === 'true')
      add(
        rule,
        'GTIN_LEVEL_MISMATCH',
        flag,
        gtin,
        `${flag} is true but GTIN ${gtin} has indicator digit ${indicator}: a GTIN-14 of a grouping, not of ${what}`,
      );
  }
}

function netContent(f: Fields, add: Add): void {
  const list = f.netContents;
  if (Array.isArray(list)) {
    for (let k = 0; k < list.length; k++) {
      const nc = list[k] as Fields | null;
      if (!nc || typeof nc !== 'object') continue;
      const hasValue = given(nc.value);
      const hasUnit = given(nc.unitOfMeasure);
      if (hasValue !== hasUnit)
        add(
          'PS-XF-001',
          'NET_CONTENT_INCOMPLETE',
          `netContents[${k}].${hasValue ? 'unitOfMeasure' : 'value'}`,
          hasValue ? nc.value : nc.unitOfMeasure,
          hasValue ? `net content ${String(nc.value)} has no unit of measure` : 'net content has a unit but no value',
        );
      const n = hasValue ? num(nc.value) : null;
      if (hasValue && (n === null || n <= 0))
        add(
          'PS-XF-003',
          'NET_CONTENT_NOT_POSITIVE',
          `netContents[${k}].value`,
          nc.value,
          'a net content value is a number greater than zero',
        );
    }
  }
  const value = given(f.netContentValue);
  if (value !== given(f.netContentUnit))
    add(
      'PS-XF-002',
      'NET_CONTENT_INCOMPLETE',
      value ? 'netContentUnit' : 'netContentValue',
      value ? f.netContentValue : f.netContentUnit,
      value ? 'netContentValue is given without netContentUnit' : 'netContentUnit is given without netContentValue',
    );
  if (value) {
    const n = num(f.netContentValue);
    if (n === null || n <= 0)
      add(
        'PS-XF-003',
        'NET_CONTENT_NOT_POSITIVE',
        'netContentValue',
        f.netContentValue,
        'netContentValue is a number greater than zero',
      );
  }
  const drained = f.drainedNetWeight as Fields | undefined;
  if (drained && typeof drained.value === 'number' && drained.value <= 0)
    add(
      'PS-XF-004',
      'NET_CONTENT_NOT_POSITIVE',
      'drainedNetWeight.value',
      drained.value,
      'a drained net weight is greater than zero',
    );
}

function datesAndRanges(f: Fields, add: Add): void {
  const start = text(f.seasonalAvailabilityStartDate);
  const end = text(f.seasonalAvailabilityEndDate);
  if (start && end && ISO_DATE.test(start) && ISO_DATE.test(end) && start.slice(0, 10) > end.slice(0, 10))
    add(
      'PS-XF-005',
      'DATES_OUT_OF_ORDER',
      'seasonalAvailabilityEndDate',
      end,
      `the seasonal availability ends (${end.slice(0, 10)}) before it starts (${start.slice(0, 10)})`,
    );
  const seasonal = f.isTradeItemSeasonal;
  if (seasonal === 'false' && (start || end))
    add(
      'PS-XF-010',
      'SEASON_CONTRADICTS_DATES',
      'isTradeItemSeasonal',
      seasonal,
      'isTradeItemSeasonal is false but seasonal availability dates are given',
    );
  else if (seasonal === 'true' && !start && !end)
    add(
      'PS-XF-011',
      'SEASON_CONTRADICTS_DATES',
      'isTradeItemSeasonal',
      seasonal,
      'isTradeItemSeasonal is true but no seasonal availability date is given',
    );
  const markets = f.targetMarketsList;
  if (Array.isArray(markets)) {
    for (let k = 0; k < markets.length; k++) {
      const m = markets[k] as Fields | null;
      const s = text(m?.startAvailabilityDate);
      const e = text(m?.endAvailabilityDate);
      if (s && e && ISO_DATE.test(s) && ISO_DATE.test(e) && s.slice(0, 10) > e.slice(0, 10))
        add(
          'PS-XF-006',
          'DATES_OUT_OF_ORDER',
          `targetMarketsList[${k}].endAvailabilityDate`,
          e,
          `the target market's availability ends (${e.slice(0, 10)}) before it starts (${s.slice(0, 10)})`,
        );
    }
  }
  const vw = f.variableWeight as Fields | undefined;
  if (
    vw &&
    typeof vw.minimumValue === 'number' &&
    typeof vw.maximumValue === 'number' &&
    vw.minimumValue > vw.maximumValue
  )
    add(
      'PS-XF-007',
      'RANGE_INVERTED',
      'variableWeight.minimumValue',
      vw.minimumValue,
      `the variable weight minimum ${vw.minimumValue} is above its maximum ${vw.maximumValue}`,
    );
}

function names(f: Fields, add: Add): void {
  name(f.tradeItemName, 'tradeItemName', add);
  name(f.manufacturedItemName, 'manufacturedItemName', add);
}

function name(value: unknown, field: string, add: Add): void {
  if (typeof value !== 'string' || value === '') return;
  // Four capitals or more and no small letter: a name shouted in capitals (EAN, 4K, a short code stay allowed). Most
  // names have an ASCII small letter near their start: the patterns run only on those without one.
  if (!hasAsciiSmall(value) && !LOWER.test(value) && (value.match(UPPER)?.length ?? 0) >= 4)
    add('PS-XF-008', 'NAME_ALL_CAPITALS', field, value, `${field} is written in capitals only`);
  // Markup needs a `<` or an `&`: the pattern runs only on names that have one.
  if ((value.includes('<') || value.includes('&')) && MARKUP.test(value))
    add('PS-XF-009', 'NAME_MARKUP', field, value, `${field} holds markup (HTML tags or entities)`);
}

/** Whether `value` has a small letter a-z (looked for up to the first one). */
function hasAsciiSmall(value: string): boolean {
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    if (c >= 97 && c <= 122) return true;
  }
  return false;
}
