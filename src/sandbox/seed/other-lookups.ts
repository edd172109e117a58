// The seven lookups the reference spec does not describe (markets, raw materials, substances): small fixtures,
// each with its source named below.
import { countryName } from './countries.ts';
import { names, seedId, type SeedRecord } from './seed-id.ts';

/** Markets: the EU member states plus GB, CH and NO, as retail markets; names from i18n-iso-countries. */
export const MARKET_COUNTRIES = [
  'AT',
  'BE',
  'BG',
  'HR',
  'CY',
  'CZ',
  'DK',
  'EE',
  'FI',
  'FR',
  'DE',
  'GR',
  'HU',
  'IE',
  'IT',
  'LV',
  'LT',
  'LU',
  'MT',
  'NL',
  'PL',
  'PT',
  'RO',
  'SK',
  'SI',
  'ES',
  'SE',
  'GB',
  'CH',
  'NO',
] as const;

/** The markets lookup: code = ISO 3166-1 alpha-2, extra {countryCode, countryId, eu}. */
export function buildMarkets(): SeedRecord[] {
  return MARKET_COUNTRIES.map((code) => ({
    id: seedId('markets', code),
    code,
    names: names(countryName(code, 'en'), countryName(code, 'fr'), countryName(code, 'de')),
    extra: { countryCode: code, countryId: seedId('countries', code), eu: !['GB', 'CH', 'NO'].includes(code) },
  }));
}

// EFSA FoodEx2 exposure hierarchy, level-1 food groups (English names as EFSA publishes them). The codes and the
// French names are ours; the last two rows deliberately have no French.
const FOOD_GROUPS: readonly (readonly [string, string, string?])[] = [
  ['GRAINS', 'Grains and grain-based products', 'Céréales et produits à base de céréales'],
  ['VEGETABLES', 'Vegetables and vegetable products', 'Légumes et produits à base de légumes'],
  [
    'STARCHY_ROOTS',
    'Starchy roots or tubers and products thereof, sugar plants',
    'Racines et tubercules amylacés et leurs produits, plantes sucrières',
  ],
  [
    'LEGUMES_NUTS_OILSEEDS',
    'Legumes, nuts, oilseeds and spices',
    'Légumineuses, fruits à coque, graines oléagineuses et épices',
  ],
  ['FRUIT', 'Fruit and fruit products', 'Fruits et produits à base de fruits'],
  ['MEAT', 'Meat and meat products', 'Viandes et produits à base de viande'],
  [
    'FISH_SEAFOOD',
    'Fish, seafood, amphibians, reptiles and invertebrates',
    'Poissons, fruits de mer, amphibiens, reptiles et invertébrés',
  ],
  ['MILK_DAIRY', 'Milk and dairy products', 'Lait et produits laitiers'],
  ['EGGS', 'Eggs and egg products', 'Œufs et ovoproduits'],
  [
    'SUGAR_CONFECTIONERY',
    'Sugar and similar, confectionery and water-based sweet desserts',
    'Sucres et similaires, confiseries et desserts sucrés à base d’eau',
  ],
  [
    'FATS_OILS',
    'Animal and vegetable fats and oils and primary derivatives thereof',
    'Graisses et huiles animales et végétales et leurs dérivés primaires',
  ],
  ['COFFEE_COCOA_TEA', 'Coffee, cocoa, tea and infusions', 'Café, cacao, thé et infusions'],
  ['ALCOHOLIC_BEVERAGES', 'Alcoholic beverages', 'Boissons alcoolisées'],
  ['SEASONINGS_SAUCES', 'Seasoning, sauces and condiments'],
  ['MAJOR_ISOLATED_INGREDIENTS', 'Major isolated ingredients, additives, flavours, baking and processing aids'],
];

