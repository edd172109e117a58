// The EU nutrition declaration: Regulation (EU) No 1169/2011, Annex XV (order and wording of the declaration,
// EN and FR official texts) and Annex XIII Part A (vitamins and minerals, with their nutrient reference values)
// and Part B (reference intakes). Codes are INFOODS tagnames, as GS1 NutrientTypeCode uses them; the two energy
// codes (kJ and kcal declared apart) are ours. Units are UN/ECE Rec 20 codes, as in src/api/units.ts.
import { names, seedId, type SeedRecord } from './seed-id.ts';

/** [code, English, French]. */
export const NUTRIENT_FAMILIES: readonly (readonly [string, string, string])[] = [
  ['ENERGY', 'Energy', 'Énergie'],
  ['FATS', 'Fats', 'Matières grasses'],
  ['CARBOHYDRATES', 'Carbohydrates', 'Glucides'],
  ['FIBRE', 'Fibre', 'Fibres alimentaires'],
  ['PROTEIN', 'Protein', 'Protéines'],
  ['SALT', 'Salt', 'Sel'],
  ['VITAMINS', 'Vitamins', 'Vitamines'],
  ['MINERALS', 'Minerals', 'Sels minéraux'],
];

interface NutrientRow {
  code: string;
  en: string;
  fr: string;
  family: string;
  unit: 'KJO' | 'E14' | 'GRM' | 'MGM' | 'MC';
  /** Annex XIII reference intake (Part B) or nutrient reference value (Part A), in `unit`. */
  reference?: number;
}

