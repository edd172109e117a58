/** Row → draft: applies a mapping's transforms, builds the nested API body, records empty-cell policy and lookups. */
import type { Mapping, MappingColumn } from '/work/main/src/pipeline/map/mapping.ts';
import { applyValueMap, cellText, isEmptyCell, splitCell, TRANSFORMS } from '/work/main/src/pipeline/map/transforms.ts';
import { issue, type FixedSeverityCode } from '/work/main/src/pipeline/issue-codes.ts';
import type { Cell, Draft, DraftLookup, Issue, SheetRow } from '/work/main/src/pipeline/types.ts';

// Field paths come from the validated mapping (names of the spec's field tables), never from headers; this guard
// keeps that true if a future change lets other keys through.
const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Sets `value` at a path of keys and indexes, creating objects and arrays on the way (keys from the mapping only). */
export function setAt(root: Record<string, unknown>, segments: readonly (string | number)[], value: unknown): void {
  let node: Record<string | number, unknown> | unknown[] = root;
  segments.forEach((seg, i) => {
    if (typeof seg === 'string' && FORBIDDEN_KEYS.has(seg)) throw new Error(`unsafe field key ${seg}`);
    const last = i === segments.length - 1;
    const container = node as Record<string | number, unknown>;
    if (last) {
      container[seg] = value;
      return;
    }
    let next = container[seg];
    if (next === undefined) {
      next = typeof segments[i + 1] === 'number' ? [] : {};
      container[seg] = next;
    }
    node = next as Record<string, unknown>;
  });
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
  for (const [k, v] of Object.entries(fields)) if (Array.isArray(v)) fields[k] = v.filter((x) => x !== undefined);
}

const textOf = (cell: Cell): string | null => (cell === null ? null : cellText(cell));

function columnIssue(row: number, column: string, col: MappingColumn, cell: Cell, i: { code: FixedSeverityCode; message: string }): Issue {
  return issue(i.code, { row, column, field: col.field.path, value: textOf(cell), message: i.message });
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
  const issues: Issue[] = sheetRow.issues.filter((x) => x.code !== 'HIDDEN_COLUMN' || columnIndex.some((idx) => idx >= 0 && headers[idx] === x.column));
  const lookups: DraftLookup[] = [];
  const origins: Record<string, { column: string; value: string | null }> = {};
  const clearTops = new Set<string>();
  const filledTops = new Set<string>();
  const failed = new Set<string>();

  mapping.columns.forEach((col, i) => {
    const idx = columnIndex[i] ?? -1;
    const column = headers[idx] ?? col.columns[0] ?? '';
    const cell: Cell = idx >= 0 ? (sheetRow.cells[idx] ?? null) : null;
    const path = col.field.path;
    origins[path] = { column, value: textOf(cell) };

    if (isEmptyCell(cell)) {
      if (col.required) {
        issues.push(columnIssue(row, column, col, cell, { code: 'REQUIRED_EMPTY', message: `${column} is required and empty` }));
        failed.add(path);
      }
      if (col.empty === 'clear') clearTops.add(col.field.top);
      return;
    }
    const parts = col.split !== undefined ? splitCell(cell, col.split) : [cell];
    const mapped = parts.map((p) => applyValueMap(p, col.values));

    if (col.lookup !== undefined) {
      const values = mapped.map((p) => cellText(p)).filter((v) => v !== '');
      lookups.push({ field: path, segments: col.field.segments, column, values: col.field.array ? values : values.slice(0, 1), array: col.field.array, lookup: col.lookup });
      filledTops.add(col.field.top);
      return;
    }

    const transform = TRANSFORMS[col.type];
    const ctx = { decimalSeparator: col.decimal, dateFormat: col.format, language: mapping.language };
    const out: (string | number)[] = [];
    let bad = false;
    for (const part of mapped) {
      const r = transform(part, ctx);
      if ('issue' in r) {
        issues.push(columnIssue(row, column, col, part, r.issue));
        bad = true;
        continue;
      }
      if (r.warning) issues.push(columnIssue(row, column, col, part, r.warning));
      out.push(col.field.leaf === 'number' ? Number(r.value) : r.value);
    }
    if (bad) {
      failed.add(path);
      return;
    }
    if (out.length === 0) return;
    setAt(fields, col.field.segments, col.field.array ? out : out[0]);
    filledTops.add(col.field.top);
  });

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