/** The raw-material-classification-items lookup (FoodEx2 level-1 groups). */
export function buildRawMaterialClassificationItems(): SeedRecord[] {
  return FOOD_GROUPS.map(([code, en, fr]) => ({
    id: seedId('raw-material-classification-items', code),
    code,
    names: names(en, fr),
    extra: { source: 'EFSA FoodEx2 level 1 (codes ours)' },
  }));
}

// Parts of plants and animals used as raw materials: ours.
const PARTS: readonly (readonly [string, string, string])[] = [
  ['WHOLE', 'Whole', 'Entier'],
  ['FLESH', 'Flesh', 'Chair'],
  ['SKIN', 'Skin', 'Peau'],
  ['PEEL', 'Peel', 'Écorce'],
  ['SEED', 'Seed', 'Graine'],
  ['KERNEL', 'Kernel', 'Amande'],
  ['LEAF', 'Leaf', 'Feuille'],
  ['STEM', 'Stem', 'Tige'],
  ['ROOT', 'Root', 'Racine'],
  ['TUBER', 'Tuber', 'Tubercule'],
  ['BULB', 'Bulb', 'Bulbe'],
  ['FLOWER', 'Flower', 'Fleur'],
  ['FRUIT', 'Fruit', 'Fruit'],
  ['MUSCLE', 'Muscle meat', 'Viande musculaire'],
  ['FAT_TISSUE', 'Fat tissue', 'Tissu adipeux'],
  ['OFFAL', 'Offal', 'Abats'],
  ['BONE', 'Bone', 'Os'],
];

/** The raw-material-parts lookup (our fixture). */
export function buildRawMaterialParts(): SeedRecord[] {
  return PARTS.map(([code, en, fr]) => ({
    id: seedId('raw-material-parts', code),
    code,
    names: names(en, fr),
    extra: { source: 'product-sync fixture' },
  }));
}

/** Functional classes of food additives, Regulation (EC) No 1333/2008 Annex I (EN and FR official texts), in order. */
export const ADDITIVE_CLASSES: readonly (readonly [string, string, string])[] = [
  ['SWEETENERS', 'Sweeteners', 'Édulcorants'],
  ['COLOURS', 'Colours', 'Colorants'],
  ['PRESERVATIVES', 'Preservatives', 'Conservateurs'],
  ['ANTIOXIDANTS', 'Antioxidants', 'Antioxydants'],
  ['CARRIERS', 'Carriers', 'Supports'],
  ['ACIDS', 'Acids', 'Acidifiants'],
  ['ACIDITY_REGULATORS', 'Acidity regulators', 'Correcteurs d’acidité'],
  ['ANTI_CAKING_AGENTS', 'Anti-caking agents', 'Antiagglomérants'],
  ['ANTI_FOAMING_AGENTS', 'Anti-foaming agents', 'Antimoussants'],
  ['BULKING_AGENTS', 'Bulking agents', 'Agents de charge'],
  ['EMULSIFIERS', 'Emulsifiers', 'Émulsifiants'],
  ['EMULSIFYING_SALTS', 'Emulsifying salts', 'Sels de fonte'],
  ['FIRMING_AGENTS', 'Firming agents', 'Affermissants'],
  ['FLAVOUR_ENHANCERS', 'Flavour enhancers', 'Exhausteurs de goût'],
  ['FOAMING_AGENTS', 'Foaming agents', 'Agents moussants'],
  ['GELLING_AGENTS', 'Gelling agents', 'Gélifiants'],
  ['GLAZING_AGENTS', 'Glazing agents (including lubricants)', 'Agents d’enrobage'],
  ['HUMECTANTS', 'Humectants', 'Humectants'],
  ['MODIFIED_STARCHES', 'Modified starches', 'Amidons modifiés'],
  ['PACKAGING_GASES', 'Packaging gases', 'Gaz d’emballage'],
  ['PROPELLANTS', 'Propellants', 'Gaz propulseurs'],
  ['RAISING_AGENTS', 'Raising agents', 'Poudres à lever'],
  ['SEQUESTRANTS', 'Sequestrants', 'Séquestrants'],
  ['STABILISERS', 'Stabilisers', 'Stabilisants'],
  ['THICKENERS', 'Thickeners', 'Épaississants'],
  ['FLOUR_TREATMENT_AGENTS', 'Flour treatment agents', 'Agents de traitement de la farine'],
  ['CONTRAST_ENHANCERS', 'Contrast enhancers', 'Agents de renforcement du contraste'],
];

