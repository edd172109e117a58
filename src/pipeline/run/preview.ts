/**
 * The preview of a mapping over a sheet (`validate --preview`, the console mapper): the first N rows as a run would
 * send them — each mapped field with its column, the cell, the mapped value and, for lookups, the resolved id and label
 * — with the row's issues and outcome. It reads the sheet only up to row N + 1 and sends no write (brands are never
 * created).
 */
import { ProductSyncError } from '../../errors.ts';
import { valueAt } from '../../value-at.ts';
import { loadMapping, type Mapping } from '../map/mapping.ts';
import type { ReferenceResolver } from '../resolve/reference-resolver.ts';
import { DraftResolver } from '../resolve/resolve-drafts.ts';
import { visibleWorksheets } from '../../formats/worksheet-names.ts';
import type { Draft, DraftLookup, Severity, SheetRow, Target } from '../types.ts';
import { runOwner } from './open-run.ts';
import type { RunContext } from './run-context.ts';
import { draftReader, openMappedSheet, readSheetKeys, referenceResolverFor } from './sheet-pass.ts';

/** Rows a preview shows when not told (`--preview` without a number). */
export const PREVIEW_ROWS = 10;
/** The most rows a preview shows: it is for looking at, `validate` checks a whole sheet. */
export const PREVIEW_MAX_ROWS = 1000;

/** What to preview. */
export interface PreviewRequest {
  file: string;
  /** A mapping name or path (loaded), or a mapping already parsed (the console's, not saved yet). */
  mapping: string | Mapping;
  /** Rows to show (default PREVIEW_ROWS, at most PREVIEW_MAX_ROWS). */
  rows?: number;
  owner?: string;
  language?: string;
  sheet?: string;
}

/** One label of a lookup field, resolved: its id and the reference's own label (null when it has none to show). */
export interface PreviewResolved {
  /** The label as mapped (trimmed, split, value-mapped). */
  value: string;
  /** The id sent (a harmonized code for harmonized-code lookups); null when unresolved or a brand would be created. */
  id: string | null;
  label: string | null;
  code?: string;
  /** Why there is no id: the resolver's issue code (REF_UNKNOWN, BRAND_UNKNOWN…) or BRAND_WOULD_CREATE. */
  problem?: string;
}

/** One mapped field of a previewed row. */
export interface PreviewField {
  /** The field path (`netContents[0].value`). */
  field: string;
  /** The sheet header it was read from; null for a value from the mapping's `defaults`. */
  column: string | null;
  /** The cell as text; null when empty (or for a default). */
  sheetValue: string | null;
  /** The value after the column's transform (for a lookup, its labels); null when the cell is empty or was refused. */
  mapped: unknown;
  /** Lookup fields only: one entry per label. */
  resolved?: PreviewResolved[];
}

/** An issue of a previewed row. */
export interface PreviewIssue {
  code: string;
  severity: Severity;
  message: string;
  column: string | null;
  field: string | null;
  value: string | null;
}

/** One previewed row. */
export interface PreviewRow {
  /** The sheet's own row number. */
  row: number;
  key: string | null;
  /** What `validate` would say of the row (duplicate keys as `duplicateKeys` tells). */
  outcome: 'valid' | 'invalid';
  fields: PreviewField[];
  issues: PreviewIssue[];
}

/** A preview: its rows, and how far it saw (documented in docs/reports.md, "Preview"). */
export interface Preview {
  version: 1;
  file: string;
  mapping: string;
  target: Target;
  language: string;
  sheet: string | null;
  headers: string[];
  rowsRequested: number;
  /** True when the sheet has rows after the ones shown (they were not read). */
  more: boolean;
  /** Where DUPLICATE_KEY was looked for: among the rows shown, or the whole sheet when it has no more rows. */
  duplicateKeys: 'previewed-rows' | 'whole-sheet';
  counts: { rows: number; valid: number; invalid: number };
  rows: PreviewRow[];
  /** Sentences a person should read with the rows. */
  notes: string[];
}

