import type { ListName, LookupKind } from './fields.ts';
import { ReferenceNotFound, type ReferenceCache } from './reference-cache.ts';
import { SingleFlight } from './single-flight.ts';
import type { BrandRecord, ListItem, ReferenceRecord } from './types.ts';

/** Issue codes of reference resolution, as data (code → [severity, description]). */
export const RESOLVE_ISSUE_CODES = {
  REF_UNKNOWN: ['error', 'the label or code matches no item of the list in any language of the chain'],
  REF_AMBIGUOUS: ['error', 'the label matches several items of the list'],
  REF_NO_TRANSLATION: ['warning', 'resolved in a fallback language: the item has no translation in the sheet language'],
  REF_FALLBACK_LANGUAGE: ['warning', 'resolved through a label of a fallback language (the item has another name in the sheet language)'],
  REF_ID_UNKNOWN: ['error', 'an id given in the sheet does not exist in the reference API'],
  HS_CODE_UNKNOWN: ['error', 'the harmonized code does not exist'],
  HS_CODE_FORMAT: ['error', 'a harmonized code is 2 to 10 digits (dots and spaces allowed)'],
  BRAND_UNKNOWN: ['error', 'no brand of the owner has this name, and the mapping does not create brands'],
  BRAND_CREATED: ['warning', 'the brand did not exist and was created'],
  BRAND_WOULD_CREATE: ['warning', 'the brand does not exist and would be created (dry run)'],
  BRAND_ARCHIVED: ['warning', 'the brand of this name is archived'],
} as const;

/** What the resolver reads from the reference API (the ReferenceClient satisfies it). */
export interface ReferenceSource {
  getList(listName: ListName, options?: { languageCode?: string; companyId?: string }): Promise<ListItem[]>;
  getListItem(listName: ListName, itemId: string, options?: { languageCode?: string; companyId?: string }): Promise<ReferenceRecord>;
  lookup(kind: LookupKind, id: string, options?: { languageCode?: string; includeParents?: boolean }): Promise<ReferenceRecord>;
}

/** What the resolver needs of the brand endpoints (the ProductClient satisfies it). */
export interface BrandSource {
  listBrands(companyId: string): Promise<BrandRecord[]>;
  createBrand(input: { companyId: string; name: string }): Promise<{ brandId: string }>;
}

/** A resolution failure, as an issue code and message. */
export interface ResolveIssue {
  issue: keyof typeof RESOLVE_ISSUE_CODES;
  message: string;
  severity?: 'error' | 'warning';
}

/** A resolved list label. `warning` says when a fallback language was needed. */
export interface ResolvedLabel {
  id: string;
  code: string;
  name: string;
  language: string;
  fallback: boolean;
  warning?: { code: 'REF_NO_TRANSLATION' | 'REF_FALLBACK_LANGUAGE'; message: string };
}

/** Settings of the resolver. */
export interface ResolverOptions {
  reference: ReferenceSource;
  brands: BrandSource;
  cache: ReferenceCache;
  ownerCompanyId: string;
  /** The sheet's language, then the fallbacks in order (DESIGN §5.3: fr-FR → fr → en-US). */
  language: string;
  fallbackLanguages: readonly string[];
  /** Never create brands. */
  dryRun: boolean;
}

/** The reference resolver of a run. */
export interface ReferenceResolver {
  resolveListLabel(listName: ListName, label: string): Promise<ResolvedLabel | ResolveIssue>;
  verifyLookupId(kind: LookupKind, id: string): Promise<{ id: string } | ResolveIssue>;
  verifyHarmonizedCode(code: string): Promise<{ code: string } | ResolveIssue>;
  resolveBrand(name: string, options: { create: boolean }): Promise<{ brandId: string | null; created: boolean; archived?: boolean } | ResolveIssue>;
}

