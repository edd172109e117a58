// ISO 3166-1 countries, names from the i18n-iso-countries package (its en, fr and de locale files).
import countries from 'i18n-iso-countries';
import en from 'i18n-iso-countries/langs/en.json' with { type: 'json' };
import fr from 'i18n-iso-countries/langs/fr.json' with { type: 'json' };
import de from 'i18n-iso-countries/langs/de.json' with { type: 'json' };
import { names, seedId, type SeedRecord } from './seed-id.ts';

let registered = false;

/** The official (first) name of an ISO 3166-1 alpha-2 code in a registered locale, or undefined. */
export function countryName(alpha2: string, locale: 'en' | 'fr' | 'de'): string | undefined {
  if (!registered) {
    countries.registerLocale(en);
    countries.registerLocale(fr);
    countries.registerLocale(de);
    registered = true;
  }
  return countries.getName(alpha2, locale, { select: 'official' });
}

/** Every ISO 3166-1 country: code = alpha-2, names in en-US, fr-FR and de-DE, extra {alpha3, numeric}. */
export function buildCountries(): SeedRecord[] {
  const codes = Object.keys(countries.getAlpha2Codes()).sort();
  return codes.map((code) => ({
    id: seedId('countries', code),
    code,
    names: names(countryName(code, 'en'), countryName(code, 'fr'), countryName(code, 'de')),
    parentId: null,
    extra: { alpha3: countries.alpha2ToAlpha3(code), numeric: countries.alpha2ToNumeric(code) },
  }));
}
