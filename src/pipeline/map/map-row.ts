/** Row → draft: applies a mapping's transforms, builds the nested API body, records empty-cell policy and lookups. */
import { sourceLabel } from './headers.ts';
import type { Mapping, MappingColumn, MappingDefault } from './mapping.ts';
import {
  applyValueMap,
  cellText,
  columnTransform,
  isEmptyCell,
  splitCell,
  toStringValue,
  toWeightQuantity,
  TRANSFORMS,
  type TransformContext,
  type TransformResult,
} from './transforms.ts';
import { issue, type FixedSeverityCode } from '../../issue-codes.ts';
import type { Cell, Draft, DraftLookup, Issue, SheetRow } from '../types.ts';
import { FORBIDDEN_KEYS, setAt } from '../field-path.ts';

function getAt(root: Record<string, unknown>, segments: readonly (string | number)[]): unknown {
  let node: unknown = root;
  for (const seg of segments) {
    if (node === null || typeof node !== 'object' || !Object.prototype.hasOwnProperty.call(node, seg)) return undefined;
    node = (node as Record<string | number, unknown>)[seg];
  }
  return node;
}

// Arrays filled by index (`netContents[1].value` with [0] empty) keep no holes.
function compact(fields: Record<string, unknown>): void {
  for (const k in fields) {
    const v = fields[k];
    // `includes` sees holes as undefined: arrays without one (nearly all) are kept as they are.
    if (Array.isArray(v) && v.includes(undefined)) fields[k] = v.filter((x) => x !== undefined);
  }
}

const textOf = (cell: Cell): string | null => (cell === null ? null : cellText(cell));

/**
 * The issue of a cell: as the transform gave it, or — on an `onInvalid: drop-field` column — a FIELD_DROPPED warning
 * that says it (the field is left out, the row goes on).
 */
function columnIssue(
  row: number,
  column: string,
  col: MappingColumn,
  cell: Cell,
  i: { code: FixedSeverityCode; message: string },
): Issue {
  if (col.onInvalid === 'drop-field')
    return droppedIssue({ row, column, field: col.field.path, value: textOf(cell), code: i.code, message: i.message });
  return issue(i.code, { row, column, field: col.field.path, value: textOf(cell), message: i.message });
}

function droppedIssue(x: {
  row: number | null;
  column: string | null;
  field: string | null;
  value: string | null;
  code: string;
  message: string;
}): Issue {
  return issue('FIELD_DROPPED', {
    ...x,
    message: `${x.code}: ${x.message}; ${x.field ?? 'the field'} is left out (onInvalid: drop-field)`,
  });
}

/** The place of a draft's value as a path (`netContents[0].value`), as validation names it. */
function placeOf(segments: readonly (string | number)[]): string {
  let s = '';
  for (const p of segments) s += typeof p === 'number' ? `[${p}]` : s === '' ? p : `.${p}`;
  return s;
}

/** Sets a value at a fixed path of a draft's fields (specialised to the path's shape when the plan is built). */
type Setter = (fields: Record<string, unknown>, value: unknown) => void;

/**
 * setAt for one path, checked once: the shapes a field path has (`a`, `a[i]`, `a.b`, `a[i].b`) without a loop, a
 * list made with its first element (an empty literal grown by one element gets room for 17).
 */
