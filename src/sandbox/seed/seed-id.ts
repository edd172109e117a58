import { uuidv5 } from '../../api/uuid.ts';

/**
 * One reference record as seeded: names by language code ('en-US', 'fr-FR', 'de-DE'); a missing key means no
 * translation.
 */
export interface SeedRecord {
  id: string;
  code: string;
  names: Record<string, string>;
  parentId?: string | null;
  extra?: Record<string, unknown>;
}

/** The stable id of a seeded record: UUIDv5 of `${kindOrList}:${code}`, the same across runs and machines. */
export function seedId(kindOrList: string, code: string): string {
  return uuidv5(`${kindOrList}:${code}`);
}

/** Names object from an English, French and optional German label, leaving out the languages that have none. */
export function names(en: string | undefined, fr?: string, de?: string): Record<string, string> {
  const out: Record<string, string> = {};
  if (en) out['en-US'] = en;
  if (fr) out['fr-FR'] = fr;
  if (de) out['de-DE'] = de;
  return out;
}
