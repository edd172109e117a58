// Lists with no public code list to draw from: small fixtures that are ours (codes and wording chosen by
// product-sync), in English and French. Where a label is a legal phrase, it is the official one: the date
// mentions of Regulation (EU) No 1169/2011 Annex X and the origin mentions of Regulation (EU) No 1337/2013.
import type { ListName } from '../../api/fields.ts';
import { names, seedId, type SeedRecord } from './seed-id.ts';

type Row = readonly [code: string, en: string, fr?: string];

/** Our fixtures, by list name. A row without French deliberately lacks fr-FR. */
export const OUR_LISTS: Readonly<Partial<Record<ListName, readonly Row[]>>> = {
  'storage-condition-temperature': [
    ['AMBIENT', 'Ambient temperature', 'Température ambiante'],
    ['COOL_DRY', 'Store in a cool, dry place', 'À conserver dans un endroit frais et sec'],
    ['CHILLED_0_4', 'Chilled (0 °C to +4 °C)', 'Réfrigéré (0 °C à +4 °C)'],
    ['CHILLED_0_8', 'Chilled (0 °C to +8 °C)', 'Réfrigéré (0 °C à +8 °C)'],
    ['FROZEN', 'Frozen (-18 °C or colder)', 'Surgelé (-18 °C ou moins)'],
  ],
  'storage-condition-context': [
    ['BEFORE_OPENING', 'Before opening', 'Avant ouverture'],
    ['AFTER_OPENING', 'After opening', 'Après ouverture'],
    ['AFTER_THAWING', 'After thawing', 'Après décongélation'],
    ['AFTER_PREPARATION', 'After preparation', 'Après préparation'],
  ],
  'production-date-indication': [
    ['PRODUCTION_DATE', 'Production date', 'Date de production'],
    ['PACKING_DATE', 'Packing date', 'Date de conditionnement'],
    ['FREEZING_DATE', 'Date of freezing', 'Date de congélation'],
    ['NONE', 'No date indicated', 'Aucune date indiquée'],
  ],
  'consumer-shelf-life-indication': [
    ['BEST_BEFORE', 'Best before', 'À consommer de préférence avant'],
    ['BEST_BEFORE_END', 'Best before end', 'À consommer de préférence avant fin'],
    ['USE_BY', 'Use by', 'À consommer jusqu’au'],
    ['NONE', 'No date of minimum durability required', 'Date de durabilité minimale non requise'],
  ],
  'guaranteed-shelf-life': [
    ['DAYS_AT_DELIVERY', 'Days remaining at delivery', 'Jours restants à la livraison'],
    [
      'SHARE_OF_TOTAL',
      'Share of the total shelf life remaining at delivery',
      'Part de la durée de vie totale restant à la livraison',
    ],
    ['NOT_GUARANTEED', 'Not guaranteed', 'Non garantie'],
  ],
  'origin-type': [
    ['COUNTRY_OF_ORIGIN', 'Country of origin', 'Pays d’origine'],
    ['PLACE_OF_PROVENANCE', 'Place of provenance', 'Lieu de provenance'],
    ['BORN_IN', 'Born in', 'Né en'],
    ['REARED_IN', 'Reared in', 'Élevé en'],
    ['SLAUGHTERED_IN', 'Slaughtered in', 'Abattu en'],
    ['CAUGHT_IN', 'Caught in', 'Pêché en'],
    ['PACKED_IN', 'Packed in'],
  ],
  'control-phase': [
    ['RECEPTION', 'Goods reception', 'Réception'],
    ['PRODUCTION', 'Production', 'Production'],
    ['RELEASE', 'Release', 'Libération'],
    ['STORAGE', 'Storage', 'Stockage'],
    ['DISPATCH', 'Dispatch', 'Expédition'],
  ],
  'characteristic-type': [
    ['PHYSICAL', 'Physical', 'Physique'],
    ['CHEMICAL', 'Chemical', 'Chimique'],
    ['MICROBIOLOGICAL', 'Microbiological', 'Microbiologique'],
    ['SENSORY', 'Sensory', 'Organoleptique'],
    ['NUTRITIONAL', 'Nutritional', 'Nutritionnelle'],
  ],
  'cleaning-treatment': [
    ['WASHING', 'Washing', 'Lavage'],
    ['PEELING', 'Peeling', 'Épluchage'],
    ['TRIMMING', 'Trimming', 'Parage'],
    ['SORTING', 'Sorting', 'Tri'],
    ['DESTONING', 'Destoning', 'Épierrage'],
  ],
  'treatment-type': [
    ['UNTREATED', 'Untreated', 'Non traité'],
    ['HEAT_TREATED', 'Heat treated', 'Traité thermiquement'],
    ['HIGH_PRESSURE', 'High pressure processing (HPP)', 'Traitement par hautes pressions (HPP)'],
    ['IRRADIATED', 'Irradiated', 'Ionisé'],
    ['WAXED', 'Waxed', 'Ciré'],
  ],
  'template-type': [
    ['TRADE_ITEM', 'Trade item', 'Article commercial'],
    ['MANUFACTURED_ITEM', 'Manufactured item', 'Article fabriqué'],
    ['RAW_MATERIAL', 'Raw material', 'Matière première'],
  ],
  'portal-types': [
    ['SUPPLIER', 'Supplier', 'Fournisseur'],
    ['MANUFACTURER', 'Manufacturer', 'Fabricant'],
    ['RETAILER', 'Retailer', 'Distributeur'],
  ],
  'trade-item-status': [
    ['ACTIVE', 'Active', 'Actif'],
    ['INACTIVE', 'Inactive', 'Inactif'],
    ['DISCONTINUED', 'Discontinued', 'Arrêté'],
    ['DRAFT', 'Draft', 'Brouillon'],
  ],
};

/** The records of one of our fixture lists (empty if the list is not ours). */
export function buildOurList(list: ListName): SeedRecord[] {
  return (OUR_LISTS[list] ?? []).map(([code, en, fr]) => ({
    id: seedId(list, code),
    code,
    names: names(en, fr),
    extra: { source: 'product-sync fixture' },
  }));
}
