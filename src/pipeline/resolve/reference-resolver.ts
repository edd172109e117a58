import { HttpError, LeaseLostError } from '../../errors.ts';
import { createOnce } from '../../api/create-once.ts';
import { LOOKUPS, type ListName, type LookupKind } from '../../api/fields.ts';
import { ReferenceNotFound, type ReferenceCache } from '../../api/reference-cache.ts';
import type { BrandRecord, ListItem, ReferenceRecord } from '../../api/types.ts';
import type { IssueCode } from '../../issue-codes.ts';

/**
 * One of the issue codes of reference resolution (the lookup group of ISSUE_CODES in src/issue-codes.ts, where their
 * severity and meaning are). An item with no name in any language of the chain is invisible to every list the resolver
 * may read (the API leaves untranslated items out and answers 404 by id), so it is REF_UNKNOWN / REF_ID_UNKNOWN.
 */
export type ResolveIssueCode = Extract<IssueCode, `REF_${string}` | `HS_CODE_${string}` | `BRAND_${string}`>;

/** What the resolver reads from the reference API (the ReferenceClient satisfies it). */
export interface ReferenceSource {
  getList(listName: ListName, options?: { languageCode?: string; companyId?: string }): Promise<ListItem[]>;
  getListItem(
    listName: ListName,
    itemId: string,
    options?: { languageCode?: string; companyId?: string },
  ): Promise<ReferenceRecord>;
  lookup(
    kind: LookupKind,
    id: string,
    options?: { languageCode?: string; includeParents?: boolean },
  ): Promise<ReferenceRecord>;
}

/** What the resolver needs of the brand endpoints (the ProductClient satisfies it). */
export interface BrandSource {
  listBrands(companyId: string): Promise<BrandRecord[]>;
  createBrand(input: { companyId: string; name: string }): Promise<{ brandId: string }>;
}

/** A candidate of an ambiguous label. */
export interface ResolveCandidate {
  id: string;
  code: string;
  name: string;
  language: string;
}

/** A resolution failure, as an issue code and message. */
export interface ResolveIssue {
  issue: ResolveIssueCode;
  message: string;
  severity?: 'error' | 'warning';
  candidates?: ResolveCandidate[];
}

/** A resolved list label. `fallback` (with `warning`) says a language after the sheet's was needed. */
export interface ResolvedLabel {
  id: string;
  code: string;
  name: string;
  language: string;
  fallback: boolean;
  warning?: { code: 'REF_NO_TRANSLATION' | 'REF_FALLBACK_LANGUAGE'; message: string };
}

/**
 * A resolved brand: `created` on the one call that created it; `wouldCreate` (brandId null) in a dry run or a look-up
 * only.
 */
export interface ResolvedBrand {
  brandId: string | null;
  created: boolean;
  wouldCreate?: boolean;
  archived?: boolean;
}

/** Counters for the report: resolutions asked, API requests made for them, resolutions answered without a request. */
export interface ResolverStats {
  lookups: number;
  requests: number;
  cacheHits: number;
}

/** Settings of the resolver. */
export interface ResolverOptions {
  reference: ReferenceSource;
  brands: BrandSource;
  cache: ReferenceCache;
  ownerCompanyId: string;
  /** Languages tried in order, e.g. `languageChain('fr-FR')` = fr-FR, fr, en-US. */
  languageChain?: readonly string[];
  /**
   * Without `languageChain`: the sheet's language and its fallbacks (en-US is added last; none given: its primary
   * subtag).
   */
  language?: string;
  fallbackLanguages?: readonly string[];
  /** Never create brands: a missing one answers `{brandId: null, wouldCreate: true}`. */
  dryRun?: boolean;
  /** The longest pause before a brand's create is sent again, ms (CREATE_RETRY_MAX_MS; api/create-once.ts). */
  createRetryMaxMs?: number;
}

/** The reference resolver of a run. */
export interface ReferenceResolver {
  resolveListLabel(listName: ListName, label: string): Promise<ResolvedLabel | ResolveIssue>;
  verifyListItemId(listName: ListName, id: string): Promise<ResolvedLabel | ResolveIssue>;
  verifyLookupId(kind: LookupKind, id: string): Promise<{ id: string; code?: string; name?: string } | ResolveIssue>;
  verifyHarmonizedCode(code: string): Promise<{ code: string } | ResolveIssue>;
  /**
   * `lookOnly`: never create, even with `create` (a row rejected for another cell is still told whether its brand
   * exists or would be created, and causes no write).
   */
  resolveBrand(name: string, options: { create: boolean; lookOnly?: boolean }): Promise<ResolvedBrand | ResolveIssue>;
  /** The languages tried, in order. */
  readonly languages: readonly string[];
  readonly stats: ResolverStats;
}

