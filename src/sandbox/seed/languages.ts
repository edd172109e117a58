// Languages as BCP 47 tags: the ISO 639-1 codes of the iso-639-1 package plus common language-region tags; names
// from the CLDR data built into Node's ICU (Intl.DisplayNames), in English, French and German.
import ISO6391 from 'iso-639-1';
import { seedId, type SeedRecord } from './seed-id.ts';

/** Language-region tags offered besides the plain ISO 639-1 codes. */
export const REGIONAL_TAGS = [
  'en-US',
  'en-GB',
  'en-IE',
  'fr-FR',
  'fr-BE',
  'fr-CA',
  'fr-CH',
  'fr-LU',
  'de-DE',
  'de-AT',
  'de-CH',
  'es-ES',
  'it-IT',
  'nl-NL',
  'nl-BE',
  'pt-PT',
  'pt-BR',
  'pl-PL',
  'sv-SE',
  'da-DK',
  'fi-FI',
  'nb-NO',
  'cs-CZ',
  'el-GR',
  'hu-HU',
  'ro-RO',
  'sk-SK',
  'sl-SI',
  'hr-HR',
  'bg-BG',
  'et-EE',
  'lv-LV',
  'lt-LT',
] as const;

function displayName(display: Intl.DisplayNames, tag: string): string | undefined {
  try {
    const name = display.of(tag);
    // Without CLDR data for a tag, DisplayNames echoes the tag itself: that is no name.
    return name && name !== tag ? name : undefined;
  } catch {
    return undefined;
  }
}

/** The `languages` list: code = BCP 47 tag, names in en-US, fr-FR and de-DE where CLDR has them. */
export function buildLanguages(): SeedRecord[] {
  const displays = {
    'en-US': new Intl.DisplayNames(['en-US'], { type: 'language' }),
    'fr-FR': new Intl.DisplayNames(['fr-FR'], { type: 'language' }),
    'de-DE': new Intl.DisplayNames(['de-DE'], { type: 'language' }),
  };
  const tags = [...ISO6391.getAllCodes().sort(), ...REGIONAL_TAGS];
  return tags.map((code) => {
    const found: Record<string, string> = {};
    for (const [lang, display] of Object.entries(displays)) {
      const name = displayName(display, code);
      if (name) found[lang] = name;
    }
    if (!found['en-US']) found['en-US'] = ISO6391.getName(code.slice(0, 2));
    const native = ISO6391.getNativeName(code.slice(0, 2));
    return { id: seedId('languages', code), code, names: found, extra: native ? { nativeName: native } : {} };
  });
}
