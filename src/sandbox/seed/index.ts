// The sandbox's reference data: real sources where they exist (ISO 3166-1/-2, ISO 639-1 + CLDR, Regulation (EU)
// 1169/2011 Annexes II, XIII and XV, FAO fishing areas, the WCO Harmonized System, GS1 code lists, Regulation (EC)
// 1333/2008), small fixtures marked as ours where they do not. Nothing is fetched at run time.
import { LIST_NAMES, LOOKUPS, type ListName, type LookupKind } from '../../api/fields.ts';
import { buildAllergens } from './allergens.ts';
import { buildCountries } from './countries.ts';
import { buildCountryDivisions } from './country-divisions.ts';
import { buildFishingZones } from './fishing-zones.ts';
import { buildPackagingMaterials, buildPreservationMethods } from './gs1-lists.ts';
import { buildHarmonizedCodes } from './harmonized-codes.ts';
import { buildLanguages } from './languages.ts';
import { buildNutrientFamilies, buildNutrients } from './nutrients.ts';
import {
  buildMarkets,
  buildRawMaterialClassificationItems,
  buildRawMaterialParts,
  buildSubstanceFunctions,
  buildSubstances,
} from './other-lookups.ts';
import { buildOurList } from './our-lists.ts';
import type { SeedRecord } from './seed-id.ts';

export { seedId, type SeedRecord } from './seed-id.ts';

/** Every list and every lookup kind with its records. */
export interface ReferenceSeed {
  lists: Record<ListName, SeedRecord[]>;
  lookups: Record<LookupKind, SeedRecord[]>;
}

/**
 * Records that deliberately have an en-US name and no fr-FR one, so tests can see a lookup in fr-FR answer 404.
 * (There are more: most GS1 packaging materials, several HS headings; these are the guaranteed ones.)
 */
export const MISSING_FRENCH_EXAMPLES: readonly { readonly source: ListName | LookupKind; readonly code: string }[] = [
  { source: 'packaging-materials', code: 'POLYMER_EVOH' },
  { source: 'packaging-materials', code: 'METAL_ZAMAC' },
  { source: 'preservation-method', code: 'ATTESTED_MILK' },
  { source: 'origin-type', code: 'PACKED_IN' },
  { source: 'harmonized-codes', code: '0206' },
  { source: 'harmonized-codes', code: '220210' },
  { source: 'raw-material-classification-items', code: 'SEASONINGS_SAUCES' },
];

const LIST_BUILDERS: Partial<Record<ListName, () => SeedRecord[]>> = {
  'packaging-materials': buildPackagingMaterials,
  'preservation-method': buildPreservationMethods,
  languages: buildLanguages,
};

const LOOKUP_BUILDERS: Record<LookupKind, () => SeedRecord[]> = {
  allergens: buildAllergens,
  countries: buildCountries,
  'country-divisions': buildCountryDivisions,
  'fishing-zones': buildFishingZones,
  'harmonized-codes': buildHarmonizedCodes,
  markets: buildMarkets,
  'nutrient-families': buildNutrientFamilies,
  nutrients: buildNutrients,
  'raw-material-classification-items': buildRawMaterialClassificationItems,
  'raw-material-parts': buildRawMaterialParts,
  'substance-functions': buildSubstanceFunctions,
  substances: buildSubstances,
};

let memo: ReferenceSeed | undefined;

/** The whole reference seed, built on the first call and the same object after (treat it as read-only). */
export function loadReferenceSeed(): ReferenceSeed {
  if (memo) return memo;
  const lists = {} as Record<ListName, SeedRecord[]>;
  for (const list of LIST_NAMES) lists[list] = (LIST_BUILDERS[list] ?? (() => buildOurList(list)))();
  const lookups = {} as Record<LookupKind, SeedRecord[]>;
  for (const { kind } of LOOKUPS) lookups[kind] = LOOKUP_BUILDERS[kind]();
  memo = { lists, lookups };
  return memo;
}
