import { uuidv5 } from './uuid.ts';

/** A unit family; conversion between families is never done. */
export type UnitFamily = 'mass' | 'volume' | 'count' | 'length' | 'area';

/** A canonical unit: `code` is what `netContents[].unitOfMeasure` carries (UN/ECE Rec 20 common code, as GS1 uses). */
export interface Unit {
  code: string;
  symbol: string;
  name: string;
  family: UnitFamily;
  /**
   * Words and symbols sheets use for it, compared case-insensitively without accents and a trailing dot: English and
   * French, German, Spanish, Italian and Dutch.
   */
  aliases: readonly string[];
}

/** Every unit the sheets may name, once. */
export const UNITS: readonly Unit[] = [
  {
    code: 'MC',
    symbol: 'mcg',
    name: 'microgram',
    family: 'mass',
    aliases: ['mcg', 'µg', 'ug', 'microgram', 'micrograms', 'microgramme', 'microgrammes', 'MC'],
  },
  {
    code: 'MGM',
    symbol: 'mg',
    name: 'milligram',
    family: 'mass',
    aliases: [
      'mg',
      'milligram',
      'milligrams',
      'milligramme',
      'milligrammes',
      'milligramm',
      'miligramo',
      'miligramos',
      'milligrammo',
      'milligrammi',
      'MGM',
    ],
  },
  {
    code: 'CGM',
    symbol: 'cg',
    name: 'centigram',
    family: 'mass',
    aliases: ['cg', 'centigram', 'centigrams', 'centigramme', 'centigrammes', 'CGM'],
  },
  {
    code: 'DG',
    symbol: 'dg',
    name: 'decigram',
    family: 'mass',
    aliases: ['dg', 'decigram', 'decigrams', 'decigramme', 'decigrammes', 'DG'],
  },
  {
    code: 'GRM',
    symbol: 'g',
    name: 'gram',
    family: 'mass',
    aliases: [
      'g',
      'gr',
      'grs',
      'gram',
      'grams',
      'gramme',
      'grammes',
      'gramm',
      'gramo',
      'gramos',
      'grammo',
      'grammi',
      'GRM',
    ],
  },
  {
    code: 'KGM',
    symbol: 'kg',
    name: 'kilogram',
    family: 'mass',
    aliases: [
      'kg',
      'kgs',
      'kilo',
      'kilos',
      'kilogram',
      'kilograms',
      'kilogramme',
      'kilogrammes',
      'kilogramm',
      'kilogramo',
      'kilogramos',
      'chilo',
      'chilogrammo',
      'chilogrammi',
      'KGM',
    ],
  },
  {
    code: 'TNE',
    symbol: 'ton',
    name: 'tonne',
    family: 'mass',
    aliases: ['t', 'ton', 'tons', 'tonne', 'tonnes', 'TNE'],
  },
  {
    code: 'MLT',
    symbol: 'ml',
    name: 'millilitre',
    family: 'volume',
    aliases: [
      'ml',
      'millilitre',
      'millilitres',
      'milliliter',
      'milliliters',
      'mililitro',
      'mililitros',
      'millilitro',
      'millilitri',
      'MLT',
    ],
  },
  {
    code: 'CLT',
    symbol: 'cl',
    name: 'centilitre',
    family: 'volume',
    aliases: [
      'cl',
      'centilitre',
      'centilitres',
      'centiliter',
      'centiliters',
      'centilitro',
      'centilitros',
      'centilitri',
      'CLT',
    ],
  },
  {
    code: 'DLT',
    symbol: 'dl',
    name: 'decilitre',
    family: 'volume',
    aliases: ['dl', 'decilitre', 'decilitres', 'deciliter', 'deciliters', 'DLT'],
  },
  {
    code: 'LTR',
    symbol: 'l',
    name: 'litre',
    family: 'volume',
    aliases: ['l', 'lt', 'ltr', 'litre', 'litres', 'liter', 'liters', 'litro', 'litros', 'litri', 'LTR'],
  },
  {
    code: 'MTQ',
    symbol: 'm3',
    name: 'cubic metre',
    family: 'volume',
    aliases: ['m3', 'm³', 'cubic metre', 'cubic meter', 'metre cube', 'MTQ'],
  },
  {
    code: 'H87',
    symbol: 'pc',
    name: 'piece',
    family: 'count',
    aliases: [
      'pc',
      'pcs',
      'piece',
      'pieces',
      'pièce',
      'pièces',
      'unit',
      'units',
      'unite',
      'unité',
      'unités',
      'u',
      // German, Spanish, Italian, Dutch (a trailing dot is dropped: `Stk.`, `uds.`).
      'stk',
      'stck',
      'st',
      'stück',
      'stueck',
      'ud',
      'uds',
      'unidad',
      'unidades',
      'pieza',
      'piezas',
      'pz',
      'pzz',
      'pezzo',
      'pezzi',
      'unità',
      'stuk',
      'stuks',
      'H87',
    ],
  },
  {
    code: 'MMT',
    symbol: 'mm',
    name: 'millimetre',
    family: 'length',
    aliases: ['mm', 'millimetre', 'millimetres', 'millimeter', 'MMT'],
  },
  {
    code: 'CMT',
    symbol: 'cm',
    name: 'centimetre',
    family: 'length',
    aliases: ['cm', 'centimetre', 'centimetres', 'centimeter', 'CMT'],
  },
  {
    code: 'MTR',
    symbol: 'm',
    name: 'metre',
    family: 'length',
    aliases: ['m', 'metre', 'metres', 'meter', 'meters', 'metro', 'metros', 'metri', 'MTR'],
  },
  {
    code: 'MTK',
    symbol: 'm2',
    name: 'square metre',
    family: 'area',
    aliases: ['m2', 'm²', 'square metre', 'square meter', 'MTK'],
  },
];