function setterOf(segments: readonly (string | number)[]): Setter {
  for (const seg of segments)
    if (typeof seg === 'string' && FORBIDDEN_KEYS.has(seg)) throw new Error(`unsafe field key ${seg}`);
  type Node = Record<string | number, unknown>;
  const [a, b, c] = segments as [string, string | number | undefined, string | number | undefined];
  const list = (i: number, value: unknown): unknown[] => {
    if (i === 0) return [value];
    const out: unknown[] = [];
    out[i] = value;
    return out;
  };
  const object = (key: string | number, value: unknown): Node => {
    const out: Node = {};
    out[key] = value;
    return out;
  };
  const node = (key: string | number, value: unknown): unknown =>
    typeof key === 'number' ? list(key, value) : object(key, value);
  if (segments.length === 1) {
    return (fields, value) => {
      fields[a] = value;
    };
  }
  if (segments.length === 2) {
    return (fields, value) => {
      const n = fields[a] as Node | undefined;
      if (n === undefined) fields[a] = node(b!, value);
      else n[b!] = value;
    };
  }
  if (segments.length === 3) {
    return (fields, value) => {
      const n = fields[a] as Node | undefined;
      if (n === undefined) {
        fields[a] = node(b!, node(c!, value));
        return;
      }
      const leaf = n[b!] as Node | undefined;
      if (leaf === undefined) n[b!] = node(c!, value);
      else leaf[c!] = value;
    };
  }
  return (fields, value) => setAt(fields, segments, value);
}

/** What mapRow needs of one mapping column, computed once per mapping rather than on every row. */
interface ColumnPlan {
  col: MappingColumn;
  path: string;
  top: string;
  segments: readonly (string | number)[];
  set: Setter;
  /** Where the value goes, as a path (`netContents[0].value` for the quantity column `netContents[0]`). */
  place: string;
  /** The column's transform with its context bound (results of repeated cells kept for the types that repeat). */
  read: (cell: Cell) => TransformResult;
  /** A `string` column: the value is the cell's text (no transform, no result to build). */
  text: boolean;
  /** The cell through the column's value map (kept per distinct cell); undefined without one. */
  mapValue: ((cell: Cell) => Cell) | undefined;
  number: boolean;
  /**
   * Indexes in `columnIndex` of the column's sources: its own, then its fallbacks' (matchHeaders puts them after the
   * columns).
   */
  slots: readonly number[];
  /** A quantity's unit: where it goes. */
  unit: { path: string; segments: readonly (string | number)[]; set: Setter } | undefined;
}

/** A mapping default, with its setter and whether a lookup column feeds the same path. */
interface DefaultPlan {
  d: MappingDefault;
  set: Setter;
  lookedUp: boolean;
}

/** What mapRow needs of a mapping, computed once. */
interface MappingPlan {
  columns: readonly ColumnPlan[];
  defaults: readonly DefaultPlan[];
  keyField: 'gtin' | 'tradeItemId';
  /** Some path fills a list element past the first: the lists may have holes to close. */
  holes: boolean;
}

// Per column, at most this many value-map entries of distinct cells are kept.
const VALUE_MAP_CACHE = 2048;

function valueMapper(values: ReadonlyMap<string, string>): (cell: Cell) => Cell {
  const cache = new Map<string, Cell>();
  return (cell) => {
    if (typeof cell !== 'string') return applyValueMap(cell, values);
    let out = cache.get(cell);
    if (out === undefined) {
      out = applyValueMap(cell, values);
      if (cache.size < VALUE_MAP_CACHE) cache.set(cell, out);
    }
    return out;
  };
}

const plans = new WeakMap<Mapping, MappingPlan>();

/**
 * Each mapping column's indexes in `columnIndex` (matchHeaders'): its own, then its fallbacks' (field-fill.ts counts
 * the cells they hold).
 */
export function columnSlots(mapping: Mapping): readonly (readonly number[])[] {
  return planOf(mapping).columns.map((p) => p.slots);
}