/** Annex XV order, then the vitamins and minerals of Annex XIII Part A in its order. */
export const NUTRIENTS: readonly NutrientRow[] = [
  { code: 'ENER-KJ', en: 'Energy (kJ)', fr: 'Énergie (kJ)', family: 'ENERGY', unit: 'KJO', reference: 8400 },
  { code: 'ENER-KCAL', en: 'Energy (kcal)', fr: 'Énergie (kcal)', family: 'ENERGY', unit: 'E14', reference: 2000 },
  { code: 'FAT', en: 'Fat', fr: 'Matières grasses', family: 'FATS', unit: 'GRM', reference: 70 },
  { code: 'FASAT', en: 'Saturates', fr: 'Acides gras saturés', family: 'FATS', unit: 'GRM', reference: 20 },
  { code: 'FAMSCIS', en: 'Mono-unsaturates', fr: 'Acides gras mono-insaturés', family: 'FATS', unit: 'GRM' },
  { code: 'FAPUCIS', en: 'Polyunsaturates', fr: 'Acides gras polyinsaturés', family: 'FATS', unit: 'GRM' },
  { code: 'CHOAVL', en: 'Carbohydrate', fr: 'Glucides', family: 'CARBOHYDRATES', unit: 'GRM', reference: 260 },
  { code: 'SUGAR-', en: 'Sugars', fr: 'Sucres', family: 'CARBOHYDRATES', unit: 'GRM', reference: 90 },
  { code: 'POLYL', en: 'Polyols', fr: 'Polyols', family: 'CARBOHYDRATES', unit: 'GRM' },
  { code: 'STARCH', en: 'Starch', fr: 'Amidon', family: 'CARBOHYDRATES', unit: 'GRM' },
  { code: 'FIBTG', en: 'Fibre', fr: 'Fibres alimentaires', family: 'FIBRE', unit: 'GRM' },
  { code: 'PRO-', en: 'Protein', fr: 'Protéines', family: 'PROTEIN', unit: 'GRM', reference: 50 },
  { code: 'SALTEQ', en: 'Salt', fr: 'Sel', family: 'SALT', unit: 'GRM', reference: 6 },
  { code: 'VITA-', en: 'Vitamin A', fr: 'Vitamine A', family: 'VITAMINS', unit: 'MC', reference: 800 },
  { code: 'VITD-', en: 'Vitamin D', fr: 'Vitamine D', family: 'VITAMINS', unit: 'MC', reference: 5 },
  { code: 'VITE-', en: 'Vitamin E', fr: 'Vitamine E', family: 'VITAMINS', unit: 'MGM', reference: 12 },
  { code: 'VITK-', en: 'Vitamin K', fr: 'Vitamine K', family: 'VITAMINS', unit: 'MC', reference: 75 },
  { code: 'VITC-', en: 'Vitamin C', fr: 'Vitamine C', family: 'VITAMINS', unit: 'MGM', reference: 80 },
  { code: 'THIA', en: 'Thiamin', fr: 'Thiamine', family: 'VITAMINS', unit: 'MGM', reference: 1.1 },
  { code: 'RIBF', en: 'Riboflavin', fr: 'Riboflavine', family: 'VITAMINS', unit: 'MGM', reference: 1.4 },
  { code: 'NIA', en: 'Niacin', fr: 'Niacine', family: 'VITAMINS', unit: 'MGM', reference: 16 },
  { code: 'VITB6-', en: 'Vitamin B6', fr: 'Vitamine B6', family: 'VITAMINS', unit: 'MGM', reference: 1.4 },
  { code: 'FOLAC', en: 'Folic acid', fr: 'Acide folique', family: 'VITAMINS', unit: 'MC', reference: 200 },
  { code: 'VITB12', en: 'Vitamin B12', fr: 'Vitamine B12', family: 'VITAMINS', unit: 'MC', reference: 2.5 },
  { code: 'BIOT', en: 'Biotin', fr: 'Biotine', family: 'VITAMINS', unit: 'MC', reference: 50 },
  { code: 'PANTAC', en: 'Pantothenic acid', fr: 'Acide pantothénique', family: 'VITAMINS', unit: 'MGM', reference: 6 },
  { code: 'K', en: 'Potassium', fr: 'Potassium', family: 'MINERALS', unit: 'MGM', reference: 2000 },
  { code: 'CLD', en: 'Chloride', fr: 'Chlorure', family: 'MINERALS', unit: 'MGM', reference: 800 },
  { code: 'CA', en: 'Calcium', fr: 'Calcium', family: 'MINERALS', unit: 'MGM', reference: 800 },
  { code: 'P', en: 'Phosphorus', fr: 'Phosphore', family: 'MINERALS', unit: 'MGM', reference: 700 },
  { code: 'MG', en: 'Magnesium', fr: 'Magnésium', family: 'MINERALS', unit: 'MGM', reference: 375 },
  { code: 'FE', en: 'Iron', fr: 'Fer', family: 'MINERALS', unit: 'MGM', reference: 14 },
  { code: 'ZN', en: 'Zinc', fr: 'Zinc', family: 'MINERALS', unit: 'MGM', reference: 10 },
  { code: 'CU', en: 'Copper', fr: 'Cuivre', family: 'MINERALS', unit: 'MGM', reference: 1 },
  { code: 'MN', en: 'Manganese', fr: 'Manganèse', family: 'MINERALS', unit: 'MGM', reference: 2 },
  { code: 'FD', en: 'Fluoride', fr: 'Fluorure', family: 'MINERALS', unit: 'MGM', reference: 3.5 },
  { code: 'SE', en: 'Selenium', fr: 'Sélénium', family: 'MINERALS', unit: 'MC', reference: 55 },
  { code: 'CR', en: 'Chromium', fr: 'Chrome', family: 'MINERALS', unit: 'MC', reference: 40 },
  { code: 'MO', en: 'Molybdenum', fr: 'Molybdène', family: 'MINERALS', unit: 'MC', reference: 50 },
  { code: 'ID', en: 'Iodine', fr: 'Iode', family: 'MINERALS', unit: 'MC', reference: 150 },
];

/** The nutrient-families lookup. */
export function buildNutrientFamilies(): SeedRecord[] {
  return NUTRIENT_FAMILIES.map(([code, en, fr]) => ({
    id: seedId('nutrient-families', code),
    code,
    names: names(en, fr),
  }));
}

/** The nutrients lookup: extra {unit, familyId, familyCode, order, reference?}. */
export function buildNutrients(): SeedRecord[] {
  return NUTRIENTS.map((n, i) => ({
    id: seedId('nutrients', n.code),
    code: n.code,
    names: names(n.en, n.fr),
    extra: {
      unit: n.unit,
      familyId: seedId('nutrient-families', n.family),
      familyCode: n.family,
      order: i + 1,
      ...(n.reference === undefined ? {} : { reference: n.reference }),
    },
  }));
}
