// The two lists drawn from GS1 code lists of the @vocabulary/gs1 package: packaging-materials
// (PackagingMaterialTypeCode) and preservation-method (PreservationTechniqueCode). The package has English labels
// only; the French labels below are ours, given for the common codes. The other codes deliberately have no fr-FR
// name (a fr-FR lookup of them answers 404), e.g. POLYMER_EVOH, METAL_ZAMAC, ATTESTED_MILK, CONSERVE.
import { gs1CodeList } from './gs1-code-lists.ts';
import { names, seedId, type SeedRecord } from './seed-id.ts';

/** Our French labels of PackagingMaterialTypeCode codes. */
export const PACKAGING_MATERIAL_FR: Readonly<Record<string, string>> = {
  BAMBOO: 'Bambou',
  CERAMIC: 'Céramique',
  CLOTH_OR_FABRIC: 'Tissu',
  COMPOSITE: 'Composite',
  CORK_NATURAL: 'Liège naturel',
  CORRUGATED_BOARD_SINGLE_WALL: 'Carton ondulé simple cannelure',
  CORRUGATED_BOARD_DOUBLE_WALL: 'Carton ondulé double cannelure',
  CORRUGATED_BOARD_TRIPLE_WALL: 'Carton ondulé triple cannelure',
  FIBRE_COTTON: 'Coton',
  FIBRE_JUTE: 'Jute',
  GLASS: 'Verre',
  GLASS_COLOURED: 'Verre coloré',
  METAL_ALUMINUM: 'Aluminium',
  METAL_STAINLESS_STEEL: 'Acier inoxydable',
  METAL_STEEL: 'Acier',
  METAL_TIN: 'Étain',
  OTHER: 'Autre',
  PAPER_KRAFT: 'Papier kraft',
  PAPER_PAPER: 'Papier',
  PAPER_PAPERBOARD: 'Carton',
  PLASTIC_OTHER: 'Autre plastique',
  POLYMER_EPS: 'Polystyrène expansé (PSE)',
  POLYMER_HDPE: 'Polyéthylène haute densité (PEHD)',
  POLYMER_LDPE: 'Polyéthylène basse densité (PEBD)',
  POLYMER_PE: 'Polyéthylène (PE)',
  POLYMER_PET: 'Polyéthylène téréphtalate (PET)',
  POLYMER_PLA: 'Acide polylactique (PLA)',
  POLYMER_PP: 'Polypropylène (PP)',
  POLYMER_PS: 'Polystyrène (PS)',
  POLYMER_PVC: 'Polychlorure de vinyle (PVC)',
  WOOD_HARDWOOD: 'Bois dur',
  WOOD_PLYWOOD: 'Contreplaqué',
  WOOD_SOFTWOOD: 'Bois tendre',
};

/** Our French labels of PreservationTechniqueCode codes. */
export const PRESERVATION_TECHNIQUE_FR: Readonly<Record<string, string>> = {
  ACIDIFICATION: 'Acidification',
  BRINING: 'Saumurage',
  CANNING: 'Appertisation',
  COLD_SMOKE_CURING: 'Fumage à froid',
  DEHYDRATION: 'Déshydratation',
  DRYING: 'Séchage',
  FERMENTATION: 'Fermentation',
  FREEZE_DRYING: 'Lyophilisation',
  FREEZING: 'Congélation',
  HOT_SMOKE_CURING: 'Fumage à chaud',
  IONISATION: 'Ionisation',
  IRRADIATION: 'Irradiation',
  PASTEURISATION: 'Pasteurisation',
  QUICK_FREEZING: 'Surgélation',
  SALT_CURING: 'Salaison',
  STERILISATION: 'Stérilisation',
  ULTRA_HIGH_TEMPERATURE: 'Ultra haute température (UHT)',
  UNDER_MODIFIED_ATMOSPHERE: 'Sous atmosphère modifiée',
  VACUUM_PACKED: 'Conditionné sous vide',
};

function fromGs1(listName: string, gs1List: string, french: Readonly<Record<string, string>>): SeedRecord[] {
  return gs1CodeList(gs1List).map((c): SeedRecord => {
    return {
      id: seedId(listName, c.code),
      code: c.code,
      names: names(c.label, french[c.code]),
      extra: { source: `GS1 ${gs1List}`, ...(c.definition ? { definition: c.definition } : {}) },
    };
  });
}

/** The packaging-materials list: every GS1 PackagingMaterialTypeCode. */
export function buildPackagingMaterials(): SeedRecord[] {
  return fromGs1('packaging-materials', 'PackagingMaterialTypeCode', PACKAGING_MATERIAL_FR);
}

/** The preservation-method list: every GS1 PreservationTechniqueCode. */
export function buildPreservationMethods(): SeedRecord[] {
  return fromGs1('preservation-method', 'PreservationTechniqueCode', PRESERVATION_TECHNIQUE_FR);
}