type Segment = string | number;

/** A path as the mapping writes it: `netContents[0].value`. */
function pathOf(segments: readonly Segment[]): string {
  return segments.map((x, i) => (typeof x === 'number' ? `[${x}]` : i === 0 ? x : `.${x}`)).join('');
}

async function* rowsOf(rows: readonly SheetRow[]): AsyncGenerator<SheetRow> {
  yield* rows;
}

/** The id and label of one lookup label, through the run's resolver (read-only: brands are never created). */
async function resolveForDisplay(refs: ReferenceResolver, l: DraftLookup, value: string): Promise<PreviewResolved> {
  const spec = l.lookup;
  if (spec === 'harmonized-code') {
    const r = await refs.verifyHarmonizedCode(value);
    return 'issue' in r
      ? { value, id: null, label: null, problem: r.issue }
      : { value, id: r.code, label: null, code: r.code };
  }
  if ('brand' in spec) {
    const r = await refs.resolveBrand(value, { create: spec.brand.create ?? false });
    if ('issue' in r) return { value, id: null, label: null, problem: r.issue };
    return r.brandId === null
      ? { value, id: null, label: value, problem: 'BRAND_WOULD_CREATE' }
      : { value, id: r.brandId, label: value };
  }
  if ('list' in spec) {
    const r = await refs.resolveListLabel(spec.list, value);
    return 'issue' in r
      ? { value, id: null, label: null, problem: r.issue }
      : { value, id: r.id, label: r.name, code: r.code };
  }
  const r = await refs.verifyLookupId(spec.kind, value);
  return 'issue' in r
    ? { value, id: null, label: null, problem: r.issue }
    : { value, id: r.id, label: r.name ?? null, ...(r.code ? { code: r.code } : {}) };
}

/** The fields of a draft as the preview shows them (before resolution: `fields` holds no lookup id yet). */
function previewFields(d: Draft, mapping: Mapping, lookups: readonly DraftLookup[]): PreviewField[] {
  const out: PreviewField[] = [];
  const origins = d.origins ?? {};
  for (const col of mapping.columns) {
    const path = col.field.path;
    const origin = origins[path];
    const column = origin?.column ?? col.columns[0] ?? null;
    const sheetValue = origin?.value ?? null;
    const lookup = lookups.find((l) => l.field === path);
    const v = valueAt(d.fields, col.field.segments);
    const mapped = lookup ? (lookup.array ? lookup.values : (lookup.values[0] ?? null)) : (v ?? null);
    // A quantity column ("500 g") feeds two fields: its number and its unit.
    const unit = (col.field as { unit?: { path: string; segments: readonly Segment[] } }).unit;
    out.push({ field: unit ? pathOf(col.field.segments) : path, column, sheetValue, mapped: structuredClone(mapped) });
    if (unit)
      out.push({
        field: unit.path,
        column,
        sheetValue,
        mapped: structuredClone(valueAt(d.fields, unit.segments) ?? null),
      });
  }
  for (const def of mapping.defaults) {
    const fed = out.find((f) => f.field === def.field.path);
    // A default fills a field only where the row leaves it empty.
    if (fed && fed.sheetValue !== null) continue;
    const v = valueAt(d.fields, def.field.segments);
    if (v === undefined) continue;
    if (fed) fed.mapped = structuredClone(v);
    else out.push({ field: def.field.path, column: null, sheetValue: null, mapped: structuredClone(v) });
  }
  return out;
}

/**
 * The first `rows` rows of a sheet through a mapping: mapped, validated, duplicate keys looked for among them, labels
 * resolved (read-only). Throws what a run throws for a bad mapping, owner or file (PS_ERR_*), and PS_ERR_CLI_USAGE for
 * a row count out of range.
 */