/** Label comparison key: case, accents, apostrophe style and spacing ignored. */
export function labelKey(s: string): string {
  return s.normalize('NFD').replace(/\p{M}/gu, '').replace(/[’‘`´]/g, "'").replace(/\s+/g, ' ').trim().toLowerCase();
}

/** The language chain for a mapping language: itself, its fallbacks, then en-US, without repeats. */
export function languageChain(language: string, fallbacks: readonly string[] = [], last = 'en-US'): string[] {
  const out: string[] = [];
  for (const l of [language, ...fallbacks, last]) if (!out.some((o) => o.toLowerCase() === l.toLowerCase())) out.push(l);
  return out;
}

interface ListIndex {
  byKey: Map<string, ListItem[]>;
  ids: Set<string>;
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** Builds the resolver: whole lists loaded once per (list, language) through the cache, indexed by label and code. */
export function createReferenceResolver(o: ResolverOptions): ReferenceResolver {
  const chain = languageChain(o.language, o.fallbackLanguages);
  const indexes = new Map<string, Promise<ListIndex>>();
  const brandFlights = new SingleFlight<{ brandId: string; created: boolean }>();
  let brands: Promise<Map<string, BrandRecord[]>> | undefined;

  const index = (list: ListName, lang: string): Promise<ListIndex> => {
    const key = `${list}:${lang}`;
    let p = indexes.get(key);
    if (!p) {
      p = (async () => {
        let items: ListItem[] = [];
        try {
          items = await o.cache.get(`list:${list}:${lang.toLowerCase()}`, () => o.reference.getList(list, { languageCode: lang }));
        } catch (err) {
          if (!(err instanceof ReferenceNotFound)) throw err;
        }
        const byKey = new Map<string, ListItem[]>();
        const add = (k: string, item: ListItem) => {
          const arr = byKey.get(k) ?? [];
          if (!arr.some((x) => x.id === item.id)) arr.push(item);
          byKey.set(k, arr);
        };
        for (const item of items) {
          add(labelKey(item.name), item);
          add(labelKey(item.code), item);
        }
        return { byKey, ids: new Set(items.map((i) => i.id)) };
      })();
      p.catch(() => indexes.delete(key));
      indexes.set(key, p);
    }
    return p;
  };

  return {
    async resolveListLabel(list, label) {
      if (UUID.test(label)) {
        try {
          await o.cache.get(`list-item:${list}:${label.toLowerCase()}`, () => o.reference.getListItem(list, label, { languageCode: 'en-US' }));
          return { id: label.toLowerCase(), code: '', name: label, language: 'en-US', fallback: false };
        } catch (err) {
          if (err instanceof ReferenceNotFound) return { issue: 'REF_ID_UNKNOWN', message: `${label} is not an item of the list ${list}` };
          throw err;
        }
      }
      const k = labelKey(label);
      for (const [i, lang] of chain.entries()) {
        const idx = await index(list, lang);
        const hits = idx.byKey.get(k) ?? [];
        if (hits.length > 1) {
          return { issue: 'REF_AMBIGUOUS', message: `"${label}" matches ${hits.length} items of ${list} in ${lang}: ${hits.map((h) => `${h.code} (${h.name})`).join(', ')}` };
        }
        const hit = hits[0];
        if (!hit) continue;
        if (i === 0) return { id: hit.id, code: hit.code, name: hit.name, language: lang, fallback: false };
        const primary = await index(list, chain[0]!);
        const warning = primary.ids.has(hit.id)
          ? { code: 'REF_FALLBACK_LANGUAGE' as const, message: `"${label}" is the ${lang} label of ${list} item ${hit.code}; its ${chain[0]} name differs` }
          : { code: 'REF_NO_TRANSLATION' as const, message: `${list} item ${hit.code} has no ${chain[0]} translation; resolved through ${lang}` };
        return { id: hit.id, code: hit.code, name: hit.name, language: lang, fallback: true, warning };
      }
      return { issue: 'REF_UNKNOWN', message: `"${label}" is not an item of ${list} (looked in ${chain.join(', ')})` };
    },

    async verifyLookupId(kind, id) {
      try {
        const r = await o.cache.get<ReferenceRecord>(`lookup:${kind}:${id.toLowerCase()}`, () => o.reference.lookup(kind, id, { languageCode: 'en-US' }));
        return { id: r.id ?? id };
      } catch (err) {
        if (err instanceof ReferenceNotFound) return { issue: 'REF_ID_UNKNOWN', message: `${id} is not a known ${kind} record` };
        throw err;
      }
    },

    async verifyHarmonizedCode(raw) {
      let code = raw.replace(/[.\s]/g, '');
      if (!/^\d{2,10}$/.test(code)) return { issue: 'HS_CODE_FORMAT', message: `"${raw}" is not a harmonized code (2 to 10 digits)` };
      // A code read from a numeric XLSX cell lost its leading zero (406 for 0406): HS codes have an even number of digits.
      if (code.length % 2 === 1) code = `0${code}`;
      try {
        await o.cache.get(`hs:${code}`, () => o.reference.lookup('harmonized-codes', code, { languageCode: 'en-US' }));
        return { code };
      } catch (err) {
        if (err instanceof ReferenceNotFound) return { issue: 'HS_CODE_UNKNOWN', message: `harmonized code ${code} does not exist` };
        throw err;
      }
    },

    async resolveBrand(name, { create }) {
      brands ??= o.brands.listBrands(o.ownerCompanyId).then((list) => {
        const m = new Map<string, BrandRecord[]>();
        for (const b of list) m.set(labelKey(b.name), [...(m.get(labelKey(b.name)) ?? []), b]);
        return m;
      });
      const k = labelKey(name);
      const found = (await brands).get(k);
      if (found && found.length > 0) {
        const active = found.find((b) => !b.archived);
        return active ? { brandId: active.brandId, created: false } : { brandId: found[0]!.brandId, created: false, archived: true };
      }
      if (!create) return { issue: 'BRAND_UNKNOWN', message: `no brand "${name}" for owner ${o.ownerCompanyId} (set lookup: { brand: { create: true } } to create it)` };
      if (o.dryRun) return { brandId: null, created: false };
      // Fifty rows naming one new brand create it once.
      return brandFlights.run(k, async () => {
        const again = (await brands!).get(k);
        if (again?.[0]) return { brandId: again[0].brandId, created: false };
        const { brandId } = await o.brands.createBrand({ companyId: o.ownerCompanyId, name: name.trim() });
        (await brands!).set(k, [{ brandId, name: name.trim(), companyId: o.ownerCompanyId, archived: false }]);
        return { brandId, created: true };
      });
    },
  };
}
