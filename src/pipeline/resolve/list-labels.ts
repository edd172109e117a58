/**
 * The labels of a reference list in a language chain (`product-sync lists`, `mapping init`'s check of a column's
 * labels).
 */
import type { ListName } from '../../api/fields.ts';
import type { ListItem } from '../../api/types.ts';
import { codeKey, labelKey } from './reference-resolver.ts';

/** One item of a list with the label it has in the first language of the chain that names it. */
export interface ListLabel {
  id: string;
  code: string;
  name: string;
  /** The language the label is in. */
  language: string;
  /** True when the label is in a fallback language (the first language of the chain has none for this item). */
  fallback: boolean;
}

/** Where reference-list labels come from (the reference API through its client, or a test's table). */
export interface ReferenceLabels {
  /** The items of `list`, each labelled in the first of `languages` that names it; items named in none are left out. */
  list(list: ListName, languages: readonly string[]): Promise<readonly ListLabel[]>;
}

/** What reading a list needs of the reference API (the ReferenceClient satisfies it). */
export interface ListSource {
  getList(listName: ListName, options?: { languageCode?: string; companyId?: string }): Promise<ListItem[]>;
}

/** Reference labels read from the API, each (list, language) once. */
export function referenceLabels(source: ListSource, options: { companyId?: string } = {}): ReferenceLabels {
  const loaded = new Map<string, Promise<ListItem[]>>();
  const items = (list: ListName, language: string): Promise<ListItem[]> => {
    const key = `${list}\u0000${language.toLowerCase()}`;
    let p = loaded.get(key);
    if (!p) {
      p = source.getList(list, {
        languageCode: language,
        ...(options.companyId ? { companyId: options.companyId } : {}),
      });
      p.catch(() => loaded.delete(key));
      loaded.set(key, p);
    }
    return p;
  };
  return {
    async list(list, languages) {
      const out = new Map<string, ListLabel>();
      for (const [i, language] of languages.entries()) {
        for (const item of await items(list, language)) {
          const id = item.id.toLowerCase();
          if (!out.has(id)) out.set(id, { id: item.id, code: item.code, name: item.name, language, fallback: i > 0 });
        }
      }
      return [...out.values()];
    },
  };
}

/** A matcher of a list's labels and codes, compared as the resolver compares them (case, accents, spacing ignored). */
export function labelMatcher(labels: readonly ListLabel[]): (text: string) => boolean {
  const names = new Set(labels.map((l) => labelKey(l.name)));
  const codes = new Set(labels.map((l) => codeKey(l.code)));
  return (text) => names.has(labelKey(text)) || codes.has(codeKey(text));
}
