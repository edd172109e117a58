/**
 * The brands a gated run creates after its verdict (docs/mapping.md "What a held run writes before its verdict"): while
 * the run is prepared, a row naming a brand to create carries a placeholder (resolve/pending-brand.ts) and the brand is
 * noted in the run's brand file; once the gate lets the run write, one pass creates each noted brand (or finds it, made
 * by an earlier attempt that stopped before it noted the id); each chunk's placeholders are replaced from the file when
 * it is pushed, inline or by a queue's chunk job.
 *
 *   <run>/chunks/brands.json   label key → { name, firstRow, brandId?, created?, failed? }
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { writingTo } from '../../fs-errors.ts';
import { severityOf } from '../../issue-codes.ts';
import { makeDir } from '../../make-dir.ts';
import { writeFileAtomic } from '../report/atomic.ts';
import { pendingBrandKey } from '../resolve/pending-brand.ts';
import { labelKey } from '../resolve/reference-resolver.ts';
import type { DraftResolver } from '../resolve/resolve-drafts.ts';
import { failedRow, type ExecutedRow, type RunStop } from '../sync/execute.ts';
import type { RowPlan, Step } from '../sync/plan.ts';
import type { Issue } from '../types.ts';

// A chunk of rows as chunks.ts has it (named structurally here: chunks.ts reads its brands through this file).
type SourcedPlan = RowPlan & { source: readonly unknown[] };
type ResultRow = ExecutedRow & { source?: readonly unknown[] };
interface RowChunk {
  index: number;
  settled: ResultRow[];
  plans: SourcedPlan[];
}

/** A brand the run planned to create, and what became of it. */
export interface PendingBrand {
  /** The name to create it with (the first row's spelling). */
  name: string;
  /** The first row naming it: the one told the brand was created. */
  firstRow: number;
  brandId?: string;
  /** True when this run created it (false: found, made by an earlier attempt or another writer). */
  created?: boolean;
  /** Why the API would not create it: the rows naming it fail. */
  failed?: string;
}

type BrandFile = Record<string, PendingBrand>;

const fileOf = (workDir: string): string => join(workDir, 'chunks', 'brands.json');

async function readBrands(workDir: string): Promise<BrandFile> {
  const file = fileOf(workDir);
  if (!existsSync(file)) return {};
  return JSON.parse(await readFile(file, 'utf8')) as BrandFile;
}

async function writeBrands(workDir: string, brands: BrandFile): Promise<void> {
  const file = fileOf(workDir);
  await writingTo('cannot write the brands of the run', file, async () => {
    await makeDir(join(workDir, 'chunks'));
    await writeFileAtomic(file, `${JSON.stringify(brands, null, 2)}\n`);
  });
}

/** The brandId placeholders of a plan's writes. */
function placeholdersOf(p: SourcedPlan): string[] {
  const keys: string[] = [];
  for (const s of p.steps) {
    const k = 'body' in s ? pendingBrandKey(s.body.brandId) : null;
    if (k !== null && !keys.includes(k)) keys.push(k);
  }
  return keys;
}

/**
 * Notes the brands a chunk's plans will need (before its file is written: a chunk file's placeholders are always in
 * the brand file). Returns at once when the chunk names none.
 */
export async function notePendingBrands(workDir: string, chunk: RowChunk, resolver: DraftResolver): Promise<void> {
  const needed = new Map<string, number>();
  for (const p of chunk.plans)
    for (const k of placeholdersOf(p)) needed.set(k, Math.min(needed.get(k) ?? Infinity, p.row));
  if (needed.size === 0) return;
  const brands = await readBrands(workDir);
  let changed = false;
  for (const [k, row] of needed) {
    const known = brands[k];
    if (known && known.firstRow <= row) continue;
    brands[k] = known ? { ...known, firstRow: row } : { name: resolver.pendingBrands.get(k) ?? k, firstRow: row };
    changed = true;
  }
  if (changed) await writeBrands(workDir, brands);
}

/**
 * The gate passed (or an earlier attempt's verdict did): every noted brand without an id is created now, one at a time,
 * each noted as soon as it is (a brand an attempt created but did not note is found by the resolver's look-up before
 * any create). Throws what stops the run (the fence refused, the credential refused, the API away): its driver makes it
 * the run's stop reason. Nothing to do without a brand file, or once the run has stopped.
 */
