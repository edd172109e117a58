/**
 * Label resolution of a chunk of drafts: each distinct (lookup, label) is resolved once per run (a bounded memo over
 * the reference cache), and the ids are put at the field path the lookup carries; failures become issues on the cell.
 */
import { ISSUE_CODES, severityOf, type IssueCode } from '../../issue-codes.ts';
import { setAt } from '../field-path.ts';
import type { Draft, DraftLookup, Issue } from '../types.ts';
import type { ReferenceResolver } from './reference-resolver.ts';

type Resolved =
  | { id: string | null; warning?: { code: string; message: string }; createdBrand?: boolean }
  | { issue: string; message: string; severity?: Issue['severity'] };

/** Resolves the lookups of drafts, a chunk at a time, remembering each (lookup, label) answer for the run. */
export class DraftResolver {
  readonly #resolver: ReferenceResolver;
  readonly #memo = new Map<string, Promise<Resolved>>();
  /** The answers of #memo that have come, by field then label (the same bound; no key string built per row). */
  readonly #known = new Map<string, Map<string, Resolved>>();
  readonly #memoMax: number;
  /** Brands this run created. */
  readonly createdBrands = new Set<string>();

  constructor(resolver: ReferenceResolver, memoMax = 50_000) {
    this.#resolver = resolver;
    this.#memoMax = memoMax;
  }

  /**
   * Resolves every lookup of the drafts without an error (a row already rejected never creates a brand). A draft whose
   * answers are all known already (labels repeat: a sheet of 200 000 rows names a few dozen brands) is done at once,
   * without a promise; the others ask, `concurrency` drafts at a time.
   */
  async resolveChunk(drafts: readonly Draft[], concurrency = 16): Promise<void> {
    const pending: Draft[] = [];
    for (const d of drafts) {
      if ((d.lookups?.length ?? 0) === 0 || hasError(d)) continue;
      if (!this.#resolveKnown(d)) pending.push(d);
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, pending.length) }, async () => {
        while (next < pending.length) await this.#resolveDraft(pending[next++]!);
      }),
    );
    // Not `delete`: that turns each draft into a slow dictionary-mode object for the rest of its way.
    for (const d of drafts) if (d.lookups) d.lookups = undefined;
  }

  /** The draft's lookups from known answers only; false (nothing done) when one of them has to be asked. */
  #resolveKnown(d: Draft): boolean {
    for (const l of d.lookups!) {
      const known = this.#known.get(l.field);
      if (!known) return false;
      for (const value of l.values) if (!known.has(value)) return false;
    }
    for (const l of inOrder(d.lookups!)) {
      if (isBrand(l) && hasError(d)) continue;
      const known = this.#known.get(l.field)!;
      this.#apply(
        d,
        l,
        l.values.map((value) => known.get(value)!),
      );
    }
    return true;
  }

  async #resolveDraft(d: Draft): Promise<void> {
    for (const l of inOrder(d.lookups!)) {
      // Brands last, and only for a row still valid: a row rejected for another cell never creates a brand.
      if (isBrand(l) && hasError(d)) continue;
      const answers: Resolved[] = [];
      for (const value of l.values) answers.push(this.#known.get(l.field)?.get(value) ?? (await this.#once(l, value)));
      this.#apply(d, l, answers);
    }
  }

  /** Puts the ids of one lookup's answers at its field path; failures and warnings become issues on its cell. */
  #apply(d: Draft, l: DraftLookup, answers: readonly Resolved[]): void {
    const ids: string[] = [];
    for (let i = 0; i < answers.length; i++) {
      const r = answers[i]!;
      const value = l.values[i]!;
      if ('issue' in r) {
        d.issues.push(lookupIssue(d, l, value, r.issue, r.message));
        continue;
      }
      // A brand this run created is reported as created on the row that created it, found on the others.
      if (r.warning && !(r.warning.code === 'BRAND_CREATED' && this.createdBrands.has(value)))
        d.issues.push(lookupIssue(d, l, value, r.warning.code, r.warning.message));
      if (r.createdBrand) this.createdBrands.add(value);
      if (r.id !== null) ids.push(r.id);
    }
    if (ids.length > 0) setAt(d.fields, l.segments, l.array ? ids : ids[0]);
  }

  #once(l: DraftLookup, value: string): Promise<Resolved> {
    const key = memoKey(l, value);
    let p = this.#memo.get(key);
    if (!p) {
      if (this.#memo.size >= this.#memoMax) {
        this.#memo.clear();
        this.#known.clear();
      }
      p = resolveOne(this.#resolver, l, value);
      this.#memo.set(key, p);
      // A failed request is not remembered: the next row asks again.
      p.then(
        (r) => {
          if (this.#memo.get(key) !== p) return;
          let known = this.#known.get(l.field);
          if (!known) this.#known.set(l.field, (known = new Map()));
          known.set(value, r);
        },
        () => this.#memo.delete(key),
      );
    }
    return p;
  }
}

// A field is fed by one column of the mapping, so it names its lookup (no per-row serialisation of the spec).
const memoKey = (l: DraftLookup, value: string): string => `${l.field}\u0000${value}`;
const hasError = (d: Draft): boolean => d.issues.some((i) => i.severity === 'error');
/** A draft's lookups with brands last. */
const inOrder = (lookups: readonly DraftLookup[]): readonly DraftLookup[] =>
  lookups.length < 2 ? lookups : [...lookups].sort((a, b) => Number(isBrand(a)) - Number(isBrand(b)));

const isBrand = (l: DraftLookup): boolean => typeof l.lookup === 'object' && 'brand' in l.lookup;

/** An issue on the lookup's cell; its severity is the code's (the one table, issue-codes.ts). */
function lookupIssue(d: Draft, l: DraftLookup, value: string, code: string, message: string): Issue {
  return {
    row: d.row,
    column: l.column,
    field: l.field,
    value,
    code,
    severity: code in ISSUE_CODES ? severityOf(code as IssueCode) : 'error',
    message,
  };
}

async function resolveOne(resolver: ReferenceResolver, l: DraftLookup, value: string): Promise<Resolved> {
  const spec = l.lookup;
  if (spec === 'harmonized-code') {
    const r = await resolver.verifyHarmonizedCode(value);
    return 'issue' in r ? r : { id: r.code };
  }
  if ('brand' in spec) {
    const r = await resolver.resolveBrand(value, { create: spec.brand.create ?? false });
    if ('issue' in r) return r;
    if (r.brandId === null)
      return {
        id: null,
        warning: { code: 'BRAND_WOULD_CREATE', message: `brand "${value}" does not exist and would be created` },
      };
    if (r.archived)
      return {
        id: r.brandId,
        warning: {
          code: 'BRAND_ARCHIVED',
          message: `brand "${value}" is archived; the item is linked to it all the same`,
        },
      };
    return {
      id: r.brandId,
      createdBrand: r.created,
      ...(r.created ? { warning: { code: 'BRAND_CREATED', message: `brand "${value}" was created` } } : {}),
    };
  }
  if ('list' in spec) {
    const r = await resolver.resolveListLabel(spec.list, value);
    if ('issue' in r) return r;
    return { id: r.id, ...(r.warning ? { warning: r.warning } : {}) };
  }
  const r = await resolver.verifyLookupId(spec.kind, value);
  return 'issue' in r ? r : { id: r.id };
}