/**
 * The seven units `drainedNetWeight` / `variableWeight` accept (product API spec), each with a stable uuid shared by
 * client and sandbox.
 */
export const WEIGHT_UNITS: readonly { id: string; symbol: string; name: string; code: string }[] = (
  [
    ['g', 'gram', 'GRM'],
    ['kg', 'kilogram', 'KGM'],
    ['mg', 'milligram', 'MGM'],
    ['cg', 'centigram', 'CGM'],
    ['dg', 'decigram', 'DG'],
    ['mcg', 'microgram', 'MC'],
    ['ton', 'ton', 'TNE'],
  ] as const
).map(([symbol, name, code]) => ({ id: uuidv5(`weight-unit:${symbol}`), symbol, name, code }));

/** The uuids accepted as `drainedNetWeight.unitOfMeasure` / `variableWeight.unitOfMeasure`. */
export const WEIGHT_UNIT_IDS: ReadonlySet<string> = new Set(WEIGHT_UNITS.map((u) => u.id));

const weightUnitIdByCode = new Map(WEIGHT_UNITS.map((u) => [u.code, u.id]));

/** The weight-unit uuid of a unit code (`KGM` → the kg uuid); undefined for a unit that is not one of the seven. */
export function weightUnitId(code: string): string | undefined {
  return weightUnitIdByCode.get(code);
}

// Words in printable ASCII (nearly all) have no accent to drop: they skip the normalisation.
const BEYOND_ASCII = /[^ -~]/;
const fold = (s: string): string =>
  (BEYOND_ASCII.test(s) ? s.normalize('NFD').replace(/\p{M}/gu, '') : s)
    .trim()
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .replace(/\.$/, '');

const byAlias = new Map<string, Unit>();
for (const u of UNITS) for (const a of [u.code, u.symbol, ...u.aliases]) byAlias.set(fold(a), u);

/** The canonical unit a sheet's word names (`gr`, `Kg`, `KGM`, `LITRE`…), or undefined. */
export function findUnit(word: string): Unit | undefined {
  return byAlias.get(fold(word));
}