export async function createPendingBrands(
  workDir: string,
  resolver: DraftResolver,
  share: { stop: RunStop },
): Promise<void> {
  if (share.stop.reason || !existsSync(fileOf(workDir))) return;
  const brands = await readBrands(workDir);
  for (const [k, b] of Object.entries(brands)) {
    if (b.brandId !== undefined) continue;
    if (share.stop.reason) return;
    const r = await resolver.createBrand(b.name);
    brands[k] =
      'issue' in r || r.brandId === null
        ? { name: b.name, firstRow: b.firstRow, failed: 'issue' in r ? r.message : 'the brand was not created' }
        : { name: b.name, firstRow: b.firstRow, brandId: r.brandId, created: r.created };
    await writeBrands(workDir, brands);
  }
}

/**
 * A chunk about to be pushed, its placeholders replaced by the brands' ids (in the writes and in the undo ledger's
 * values); its rows told the brand was created (the first row) or drop the "would be created" warning (found). A row
 * whose brand could not be created is settled failed (BRAND_CREATE_FAILED), nothing sent — or, the run `stopped`
 * before it created it, left as it is (nothing is sent once a run has stopped). The chunk as it was when it names no
 * brand to create.
 */
export async function withPendingBrands<C extends RowChunk>(workDir: string, chunk: C, stopped: boolean): Promise<C> {
  if (!chunk.plans.some((p) => placeholdersOf(p).length > 0)) return chunk;
  const brands = await readBrands(workDir);
  const settled = [...chunk.settled];
  const plans: SourcedPlan[] = [];
  for (const p of chunk.plans) {
    const keys = placeholdersOf(p);
    const missing = keys.map((k) => [k, brands[k]] as const).find(([, b]) => b?.brandId === undefined);
    if (missing) {
      // The run stopped before it created the brand: the row is sent nothing, and is reported not attempted.
      if (stopped && missing[1]?.failed === undefined) plans.push(p);
      else settled.push(brandFailed(p, missing[1]));
      continue;
    }
    plans.push(keys.length === 0 ? p : filled(p, brands));
  }
  return { ...chunk, settled, plans };
}

function filled(p: SourcedPlan, brands: BrandFile): SourcedPlan {
  const idOf = (v: unknown): unknown => {
    const k = pendingBrandKey(v);
    return k === null ? v : brands[k]!.brandId;
  };
  const steps = p.steps.map((s) => ('body' in s ? { ...s, body: { ...s.body, brandId: idOf(s.body.brandId) } } : s));
  // The first row naming a brand this run created is told so; the others find it, as rows of an ungated run do.
  const issues: Issue[] = [];
  for (const i of p.issues) {
    const b = wouldCreate(i) ? brands[labelKey(String(i.value))] : undefined;
    if (!b) issues.push(i);
    else if (b.created && b.firstRow === p.row)
      issues.push({ ...i, code: 'BRAND_CREATED', severity: 'warning', message: `brand "${i.value}" was created` });
  }
  return {
    ...p,
    steps: steps as Step[],
    issues,
    ...(p.undo
      ? {
          undo: {
            ...p.undo,
            fields: p.undo.fields.map((f) => (f.field === 'brandId' ? { ...f, sent: idOf(f.sent) } : f)),
          },
        }
      : {}),
  };
}

const wouldCreate = (i: Issue): boolean => i.code === 'BRAND_WOULD_CREATE' && i.field === 'brandId' && i.value !== null;

/** A row whose brand the run could not create: failed, nothing sent (the same sheet imported again may pass). */
function brandFailed(p: SourcedPlan, brand: PendingBrand | undefined): ResultRow {
  const why = brand?.failed ?? 'the run did not create it before this row was sent';
  const issues = p.issues.map((i) =>
    wouldCreate(i)
      ? {
          ...i,
          code: 'BRAND_CREATE_FAILED',
          severity: severityOf('BRAND_CREATE_FAILED'),
          message: `brand "${String(i.value).trim()}" could not be created: ${why}`,
        }
      : i,
  );
  return { ...failedRow(p, issues), source: p.source };
}