function planOf(mapping: Mapping): MappingPlan {
  let plan = plans.get(mapping);
  if (plan === undefined) {
    let nextFallback = mapping.columns.length;
    const columns = mapping.columns.map((col, i): ColumnPlan => {
      const fallbacks = Math.max(0, col.sources.length - 1);
      const slots = [i, ...Array.from({ length: fallbacks }, () => nextFallback++)];
      const unit = col.field.unit;
      const transform =
        col.type === 'quantity' && unit?.leaf === 'weightUnit' ? toWeightQuantity : TRANSFORMS[col.type];
      const ctx: TransformContext = {
        decimalSeparator: col.decimal,
        dateFormat: col.format,
        language: mapping.language,
      };
      return {
        col,
        path: col.field.path,
        top: col.field.top,
        segments: col.field.segments,
        set: setterOf(col.field.segments),
        place: placeOf(col.field.segments),
        read: columnTransform(col.type, transform, ctx),
        text: transform === toStringValue && !unit,
        mapValue: col.values ? valueMapper(col.values) : undefined,
        number: col.field.leaf === 'number',
        slots,
        unit: unit ? { path: unit.path, segments: unit.segments, set: setterOf(unit.segments) } : undefined,
      };
    });
    const lookedUp = new Set(mapping.columns.filter((c) => c.lookup !== undefined).map((c) => c.field.path));
    const paths = [...mapping.columns.map((c) => c.field), ...mapping.defaults.map((d) => d.field)].flatMap((f) =>
      f.unit ? [f.segments, f.unit.segments] : [f.segments],
    );
    plan = {
      columns,
      defaults: mapping.defaults.map((d) => ({
        d,
        set: setterOf(d.field.segments),
        lookedUp: lookedUp.has(d.field.path),
      })),
      keyField: mapping.key === 'gtin' ? 'gtin' : 'tradeItemId',
      holes: paths.some((segments) => segments.some((s) => typeof s === 'number' && s > 0)),
    };
    plans.set(mapping, plan);
  }
  return plan;
}

/** Where a field's value came from: the sheet column (as issues name it) and the cell as text. */
type Origin = { column: string; value: string | null };

/** What mapRow needs of one sheet (one `columnIndex`): the names issues give each source, and the drafts' class. */
interface SheetPlan {
  mapping: Mapping;
  headers: readonly string[];
  plan: MappingPlan;
  /** Per column, the sheet index of each of its sources (-1: not in the sheet). */
  at: readonly (readonly number[])[];
  labels: readonly (readonly string[])[];
  /** The headers the mapping reads: the reader's HIDDEN_COLUMN warnings about other columns are dropped. */
  read: ReadonlySet<string>;
  /** The class of the sheet's drafts: `new Draft(row, key, target, fields, clear, issues, source)`. */
  Draft: new (...args: DraftArgs) => Draft;
}

type DraftArgs = [Draft['row'], Draft['key'], Draft['target'], Draft['fields'], string[], Issue[], Cell[]];

/**
 * The labels of a lookup column's cell: each part's text (a cell without `split` is one part), empty ones left out; the
 * first one only for a field that is not a list.
 */
function lookupValues(p: ColumnPlan, cell: Cell): string[] {
  const { col, mapValue } = p;
  if (col.split === undefined) {
    // One cell, one label: the common case, without the lists below.
    const v = cellText(mapValue ? mapValue(cell) : cell);
    return v === '' ? [] : [v];
  }
  const values = splitCell(cell, col.split)
    .map((v) => cellText(mapValue ? mapValue(v) : v))
    .filter((v) => v !== '');
  return col.field.array ? values : values.slice(0, 1);
}

/** The cell a column takes on a row, and which of its sources gave it: its own, else the first non-empty fallback. */
function pick(cells: readonly Cell[], at: readonly number[]): { cell: Cell; source: number } {
  const idx = at[0]!;
  let cell: Cell = idx >= 0 ? (cells[idx] ?? null) : null;
  let source = 0;
  for (let k = 1; k < at.length && isEmptyCell(cell); k++) {
    const j = at[k]!;
    const c: Cell = j >= 0 ? (cells[j] ?? null) : null;
    if (!isEmptyCell(c)) {
      cell = c;
      source = k;
    }
  }
  return { cell, source };
}

/**
 * The origins of a row's fields, computed from its cells when asked (validation's messages, the preview): each column's
 * path with the column that gave the cell and the cell's text, and a quantity's unit path with its column where the
 * row set that unit — as mapRow fills the fields.
 */
