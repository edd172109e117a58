/** Row → draft: applies a mapping's transforms, builds the nested API body, records empty-cell policy and lookups. */
import type { Mapping, MappingColumn } from './mapping.ts';
import { applyValueMap, cellText, isEmptyCell, splitCell, TRANSFORMS, type Transform, type TransformContext } from './transforms.ts';
import { issue, type FixedSeverityCode } from '../issue-codes.ts';
import type { Cell, Draft, DraftLookup, Issue, SheetRow } from '../types.ts';

// Field paths come from the validated mapping (names of the spec's field tables), never from headers; this guard
// keeps that true if a future change lets other keys through.
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Sets `value` at a path of keys and indexes, creating objects and arrays on the way (keys from the mapping only). */
export function setAt(root: Record<string, unknown>, segments: readonly (string | number)[], value: unknown): void {
  let node = root as Record<string | number, unknown>;
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const seg = segments[i]!;
    if (typeof seg === 'string' && FORBIDDEN_KEYS.has(seg)) throw new Error(`unsafe field key ${seg}`);
    if (i === last) {
      node[seg] = value;
      return;
    }
    let next = node[seg];
    if (next === undefined) {
      next = typeof segments[i + 1] === 'number' ? [] : {};
      node[seg] = next;
    }
    node = next as Record<string | number, unknown>;
  }
}

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

function columnIssue(row: number, column: string, col: MappingColumn, cell: Cell, i: { code: FixedSeverityCode; message: string }): Issue {
  return issue(i.code, { row, column, field: col.field.path, value: textOf(cell), message: i.message });
}

/** What mapRow needs of one mapping column, computed once per mapping rather than on every row. */
interface ColumnPlan {
  col: MappingColumn;
  path: string;
  top: string;
  segments: readonly (string | number)[];
  transform: Transform;
  ctx: TransformContext;
  number: boolean;
}

const plans = new WeakMap<Mapping, readonly ColumnPlan[]>();

function planOf(mapping: Mapping): readonly ColumnPlan[] {
  let plan = plans.get(mapping);
  if (plan === undefined) {
    plan = mapping.columns.map((col) => ({
      col,
      path: col.field.path,
      top: col.field.top,
      segments: col.field.segments,
      transform: TRANSFORMS[col.type],
      ctx: { decimalSeparator: col.decimal, dateFormat: col.format, language: mapping.language },
      number: col.field.leaf === 'number',
    }));
    plans.set(mapping, plan);
  }
  return plan;
}

/**
 * The draft of one sheet row: fields built from the mapping's columns (transformed, nested by path, numbers as
 * numbers where the API wants them), `clear` for empty cells of `empty: clear` columns (top-level field names),
 * defaults for fields the row leaves without value, lookup labels in `lookups` (their fields left out), the key
 * (GTIN-14 or tradeItemId), and the reader's issues plus every cell issue. `columnIndex` comes from matchHeaders.
 */
