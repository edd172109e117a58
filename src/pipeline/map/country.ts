/** Country names and codes of a sheet → ISO 3166-1 alpha-2 (DESIGN §6.4). */
import { createRequire } from 'node:module';
import countries from 'i18n-iso-countries';

const require = createRequire(import.meta.url);

/** Languages whose country names are recognised (besides alpha-2 / alpha-3 codes). */
export const COUNTRY_NAME_LANGUAGES = ['en', 'fr', 'de', 'es', 'it'] as const;

for (const lang of COUNTRY_NAME_LANGUAGES) {
  countries.registerLocale(require(`i18n-iso-countries/langs/${lang}.json`) as Parameters<typeof countries.registerLocale>[0]);
}

// Codes that are not ISO 3166-1 but that European sheets use (EU/UK conventions).
const CODE_ALIASES: Readonly<Record<string, string>> = { UK: 'GB', EL: 'GR' };

// Short names sheets use where the library only knows the long form.
const NAME_ALIASES: Readonly<Record<string, string>> = {
  'etats unis': 'US', 'etats-unis': 'US', 'estados unidos': 'US', 'stati uniti': 'US', 'vereinigte staaten': 'US',
  'angleterre': 'GB', 'grande bretagne': 'GB', 'hollande': 'NL', 'holland': 'NL', 'coree du sud': 'KR', 'south korea': 'KR',
};

const fold = (s: string): string =>
  s.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/[\u2019']/g, "'").replace(/[\s\u00a0\u202f.-]+/g, ' ').trim();

const byName = new Map<string, Map<string, string>>();
for (const lang of COUNTRY_NAME_LANGUAGES) {
  const names = new Map<string, string>();
  for (const [alpha2, list] of Object.entries(countries.getNames(lang, { select: 'all' }))) {
    for (const n of list) names.set(fold(n), alpha2);
  }
  byName.set(lang, names);
}
const aliases = new Map(Object.entries(NAME_ALIASES).map(([k, v]) => [fold(k), v]));

/** The alpha-2 code of a country given as alpha-2, alpha-3, or a name in `language` (then English), matched without case or accents; undefined when unknown. */
export function toAlpha2(value: string, language = 'en'): string | undefined {
  const text = value.trim();
  if (/^[A-Za-z]{2}$/.test(text)) {
    const up = text.toUpperCase();
    const code = CODE_ALIASES[up] ?? up;
    return countries.isValid(code) ? code : undefined;
  }
  if (/^[A-Za-z]{3}$/.test(text)) {
    const code = countries.alpha3ToAlpha2(text.toUpperCase());
    if (code) return code;
  }
  const key = fold(text);
  const primary = language.toLowerCase().split(/[-_]/)[0] ?? 'en';
  return byName.get(primary)?.get(key) ?? byName.get('en')?.get(key) ?? aliases.get(key);
}
