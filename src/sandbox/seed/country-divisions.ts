// ISO 3166-2 subdivisions from the iso-3166 package, with its parent links (FR region → department, ES autonomous
// community → province, IT region → province, GB nation → council area…). ISO 3166-2 gives each subdivision one
// name, in the local language (e.g. "Bayern", "Bretagne"), which is the name used in every language: it is served
// under en-US, fr-FR and de-DE alike rather than inventing translations.
import { iso31662 } from 'iso-3166';
import { seedId, type SeedRecord } from './seed-id.ts';

/** Every ISO 3166-2 subdivision: parentId = the parent subdivision or null at the top, extra {countryCode}. */
export function buildCountryDivisions(): SeedRecord[] {
  const known = new Set(iso31662.map((d) => d.code));
  return iso31662.map((d) => {
    const parentIsDivision = d.parent.includes('-') && known.has(d.parent);
    return {
      id: seedId('country-divisions', d.code),
      code: d.code,
      names: { 'en-US': d.name, 'fr-FR': d.name, 'de-DE': d.name },
      parentId: parentIsDivision ? seedId('country-divisions', d.parent) : null,
      extra: { countryCode: d.code.slice(0, d.code.indexOf('-')) },
    };
  });
}