function originsOf(sp: SheetPlan, cells: readonly Cell[]): Record<string, Origin> {
  const origins: Record<string, Origin> = {};
  const units = new Map<string, string | undefined>();
  const columns = sp.plan.columns;
  for (let i = 0; i < columns.length; i++) {
    const { col, path, read, mapValue, unit } = columns[i]!;
    const { cell, source } = pick(cells, sp.at[i]!);
    const origin = { column: sp.labels[i]![source]!, value: textOf(cell) };
    origins[path] = origin;
    if (!unit || isEmptyCell(cell) || col.lookup !== undefined || col.split !== undefined) continue;
    const r = read(mapValue ? mapValue(cell) : cell);
    if ('issue' in r) continue;
    // Two quantity columns of one unit: the second one's unit is not set when it differs (QUANTITY_UNIT_MISMATCH).
    const prev = units.get(unit.path);
    if (prev !== undefined && prev !== r.unit) continue;
    units.set(unit.path, r.unit);
    origins[unit.path] = origin;
  }
  return origins;
}

const originsMemo = new WeakMap<Draft, Record<string, Origin>>();

function sheetPlanOf(mapping: Mapping, headers: readonly string[], columnIndex: readonly number[]): SheetPlan {
  const plan = planOf(mapping);
  const at = plan.columns.map((p) => p.slots.map((slot) => columnIndex[slot] ?? -1));
  const labels = plan.columns.map((p, i) =>
    at[i]!.map((idx, k) => {
      const ref = p.col.sources[k];
      if (idx < 0) return p.col.columns[0] ?? '';
      return ref ? sourceLabel(ref, idx, headers) : (headers[idx] ?? '');
    }),
  );
  const read = new Set(columnIndex.filter((idx) => idx >= 0).map((idx) => headers[idx]!));
  const sp: SheetPlan = {
    mapping,
    headers,
    plan,
    at,
    labels,
    read,
    // The drafts of this sheet: `origins` is a getter of their class, computed from `source` on the first read.
    Draft: class MappedDraft implements Draft {
      declare row: number;
      declare key: string | null;
      declare target: Draft['target'];
      declare fields: Record<string, unknown>;
      declare clear: string[];
      declare issues: Issue[];
      declare source: Cell[];
      declare lookups?: DraftLookup[];
      constructor(
        row: number,
        key: string | null,
        target: Draft['target'],
        fields: Record<string, unknown>,
        clear: string[],
        issues: Issue[],
        source: Cell[],
      ) {
        this.row = row;
        this.key = key;
        this.target = target;
        this.fields = fields;
        this.clear = clear;
        this.issues = issues;
        this.source = source;
      }

      get origins(): Record<string, Origin> {
        let o = originsMemo.get(this);
        if (o === undefined) originsMemo.set(this, (o = originsOf(sp, this.source)));
        return o;
      }
    },
  };
  return sp;
}

/** The plan of each sheet being mapped (one `columnIndex` each, from matchHeaders). */
const sheetPlans = new WeakMap<readonly number[], SheetPlan>();

function sheetPlanFor(mapping: Mapping, headers: readonly string[], columnIndex: readonly number[]): SheetPlan {
  let sp = sheetPlans.get(columnIndex);
  if (!sp || sp.mapping !== mapping || sp.headers !== headers) {
    sp = sheetPlanOf(mapping, headers, columnIndex);
    sheetPlans.set(columnIndex, sp);
  }
  return sp;
}

/**
 * The draft of one sheet row: fields built from the mapping's columns (transformed, nested by path, numbers as
 * numbers where the API wants them), `clear` for empty cells of `empty: clear` columns (top-level field names),
 * defaults for fields the row leaves without value, lookup labels in `lookups` (their fields left out), the key
 * (GTIN-14 or tradeItemId), and the reader's issues plus every cell issue; `origins` (each field's column and cell)
 * is computed from the row's cells when read. `columnIndex` comes from matchHeaders.
 */
