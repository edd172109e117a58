// The 14 allergens of Regulation (EU) No 1169/2011, Annex II ("Substances or products causing allergies or
// intolerances"), with the sub-items the Annex names (points 1 and 8). English and French names follow the
// regulation's official texts (OJ L 304, 22.11.2011, EN and FR versions), shortened to the head noun phrase; the
// full point is in extra.annexII. Codes are the GS1 AllergenTypeCode codes (see @vocabulary/gs1) for the same item.
import { names, seedId, type SeedRecord } from './seed-id.ts';

interface AllergenRow {
  code: string;
  point: number;
  en: string;
  fr: string;
  de?: string;
  subs?: readonly { code: string; en: string; fr: string; de?: string }[];
}

/** Annex II, in its order. */
export const ANNEX_II: readonly AllergenRow[] = [
  {
    code: 'AW',
    point: 1,
    en: 'Cereals containing gluten',
    fr: 'Céréales contenant du gluten',
    de: 'Glutenhaltiges Getreide',
    subs: [
      { code: 'UW', en: 'Wheat', fr: 'Blé', de: 'Weizen' },
      { code: 'NR', en: 'Rye', fr: 'Seigle', de: 'Roggen' },
      { code: 'GB', en: 'Barley', fr: 'Orge', de: 'Gerste' },
      { code: 'GO', en: 'Oats', fr: 'Avoine', de: 'Hafer' },
      { code: 'GS', en: 'Spelt', fr: 'Épeautre', de: 'Dinkel' },
      { code: 'GK', en: 'Khorasan wheat (Kamut)', fr: 'Blé khorasan (Kamut)', de: 'Khorasan-Weizen (Kamut)' },
    ],
  },
  { code: 'AC', point: 2, en: 'Crustaceans', fr: 'Crustacés', de: 'Krebstiere' },
  { code: 'AE', point: 3, en: 'Eggs', fr: 'Œufs', de: 'Eier' },
  { code: 'AF', point: 4, en: 'Fish', fr: 'Poissons', de: 'Fische' },
  { code: 'AP', point: 5, en: 'Peanuts', fr: 'Arachides', de: 'Erdnüsse' },
  { code: 'AY', point: 6, en: 'Soybeans', fr: 'Soja', de: 'Sojabohnen' },
  { code: 'AM', point: 7, en: 'Milk', fr: 'Lait', de: 'Milch' },
  {
    code: 'AN',
    point: 8,
    en: 'Nuts',
    fr: 'Fruits à coque',
    de: 'Schalenfrüchte',
    subs: [
      { code: 'SA', en: 'Almonds', fr: 'Amandes', de: 'Mandeln' },
      { code: 'SH', en: 'Hazelnuts', fr: 'Noisettes', de: 'Haselnüsse' },
      { code: 'SW', en: 'Walnuts', fr: 'Noix', de: 'Walnüsse' },
      { code: 'SC', en: 'Cashews', fr: 'Noix de cajou', de: 'Kaschunüsse' },
      { code: 'SP', en: 'Pecan nuts', fr: 'Noix de pécan', de: 'Pekannüsse' },
      { code: 'SR', en: 'Brazil nuts', fr: 'Noix du Brésil', de: 'Paranüsse' },
      { code: 'ST', en: 'Pistachio nuts', fr: 'Pistaches', de: 'Pistazien' },
      {
        code: 'SM',
        en: 'Macadamia or Queensland nuts',
        fr: 'Noix de Macadamia ou du Queensland',
        de: 'Macadamia- oder Queenslandnüsse',
      },
    ],
  },
  { code: 'BC', point: 9, en: 'Celery', fr: 'Céleri', de: 'Sellerie' },
  { code: 'BM', point: 10, en: 'Mustard', fr: 'Moutarde', de: 'Senf' },
  { code: 'AS', point: 11, en: 'Sesame seeds', fr: 'Graines de sésame', de: 'Sesamsamen' },
  {
    code: 'AU',
    point: 12,
    en: 'Sulphur dioxide and sulphites',
    fr: 'Anhydride sulfureux et sulfites',
    de: 'Schwefeldioxid und Sulphite',
  },
  { code: 'NL', point: 13, en: 'Lupin', fr: 'Lupin', de: 'Lupinen' },
  { code: 'UM', point: 14, en: 'Molluscs', fr: 'Mollusques', de: 'Weichtiere' },
];

/** The allergens lookup: 14 Annex II items (parentId null) and their sub-items (parentId = the item). */
export function buildAllergens(): SeedRecord[] {
  const out: SeedRecord[] = [];
  for (const a of ANNEX_II) {
    const id = seedId('allergens', a.code);
    out.push({ id, code: a.code, names: names(a.en, a.fr, a.de), parentId: null, extra: { annexII: a.point } });
    for (const s of a.subs ?? []) {
      out.push({
        id: seedId('allergens', s.code),
        code: s.code,
        names: names(s.en, s.fr, s.de),
        parentId: id,
        extra: { annexII: a.point },
      });
    }
  }
  return out;
}