/** The substance-functions lookup: extra {annexI: point number}. */
export function buildSubstanceFunctions(): SeedRecord[] {
  return ADDITIVE_CLASSES.map(([code, en, fr], i) => ({
    id: seedId('substance-functions', code),
    code,
    names: names(en, fr),
    extra: { annexI: i + 1 },
  }));
}

/**
 * Food additives of the Union list, Regulation (EC) No 1333/2008 Annex II: [E number, English, French, function codes].
 */
export const ADDITIVES: readonly (readonly [string, string, string, readonly string[]])[] = [
  ['E100', 'Curcumin', 'Curcumine', ['COLOURS']],
  ['E120', 'Cochineal, Carminic acid, Carmines', 'Cochenille, acide carminique, carmins', ['COLOURS']],
  ['E200', 'Sorbic acid', 'Acide sorbique', ['PRESERVATIVES']],
  ['E202', 'Potassium sorbate', 'Sorbate de potassium', ['PRESERVATIVES']],
  ['E211', 'Sodium benzoate', 'Benzoate de sodium', ['PRESERVATIVES']],
  ['E220', 'Sulphur dioxide', 'Anhydride sulfureux', ['PRESERVATIVES', 'ANTIOXIDANTS']],
  ['E250', 'Sodium nitrite', 'Nitrite de sodium', ['PRESERVATIVES']],
  ['E290', 'Carbon dioxide', 'Dioxyde de carbone', ['PACKAGING_GASES']],
  ['E300', 'Ascorbic acid', 'Acide ascorbique', ['ANTIOXIDANTS']],
  ['E322', 'Lecithins', 'Lécithines', ['EMULSIFIERS', 'ANTIOXIDANTS']],
  ['E330', 'Citric acid', 'Acide citrique', ['ACIDS', 'ACIDITY_REGULATORS']],
  ['E407', 'Carrageenan', 'Carraghénanes', ['THICKENERS', 'GELLING_AGENTS', 'STABILISERS']],
  ['E415', 'Xanthan gum', 'Gomme xanthane', ['THICKENERS', 'STABILISERS']],
  ['E440', 'Pectins', 'Pectines', ['GELLING_AGENTS', 'THICKENERS']],
  ['E471', 'Mono- and diglycerides of fatty acids', 'Mono- et diglycérides d’acides gras', ['EMULSIFIERS']],
  ['E500', 'Sodium carbonates', 'Carbonates de sodium', ['RAISING_AGENTS', 'ACIDITY_REGULATORS']],
  ['E621', 'Monosodium glutamate', 'Glutamate monosodique', ['FLAVOUR_ENHANCERS']],
  ['E941', 'Nitrogen', 'Azote', ['PACKAGING_GASES', 'PROPELLANTS']],
  ['E951', 'Aspartame', 'Aspartame', ['SWEETENERS']],
  ['E960', 'Steviol glycosides', 'Glycosides de stéviol', ['SWEETENERS']],
];

/** The substances lookup: extra {eNumber, functionIds, functionCodes}. */
export function buildSubstances(): SeedRecord[] {
  return ADDITIVES.map(([code, en, fr, functions]) => ({
    id: seedId('substances', code),
    code,
    names: names(en, fr),
    extra: {
      eNumber: code,
      functionCodes: [...functions],
      functionIds: functions.map((f) => seedId('substance-functions', f)),
    },
  }));
}