export function mapRow(
  sheetRow: SheetRow,
  headers: readonly string[],
  mapping: Mapping,
  columnIndex: readonly number[],
): Draft {
  const sp = sheetPlanFor(mapping, headers, columnIndex);
  const { plan, at, labels } = sp;
  const row = sheetRow.row;
  const fields: Record<string, unknown> = {};
  // The reader warns about every hidden column (it does not know the mapping): only those the mapping reads matter.
  const issues: Issue[] =
    sheetRow.issues.length === 0
      ? []
      : sheetRow.issues.filter((x) => x.code !== 'HIDDEN_COLUMN' || (x.column !== null && sp.read.has(x.column)));
  // Made only on the rows that need them: lookup labels, tops of empty `clear` cells, places left without value by an
  // issue.
  let lookups: DraftLookup[] | undefined;
  let cleared: string[] | undefined;
  let failed: string[] | undefined;

  const cells = sheetRow.cells;
  const columns = plan.columns;
  for (let i = 0; i < columns.length; i++) {
    const p = columns[i]!;
    const { col } = p;
    const slots = at[i]!;
    const idx = slots[0]!;
    let cell: Cell = idx >= 0 ? (cells[idx] ?? null) : null;
    let source = 0;
    if (slots.length > 1 && isEmptyCell(cell)) ({ cell, source } = pick(cells, slots));

    if (isEmptyCell(cell)) {
      if (col.required) {
        const column = labels[i]![source]!;
        const others =
          slots.length > 1
            ? ` (and so ${slots.length > 2 ? 'are its fallbacks' : 'is its fallback'} ${labels[i]!.slice(1).join(', ')})`
            : '';
        issues.push(
          issue('REQUIRED_EMPTY', {
            row,
            column,
            field: p.path,
            value: textOf(cell),
            message: `${column} is required and empty${others}`,
          }),
        );
        (failed ??= []).push(p.place);
      }
      if (col.empty === 'clear') (cleared ??= []).push(p.top);
      continue;
    }

    if (col.lookup !== undefined) {
      const lookup: DraftLookup = {
        field: p.path,
        segments: p.segments,
        column: labels[i]![source]!,
        values: lookupValues(p, cell),
        array: col.field.array,
        lookup: col.lookup,
      };
      // Made with its first element (an empty literal grown by one element gets room for 17).
      if (lookups === undefined) lookups = [lookup];
      else lookups.push(lookup);
      continue;
    }

    if (col.split === undefined) {
      // One cell, one value: the common case, without the lists below.
      const part = p.mapValue ? p.mapValue(cell) : cell;
      if (p.text) {
        const t = cellText(part);
        const v = p.number ? Number(t) : t;
        p.set(fields, col.field.array ? [v] : v);
        continue;
      }
      const r = p.read(part);
      if ('issue' in r) {
        issues.push(columnIssue(row, labels[i]![source]!, col, part, r.issue));
        (failed ??= []).push(p.place);
        if (p.unit) failed.push(p.unit.path);
        continue;
      }
      if (r.warning) issues.push(columnIssue(row, labels[i]![source]!, col, part, r.warning));
      const v = p.number ? Number(r.value) : r.value;
      if (p.unit) {
        // A unit another quantity column of the row set (variableWeight's minimum and maximum share one): never
        // converted.
        const prev = getAt(fields, p.unit.segments);
        if (prev !== undefined && prev !== r.unit) {
          issues.push(
            columnIssue(row, labels[i]![source]!, col, part, {
              code: 'QUANTITY_UNIT_MISMATCH',
              message: `"${cellText(part)}" is in another unit than the other quantity of ${p.top} on this row (units are never converted): give both in the same unit`,
            }),
          );
          (failed ??= []).push(p.place);
          continue;
        }
        p.unit.set(fields, r.unit);
      }
      p.set(fields, col.field.array ? [v] : v);
      continue;
    }

    // A list cell: each part read as a cell of its own (most hold one part: the list is made with it).
    let out: (string | number)[] | undefined;
    let bad = false;
    for (const s of splitCell(cell, col.split)) {
      const part = p.mapValue ? p.mapValue(s) : s;
      let v: string | number;
      if (p.text) v = cellText(part);
      else {
        const r = p.read(part);
        if ('issue' in r) {
          issues.push(columnIssue(row, labels[i]![source]!, col, part, r.issue));
          bad = true;
          continue;
        }
        if (r.warning) issues.push(columnIssue(row, labels[i]![source]!, col, part, r.warning));
        v = r.value;
      }
      if (p.number) v = Number(v);
      if (out === undefined) out = [v];
      else out.push(v);
    }
    if (bad) {
      (failed ??= []).push(p.place);
      continue;
    }
    if (out === undefined) continue;
    p.set(fields, col.field.array ? out : out[0]);
  }

  for (const { d, set, lookedUp } of plan.defaults) {
    if (cleared?.includes(d.field.top) || failed?.includes(d.field.path)) continue;
    if (getAt(fields, d.field.segments) !== undefined || (lookedUp && lookups?.some((l) => l.field === d.field.path)))
      continue;
    set(fields, Array.isArray(d.value) ? [...d.value] : d.value);
  }
  if (plan.holes) compact(fields);

  const keyField = plan.keyField;
  const keyValue = fields[keyField];
  const key = typeof keyValue === 'string' && keyValue !== '' ? keyValue : null;
  if (
    key === null &&
    !failed?.includes(keyField) &&
    !issues.some((x) => x.field === keyField && x.severity === 'error')
  ) {
    const origin = originsOf(sp, cells)[keyField];
    issues.push(
      issue('KEY_MISSING', {
        row,
        column: origin?.column ?? null,
        field: keyField,
        value: origin?.value ?? null,
        message: `the row has no ${keyField}: it cannot be matched to an item`,
      }),
    );
  }

  // A field some column of this row fills is not cleared: only whole top-level fields are sent as null (every value
  // of a top, and every lookup label of one, is under fields[top] or in lookups).
  const clear =
    cleared === undefined
      ? []
      : [...new Set(cleared)].filter((t) => fields[t] === undefined && !lookups?.some((l) => l.segments[0] === t));
  const draft = new sp.Draft(row, key, mapping.target, fields, clear, issues, sheetRow.cells);
  if (lookups !== undefined) draft.lookups = lookups;
  return draft;
}

