/** A sheet's country names and codes → ISO 3166-1 alpha-2 (docs/mapping.md), in any language of i18n-iso-countries. */
import { readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import type * as Countries from 'i18n-iso-countries';

const require = createRequire(import.meta.url);
// The library without its locales: the package's main module requires all 78 language files at once (time and
// memory at every start); the names of a language are read from its file when first needed (namesOf). The library
// itself is loaded on the first country cell too (a start that reads no country does not pay for it).
let library: typeof Countries | undefined;
const countries = (): typeof Countries => (library ??= require('i18n-iso-countries/index.js') as typeof Countries);

// Codes that are not ISO 3166-1 but that European sheets use (EU/UK conventions).
const CODE_ALIASES: Readonly<Record<string, string>> = { UK: 'GB', EL: 'GR' };

// Short names sheets use where the library only knows the long form.
const NAME_ALIASES: Readonly<Record<string, string>> = {
  'etats unis': 'US',
  'etats-unis': 'US',
  'estados unidos': 'US',
  'stati uniti': 'US',
  'vereinigte staaten': 'US',
  angleterre: 'GB',
  'grande bretagne': 'GB',
  hollande: 'NL',
  holland: 'NL',
  'coree du sud': 'KR',
  'south korea': 'KR',
};

// Accents are dropped only from Latin, Greek and Cyrillic letters: in other scripts (Devanagari, Thaana…) the
// combining marks are vowels, and dropping them would make different names equal.
const LETTER_MARKS = /([\p{Script=Latin}\p{Script=Greek}\p{Script=Cyrillic}])\p{M}+/gu;
// Names in printable ASCII (most cells) have no accents to drop: they skip the normalisations.
const BEYOND_ASCII = /[^ -~]/;
const fold = (s: string): string =>
  (BEYOND_ASCII.test(s) ? s.normalize('NFD').replace(LETTER_MARKS, '$1').normalize('NFC') : s)
    .toLowerCase()
    .replace(/[\u2019']/g, "'")
    .replace(/[\s\u00a0\u202f.-]+/g, ' ')
    .trim();

/** A name's meaning: one country, or several (then it is refused). */
type Meaning = string | { readonly codes: ReadonlyMap<string, string[]> };

/**
 * The folded country names of one language, each with its code, or its codes when the language uses it for several
 * (`Congo` in English).
 */
type Names = ReadonlyMap<string, Meaning>;

const langsDir = (): string => dirname(require.resolve('i18n-iso-countries/langs/en.json'));
let available: ReadonlySet<string> | undefined;

/** The languages the country data has names in (`af` … `zh`, 78 in i18n-iso-countries 7.14). */
export function countryNameLanguages(): ReadonlySet<string> {
  available ??= new Set(
    readdirSync(langsDir())
      .filter((f) => f.endsWith('.json'))
      .map((f) => f.slice(0, -5)),
  );
  return available;
}

/** Adds a name of `lang`; a name the language gives two countries (`Congo` in English) keeps both. */
function addName(names: Map<string, Meaning>, name: string, code: string, lang: string): void {
  const prev = names.get(name);
  if (prev === undefined) names.set(name, code);
  else if (typeof prev === 'string') {
    if (prev !== code)
      names.set(name, {
        codes: new Map([
          [prev, [lang]],
          [code, [lang]],
        ]),
      });
  } else if (!prev.codes.has(code)) (prev.codes as Map<string, string[]>).set(code, [lang]);
}

const byLanguage = new Map<string, Names | null>();

/**
 * The names of one language, read from its file the first time it is asked for; null when the data has no such
 * language.
 */
function namesOf(lang: string): Names | null {
  let names = byLanguage.get(lang);
  if (names !== undefined) return names;
  names = null;
  if (countryNameLanguages().has(lang)) {
    const data = require(`i18n-iso-countries/langs/${lang}.json`) as { countries: Record<string, string | string[]> };
    const m = new Map<string, Meaning>();
    for (const [code, list] of Object.entries(data.countries))
      for (const n of Array.isArray(list) ? list : [list]) addName(m, fold(n), code, lang);
    names = m;
  }
  byLanguage.set(lang, names);
  return names;
}

let everyLanguage: Names | undefined;

/**
 * Every language's names in one index (read once, on the first name the mapping's language and English do not know).
 */
function namesOfEveryLanguage(): Names {
  if (everyLanguage) return everyLanguage;
  const codesOf = new Map<string, Map<string, string[]>>();
  for (const lang of [...countryNameLanguages()].sort()) {
    for (const [name, meaning] of namesOf(lang)!) {
      let codes = codesOf.get(name);
      if (!codes) codesOf.set(name, (codes = new Map()));
      for (const code of typeof meaning === 'string' ? [meaning] : meaning.codes.keys()) {
        const langs = codes.get(code);
        if (langs) langs.push(lang);
        else codes.set(code, [lang]);
      }
    }
  }
  const m = new Map<string, Meaning>();
  for (const [name, codes] of codesOf) m.set(name, codes.size === 1 ? codes.keys().next().value! : { codes });
  everyLanguage = m;
  return m;
}

const aliases = new Map(Object.entries(NAME_ALIASES).map(([k, v]) => [fold(k), v]));

/** A country found in a sheet cell, or the countries a name means in different languages. */
export type CountryMatch = { code: string } | { ambiguous: readonly { code: string; languages: readonly string[] }[] };

function meaningOf(meaning: Meaning): CountryMatch {
  if (typeof meaning === 'string') return { code: meaning };
  return { ambiguous: [...meaning.codes].map(([code, languages]) => ({ code, languages })) };
}

/**
 * The country of a cell: an alpha-2 code (`UK` → GB, `EL` → GR), an alpha-3 code, or a name matched without case or
 * accents — in `language` first, then English, then the short names sheets use, then every other language of the
 * country data (loaded only then). The first of these that knows the name decides; a name the deciding step gives
 * several countries (`Kongo`: CG in Polish, CD in German) is ambiguous. Undefined when nothing knows it.
 */
export function findCountry(value: string, language = 'en'): CountryMatch | undefined {
  const text = value.trim();
  if (/^[A-Za-z]{2}$/.test(text)) {
    const up = text.toUpperCase();
    const code = CODE_ALIASES[up] ?? up;
    return countries().isValid(code) ? { code } : undefined;
  }
  if (/^[A-Za-z]{3}$/.test(text)) {
    const code = countries().alpha3ToAlpha2(text.toUpperCase());
    if (code) return { code };
  }
  const key = fold(text);
  const primary = language.toLowerCase().split(/[-_]/)[0] ?? 'en';
  const hit =
    namesOf(primary)?.get(key) ?? namesOf('en')?.get(key) ?? aliases.get(key) ?? namesOfEveryLanguage().get(key);
  return hit === undefined ? undefined : meaningOf(hit);
}

/** The alpha-2 code of a country (see findCountry); undefined when unknown or ambiguous. */
export function toAlpha2(value: string, language = 'en'): string | undefined {
  const r = findCountry(value, language);
  return r && 'code' in r ? r.code : undefined;
}
