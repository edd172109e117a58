import type { Redis } from 'ioredis';
import type { ApiClients } from '../api/clients.ts';
import { createReferenceCache } from '../api/reference-cache.ts';
import { createReferenceResolver, type ReferenceResolver } from './resolve/reference-resolver.ts';
import type { Config } from '../config.ts';
import { matchHeaders } from './map/headers.ts';
import { mapRow, setAt } from './map/map-row.ts';
import { resolveFieldPath, type Mapping } from './map/mapping.ts';
import { openSheet } from './read/read-sheet.ts';
import type { Draft, DraftLookup, Issue } from './types.ts';
import { DuplicateKeyFinder, validateDraft } from './map/validate.ts';

/** Inputs of the read → map → validate → resolve stages. */
export interface PrepareInput {
  file: string;
  mapping: Mapping;
  owner: string;
  language?: string;
  sheet?: string;
  /** Never create brands (dry runs, validate). */
  dryRun: boolean;
  clients: ApiClients;
  redis: Redis | null;
  config: Config;
  signal?: AbortSignal;
  onProgress?: (rowsRead: number, stage: 'read' | 'resolve') => void;
}

/** Drafts of every row, in sheet order, with their issues; the sheet's headers for the rejected-rows file. */
export interface PreparedDrafts {
  drafts: Draft[];
  headers: string[];
  info: Record<string, string | number | boolean>;
  /** Brands created while resolving (reported). */
  createdBrands: string[];
}

const hasError = (d: Draft) => d.issues.some((i) => i.severity === 'error');

/** Reads, maps and validates every row, marks duplicate keys on every row involved, then resolves labels to ids. */
export async function prepareDrafts(input: PrepareInput): Promise<PreparedDrafts> {
  const { mapping } = input;
  const sheet = await openSheet(input.file, { ...(input.sheet ?? mapping.sheet ? { sheet: input.sheet ?? mapping.sheet } : {}), headerRow: mapping.headerRow });
  const columnIndex = matchHeaders(sheet.headers, mapping);
  const keyColumn = mapping.columns.findIndex((c) => c.field.path === (mapping.key === 'gtin' ? 'gtin' : 'tradeItemId'));
  const drafts: Draft[] = [];
  const dups = new DuplicateKeyFinder();
  for await (const row of sheet.rows) {
    if (input.signal?.aborted) break;
    const d = mapRow(row, sheet.headers, mapping, columnIndex);
    d.issues.push(...validateDraft(d));
    // Origins only serve validation's messages; a run holds every draft until it has planned, so drop them now.
    delete d.origins;
    dups.add(d.row, d.key);
    drafts.push(d);
    if (drafts.length % 1000 === 0) input.onProgress?.(drafts.length, 'read');
  }
  input.onProgress?.(drafts.length, 'read');
  const keyHeader = keyColumn >= 0 ? (sheet.headers[columnIndex[keyColumn] ?? -1] ?? null) : null;
  const dupIssues = dups.issues({ column: keyHeader, field: mapping.key });
  for (const d of drafts) {
    const issue = dupIssues.get(d.row);
    if (issue) d.issues.push(issue);
  }

  const cache = createReferenceCache({ redis: input.redis, prefix: input.config.QUEUE_PREFIX, ttlMs: 10 * 60_000, negativeTtlMs: 30_000, lruMax: 10_000 });
  const resolver = createReferenceResolver({
    reference: input.clients.reference,
    brands: input.clients.product,
    cache,
    ownerCompanyId: input.owner,
    language: input.language ?? mapping.language,
    fallbackLanguages: input.language ? [] : mapping.fallbackLanguages,
    dryRun: input.dryRun,
  });
  const createdBrands = new Set<string>();
  const pending = drafts.filter((d) => !hasError(d) && (d.lookups?.length ?? 0) > 0);
  let done = 0;
  await pool(pending, 16, async (d) => {
    await resolveDraft(d, mapping, resolver, createdBrands);
    if (++done % 1000 === 0) input.onProgress?.(done, 'resolve');
  });
  return { drafts, headers: sheet.headers, info: sheet.info, createdBrands: [...createdBrands] };
}

async function pool<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const runners = Array.from({ length: Math.min(size, items.length) }, async () => {
    while (next < items.length) await work(items[next++]!);
  });
  await Promise.all(runners);
}

function lookupIssue(d: Draft, l: DraftLookup, value: string, code: string, message: string, severity: Issue['severity'] = 'error'): Issue {
  return { row: d.row, column: l.column, field: l.field, value, code, severity, message };
}

/** Resolves a draft's lookup labels to ids and puts them at their field paths; failures become issues on the cell. */
async function resolveDraft(d: Draft, mapping: Mapping, resolver: ReferenceResolver, createdBrands: Set<string>): Promise<void> {
  for (const l of d.lookups ?? []) {
    const ids: string[] = [];
    for (const value of l.values) {
      const r = await resolveOne(resolver, l, value);
      if ('issue' in r) {
        d.issues.push(lookupIssue(d, l, value, r.issue, r.message, r.severity ?? 'error'));
        continue;
      }
      if (r.warning) d.issues.push(lookupIssue(d, l, value, r.warning.code, r.warning.message, 'warning'));
      if (r.createdBrand) createdBrands.add(value);
      if (r.id !== null) ids.push(r.id);
    }
    if (ids.length === 0) continue;
    const target = resolveFieldPath(mapping.target, l.field);
    if (typeof target === 'string') continue;
    setAt(d.fields, target.segments, l.array ? ids : ids[0]);
  }
  d.lookups = [];
}

type ResolveOne = { id: string | null; warning?: { code: string; message: string }; createdBrand?: boolean } | { issue: string; message: string; severity?: Issue['severity'] };

async function resolveOne(resolver: ReferenceResolver, l: DraftLookup, value: string): Promise<ResolveOne> {
  const spec = l.lookup;
  if (spec === 'harmonized-code') {
    const r = await resolver.verifyHarmonizedCode(value);
    return 'issue' in r ? r : { id: r.code };
  }
  if ('brand' in spec) {
    const r = await resolver.resolveBrand(value, { create: spec.brand.create ?? false });
    if ('issue' in r) return r;
    if (r.brandId === null) return { id: null, warning: { code: 'BRAND_WOULD_CREATE', message: `brand "${value}" does not exist and would be created` } };
    if (r.archived) return { id: r.brandId, warning: { code: 'BRAND_ARCHIVED', message: `brand "${value}" is archived; the item is linked to it all the same` } };
    return { id: r.brandId, createdBrand: r.created, ...(r.created ? { warning: { code: 'BRAND_CREATED', message: `brand "${value}" was created` } } : {}) };
  }
  if ('list' in spec) {
    const r = await resolver.resolveListLabel(spec.list, value);
    if ('issue' in r) return r;
    return { id: r.id, ...(r.warning ? { warning: r.warning } : {}) };
  }
  const r = await resolver.verifyLookupId(spec.kind, value);
  return 'issue' in r ? r : { id: r.id };
}