/**
 * The match key of a row without mapping the whole row (the first pass of a run): the key column's cell (or the first
 * non-empty one of its fallbacks) through its value map and transform, exactly as mapRow computes it; null where
 * mapRow's key would be null. A mapping whose key comes from no column (a default) falls back to mapRow.
 */
export function rowKeyReader(
  headers: readonly string[],
  mapping: Mapping,
  columnIndex: readonly number[],
  /** Told of each row whose key cannot be read: the key cell as text (null when empty). */
  unreadable?: (row: number, text: string | null) => void,
): (row: SheetRow) => string | null {
  const keyField = mapping.key === 'gtin' ? 'gtin' : 'tradeItemId';
  const i = mapping.columns.findIndex(
    (c) => c.field.path === keyField && c.lookup === undefined && c.split === undefined,
  );
  const p = planOf(mapping).columns[i];
  if (!p || (columnIndex[i] ?? -1) < 0)
    return (row) => {
      const d = mapRow(row, headers, mapping, columnIndex);
      if (d.key === null) unreadable?.(row.row, d.origins?.[keyField]?.value ?? null);
      return d.key;
    };
  const { read, mapValue } = p;
  const idxs = p.slots.map((s) => columnIndex[s] ?? -1);
  return (row) => {
    let cell: Cell = row.cells[idxs[0]!] ?? null;
    for (let k = 1; k < idxs.length && isEmptyCell(cell); k++)
      cell = idxs[k]! >= 0 ? (row.cells[idxs[k]!] ?? null) : null;
    if (isEmptyCell(cell)) {
      unreadable?.(row.row, null);
      return null;
    }
    const r = read(mapValue ? mapValue(cell) : cell);
    if ('issue' in r || r.value === '') {
      unreadable?.(row.row, textOf(cell));
      return null;
    }
    return r.value;
  };
}

