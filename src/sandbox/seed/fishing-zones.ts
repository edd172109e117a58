// FAO major fishing areas (CWP Handbook of Fishery Statistics, "FAO Major Fishing Areas", names in English and
// French as FAO publishes them), with the ICES sub-areas and divisions of area 27 and the GFCM sub-areas and
// divisions of area 37 — the subdivisions named on fish labels under Regulation (EU) No 1379/2013, Art. 38.
// The parent of a code is the code without its last dotted part: 27.4.a → 27.4 → 27.
import { names, seedId, type SeedRecord } from './seed-id.ts';

/** [code, English, French]. */
export const FAO_AREAS: readonly (readonly [string, string, string])[] = [
  ['01', 'Africa - Inland waters', 'Afrique - eaux continentales'],
  ['02', 'America, North - Inland waters', 'Amérique du Nord - eaux continentales'],
  ['03', 'America, South - Inland waters', 'Amérique du Sud - eaux continentales'],
  ['04', 'Asia - Inland waters', 'Asie - eaux continentales'],
  ['05', 'Europe - Inland waters', 'Europe - eaux continentales'],
  ['06', 'Oceania - Inland waters', 'Océanie - eaux continentales'],
  ['08', 'Antarctica - Inland waters', 'Antarctique - eaux continentales'],
  ['18', 'Arctic Sea', 'Mer Arctique'],
  ['21', 'Atlantic, Northwest', 'Atlantique, Nord-Ouest'],
  ['27', 'Atlantic, Northeast', 'Atlantique, Nord-Est'],
  ['31', 'Atlantic, Western Central', 'Atlantique, Centre-Ouest'],
  ['34', 'Atlantic, Eastern Central', 'Atlantique, Centre-Est'],
  ['37', 'Mediterranean and Black Sea', 'Méditerranée et mer Noire'],
  ['41', 'Atlantic, Southwest', 'Atlantique, Sud-Ouest'],
  ['47', 'Atlantic, Southeast', 'Atlantique, Sud-Est'],
  ['48', 'Atlantic, Antarctic', 'Atlantique, Antarctique'],
  ['51', 'Indian Ocean, Western', 'Océan Indien, Ouest'],
  ['57', 'Indian Ocean, Eastern', 'Océan Indien, Est'],
  ['58', 'Indian Ocean, Antarctic and Southern', 'Océan Indien, Antarctique et Austral'],
  ['61', 'Pacific, Northwest', 'Pacifique, Nord-Ouest'],
  ['67', 'Pacific, Northeast', 'Pacifique, Nord-Est'],
  ['71', 'Pacific, Western Central', 'Pacifique, Centre-Ouest'],
  ['77', 'Pacific, Eastern Central', 'Pacifique, Centre-Est'],
  ['81', 'Pacific, Southwest', 'Pacifique, Sud-Ouest'],
  ['87', 'Pacific, Southeast', 'Pacifique, Sud-Est'],
  ['88', 'Pacific, Antarctic', 'Pacifique, Antarctique'],
  // Area 27: ICES sub-areas and divisions.
  ['27.1', 'Barents Sea', 'Mer de Barents'],
  ['27.2', 'Norwegian Sea, Spitzbergen and Bear Island', 'Mer de Norvège, Spitzberg et île aux Ours'],
  ['27.2.a', 'Norwegian Sea', 'Mer de Norvège'],
  ['27.2.b', 'Spitzbergen and Bear Island', 'Spitzberg et île aux Ours'],
  ['27.3', 'Skagerrak, Kattegat, Sound, Belt Sea and Baltic Sea', 'Skagerrak, Kattegat, Sund, Belts et mer Baltique'],
  ['27.3.a', 'Skagerrak and Kattegat', 'Skagerrak et Kattegat'],
  ['27.3.b', 'Sound', 'Sund'],
  ['27.3.c', 'Belt Sea', 'Belts'],
  ['27.3.d', 'Baltic Sea', 'Mer Baltique'],
  ['27.4', 'North Sea', 'Mer du Nord'],
  ['27.4.a', 'Northern North Sea', 'Mer du Nord septentrionale'],
  ['27.4.b', 'Central North Sea', 'Mer du Nord centrale'],
  ['27.4.c', 'Southern North Sea', 'Mer du Nord méridionale'],
  ['27.5', 'Iceland and Faroes Grounds', 'Islande et Féroé'],
  ['27.5.a', 'Iceland Grounds', 'Islande'],
  ['27.5.b', 'Faroes Grounds', 'Féroé'],
  [
    '27.6',
    'Rockall, Northwest Coast of Scotland and North Ireland',
    "Rockall, côte nord-ouest de l'Écosse et Irlande du Nord",
  ],
  ['27.6.a', 'Northwest Coast of Scotland and North Ireland', "Côte nord-ouest de l'Écosse et Irlande du Nord"],
  ['27.6.b', 'Rockall', 'Rockall'],
  [
    '27.7',
    'Irish Sea, West of Ireland, Porcupine Bank, Eastern and Western English Channel, Bristol Channel, Celtic Sea North and South, and Southwest of Ireland',
    "Mer d'Irlande, ouest de l'Irlande, banc de Porcupine, Manche orientale et occidentale, canal de Bristol, mer Celtique nord et sud, et sud-ouest de l'Irlande",
  ],
  ['27.7.a', 'Irish Sea', "Mer d'Irlande"],
  ['27.7.b', 'West of Ireland', "Ouest de l'Irlande"],
  ['27.7.c', 'Porcupine Bank', 'Banc de Porcupine'],
  ['27.7.d', 'Eastern English Channel', 'Manche orientale'],
  ['27.7.e', 'Western English Channel', 'Manche occidentale'],
  ['27.7.f', 'Bristol Channel', 'Canal de Bristol'],
  ['27.7.g', 'Celtic Sea North', 'Mer Celtique nord'],
  ['27.7.h', 'Celtic Sea South', 'Mer Celtique sud'],
  ['27.7.j', 'Southwest of Ireland - East', "Sud-ouest de l'Irlande - Est"],
  ['27.7.k', 'Southwest of Ireland - West', "Sud-ouest de l'Irlande - Ouest"],
  ['27.8', 'Bay of Biscay', 'Golfe de Gascogne'],
  ['27.8.a', 'Bay of Biscay - North', 'Golfe de Gascogne - Nord'],
  ['27.8.b', 'Bay of Biscay - Central', 'Golfe de Gascogne - Centre'],
  ['27.8.c', 'Bay of Biscay - South', 'Golfe de Gascogne - Sud'],
  ['27.8.d', 'Bay of Biscay - Offshore', 'Golfe de Gascogne - Large'],
  ['27.8.e', 'West of Bay of Biscay', 'Ouest du golfe de Gascogne'],
  ['27.9', 'Portuguese Waters', 'Eaux portugaises'],
  ['27.9.a', 'Portuguese Waters - East', 'Eaux portugaises - Est'],
  ['27.9.b', 'Portuguese Waters - West', 'Eaux portugaises - Ouest'],
  ['27.10', 'Azores Grounds and Northeast Atlantic South', 'Açores et Atlantique Nord-Est Sud'],
  ['27.10.a', 'Azores Grounds', 'Açores'],
  ['27.10.b', 'Northeast Atlantic South', 'Atlantique Nord-Est Sud'],
  ['27.12', 'North of Azores', 'Nord des Açores'],
  ['27.14', 'East Greenland', 'Groenland oriental'],
  ['27.14.a', 'Northeast Greenland', 'Groenland du Nord-Est'],
  ['27.14.b', 'Southeast Greenland', 'Groenland du Sud-Est'],
  // Area 37: GFCM sub-areas and divisions.
  ['37.1', 'Western Mediterranean', 'Méditerranée occidentale'],
  ['37.1.1', 'Balearic', 'Baléares'],
  ['37.1.2', 'Gulf of Lions', 'Golfe du Lion'],
  ['37.1.3', 'Sardinia', 'Sardaigne'],
  ['37.2', 'Central Mediterranean', 'Méditerranée centrale'],
  ['37.2.1', 'Adriatic', 'Adriatique'],
  ['37.2.2', 'Ionian', 'Ionienne'],
  ['37.3', 'Eastern Mediterranean', 'Méditerranée orientale'],
  ['37.3.1', 'Aegean', 'Égée'],
  ['37.3.2', 'Levant', 'Levant'],
  ['37.4', 'Black Sea', 'Mer Noire'],
  ['37.4.1', 'Marmara Sea', 'Mer de Marmara'],
  ['37.4.2', 'Black Sea', 'Mer Noire'],
  ['37.4.3', 'Azov Sea', "Mer d'Azov"],
];

/** The parent code of a dotted FAO code ('27.4.a' → '27.4', '27' → null). */
export function faoParentCode(code: string): string | null {
  const dot = code.lastIndexOf('.');
  return dot < 0 ? null : code.slice(0, dot);
}

/** The fishing-zones lookup: FAO areas, sub-areas and divisions, parentId from the dotted code. */
export function buildFishingZones(): SeedRecord[] {
  return FAO_AREAS.map(([code, en, fr]) => {
    const parent = faoParentCode(code);
    return {
      id: seedId('fishing-zones', code),
      code,
      names: names(en, fr),
      parentId: parent === null ? null : seedId('fishing-zones', parent),
      extra: { level: code.split('.').length, inland: code < '10' },
    };
  });
}
