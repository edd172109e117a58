/**
 * Label resolution of a chunk of drafts: each distinct (lookup, label) is resolved once per run (a bounded memo over
 * the reference cache), and the ids are put at the field path the lookup carries; failures become issues on the cell.
 */
import { ISSUE_CODES, severityOf, type IssueCode } from '../../issue-codes.ts';
import { setAt } from '../field-path.ts';
import type { Draft, DraftLookup, Issue } from '../types.ts';
import { pendingBrandId } from './pending-brand.ts';
import { labelKey, type ReferenceResolver, type ResolveIssue, type ResolvedBrand } from './reference-resolver.ts';

type Resolved =
  | {
      id: string | null;
      warning?: { code: string; message: string };
      createdBrand?: boolean;
      /** The label key of a brand left to create after the gate's verdict (its placeholder is `id`). */
      pendingBrand?: string;
    }
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
  /**
   * Set by a run whose quality gate is still to decide: a brand to create is not created but planned (a placeholder id,
   * pending-brand.ts), created once the gate lets the run write (run/pending-brands.ts).
   */
  deferBrandCreates = false;
  /** The brands planned to be created (deferBrandCreates): label key → the name as first written. */
  readonly pendingBrands = new Map<string, string>();

  constructor(resolver: ReferenceResolver, memoMax = 50_000) {
    this.#resolver = resolver;
    this.#memoMax = memoMax;
  }

  /**
   * Resolves every lookup of the drafts, also of rows already rejected for another cell: a person sees all the issues
   * of a row in one report. A rejected row only looks its brands up (never creates one: no write for a row that is not
   * sent). A draft whose answers are all known already (labels repeat: a sheet of 200 000 rows names a few dozen
   * brands) is done at once, without a promise; the others ask, `concurrency` drafts at a time.
   */
  async resolveChunk(drafts: readonly Draft[], concurrency = 16): Promise<void> {
    const pending: { d: Draft; from: number }[] = [];
    for (const d of drafts) {
      if ((d.lookups?.length ?? 0) === 0) continue;
      const from = this.#applyKnown(d);
      if (from >= 0) pending.push({ d, from });
    }
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(concurrency, pending.length) }, async () => {
        while (next < pending.length) {
          const p = pending[next++]!;
          await this.#resolveDraft(p.d, p.from);
        }
      }),
    );
    // Not `delete`: that turns each draft into a slow dictionary-mode object for the rest of its way.
    for (const d of drafts) if (d.lookups) d.lookups = undefined;
  }

  /**
   * Applies the draft's lookups (brands last) from known answers, in order, up to the first one that has to be asked:
   * its index, or -1 when all are done. A lookup is applied whole or not at all.
   */
  #applyKnown(d: Draft): number {
    const lookups = inOrder(d.lookups!);
    for (let i = 0; i < lookups.length; i++) {
      const l = lookups[i]!;
      const answers: Resolved[] = [];
      for (const value of l.values) {
        const known = this.#knownAnswer(d, l, value);
        if (known === undefined) {
          d.lookups = lookups as DraftLookup[];
          return i;
        }
        answers.push(known);
      }
      this.#apply(d, l, answers);
    }
    return -1;
  }

  /**
   * A known answer for this row: a rejected row's brand takes the run's answer when there is one (the brand exists or
   * this run created it), else the answer of a look-up only, which a valid row never takes (it would not create).
   */
  #knownAnswer(d: Draft, l: DraftLookup, value: string): Resolved | undefined {
    const answer = this.#known.get(l.field)?.get(value);
    if (answer !== undefined || !isBrand(l) || !hasError(d)) return answer;
    return this.#known.get(lookOnlyField(l))?.get(value);
  }

  /** The draft's lookups from index `from` of `d.lookups` (put in order by #applyKnown), asking what is not known. */
  async #resolveDraft(d: Draft, from: number): Promise<void> {
    const lookups = d.lookups!;
    for (let i = from; i < lookups.length; i++) {
      const l = lookups[i]!;
      // Brands come last, so a row rejected by its other lookups is known rejected here: it only looks its brand up.
      const lookOnly = isBrand(l) && hasError(d);
      const answers: Resolved[] = [];
      for (const value of l.values)
        answers.push(this.#knownAnswer(d, l, value) ?? (await this.#once(l, value, lookOnly)));
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
      if (r.pendingBrand !== undefined && !this.pendingBrands.has(r.pendingBrand))
        this.pendingBrands.set(r.pendingBrand, value.trim());
      if (r.id !== null) ids.push(r.id);
    }
    if (ids.length > 0) setAt(d.fields, l.segments, l.array ? ids : ids[0]);
  }

  #once(l: DraftLookup, value: string, lookOnly: boolean): Promise<Resolved> {
    const field = lookOnly ? lookOnlyField(l) : l.field;
    const key = `${field}\u0000${value}`;
    let p = this.#memo.get(key);
    if (!p) {
      if (this.#memo.size >= this.#memoMax) {
        this.#memo.clear();
        this.#known.clear();
      }
      p = resolveOne(this.#resolver, l, value, lookOnly, this.deferBrandCreates);
      this.#memo.set(key, p);
      // A failed request is not remembered: the next row asks again.
      p.then(
        (r) => {
          if (this.#memo.get(key) !== p) return;
          let known = this.#known.get(field);
          if (!known) this.#known.set(field, (known = new Map()));
          known.set(value, r);
        },
        () => this.#memo.delete(key),
      );
    }
    return p;
  }

  /** Creates (or finds, when it exists by now) a brand a deferred run planned: the resolver's one way to a brand. */
  createBrand(name: string): Promise<ResolvedBrand | ResolveIssue> {
    return this.#resolver.resolveBrand(name, { create: true });
  }
}

// A field is fed by one column of the mapping, so it names its lookup (no per-row serialisation of the spec). The
// answers of look-ups only (rejected rows' brands) are kept apart: "would be created" is no answer for a valid row.
const lookOnlyField = (l: DraftLookup): string => `${l.field}\u0000look-only`;
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

async function resolveOne(
  resolver: ReferenceResolver,
  l: DraftLookup,
  value: string,
  lookOnly: boolean,
  defer: boolean,
): Promise<Resolved> {
  const spec = l.lookup;
  if (spec === 'harmonized-code') {
    const r = await resolver.verifyHarmonizedCode(value);
    return 'issue' in r ? r : { id: r.code };
  }
  if ('brand' in spec) {
    const r = await resolver.resolveBrand(value, { create: spec.brand.create ?? false, lookOnly: lookOnly || defer });
    if ('issue' in r) return r;
    // A row to send, before the gate's verdict: its brand planned to be created, under a placeholder id.
    if (r.brandId === null && defer && !lookOnly)
      return {
        id: pendingBrandId(labelKey(value)),
        pendingBrand: labelKey(value),
        warning: {
          code: 'BRAND_WOULD_CREATE',
          message: `brand "${value}" does not exist and would be created once the run passes its quality gate`,
        },
      };
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