/** Label comparison key: case, accents, ligatures, apostrophe style and spacing ignored. */
export function labelKey(s: string): string {
  return s
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/œ/g, 'oe')
    .replace(/æ/g, 'ae')
    .replace(/ß/g, 'ss')
    .replace(/[’‘`´]/g, "'")
    .replace(/\s+/g, ' ')
    .trim();
}

/** Code comparison key: like {@link labelKey}, and spaces, `_` and `-` ignored (`polymer evoh` = `POLYMER_EVOH`). */
export function codeKey(s: string): string {
  return labelKey(s).replace(/[\s_-]+/g, '');
}

/**
 * The languages to try for a mapping language, without repeats (case-insensitive): the language, its fallbacks — by
 * default its primary subtag (`fr-FR` → `fr`) — then `defaultLanguage`.
 */
export function languageChain(language: string, defaultLanguage = 'en-US', fallbacks?: readonly string[]): string[] {
  const primary = language.split(/[-_]/)[0] ?? language;
  const out: string[] = [];
  for (const l of [language, ...(fallbacks ?? [primary]), defaultLanguage]) {
    if (l && !out.some((o) => o.toLowerCase() === l.toLowerCase())) out.push(l);
  }
  return out;
}

/**
 * A harmonized code as digits (`04.06` → `0406`, `0406 90` → `040690`, `406` → `0406`), or null when it cannot be one.
 */
export function normalizeHarmonizedCode(raw: string): string | null {
  const code = raw.trim().replace(/[.\s\u00a0-]/g, '');
  if (!/^\d{1,10}$/.test(code)) return null;
  if (code.length % 2 === 0) return code;
  // Codes are pairs of digits; a numeric XLSX cell drops the leading zero of chapters 01–09 (0406 → 406).
  return code.startsWith('0') ? null : `0${code}`;
}

interface ListIndex {
  byName: Map<string, ListItem[]>;
  byCode: Map<string, ListItem[]>;
  byId: Map<string, ListItem>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const LOOKUP_BY_KIND = new Map(LOOKUPS.map((l) => [l.kind as LookupKind, l]));

function push<T>(m: Map<string, T[]>, k: string, v: T): void {
  const arr = m.get(k);
  if (arr) arr.push(v);
  else m.set(k, [v]);
}

/** Wraps a loader as a request of the resolution at hand (counted in its stats). */
type Req = <T>(load: () => Promise<T>) => () => Promise<T>;

/** Runs resolutions, counting each and whether it made a request of its own. */
function countedIn(stats: ResolverStats) {
  return async <R>(work: (req: Req) => Promise<R>): Promise<R> => {
    let requested = false;
    const req: Req = (load) => () => {
      requested = true;
      stats.requests++;
      return load();
    };
    try {
      return await work(req);
    } finally {
      stats.lookups++;
      if (!requested) stats.cacheHits++;
    }
  };
}

/** A 400 of the API on an id it refuses to look up is the cell's problem, not the run's. */
function refused(err: unknown): string | null {
  return err instanceof HttpError && err.status === 400 ? err.apiMessage : null;
}

/**
 * Resolves brand names of the owner: its brands are read once; a missing one is created once, through the cache,
 * however many rows (or workers sharing Redis) name it.
 */
function brandResolver(o: ResolverOptions) {
  let brandMap: Promise<Map<string, BrandRecord[]>> | undefined;
  const brands = (req: Req): Promise<Map<string, BrandRecord[]>> => {
    if (!brandMap) {
      const p = req(() => o.brands.listBrands(o.ownerCompanyId))().then((list) => {
        const m = new Map<string, BrandRecord[]>();
        for (const b of list) push(m, labelKey(b.name), b);
        return m;
      });
      p.catch(() => {
        if (brandMap === p) brandMap = undefined;
      });
      brandMap = p;
    }
    return brandMap;
  };

  /** The brand among same-key ones: the one spelled exactly so, else the only active one, else the only one. */
  const pick = (found: BrandRecord[], name: string): BrandRecord | BrandRecord[] => {
    const exact = found.filter((b) => b.name.trim() === name.trim());
    if (exact.length === 1) return exact[0]!;
    const pool = exact.length > 1 ? exact : found;
    const active = pool.filter((b) => !b.archived);
    if (active.length === 1) return active[0]!;
    if (active.length === 0 && pool.length === 1) return pool[0]!;
    return active.length > 1 ? active : pool;
  };

  return async (
    name: string,
    { create, lookOnly = false }: { create: boolean; lookOnly?: boolean },
    req: Req,
  ): Promise<ResolvedBrand | ResolveIssue> => {
    const k = labelKey(name);
    if (k === '') return { issue: 'BRAND_UNKNOWN', message: 'an empty brand name names no brand' };
    const map = await brands(req);
    const found = map.get(k);
    if (found?.length) {
      const b = pick(found, name);
      if (Array.isArray(b)) {
        return {
          issue: 'REF_AMBIGUOUS',
          message: `"${name}" matches ${b.length} brands of owner ${o.ownerCompanyId}: ${b.map((x) => `${x.name} (${x.brandId})`).join(', ')}`,
          candidates: b.map((x) => ({ id: x.brandId, code: x.brandId, name: x.name, language: '' })),
        };
      }
      return b.archived
        ? { brandId: b.brandId, created: false, archived: true }
        : { brandId: b.brandId, created: false };
    }
    if (!create)
      return {
        issue: 'BRAND_UNKNOWN',
        message: `no brand "${name}" for owner ${o.ownerCompanyId} (set lookup: { brand: { create: true } } to create it)`,
      };
    if (o.dryRun || lookOnly) return { brandId: null, created: false, wouldCreate: true };
    // Through the cache: concurrent rows, and workers sharing Redis, create the brand once and all get its id.
    let created = false;
    // A fresh list: another worker (or an earlier attempt whose answer was lost) may have created it meanwhile.
    const lookUp = async (): Promise<{ brandId: string; archived: boolean } | null> => {
      const fresh = (await o.brands.listBrands(o.ownerCompanyId)).filter((b) => labelKey(b.name) === k);
      const existing = fresh.find((b) => !b.archived) ?? fresh[0];
      return existing ? { brandId: existing.brandId, archived: existing.archived } : null;
    };
    let brand: { brandId: string; archived: boolean };
    try {
      brand = await o.cache.get<{ brandId: string; archived: boolean }>(
        `brand:${o.ownerCompanyId.toLowerCase()}:${k}`,
        req(async () => {
          const existing = await lookUp();
          if (existing) return existing;
          // The rule of every create (api/create-once.ts): one whose answer was lost is looked up before a resend,
          // so one brand per name.
          const out = await createOnce({
            send: async () => ({
              brandId: (await o.brands.createBrand({ companyId: o.ownerCompanyId, name: name.trim() })).brandId,
              archived: false,
            }),
            find: lookUp,
            maxBackoffMs: o.createRetryMaxMs,
          });
          created = true;
          return out.value;
        }),
      );
    } catch (err) {
      // The run's own stops (fence refused, credential refused, interrupted) end the run; the API not making this
      // brand fails the rows that name it.
      if (err instanceof LeaseLostError || !(err instanceof HttpError) || err.status === 401) throw err;
      return {
        issue: 'BRAND_CREATE_FAILED',
        message: `brand "${name.trim()}" could not be created: ${err.message}`,
      };
    }
    const { brandId, archived } = brand;
    if (!map.has(k)) map.set(k, [{ brandId, name: name.trim(), companyId: o.ownerCompanyId, archived }]);
    return archived ? { brandId, created, archived } : { brandId, created };
  };
}

/**
 * Builds the resolver of a run. Whole lists are read once per (list, language) through the cache and indexed by label
 * and by code; ids, lookup ids and harmonized codes are checked one by one through the cache (in the languages of the
 * chain, since the API answers 404 for a record without a translation); the owner's brands are read once, and a missing
 * brand is created once however many rows (or workers sharing Redis) name it. An archived brand is linked as it is and
 * reported (BRAND_ARCHIVED): unarchiving would be a write on the owner's catalogue the sheet did not ask for.
 */
export function createReferenceResolver(o: ResolverOptions): ReferenceResolver {
  const chain = o.languageChain?.length
    ? [...o.languageChain]
    : languageChain(o.language ?? 'en-US', 'en-US', o.fallbackLanguages?.length ? o.fallbackLanguages : undefined);
  const primary = chain[0]!;
  // Verifying an id needs one language it is translated into: the default (last) is the likeliest, then the others.
  const idLanguages = [chain[chain.length - 1]!, ...chain.slice(0, -1)];
  const company = UUID.test(o.ownerCompanyId) ? o.ownerCompanyId.toLowerCase() : undefined;
  const stats: ResolverStats = { lookups: 0, requests: 0, cacheHits: 0 };
  const indexes = new Map<string, Promise<ListIndex>>();
  const loadedIndexes = new Map<string, ListIndex>();
  const counted = countedIn(stats);
  const resolveBrand = brandResolver(o);

  const index = (list: ListName, lang: string, req: Req): Promise<ListIndex> => {
    const key = `${list}:${lang.toLowerCase()}`;
    let p = indexes.get(key);
    if (!p) {
      p = (async () => {
        let items: ListItem[] = [];
        try {
          items = await o.cache.get(
            `list:${list}:${lang.toLowerCase()}:${company ?? '-'}`,
            req(() => o.reference.getList(list, { languageCode: lang, ...(company ? { companyId: company } : {}) })),
          );
        } catch (err) {
          if (!(err instanceof ReferenceNotFound)) throw err;
        }
        const idx: ListIndex = { byName: new Map(), byCode: new Map(), byId: new Map() };
        for (const item of items) {
          push(idx.byName, labelKey(item.name), item);
          push(idx.byCode, codeKey(item.code), item);
          idx.byId.set(item.id.toLowerCase(), item);
        }
        loadedIndexes.set(key, idx);
        return idx;
      })();
      // A failed load (5xx, connection) is not remembered: the next row tries again.
      p.catch(() => indexes.delete(key));
      indexes.set(key, p);
    }
    return p;
  };

  /** The record in the first language of `idLanguages` that has it; null when every one answers 404. */
  const firstTranslated = async <T>(
    keyOf: (lang: string) => string,
    fetch: (lang: string) => Promise<T>,
    req: Req,
    languages = idLanguages,
  ): Promise<{ r: T; lang: string } | null> => {
    for (const lang of languages) {
      try {
        return {
          r: await o.cache.get(
            keyOf(lang.toLowerCase()),
            req(() => fetch(lang)),
          ),
          lang,
        };
      } catch (err) {
        if (!(err instanceof ReferenceNotFound)) throw err;
      }
    }
    return null;
  };

  const verifyListItemId = (list: ListName, id: string, req: Req): Promise<ResolvedLabel | ResolveIssue> => {
    const wanted = id.trim().toLowerCase();
    if (!UUID.test(wanted))
      return Promise.resolve({ issue: 'REF_ID_UNKNOWN', message: `"${id}" is not an id (uuid) of the list ${list}` });
    for (const lang of chain) {
      const hit = loadedIndexes.get(`${list}:${lang.toLowerCase()}`)?.byId.get(wanted);
      if (hit) return Promise.resolve({ id: hit.id, code: hit.code, name: hit.name, language: lang, fallback: false });
    }
    return (async () => {
      try {
        const found = await firstTranslated(
          (lang) => `list-item:${list}:${lang}:${company ?? '-'}:${wanted}`,
          (lang) =>
            o.reference.getListItem(list, wanted, { languageCode: lang, ...(company ? { companyId: company } : {}) }),
          req,
        );
        if (!found)
          return {
            issue: 'REF_ID_UNKNOWN',
            message: `${id} is not an item of the list ${list} (asked in ${idLanguages.join(', ')})`,
          };
        const { r, lang } = found;
        return { id: r.id ?? wanted, code: r.code, name: r.name, language: r.languageCode ?? lang, fallback: false };
      } catch (err) {
        const why = refused(err);
        if (why === null) throw err;
        return { issue: 'REF_ID_UNKNOWN', message: `${id} is not an item of the list ${list}: ${why}` };
      }
    })();
  };

  const verifyHarmonizedCode = async (raw: string, req: Req): Promise<{ code: string } | ResolveIssue> => {
    const code = normalizeHarmonizedCode(raw);
    if (code === null)
      return { issue: 'HS_CODE_FORMAT', message: `"${raw}" is not a harmonized code (2 to 10 digits, in pairs)` };
    try {
      const found = await firstTranslated(
        (lang) => `hs:${lang}:${code}`,
        (lang) => o.reference.lookup('harmonized-codes', code, { languageCode: lang }),
        req,
      );
      return found ? { code } : { issue: 'HS_CODE_UNKNOWN', message: `harmonized code ${code} does not exist` };
    } catch (err) {
      const why = refused(err);
      if (why === null) throw err;
      return { issue: 'HS_CODE_FORMAT', message: `harmonized code "${raw}" refused by the API: ${why}` };
    }
  };

  return {
    languages: chain,
    stats,

    resolveListLabel: (list, label) =>
      counted(async (req) => {
        if (UUID.test(label.trim())) return verifyListItemId(list, label, req);
        const nameKey = labelKey(label);
        const cKey = codeKey(label);
        if (nameKey === '') return { issue: 'REF_UNKNOWN', message: `an empty label is not an item of ${list}` };
        for (const [i, lang] of chain.entries()) {
          const idx = await index(list, lang, req);
          const hits = new Map<string, ListItem>();
          for (const h of [...(idx.byName.get(nameKey) ?? []), ...(idx.byCode.get(cKey) ?? [])])
            hits.set(h.id.toLowerCase(), h);
          if (hits.size > 1) {
            const candidates = [...hits.values()].map((h) => ({
              id: h.id,
              code: h.code,
              name: h.name,
              language: lang,
            }));
            return {
              issue: 'REF_AMBIGUOUS',
              message: `"${label}" matches ${hits.size} items of ${list} in ${lang}: ${candidates.map((c) => `${c.code} (${c.name})`).join(', ')}; write the code instead`,
              candidates,
            };
          }
          const hit = hits.values().next().value;
          if (!hit) continue;
          if (i === 0) return { id: hit.id, code: hit.code, name: hit.name, language: lang, fallback: false };
          const inPrimary = (await index(list, primary, req)).byId.get(hit.id.toLowerCase());
          const warning = inPrimary
            ? {
                code: 'REF_FALLBACK_LANGUAGE' as const,
                message: `"${label}" is the ${lang} label of ${list} item ${hit.code}; its ${primary} name is "${inPrimary.name}"`,
              }
            : {
                code: 'REF_NO_TRANSLATION' as const,
                message: `${list} item ${hit.code} has no ${primary} translation; resolved through ${lang}`,
              };
          return { id: hit.id, code: hit.code, name: hit.name, language: lang, fallback: true, warning };
        }
        return {
          issue: 'REF_UNKNOWN',
          message: `"${label}" is not an item of ${list} (looked for labels and codes in ${chain.join(', ')})`,
        };
      }),

    verifyListItemId: (list, id) => counted((req) => verifyListItemId(list, id, req)),

    verifyLookupId: (kind, id) =>
      counted(async (req) => {
        const spec = LOOKUP_BY_KIND.get(kind);
        if (spec?.idFormat === 'code') {
          const r = await verifyHarmonizedCode(id, req);
          return 'issue' in r ? r : { id: r.code, code: r.code };
        }
        const wanted = id.trim().toLowerCase();
        if (!UUID.test(wanted))
          return { issue: 'REF_ID_UNKNOWN', message: `"${id}" is not an id (uuid) of a ${kind} record` };
        try {
          const found = await firstTranslated(
            (lang) => `lookup:${kind}:${lang}:${wanted}`,
            (lang) => o.reference.lookup(kind, wanted, spec?.languageAware ? { languageCode: lang } : {}),
            req,
            spec?.languageAware ? idLanguages : ['-'],
          );
          if (!found) return { issue: 'REF_ID_UNKNOWN', message: `${id} is not a known ${kind} record` };
          return { id: found.r.id ?? wanted, code: found.r.code, name: found.r.name };
        } catch (err) {
          const why = refused(err);
          if (why === null) throw err;
          return { issue: 'REF_ID_UNKNOWN', message: `${id} is not a known ${kind} record: ${why}` };
        }
      }),

    verifyHarmonizedCode: (raw) => counted((req) => verifyHarmonizedCode(raw, req)),

    resolveBrand: (name, options) => counted((req) => resolveBrand(name, options, req)),
  };
}