export function mapRow(sheetRow: SheetRow, headers: readonly string[], mapping: Mapping, columnIndex: readonly number[]): Draft {
  const row = sheetRow.row;
  const fields: Record<string, unknown> = {};
  // The reader warns about every hidden column (it does not know the mapping): only those the mapping reads matter.
  const issues: Issue[] = sheetRow.issues.length === 0 ? [] : sheetRow.issues.filter((x) => x.code !== 'HIDDEN_COLUMN' || columnIndex.some((idx) => idx >= 0 && headers[idx] === x.column));
  const lookups: DraftLookup[] = [];
  const origins: Record<string, { column: string; value: string | null }> = {};
  const clearTops = new Set<string>();
  const filledTops = new Set<string>();
  const failed = new Set<string>();

  const plan = planOf(mapping);
  const cells = sheetRow.cells;
  for (let i = 0; i < plan.length; i++) {
    const { col, path, top, segments, transform, ctx, number } = plan[i]!;
    const idx = columnIndex[i] ?? -1;
    const column = headers[idx] ?? col.columns[0] ?? '';
    const cell: Cell = idx >= 0 ? (cells[idx] ?? null) : null;
    origins[path] = { column, value: textOf(cell) };

    if (isEmptyCell(cell)) {
      if (col.required) {
        issues.push(columnIssue(row, column, col, cell, { code: 'REQUIRED_EMPTY', message: `${column} is required and empty` }));
        failed.add(path);
      }
      if (col.empty === 'clear') clearTops.add(top);
      continue;
    }

    if (col.lookup !== undefined) {
      const parts = col.split !== undefined ? splitCell(cell, col.split) : [cell];
      const values = parts.map((p) => cellText(applyValueMap(p, col.values))).filter((v) => v !== '');
      lookups.push({ field: path, segments, column, values: col.field.array ? values : values.slice(0, 1), array: col.field.array, lookup: col.lookup });
      filledTops.add(top);
      continue;
    }

    if (col.split === undefined) {
      // One cell, one value: the common case, without the lists below.
      const part = applyValueMap(cell, col.values);
      const r = transform(part, ctx);
      if ('issue' in r) {
        issues.push(columnIssue(row, column, col, part, r.issue));
        failed.add(path);
        continue;
      }
      if (r.warning) issues.push(columnIssue(row, column, col, part, r.warning));
      const v = number ? Number(r.value) : r.value;
      setAt(fields, segments, col.field.array ? [v] : v);
      filledTops.add(top);
      continue;
    }

    const out: (string | number)[] = [];
    let bad = false;
    for (const p of splitCell(cell, col.split)) {
      const part = applyValueMap(p, col.values);
      const r = transform(part, ctx);
      if ('issue' in r) {
        issues.push(columnIssue(row, column, col, part, r.issue));
        bad = true;
        continue;
      }
      if (r.warning) issues.push(columnIssue(row, column, col, part, r.warning));
      out.push(number ? Number(r.value) : r.value);
    }
    if (bad) {
      failed.add(path);
      continue;
    }
    if (out.length === 0) continue;
    setAt(fields, segments, col.field.array ? out : out[0]);
    filledTops.add(top);
  }

  for (const d of mapping.defaults) {
    if (clearTops.has(d.field.top) || failed.has(d.field.path)) continue;
    if (getAt(fields, d.field.segments) !== undefined || lookups.some((l) => l.field === d.field.path)) continue;
    setAt(fields, d.field.segments, Array.isArray(d.value) ? [...d.value] : d.value);
    filledTops.add(d.field.top);
  }
  compact(fields);

  const keyField = mapping.key === 'gtin' ? 'gtin' : 'tradeItemId';
  const keyValue = fields[keyField];
  const key = typeof keyValue === 'string' && keyValue !== '' ? keyValue : null;
  if (key === null && !failed.has(keyField) && !issues.some((x) => x.field === keyField && x.severity === 'error')) {
    const origin = origins[keyField];
    issues.push(issue('KEY_MISSING', {
      row, column: origin?.column ?? null, field: keyField, value: origin?.value ?? null,
      message: `the row has no ${keyField}: it cannot be matched to an item`,
    }));
  }

  const draft: Draft = {
    row,
    key,
    target: mapping.target,
    fields,
    // A field some column of this row fills is not cleared: only whole top-level fields are sent as null.
    clear: [...clearTops].filter((t) => !filledTops.has(t)),
    issues,
    source: sheetRow.cells,
    origins,
  };
  if (lookups.length > 0) draft.lookups = lookups;
  return draft;
}

/**
 * The match key of a row without mapping the whole row (the first pass of a run): the key column's cell through its
 * value map and transform, exactly as mapRow computes it; null where mapRow's key would be null. A mapping whose key
 * comes from no column (a default) falls back to mapRow.
 */
export function rowKeyReader(headers: readonly string[], mapping: Mapping, columnIndex: readonly number[]): (row: SheetRow) => string | null {
  const keyField = mapping.key === 'gtin' ? 'gtin' : 'tradeItemId';
  const i = mapping.columns.findIndex((c) => c.field.path === keyField && c.lookup === undefined && c.split === undefined);
  const col = mapping.columns[i];
  if (!col || (columnIndex[i] ?? -1) < 0) return (row) => mapRow(row, headers, mapping, columnIndex).key;
  const idx = columnIndex[i]!;
  const transform = TRANSFORMS[col.type];
  const ctx = { decimalSeparator: col.decimal, dateFormat: col.format, language: mapping.language };
  return (row) => {
    const cell = row.cells[idx] ?? null;
    if (isEmptyCell(cell)) return null;
    const r = transform(applyValueMap(cell, col.values), ctx);
    return 'issue' in r || r.value === '' ? null : r.value;
  };
}