/**
 * Each place a drop-field column fills (`netContents[0].value`, its unit), with the column: where validation issues may
 * be dropped.
 */
const dropPlans = new WeakMap<Mapping, ReadonlyMap<string, ColumnPlan>>();

function dropPlanOf(mapping: Mapping): ReadonlyMap<string, ColumnPlan> {
  let m = dropPlans.get(mapping);
  if (m === undefined) {
    const places = new Map<string, ColumnPlan>();
    for (const p of planOf(mapping).columns) {
      if (p.col.onInvalid !== 'drop-field') continue;
      places.set(p.place, p);
      if (p.unit) places.set(p.unit.path, p);
    }
    m = places;
    dropPlans.set(mapping, m);
  }
  return m;
}

/** `netContents[0].value` → ['netContents', 0, 'value']. */
function segmentsOf(path: string): (string | number)[] {
  return [...path.matchAll(/([^.[\]]+)|\[(\d+)\]/g)].map((m) => (m[2] !== undefined ? Number(m[2]) : m[1]!));
}

/** Removes the value at a path, and the objects and list elements that it leaves empty. */
function unsetAt(root: Record<string, unknown>, segments: readonly (string | number)[]): void {
  const chain: unknown[] = [root];
  for (let i = 0; i < segments.length - 1; i++) {
    const next = (chain[i] as Record<string | number, unknown>)[segments[i]!];
    if (next === null || typeof next !== 'object') return;
    chain.push(next);
  }
  for (let i = segments.length - 1; i >= 0; i--) {
    const parent = chain[i] as Record<string | number, unknown> | unknown[];
    const key = segments[i]!;
    if (Array.isArray(parent) && typeof key === 'number') parent.splice(key, 1);
    else delete (parent as Record<string | number, unknown>)[key];
    if (Array.isArray(parent) ? parent.length > 0 : Object.keys(parent).length > 0) return;
  }
}

/**
 * The validation issues of a draft (validateDraft), where those on a field of an `onInvalid: drop-field` column become
 * FIELD_DROPPED warnings and the refused value leaves the draft (a list field goes whole; a quantity takes its unit
 * along when nothing else of its object remains). Other issues pass as they are.
 */
export function dropRefusedFields(draft: Draft, issues: Issue[], mapping: Mapping): Issue[] {
  if (issues.length === 0) return issues;
  const drops = dropPlanOf(mapping);
  if (drops.size === 0) return issues;
  return issues.map((x) => {
    if (x.severity !== 'error' || x.field === null) return x;
    const at = segmentsOf(x.field);
    let p: ColumnPlan | undefined;
    let n = at.length;
    // The column that fills this place, or the list it is an element of (countriesOfOrigin[2] → countriesOfOrigin).
    for (; n > 0 && p === undefined; n--) p = drops.get(placeOf(at.slice(0, n)));
    if (p === undefined) return x;
    const place = at.slice(0, n + 1);
    unsetAt(draft.fields, place);
    if (p.unit) {
      const object = getAt(draft.fields, place.slice(0, -1));
      if (object && typeof object === 'object' && Object.keys(object).length === 1 && 'unitOfMeasure' in object)
        unsetAt(draft.fields, [...place.slice(0, -1), 'unitOfMeasure']);
    }
    return droppedIssue(x);
  });
}