export async function previewSheet(req: PreviewRequest, ctx: RunContext): Promise<Preview> {
  const n = req.rows ?? PREVIEW_ROWS;
  if (!Number.isInteger(n) || n < 1 || n > PREVIEW_MAX_ROWS)
    throw new ProductSyncError('PS_ERR_CLI_USAGE', `a preview shows 1 to ${PREVIEW_MAX_ROWS} rows, not ${n}`);
  const mapping = typeof req.mapping === 'string' ? await loadMapping(req.mapping) : req.mapping;
  const owner = runOwner(
    { file: req.file, mapping: mapping.file, ...(req.owner ? { owner: req.owner } : {}) },
    mapping,
    ctx,
  );
  const sheet = await openMappedSheet({ file: req.file, ...(req.sheet ? { sheet: req.sheet } : {}) }, mapping);

  // Only N rows, and one more to know whether the sheet goes on: leaving the loop closes the reader.
  const read: SheetRow[] = [];
  let more = false;
  for await (const row of sheet.rows) {
    if (read.length === n) {
      more = true;
      break;
    }
    read.push(row);
  }

  // The run's two passes over those rows only: their keys (duplicates among them), then their drafts.
  const keys = await readSheetKeys({ ...sheet, rows: rowsOf(read) }, mapping, {});
  const draftOf = draftReader(sheet, mapping, keys);
  const drafts = read.map(draftOf);
  const lookups = drafts.map((d) => [...(d.lookups ?? [])]);
  const fields = drafts.map((d, i) => previewFields(d, mapping, lookups[i]!));

  const langReq = req.language ? { language: req.language } : {};
  const refs = referenceResolverFor(ctx, langReq, mapping, owner, true);
  // The run's own resolution: the same issues and ids as `validate` (a row already invalid is resolved too, its brands
  // looked up only).
  await new DraftResolver(refs).resolveChunk(drafts);
  // And the labels of the ids, for every row (the reference lists are read once per run either way).
  await Promise.all(
    fields.map(async (fs, i) => {
      for (const l of lookups[i]!) {
        const f = fs.find((x) => x.field === l.field);
        if (f) f.resolved = await Promise.all(l.values.map((v) => resolveForDisplay(refs, l, v)));
      }
    }),
  );

  const rows: PreviewRow[] = drafts.map((d, i) => ({
    row: d.row,
    key: d.key,
    outcome: d.issues.some((x) => x.severity === 'error') ? 'invalid' : 'valid',
    fields: fields[i]!,
    issues: d.issues.map((x) => ({
      code: x.code,
      severity: x.severity,
      message: x.message,
      column: x.column,
      field: x.field,
      value: x.value,
    })),
  }));
  const invalid = rows.filter((r) => r.outcome === 'invalid').length;
  const notes = [
    more
      ? `the sheet has more rows than the ${rows.length} shown: duplicate keys (DUPLICATE_KEY) were looked for among the rows shown only; validate without --preview checks the whole sheet`
      : `these are all the sheet's rows (${rows.length}): duplicate keys were looked for in the whole sheet`,
    'nothing was sent: brands a run would create are shown as BRAND_WOULD_CREATE',
  ];
  // A workbook of several worksheets: which one was read, and the others (the mapping's `sheet:` or --sheet chooses).
  const others = sheet.sheetName ? (await visibleWorksheets(req.file)).filter((n) => n !== sheet.sheetName) : [];
  if (others.length > 0)
    notes.unshift(
      `worksheet "${sheet.sheetName}" was read (${req.sheet ? '--sheet' : mapping.sheet ? "the mapping's sheet" : 'the first visible one'}); the workbook also has ${others.map((n) => `"${n}"`).join(', ')}: --sheet <name> or the mapping's sheet: reads another`,
    );
  return {
    version: 1,
    file: req.file,
    mapping: mapping.name,
    target: mapping.target,
    language: req.language ?? mapping.language,
    sheet: sheet.sheetName ?? null,
    headers: sheet.headers,
    rowsRequested: n,
    more,
    duplicateKeys: more ? 'previewed-rows' : 'whole-sheet',
    counts: { rows: rows.length, valid: rows.length - invalid, invalid },
    rows,
    notes,
  };
}
