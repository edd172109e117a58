/**
 * `mapping init` and the console mapper: a draft mapping from a sheet's headers and first rows. Each header is
 * matched to a field by name and by the alias table (header-aliases.ts), then checked against its column's values
 * (sample-kinds.ts); a column of GTINs is the GTIN whatever its header, a column of list labels gets that lookup, a
 * header its values contradict is not taken, and no field is fed by two columns (the best score wins).
 */
import { basename, extname } from 'node:path';
import {
  LIST_NAMES,
  MANUFACTURED_ITEM_FIELDS,
  NESTED_OBJECTS,
  TRADE_ITEM_FIELDS,
  type ListName,
} from '../api/fields.ts';
import { findUnit, WEIGHT_UNITS } from '../api/units.ts';
import { ProductSyncError } from '../errors.ts';
import { editDistance } from '../edit-distance.ts';
import { openSheet } from '../pipeline/read/read-sheet.ts';
import { labelMatcher, type ReferenceLabels } from '../pipeline/resolve/list-labels.ts';
import { labelKey, languageChain } from '../pipeline/resolve/reference-resolver.ts';
import {
  ALIAS_LANGUAGES,
  FIELD_ALIASES,
  HEADER_QUALIFIERS,
  HEADERS_WITHOUT_FIELD,
  LANGUAGE_TAGS,
  type AliasLanguage,
  type FieldAliases,
  type MappingLookup,
  type ValueKind,
} from './header-aliases.ts';
import { groupRowOf, groupTitles, normalizeHeader } from '../pipeline/map/headers.ts';
import { defaultType, resolveFieldPath } from '../pipeline/map/mapping.ts';
import {
  dateFormatOf,
  decimalSeparatorOf,
  fitsKind,
  isQuantity,
  isStrictGtin,
  listSeparatorOf,
  quantityNumber,
  shareFitting,
} from './sample-kinds.ts';
import { cellText, COLUMN_TYPES, localeNumberSeparators, type ColumnType } from '../pipeline/map/transforms.ts';
import { chooseWorksheet, findHeaderRow, visibleWorksheets, type HeaderRowChoice } from './sheet-choice.ts';
import type { Cell, Target } from '../pipeline/types.ts';

export type { ReferenceLabels } from '../pipeline/resolve/list-labels.ts';

/** How the mapping names a column whose header is on several columns: by the title above it, or by occurrence. */
export interface ColumnAddress {
  header: string;
  group?: string;
  occurrence?: number;
}

/** What `mapping init` proposes for one column of the sheet. */
export interface ColumnSuggestion {
  /** The header as written in the sheet. */
  header: string;
  /**
   * For a header on several columns: `{ header, group }` or `{ header, occurrence }`, what the mapping's `column` says.
   */
  column?: ColumnAddress;
  /** 1-based column number in the sheet. */
  position: number;
  /** Up to 5 distinct non-empty sample cells (as text). */
  samples: string[];
  /**
   * Suggested field path (`gtin`, `netContents[0].value`; `netContents[0]` for a quantity column); undefined =
   * unmatched.
   */
  field?: string;
  /** Column type when it is not the field's default (mapping.ts defaultType). */
  type?: string;
  /**
   * The mapping's lookup value: `{list: 'trade-item-status'}`, `'harmonized-code'`, `{brand: {create: true}}`, `{kind:
   * …}`.
   */
  lookup?: unknown;
  /** List separator when the samples are lists. */
  split?: string;
  /** Date format of a date column whose samples need one (`dd/mm/yyyy`). */
  format?: string;
  /** Decimal separator of a number column whose samples use the other one than the mapping's. */
  decimal?: ',' | '.';
  /** Value map (sheet value → value the field takes), the mapping's `values`: set by hand (the console's mapper). */
  values?: Record<string, string>;
  /** Why: `alias "Code-barres" (fr)`, `values are GTINs (valid check digits)`; for an unmatched column, why not. */
  reason?: string;
  /** What to check before using the draft (labels not found in the list, a header its values contradict…). */
  warning?: string;
  /** Values of a list-lookup column that are no label or code of its list, each with the list's nearest labels. */
  unresolved?: UnresolvedValue[];
  /** Words of a unit or quantity column that name no unit (`Fl.`, `Dose`): the draft suggests a `values:` map. */
  unknownUnits?: string[];
}

/** A sheet value a list lookup will not resolve, with the labels of the list closest to it (best first). */
export interface UnresolvedValue {
  value: string;
  nearest: string[];
}

/** A draft mapping: one suggestion per sheet header, in sheet order. */
export interface MappingDraft {
  name: string;
  target: 'tradeItem' | 'manufacturedItem';
  language: string;
  /** How the language was chosen (`--language`, or the headers that showed it). */
  languageReason?: string;
  sheet?: string;
  /** The workbook's other visible worksheets (`--sheet` drafts from one of them). */
  otherSheets?: string[];
  /** Why `sheet` was read, when it was chosen among several. */
  sheetReason?: string;
  headerRow: number;
  key: 'gtin' | 'tradeItemId';
  /** The sheet's decimal separator when its numbers use the other one than the language's. */
  decimalSeparator?: ',' | '.';
  /** One per sheet header, in sheet order (unmatched ones have no field). */
  columns: ColumnSuggestion[];
  /** Field values the headers imply (a unit written in a header: `Poids net (g)`), in API form. */
  defaults?: Record<string, string>;
  /** The sheet file's name (no directory). */
  source?: string;
  /** Things the user should know: labels not checked, a required field no column feeds, fields of the other target. */
  notes: string[];
  /** Set when no column feeds the key: what was looked for and what to do (also the first of `notes`). */
  missingKey?: string;
  /**
   * Required fields no column feeds (the name for creates, a manufactured item's supplier): each with the line to add.
   * Every row would fail without them, so `mapping init` exits 1.
   */
  missingRequired?: { field: string; add: string }[];
}

/** Options of {@link suggestMapping}. */
export interface SuggestOptions {
  target?: 'tradeItem' | 'manufacturedItem';
  language?: string;
  sheet?: string;
  headerRow?: number;
  name?: string;
  /**
   * Source of reference-list labels (to recognise a column of list labels); without it that check is skipped and a note
   * says so.
   */
  labels?: ReferenceLabels;
  /** Why there is no `labels` (shown in the note), e.g. `no reference API configured`. */
  labelsUnavailable?: string;
}

/** Data rows read for samples. */
export const SAMPLE_ROWS = 200;

/** Scores of the ways a column can match a field (rules as data): the highest pair (column, field) is taken first. */
const SCORE = {
  /** The header is the field's name or one of its aliases. */
  alias: 100,
  /**
   * A column whose values are GTINs, whatever its header: above an alias so the key column is found, below a GTIN
   * alias.
   */
  gtinValues: 105,
  /**
   * A column of numbers of a GTIN length whose check digits mostly fail: the GTIN only when no header or better column
   * says one (with the share that fails).
   */
  gtinLength: 45,
  /** The header contains an alias (`Marque commerciale`, `UGC_libMarque`). */
  contains: 60,
  /** The header is an alias with a typo (last resort). */
  fuzzy: 55,
  /** The values alone say it (units, country names, list labels, quantities). */
  values: 50,
  /** Added when the values fit what the field takes. */
  fits: 10,
  /**
   * Added when a header tagged with a language (`product_name_fr`) is in the sheet's language, taken when it is not.
   */
  language: 3,
  /**
   * Taken from a list-lookup header whose values are no labels of the list: a column of its labels is better evidence.
   */
  labelsMissing: 50,
} as const;

/** Share of a column's values that must fit for a header match to stand, and for the values alone to make a match. */
const CONTRADICTED_BELOW = 0.5;
const VALUES_MATCH_FROM = 0.9;
/** Least share of valid check digits for a column of GTIN-length numbers to be the GTIN (chance gives one in ten). */
const GTIN_LENGTH_VALID_FROM = 0.2;
const LABELS_MATCH_FROM = 0.8;

const LANGUAGE_NAMES: Readonly<Record<AliasLanguage, string>> = {
  en: 'English',
  fr: 'French',
  de: 'German',
  es: 'Spanish',
  it: 'Italian',
  nl: 'Dutch',
};

/**
 * A header cut into comparable words: accents, case, punctuation and camelCase folded; a language tag (`_fr`, `[fr]`)
 * and a unit in brackets set apart.
 */
interface HeaderWords {
  words: string[];
  compact: string;
  /** `product_name_fr` → fr. */
  tag?: AliasLanguage;
  /** `Poids net (g)` → g. */
  unit?: string;
}

/** Folds a header or an alias into words (after normalizeHeader): camelCase split, accents and punctuation dropped. */
function words(text: string): string[] {
  const split = text.normalize('NFC').replace(/(\p{Ll})(\p{Lu})/gu, '$1 $2');
  return normalizeHeader(split)
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .replace(/ß/g, 'ss')
    .replace(/[^\p{L}\p{N}]+/gu, ' ')
    .trim()
    .split(' ')
    .filter(Boolean);
}

function headerWords(header: string): HeaderWords {
  let unit: string | undefined;
  let tag: AliasLanguage | undefined;
  const bare = header.replace(/[([]\s*(?:en |in )?([^)\]]{1,12})[)\]]/giu, (_all, inner: string) => {
    const t = inner.trim().toLowerCase();
    if ((ALIAS_LANGUAGES as readonly string[]).includes(t)) tag = t as AliasLanguage;
    else if (findUnit(inner)) unit = inner.trim();
    return ' ';
  });
  let w = words(bare);
  if (w.length === 0) w = words(header);
  const last = w[w.length - 1];
  if (w.length > 1 && (ALIAS_LANGUAGES as readonly string[]).includes(last!)) {
    tag = last as AliasLanguage;
    w = w.slice(0, -1);
  }
  return { words: w, compact: w.join(''), ...(tag ? { tag } : {}), ...(unit ? { unit } : {}) };
}

/** An alias of the table, folded. */
interface Alias {
  text: string;
  words: string[];
  compact: string;
  languages: AliasLanguage[];
  /** Undefined for a header no field takes (HEADERS_WITHOUT_FIELD). */
  entry?: FieldAliases;
  /** What a header without field is (`allergens`). */
  what?: string;
  /** Field names are no language's: they do not vote. Neither do codes (`GTIN`, `EAN`, `UPC`). */
  votes: boolean;
}

function buildAliases(): Alias[] {
  const byKey = new Map<string, Alias>();
  const add = (
    text: string,
    language: AliasLanguage | undefined,
    entry: FieldAliases | undefined,
    what: string | undefined,
  ) => {
    const w = words(text);
    const key = `${w.join('')}\u0000${entry?.field ?? what}`;
    const a = byKey.get(key);
    if (a) {
      if (language && !a.languages.includes(language)) a.languages.push(language);
      return;
    }
    // A short word of what no field takes (`Sale`, `Fer`, `Salz`) is too often another language's word to show one.
    const votes =
      language !== undefined &&
      !/^[A-Z0-9 -]+$/.test(text) &&
      (entry !== undefined || w.join('').length > OWN_LANGUAGE_ONLY_UP_TO);
    byKey.set(key, {
      text,
      words: w,
      compact: w.join(''),
      languages: language ? [language] : [],
      ...(entry ? { entry } : {}),
      ...(what ? { what } : {}),
      votes,
    });
  };
  for (const entry of FIELD_ALIASES) {
    add(entry.field.replace(/\[\d+\]/g, ' ').replace(/\./g, ' '), undefined, entry, undefined);
    for (const lang of ALIAS_LANGUAGES) for (const a of entry.aliases[lang] ?? []) add(a, lang, entry, undefined);
  }
  for (const h of HEADERS_WITHOUT_FIELD)
    for (const lang of ALIAS_LANGUAGES) for (const a of h.aliases[lang] ?? []) add(a, lang, undefined, h.what);
  return [...byKey.values()];
}

let aliasTable: Alias[] | undefined;
const aliases = (): Alias[] => (aliasTable ??= buildAliases());

/** HEADER_QUALIFIERS folded as headers are, to the word as the table writes it. */
let qualifierWords: Map<string, string> | undefined;
const qualifiers = (): Map<string, string> =>
  (qualifierWords ??= new Map(HEADER_QUALIFIERS.map((q) => [words(q).join(''), q])));

/** True when `inner` appears as consecutive words of `outer`. */
function containsWords(outer: readonly string[], inner: readonly string[]): boolean {
  for (let i = 0; i + inner.length <= outer.length; i++) if (inner.every((w, j) => outer[i + j] === w)) return true;
  return false;
}

/**
 * Least share of a header's letters a contained alias must cover (`Marque commerciale`: yes; `X_SELL-product_models`:
 * no).
 */
const CONTAINS_COVER = 0.5;

/**
 * True for an alias written as a code (`GTIN`, `EAN`, `GLN`): short, yet specific enough to be found inside a header.
 */
const isCode = (a: Alias): boolean => /^[A-Z0-9]{3,}$/.test(a.text);

/**
 * How a header matches the alias table: exactly, else by containing an alias, else by a typo; the best matches only.
 * A header containing what no field takes (`Glucides pour 100 g`, `GLN fournisseur`, `fat_unit`) is that, whatever
 * field alias it also contains: a column it heads must not be taken for a field it merely resembles.
 */
function headerMatches(
  h: HeaderWords,
): { how: 'alias' | 'contains' | 'fuzzy'; aliases: Alias[]; qualifier?: string } | undefined {
  if (h.compact === '') return undefined;
  const exact = aliases().filter((a) => a.compact === h.compact);
  if (exact.length > 0) return { how: 'alias', aliases: exact };
  if (h.words.length > 1 && qualifiers().has(h.words[0]!)) {
    const rest = h.words.slice(1);
    const m = headerMatches({ ...h, words: rest, compact: rest.join('') });
    return m ? { ...m, qualifier: qualifiers().get(h.words[0]!)! } : undefined;
  }
  let best: Alias[] = [];
  let bestCover = 0;
  let none: Alias[] = [];
  let noneCover = 0;
  for (const a of aliases()) {
    if (
      (a.compact.length < (a.entry ? 4 : 3) && !isCode(a)) ||
      a.words.length >= h.words.length ||
      !containsWords(h.words, a.words)
    )
      continue;
    const cover = a.compact.length / h.compact.length;
    if (!a.entry) {
      if (cover > noneCover) [none, noneCover] = [[a], cover];
      continue;
    }
    if (cover < CONTAINS_COVER && !isCode(a)) continue;
    if (cover > bestCover + 1e-9) [best, bestCover] = [[a], cover];
    else if (Math.abs(cover - bestCover) <= 1e-9) best.push(a);
  }
  if (none.length > 0) return { how: 'contains', aliases: none };
  if (best.length > 0) return { how: 'contains', aliases: best };
  // A typo is one letter in a word of 7 or more (two from 12), never the first letter: between shorter words one letter
  // makes another word (`sale` / `salt`, `fats` / `fat`), not a typo.
  if (h.compact.length < FUZZY_FROM) return undefined;
  const max = h.compact.length >= 12 ? 2 : 1;
  let fuzzy: Alias[] = [];
  let bestD = max + 1;
  for (const a of aliases()) {
    if (a.compact.length < FUZZY_FROM || a.compact[0] !== h.compact[0]) continue;
    const d = editDistance(h.compact, a.compact, max);
    if (d < bestD) [fuzzy, bestD] = [[a], d];
    else if (d === bestD && d <= max) fuzzy.push(a);
  }
  return fuzzy.length > 0 ? { how: 'fuzzy', aliases: fuzzy } : undefined;
}

/** Fewest letters a header and an alias need to be matched despite a typo. */
const FUZZY_FROM = 7;

/**
 * Most letters of an alias of a header no field takes that stands for its own language's sheets only: `Sale` (salt,
 * it) is a sale in an English sheet, `Fer` (iron, fr) a word of other languages. Longer aliases are the same word in
 * every sheet they show up in.
 */
const OWN_LANGUAGE_ONLY_UP_TO = 5;

/** True when a short alias of a header without field is of other languages than the sheet's: it explains nothing. */
const foreignShortWord = (a: Alias, language: string): boolean =>
  !a.entry &&
  !isCode(a) &&
  a.compact.length <= OWN_LANGUAGE_ONLY_UP_TO &&
  a.languages.length > 0 &&
  !a.languages.includes(language.slice(0, 2).toLowerCase() as AliasLanguage);

/** A field a column may feed, with its score and why. */
interface Candidate {
  column: number;
  field: string;
  /** The field paths it occupies (a quantity occupies its value and its unit). */
  occupies: string[];
  score: number;
  reason: string;
  type?: ColumnType;
  lookup?: MappingLookup;
  warning?: string;
  unresolved?: UnresolvedValue[];
}

/** One column of the sheet as read for the draft. */
interface SheetColumn {
  index: number;
  header: string;
  words: HeaderWords;
  /** Non-empty cells of the first rows. */
  cells: Cell[];
  samples: string[];
  /**
   * Set when the column cannot be mapped by its header (empty, or present twice without a group title telling it
   * apart).
   */
  unusable?: string;
  /** How the mapping names it when its header is on several columns. */
  address?: ColumnAddress;
  /** The title above it (as written) when that tells it apart from the columns of the same header. */
  group?: string;
  /** How its header matches the alias table. */
  match?: ReturnType<typeof headerMatches>;
}

/** What a column of `type` (or feeding a field of this default type) should hold. */
function kindOfType(type: ColumnType): ValueKind {
  switch (type) {
    case 'gtin':
      return 'gtin';
    case 'decimal':
    case 'integer':
    case 'number':
      return 'number';
    case 'unit':
      return 'unit';
    case 'weightUnit':
      return 'weightUnit';
    case 'country':
      return 'country';
    case 'uuid':
      return 'uuid';
    case 'boolean':
      return 'boolean';
    case 'date':
      return 'date';
    default:
      return 'text';
  }
}

const KIND_WORDS: Readonly<Record<ValueKind, string>> = {
  gtin: 'GTINs',
  number: 'numbers',
  unit: 'units',
  weightUnit: 'weight units',
  country: 'countries',
  uuid: 'uuids',
  boolean: 'yes/no values',
  date: 'dates',
  hsCode: 'harmonized (HS) codes',
  languageCode: 'language codes',
  words: 'names',
  text: 'text',
};

const quote = (s: string): string => JSON.stringify(s.length > 40 ? `${s.slice(0, 37)}…` : s);
const sampleList = (cells: readonly Cell[], n = 3): string =>
  [...new Set(cells.map(cellText))].slice(0, n).map(quote).join(', ');
const quantityTypeExists = (): boolean => (COLUMN_TYPES as readonly string[]).includes('quantity');

/** The fields a target offers, as `fieldChoices` lists them. */
function allFieldPaths(target: Target): string[] {
  const out: string[] = [];
  const rules = [
    ...TRADE_ITEM_FIELDS.filter((f) => f.ops.includes('C')),
    ...(target === 'manufacturedItem'
      ? MANUFACTURED_ITEM_FIELDS.filter((f) => !TRADE_ITEM_FIELDS.some((t) => t.name === f.name))
      : []),
  ];
  for (const f of rules) {
    // The owner comes from the run, never from the sheet; createdBy only from an internal credential.
    if (f.name === 'ownerCompanyId' || f.internalOnly) continue;
    const t = f.type;
    if (t.kind === 'object' || t.kind === 'objectArray') {
      for (const n of NESTED_OBJECTS[t.of]) {
        if (n.ops && !n.ops.includes('C')) continue;
        out.push(t.kind === 'object' ? `${f.name}.${n.name}` : `${f.name}[0].${n.name}`);
      }
    } else out.push(f.name);
  }
  return out.filter((p) => typeof resolveFieldPath(target, p) !== 'string');
}

/**
 * The field paths a target offers (for a dropdown), most used first: the alias table's order, then the spec's,
 * deprecated fields last.
 */
export function fieldChoices(target: 'tradeItem' | 'manufacturedItem'): string[] {
  const all = allFieldPaths(target);
  const deprecated = new Set(TRADE_ITEM_FIELDS.filter((f) => f.deprecated).map((f) => f.name));
  const first = FIELD_ALIASES.map((a) => a.field).filter((f) => all.includes(f));
  const rest = all.filter((p) => !first.includes(p));
  const top = (p: string) => p.split(/[[.]/)[0]!;
  return [...first, ...rest.filter((p) => !deprecated.has(top(p))), ...rest.filter((p) => deprecated.has(top(p)))];
}

/** Reads the headers and up to SAMPLE_ROWS rows of non-empty cells of each column. */
async function readColumns(
  file: string,
  options: SuggestOptions,
  headerRow: number,
): Promise<{ columns: SheetColumn[]; firstRow: string[] }> {
  const sheet = await openSheet(file, { ...(options.sheet ? { sheet: options.sheet } : {}), headerRow });
  const columns: SheetColumn[] = sheet.headers.map((h, index) => {
    const words = headerWords(h ?? '');
    return { index, header: h ?? '', words, match: headerMatches(words), cells: [], samples: [] };
  });
  let firstRow: string[] = [];
  let n = 0;
  for await (const row of sheet.rows) {
    if (n === 0) firstRow = row.cells.map(cellText);
    row.cells.forEach((cell, i) => {
      const col = columns[i];
      if (!col || cell === null || cellText(cell) === '') return;
      col.cells.push(cell);
      const text = cellText(cell);
      if (col.samples.length < 5 && !col.samples.includes(text)) col.samples.push(text);
    });
    if (++n >= SAMPLE_ROWS) break;
  }
  const seen = new Map<string, number[]>();
  for (const c of columns) {
    const k = normalizeHeader(c.header);
    if (k === '') c.unusable = 'no header';
    else seen.set(k, [...(seen.get(k) ?? []), c.index + 1]);
  }
  // A header on several columns is told apart by the title above it when that title holds it once, else by occurrence.
  const { over, written } = groupTitles(groupRowOf(sheet), columns.length);
  for (const c of columns) {
    const at = seen.get(normalizeHeader(c.header));
    if (!at || at.length <= 1) continue;
    const group = over[c.index]!;
    const header = c.header.trim();
    if (group !== '' && at.filter((n) => over[n - 1] === group).length === 1) {
      c.group = written.get(group)!;
      c.address = { header, group: c.group };
      c.match = groupedMatch(c.group, c.header);
    } else {
      c.address = { header, occurrence: at.indexOf(c.index + 1) + 1 };
      c.unusable = `the header is on ${at.length} columns (${at.join(', ')}) and no title above tells this one apart: a mapping names it by occurrence (column: ${addressText(c.address)})`;
    }
  }
  return { columns, firstRow };
}

/** A header alone that says "the value" of what the title above it names (`Poids net` / `Valeur`). */
const VALUE_HEADERS = new Set([
  'valeur',
  'value',
  'wert',
  'valor',
  'valore',
  'waarde',
  'quantite',
  'quantity',
  'qty',
  'menge',
  'cantidad',
  'quantita',
  'hoeveelheid',
]);

/**
 * How a header under a group title matches the alias table: the title and the header together as one alias
 * (`Unité` under `Poids net` → `Unité poids net`), else the title names a value field and the header says its value
 * (`Valeur`, or an alias of that field) or its unit (an alias of a unit field): `Poids égoutté` / `Unité` →
 * drainedNetWeight.unitOfMeasure.
 */
function groupedMatch(group: string, header: string): ReturnType<typeof headerMatches> {
  for (const text of [`${header} ${group}`, `${group} ${header}`]) {
    const m = headerMatches(headerWords(text));
    if (m?.how === 'alias' && m.aliases.some((a) => a.entry)) return m;
  }
  const g = headerMatches(headerWords(group));
  if (!g || g.how === 'fuzzy') return undefined;
  const h = headerMatches(headerWords(header));
  const isUnit = h?.how === 'alias' && h.aliases.some((a) => a.entry?.field.endsWith('.unitOfMeasure'));
  const text = `${group} / ${header.trim()}`;
  const out: Alias[] = [];
  for (const a of g.aliases) {
    const object = a.entry ? /^(.+)\.value$/.exec(a.entry.field)?.[1] : undefined;
    if (!object) continue;
    const isValue =
      VALUE_HEADERS.has(words(header).join(' ')) ||
      (h?.how === 'alias' && h.aliases.some((x) => x.entry?.field === a.entry!.field));
    const field = isUnit ? `${object}.unitOfMeasure` : isValue ? `${object}.value` : undefined;
    const entry = field === undefined ? undefined : FIELD_ALIASES.find((e) => e.field === field);
    if (entry && !out.some((o) => o.entry === entry))
      out.push({
        text,
        words: words(text),
        compact: words(text).join(''),
        languages: a.languages,
        entry,
        votes: false,
      });
  }
  return out.length > 0 ? { how: g.how, aliases: out } : undefined;
}

/** True when a header names a field: exactly, or by containing an alias of one (what the header-row search counts). */
const namesField = (header: string): boolean => {
  const m = headerMatches(headerWords(header));
  return m !== undefined && m.how !== 'fuzzy' && m.aliases.some((a) => a.entry);
};

/**
 * The sheet's columns: from the worksheet given, else the one whose table best matches product fields
 * (sheet-choice.ts); from the header row given, else the one found below titles, notes and empty rows. Notes say what
 * was chosen and why.
 */
async function sheetColumns(
  file: string,
  options: SuggestOptions,
  notes: string[],
): Promise<{ columns: SheetColumn[]; headerRow: number; sheet?: string; otherSheets: string[]; sheetReason?: string }> {
  let sheet = options.sheet;
  let found: HeaderRowChoice | undefined;
  let otherSheets: string[] = [];
  let sheetReason: string | undefined;
  if (sheet === undefined) {
    const choice = await chooseWorksheet(file, namesField);
    if (choice.others.length > 0) {
      sheet = choice.sheet;
      otherSheets = choice.others;
      sheetReason = choice.why;
      found = choice.headerRow;
      notes.push(
        `worksheet "${sheet}" read: ${choice.why}; the workbook also has ${otherSheets.map((n) => `"${n}"`).join(', ')} (--sheet <name> drafts from another): sheet: ${sheet}`,
      );
    }
  } else
    otherSheets = (await visibleWorksheets(file)).filter((n) => n.trim().toLowerCase() !== sheet!.trim().toLowerCase());
  let headerRow = options.headerRow;
  if (headerRow === undefined) {
    found ??= await findHeaderRow(file, sheet, namesField);
    headerRow = found.row;
    if (found.why) notes.push(`the headers are on row ${headerRow} (${found.why}): headerRow: ${headerRow}`);
  }
  const read = await readColumns(file, { ...options, ...(sheet !== undefined ? { sheet } : {}) }, headerRow);
  return {
    columns: read.columns,
    headerRow,
    ...(sheet !== undefined ? { sheet } : {}),
    otherSheets,
    ...(sheetReason ? { sheetReason } : {}),
  };
}

/**
 * The sheet's language from the aliases its headers match (each header one vote, shared between the languages of its
 * alias) and language tags.
 */
function guessLanguage(columns: readonly SheetColumn[]): { language: string; reason: string } {
  const votes = new Map<AliasLanguage, number>();
  const known = new Map<AliasLanguage, number>();
  let voters = 0;
  for (const c of columns) {
    if (c.unusable) continue;
    const m = c.match;
    const langs = [
      ...new Set([
        ...(c.words.tag ? [c.words.tag] : []),
        ...(m && m.how !== 'fuzzy' ? m.aliases.filter((a) => a.votes).flatMap((a) => a.languages) : []),
      ]),
    ];
    if (langs.length === 0) continue;
    voters++;
    for (const l of langs) {
      votes.set(l, (votes.get(l) ?? 0) + 1 / langs.length);
      known.set(l, (known.get(l) ?? 0) + 1);
    }
  }
  let best: AliasLanguage | undefined;
  for (const l of ALIAS_LANGUAGES) if ((votes.get(l) ?? 0) > (best ? votes.get(best)! : 0)) best = l;
  if (!best) return { language: 'en-US', reason: 'no header shows a language: en-US by default (set --language)' };
  return {
    language: LANGUAGE_TAGS[best],
    reason: `guessed: ${known.get(best)} of the ${voters} headers that show a language are ${LANGUAGE_NAMES[best]} (--language sets it)`,
  };
}

/** The sample-kind check of a candidate: kept with a bonus, kept as is, or dropped with the reason. */
function checkValues(
  kind: ValueKind,
  column: SheetColumn,
  language: string,
): { fits: boolean; contradiction?: string } {
  if (kind === 'text' || column.cells.length === 0) return { fits: false };
  const share = shareFitting(kind, column.cells, language);
  if (share >= CONTRADICTED_BELOW) return { fits: share >= VALUES_MATCH_FROM };
  const wrong = column.cells.filter((c) => !fitsKind(kind, c, language));
  const n = column.cells.length;
  return {
    fits: false,
    contradiction: `${n - wrong.length} of ${n} values are ${KIND_WORDS[kind]} (${sampleList(wrong)})`,
  };
}

/** A value field whose object has a unit, which a quantity column feeds whole: its object is the first group. */
const QUANTITY_VALUE = /^(netContents\[\d+\]|drainedNetWeight)\.value$/;

/**
 * The field of a column of quantities (`500 g`) when the field is a value whose object has a unit:
 * `netContents[0].value` → `netContents[0]`.
 */
export function quantityField(field: string): string | undefined {
  if (!quantityTypeExists()) return undefined;
  const m = QUANTITY_VALUE.exec(field);
  return m?.[1];
}

/**
 * The candidates of one column from its header, checked against its values; `rejected` collects why some were not
 * taken.
 */
function headerCandidates(column: SheetColumn, target: Target, language: string, rejected: string[]): Candidate[] {
  const m = column.match;
  if (!m) return [];
  const out: Candidate[] = [];
  const base = m.how === 'alias' ? SCORE.alias : m.how === 'contains' ? SCORE.contains : SCORE.fuzzy;
  const seen = new Set<string>();
  for (const a of m.aliases) {
    const what = a.entry?.field ?? a.what!;
    if (seen.has(what) || foreignShortWord(a, language)) continue;
    seen.add(what);
    if (!a.entry) {
      rejected.push(`no field of the product API takes ${a.what} (a header like "${a.text}")`);
      continue;
    }
    // A header that only resembles an alias is taken on the evidence of its values: an empty column is not.
    if (m.how !== 'alias' && column.cells.length === 0) {
      rejected.push(
        `${m.how === 'contains' ? `the header contains "${a.text}"` : `the header is close to "${a.text}"`} (${a.entry.field}), but the column has no values in the first rows`,
      );
      continue;
    }
    const entry = a.entry;
    const named =
      column.group !== undefined
        ? `"${column.header.trim()}" under the title "${column.group}"`
        : `"${column.header.trim()}"`;
    const how =
      m.how === 'alias'
        ? m.qualifier
          ? `alias "${a.text}" after "${m.qualifier}" (${a.languages.join(', ') || 'field name'})`
          : a.languages.length > 0
            ? `alias ${named} (${a.languages.join(', ')})`
            : `field name ${entry.field}`
        : m.how === 'contains'
          ? `header${column.group !== undefined ? ` ${named}` : ''} contains "${a.text}"`
          : `header close to "${a.text}" (a typo?)`;
    const field = resolveFieldPath(target, entry.field);
    if (typeof field === 'string') {
      rejected.push(
        `${how} of ${entry.field}, which a ${target} mapping does not take${target === 'tradeItem' ? ' (a manufactured item field: --target manufacturedItem)' : ''}`,
      );
      continue;
    }
    const type = entry.type ?? defaultType(field);
    const kind =
      entry.expects ??
      (entry.lookup && typeof entry.lookup === 'object' && 'list' in entry.lookup ? 'text' : kindOfType(type));
    const check = checkValues(kind, column, language);
    let score = base + (check.fits ? SCORE.fits : 0);
    if (column.words.tag) score += column.words.tag === language.slice(0, 2) ? SCORE.language : -SCORE.language;
    if (check.contradiction) {
      const quantity = quantityField(entry.field);
      if (
        quantity &&
        shareFitting('number', column.cells, language) < CONTRADICTED_BELOW &&
        column.cells.filter(isQuantity).length / column.cells.length >= CONTRADICTED_BELOW
      ) {
        const unitPath = `${quantity}.unitOfMeasure`;
        out.push({
          column: column.index,
          field: quantity,
          occupies: [entry.field, unitPath],
          score: base + SCORE.fits,
          type: 'quantity',
          reason: `${how}; values are quantities with their unit (${sampleList(column.cells, 2)}): type quantity reads the number and the unit`,
        });
        continue;
      }
      rejected.push(`${how} of ${entry.field}, but only ${check.contradiction}`);
      continue;
    }
    // Quantities under a header of their text (`Quantity`, `Pack size`): the net content before the text, after a value
    // column that names the net content (`Net weight`, fitting), which leaves these cells to the text.
    if (
      entry.quantity &&
      quantityTypeExists() &&
      column.cells.filter(isQuantity).length / column.cells.length >= VALUES_MATCH_FROM
    ) {
      out.push({
        column: column.index,
        field: entry.quantity,
        occupies: [`${entry.quantity}.value`, `${entry.quantity}.unitOfMeasure`],
        score: score + SCORE.fits - 1,
        type: 'quantity',
        reason: `${how}; values are quantities with their unit (${sampleList(column.cells, 2)}): the net content, type quantity reads the number and the unit`,
      });
    }
    const strict = kind === 'gtin' ? column.cells.filter(isStrictGtin).length : 0;
    out.push({
      column: column.index,
      field: entry.field,
      occupies: [entry.field],
      score,
      reason: `${how}${check.fits ? `; values are ${KIND_WORDS[kind]}` : ''}`,
      ...(kind === 'gtin' && strict < column.cells.length
        ? {
            warning: `${column.cells.length - strict} of ${column.cells.length} values are not GTINs as they stand (check digit, length, Excel's scientific notation): the run will report those rows`,
          }
        : {}),
      ...(entry.type && entry.type !== defaultType(field) ? { type: entry.type } : {}),
      ...(entry.lookup ? { lookup: entry.lookup } : {}),
    });
  }
  return out;
}

/** Candidates from a column's values alone: GTINs, units, country names, quantities. */
function valueCandidates(column: SheetColumn, target: Target, language: string): Candidate[] {
  const cells = column.cells;
  if (cells.length === 0) return [];
  const out: Candidate[] = [];
  // Mostly GTINs with valid check digits, the rest GTINs Excel damaged at most; more of them make a better key column.
  const strict = cells.filter(isStrictGtin).length;
  const long = cells.some((c) => cellText(c).replace(/\s/g, '').length >= 12);
  if (
    strict / cells.length >= CONTRADICTED_BELOW &&
    shareFitting('gtin', cells, language) >= VALUES_MATCH_FROM &&
    (long || cells.length >= 3)
  ) {
    out.push({
      column: column.index,
      field: 'gtin',
      occupies: ['gtin'],
      score: SCORE.gtinValues + Math.min(strict, SAMPLE_ROWS) / (10 * SAMPLE_ROWS),
      reason: `values are GTINs (${strict} of ${cells.length} with valid check digits: ${sampleList(cells.filter(isStrictGtin), 2)})`,
    });
  } else if (
    long &&
    strict >= 2 &&
    strict / cells.length >= GTIN_LENGTH_VALID_FROM &&
    shareFitting('gtin', cells, language) >= VALUES_MATCH_FROM
  ) {
    // Numbers of a GTIN length many of whose check digits fail (an export that damaged them, GTINs typed by hand): the
    // GTIN when no better column exists, the share that fails said, so a person looks before using the draft. Numbers
    // whose check digits pass no more often than chance would (one in ten) are ids of another kind: not taken.
    const failing = cells.length - strict;
    const share = `${failing} of ${cells.length} (${Math.round((100 * failing) / cells.length)} %)`;
    out.push({
      column: column.index,
      field: 'gtin',
      occupies: ['gtin'],
      score: SCORE.gtinLength,
      reason: `values are numbers of a GTIN length (${sampleList(cells, 2)}), no better GTIN column`,
      warning: `${share} fail their check digit: the run will report those rows; check this is the GTIN column`,
    });
  }
  const offer = (field: string, kind: ValueKind, type: ColumnType | undefined, why: string) => {
    if (typeof resolveFieldPath(target, field) === 'string') return;
    if (shareFitting(kind, cells, language) < VALUES_MATCH_FROM) return;
    out.push({
      column: column.index,
      field,
      occupies: [field],
      score: SCORE.values + SCORE.fits,
      reason: why,
      ...(type ? { type } : {}),
    });
  };
  if (cells.every((c) => typeof c === 'string')) {
    offer('netContents[0].unitOfMeasure', 'unit', 'unit', `values are units (${sampleList(cells)})`);
    // Two-letter codes alone could be languages as well as countries: names (or alpha-3 codes) say countries.
    if (cells.some((c) => cellText(c).length > 2))
      offer('countriesOfOrigin', 'country', 'country', `values are countries (${sampleList(cells)})`);
    const quantity = quantityField('netContents[0].value');
    if (quantity && cells.filter(isQuantity).length / cells.length >= VALUES_MATCH_FROM) {
      out.push({
        column: column.index,
        field: quantity,
        occupies: ['netContents[0].value', 'netContents[0].unitOfMeasure'],
        score: SCORE.values + SCORE.fits,
        type: 'quantity',
        reason: `values are quantities with their unit (${sampleList(cells, 2)})`,
      });
    }
  }
  return out;
}

/** The lists whose labels a column holds (share of its distinct values found in the list, in the language chain). */
async function listsOfValues(
  column: SheetColumn,
  lists: readonly ListName[],
  labels: ReferenceLabels,
  chain: readonly string[],
): Promise<ListHit[]> {
  const values = [
    ...new Map(
      column.cells.filter((c) => typeof c === 'string').map((c) => [labelKey(cellText(c)), cellText(c)]),
    ).values(),
  ];
  if (values.length === 0) return [];
  const out: ListHit[] = [];
  for (const list of lists) {
    const items = await labels.list(list, chain);
    const has = labelMatcher(items);
    const missing = values.filter((v) => !has(v));
    out.push({
      list,
      share: (values.length - missing.length) / values.length,
      missing,
      names: items.map((l) => l.name),
    });
  }
  return out;
}

/** How a column's values fare in one list: the share found, the values not found, the list's labels. */
interface ListHit {
  list: ListName;
  share: number;
  missing: string[];
  names: string[];
}

/** Most unresolved values a draft lists with their nearest labels (the rest are counted). */
const UNRESOLVED_LISTED = 10;
/** Most labels named as nearest to one value. */
const NEAREST_LABELS = 3;

/**
 * The labels of a list nearest to a value the list lacks: labels it begins (or that begin it), then by edit distance
 * up to a third of its length (two letters at least), case, accents, spaces and punctuation ignored.
 */
export function nearestLabels(value: string, names: readonly string[]): string[] {
  // Punctuation and spaces dropped too: an abbreviation (`Discont.`) is a prefix of its label.
  const fold = (s: string) => labelKey(s).replace(/[^\p{L}\p{N}]+/gu, '');
  const v = fold(value);
  const max = Math.max(2, Math.floor(v.length / 3));
  const ranked: { name: string; rank: number }[] = [];
  for (const name of new Set(names)) {
    const n = fold(name);
    const prefix = v.length >= 3 && (n.startsWith(v) || v.startsWith(n));
    const d = prefix ? 0 : editDistance(v, n, max);
    if (d <= max) ranked.push({ name, rank: prefix ? Math.abs(n.length - v.length) / 100 : d });
  }
  return ranked
    .sort((a, b) => a.rank - b.rank || a.name.localeCompare(b.name))
    .slice(0, NEAREST_LABELS)
    .map((r) => r.name);
}

/** The values of a hit the list will not resolve, with their nearest labels. */
const unresolvedOf = (hit: ListHit): UnresolvedValue[] =>
  hit.missing.map((value) => ({ value, nearest: nearestLabels(value, hit.names) }));

/** The field each list feeds, from the alias table (`trade-item-status` → tradeItemStatusId). */
function listFields(target: Target): Map<ListName, string> {
  const m = new Map<ListName, string>();
  for (const e of FIELD_ALIASES) {
    if (
      e.lookup &&
      typeof e.lookup === 'object' &&
      'list' in e.lookup &&
      typeof resolveFieldPath(target, e.field) !== 'string' &&
      !m.has(e.lookup.list as ListName)
    ) {
      m.set(e.lookup.list as ListName, e.field);
    }
  }
  return m;
}

/** The mapping name a sheet gets by default: its file name without extension, lower case, words joined by `-`. */
export function draftName(file: string): string {
  const base = basename(file, extname(file))
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '');
  return base || 'mapping';
}

/**
 * What the reference-list checks need: the labels, the language chain, and the notes to add when they cannot be read.
 */
interface LabelCheck {
  labels?: ReferenceLabels;
  chain: readonly string[];
  notes: string[];
}

/** Runs a label check; the first failure of the reference API ends the checks with a note, never the draft. */
async function withLabels<T>(check: LabelCheck, work: (labels: ReferenceLabels) => Promise<T>): Promise<T | undefined> {
  if (!check.labels) return undefined;
  try {
    return await work(check.labels);
  } catch (err) {
    check.labels = undefined;
    check.notes.push(
      `list labels not checked: the reference API did not answer (${(err as Error).message.split('\n')[0]})`,
    );
    return undefined;
  }
}

/** The CHECK of a list-lookup column some of whose values are no label of the list. */
const missingLabelsText = (hit: ListHit, chain: readonly string[]): string =>
  `${sampleList(hit.missing)} ${hit.missing.length === 1 ? 'is' : 'are'} no label or code of the list ${hit.list} in ${chain.join(', ')}: add values: { <sheet value>: <label> } (see product-sync lists ${hit.list}; the draft lists the nearest labels under the column)`;

/**
 * The labels of each list-lookup candidate are looked up in its list: found, the match is better; not found, it is
 * worse (a column of the list's labels elsewhere wins) and flagged with the values to map. A column nothing else
 * claims is tried against every list: the labels of one a field takes make a candidate, of another a hint.
 */
async function checkListLabels(
  columns: readonly SheetColumn[],
  candidates: Candidate[],
  target: Target,
  check: LabelCheck,
): Promise<Map<number, string>> {
  for (const cand of candidates) {
    if (!cand.lookup || typeof cand.lookup !== 'object' || !('list' in cand.lookup)) continue;
    const list = cand.lookup.list as ListName;
    const hit = (
      await withLabels(check, (labels) => listsOfValues(columns[cand.column]!, [list], labels, check.chain))
    )?.[0];
    if (!hit) continue;
    if (hit.missing.length > 0) cand.unresolved = unresolvedOf(hit);
    if (hit.share >= CONTRADICTED_BELOW) {
      cand.score += SCORE.fits;
      cand.reason += `; labels found in the list ${list}`;
      // Most values resolve: the rest would fail their rows, so they are named before the run finds them.
      if (hit.missing.length > 0) cand.warning = missingLabelsText(hit, check.chain);
    } else {
      cand.score -= SCORE.labelsMissing;
      cand.warning = missingLabelsText(hit, check.chain);
    }
  }
  const byList = listFields(target);
  const claimed = new Set(candidates.filter((c) => c.score >= SCORE.contains).map((c) => c.column));
  const hints = new Map<number, string>();
  for (const c of columns) {
    if (c.unusable || claimed.has(c.index) || !c.cells.some((x) => typeof x === 'string' && /\p{L}/u.test(x))) continue;
    const found = await withLabels(check, (labels) => listsOfValues(c, LIST_NAMES, labels, check.chain));
    for (const hit of (found ?? []).filter((f) => f.share >= LABELS_MATCH_FROM).sort((a, b) => b.share - a.share)) {
      const field = byList.get(hit.list);
      if (field) {
        candidates.push({
          column: c.index,
          field,
          occupies: [field],
          score: SCORE.values + SCORE.fits,
          lookup: { list: hit.list },
          reason: `values are labels of the list ${hit.list} (${sampleList(c.cells)})`,
          ...(hit.missing.length > 0
            ? { warning: missingLabelsText(hit, check.chain), unresolved: unresolvedOf(hit) }
            : {}),
        });
      } else if (!hints.has(c.index))
        hints.set(c.index, `values are labels of the list ${hit.list}, which no field of a ${target} takes`);
    }
  }
  return hints;
}

/**
 * Best pairs first: a field is fed by one column, a column feeds one field; `lost` says which column took a field a
 * column wanted.
 */
function assign(
  columns: readonly SheetColumn[],
  candidates: readonly Candidate[],
): { chosen: Map<number, Candidate>; fedBy: Map<string, Candidate>; lost: Map<number, string[]> } {
  const chosen = new Map<number, Candidate>();
  const fedBy = new Map<string, Candidate>();
  const lost = new Map<number, string[]>();
  const lose = (column: number, why: string) => lost.set(column, [...(lost.get(column) ?? []), why]);
  for (const cand of [...candidates].sort((a, b) => b.score - a.score || a.column - b.column)) {
    if (chosen.has(cand.column)) continue;
    const busy = cand.occupies.find((f) => fedBy.has(f));
    if (busy) {
      const by = columns[fedBy.get(busy)!.column]!;
      lose(
        cand.column,
        `${cand.reason.split(';')[0]} → ${cand.field}, but ${busy === cand.field ? 'that field' : busy} is fed by column ${by.index + 1} "${by.header}" (a better match)`,
      );
      continue;
    }
    chosen.set(cand.column, cand);
    for (const f of cand.occupies) fedBy.set(f, cand);
  }
  // A unit column found by resemblance or by its values alone is a net content unit only beside a net content column.
  const unit = fedBy.get('netContents[0].unitOfMeasure');
  if (unit && unit.type !== 'quantity' && unit.score < SCORE.alias && !fedBy.has('netContents[0].value')) {
    chosen.delete(unit.column);
    fedBy.delete('netContents[0].unitOfMeasure');
    lose(
      unit.column,
      `${unit.reason.split(';')[0]} → netContents[0].unitOfMeasure, but no column gives the net content it would be the unit of`,
    );
  }
  return { chosen, fedBy, lost };
}

/**
 * The suggestion of a mapped column: its field, and what its values say of the type's settings (list separator, date
 * format, decimal separator).
 */
function mappedColumn(
  c: SheetColumn,
  cand: Candidate,
  target: Target,
  language: string,
  rejected: readonly string[],
): ColumnSuggestion {
  const out: ColumnSuggestion = {
    header: c.header,
    position: c.index + 1,
    ...(c.address ? { column: c.address } : {}),
    samples: c.samples,
    field: cand.field,
    reason: cand.reason,
  };
  if (cand.type) out.type = cand.type;
  if (cand.lookup) out.lookup = cand.lookup;
  if (cand.unresolved) out.unresolved = cand.unresolved;
  const field = resolveFieldPath(target, cand.field);
  if (typeof field !== 'string' && field.array && !cand.lookup) {
    const split = listSeparatorOf(c.cells);
    if (split) out.split = split;
  }
  const type = cand.type ?? (typeof field === 'string' ? undefined : defaultType(field));
  if (type === 'date') {
    const format = dateFormatOf(c.cells, language);
    if (format) out.format = format;
  }
  if (type === 'decimal' || type === 'integer' || type === 'number' || type === 'quantity') {
    const numbers = type === 'quantity' ? c.cells.map(quantityNumber) : c.cells;
    const decimal = decimalSeparatorOf(numbers, language);
    if (decimal) out.decimal = decimal;
  }
  const unknown = type === 'unit' || type === 'weightUnit' ? unknownUnitWords(c.cells) : [];
  if (unknown.length > 0) out.unknownUnits = unknown;
  const warnings = [
    cand.warning,
    unknown.length > 0
      ? `${unknown.map(quote).join(', ')} ${unknown.length === 1 ? 'is' : 'are'} no unit product-sync knows: add values: { <word>: <unit> } (the draft suggests one under the column)`
      : undefined,
    ...rejected.map((r) => `not taken: ${r}`),
  ].filter(Boolean);
  if (warnings.length > 0) out.warning = warnings.join('; ');
  return out;
}

/** Most unknown unit words a draft names for a column. */
const UNKNOWN_UNITS_LISTED = 10;

/**
 * The words of a unit column (or the unit parts of a quantity column) that name no unit (units.ts knows English,
 * French, German, Spanish, Italian and Dutch words), distinct, in sheet order.
 */
function unknownUnitWords(cells: readonly Cell[]): string[] {
  const out = new Set<string>();
  for (const cell of cells) {
    if (typeof cell !== 'string') continue;
    const text = cell.trim();
    const m = /^[+-]?\d[\d \u00a0.,']*\s*(\p{L}.*)$/su.exec(text);
    const word = (m ? m[1]! : text).trim();
    if (word === '' || /\d/.test(word) || findUnit(word)) continue;
    out.add(word);
    if (out.size >= UNKNOWN_UNITS_LISTED) break;
  }
  return [...out];
}

/**
 * A unit in a value column's header (`Poids net (g)`) is the unit of every row when no column gives one: defaults, in
 * API form.
 */
function headerUnitDefaults(
  suggestions: ColumnSuggestion[],
  columns: readonly SheetColumn[],
  fed: (field: string) => boolean,
): Record<string, string> {
  const defaults: Record<string, string> = {};
  for (const s of suggestions) {
    const unit = columns[s.position - 1]!.words.unit;
    const m = s.field && s.type !== 'quantity' ? QUANTITY_VALUE.exec(s.field) : null;
    if (!unit || !m) continue;
    const unitPath = `${m[1]}.unitOfMeasure`;
    if (fed(unitPath)) continue;
    const u = findUnit(unit)!;
    const value = m[1] === 'drainedNetWeight' ? WEIGHT_UNITS.find((w) => w.code === u.code)?.id : u.code;
    if (value) {
      defaults[unitPath] = value;
      s.reason += `; the unit ${unit} in the header becomes defaults.${unitPath}`;
    }
  }
  return defaults;
}

/** Reads the sheet's headers and first rows and proposes a field for each header. */
export async function suggestMapping(file: string, options: SuggestOptions = {}): Promise<MappingDraft> {
  const target: Target = options.target ?? 'tradeItem';
  const notes: string[] = [];
  const { columns, headerRow, sheet, otherSheets, sheetReason } = await sheetColumns(file, options, notes);
  // A row of empty cells (`,,,`) reads as headers: a draft of it would have no column at all, which says nothing.
  if (columns.every((c) => c.header.trim() === ''))
    throw new ProductSyncError(
      'PS_ERR_FILE_HEADER',
      `${file}: the header row (row ${headerRow}${options.sheet ? ` of worksheet "${options.sheet}"` : ''}) has no header in any of its ${columns.length} cells: --header-row <n> names the row that holds them`,
    );
  const guessed = guessLanguage(columns);
  const language = options.language ?? guessed.language;

  const rejected = new Map<number, string[]>();
  const candidates: Candidate[] = [];
  for (const c of columns) {
    const why: string[] = [];
    rejected.set(c.index, why);
    // A header on several columns that no title tells apart can still be matched by its values (named by occurrence).
    if (c.unusable) {
      if (c.address) candidates.push(...valueCandidates(c, target, language));
      continue;
    }
    candidates.push(...headerCandidates(c, target, language, why));
    // A header that says what the column is, and that no field takes it (GLN, nutrients), is not overruled by values.
    if (!why.some((w) => w.startsWith('no field of the product API')))
      candidates.push(...valueCandidates(c, target, language));
  }
  if (!options.labels) notes.push(`list labels not checked: ${options.labelsUnavailable ?? 'no reference API'}`);
  const hints = await checkListLabels(columns, candidates, target, {
    ...(options.labels ? { labels: options.labels } : {}),
    chain: languageChain(language),
    notes,
  });
  const { chosen, fedBy, lost } = assign(columns, candidates);

  const suggestions: ColumnSuggestion[] = columns.map((c) => {
    const cand = chosen.get(c.index);
    if (cand) return mappedColumn(c, cand, target, language, rejected.get(c.index) ?? []);
    const why = [c.unusable, ...(rejected.get(c.index) ?? []), ...(lost.get(c.index) ?? []), hints.get(c.index)].filter(
      Boolean,
    );
    const reason =
      why.length > 0
        ? why.join('; ')
        : c.cells.length === 0
          ? 'no header match, and no values in the first rows'
          : 'no header match, and the values do not say which field';
    return {
      header: c.header,
      position: c.index + 1,
      ...(c.address ? { column: c.address } : {}),
      samples: c.samples,
      reason,
    };
  });

  // One decimal separator for the whole sheet when every number column that says one says the same.
  let decimalSeparator: ',' | '.' | undefined;
  const decimals = [...new Set(suggestions.filter((s) => s.decimal).map((s) => s.decimal!))];
  if (decimals.length === 1 && decimals[0] !== localeNumberSeparators(language).decimal) {
    decimalSeparator = decimals[0];
    for (const s of suggestions) delete s.decimal;
  }
  const fed = (f: string) => fedBy.has(f);
  const defaults = headerUnitDefaults(suggestions, columns, fed);

  const key: 'gtin' | 'tradeItemId' = fed('gtin') || !fed('tradeItemId') ? 'gtin' : 'tradeItemId';
  const missingKey = fed(key) ? undefined : missingKeyText(columns, suggestions, language);
  if (missingKey) notes.unshift(missingKey);
  const missingRequired: { field: string; add: string }[] = [];
  if (!fed('tradeItemName'))
    missingRequired.push({
      field: 'tradeItemName',
      add: 'no column feeds tradeItemName (the name), which creating an item requires: add - { column: <header of the names>, field: tradeItemName } under columns',
    });
  if (target === 'manufacturedItem' && !fed('supplierCompanyId'))
    missingRequired.push({
      field: 'supplierCompanyId',
      add: 'no column feeds supplierCompanyId (a uuid), which a manufactured item requires: add - { column: <header of the supplier ids>, field: supplierCompanyId } under columns, or defaults: { supplierCompanyId: <uuid> }',
    });
  for (const m of missingRequired) notes.push(m.add);
  if (target === 'tradeItem') {
    const other = suggestions
      .filter((s) => !s.field && /manufactured item field/.test(s.reason ?? ''))
      .map((s) => `"${s.header}"`);
    if (other.length > 0)
      notes.push(`${other.join(', ')} match manufactured item fields: --target manufacturedItem maps them`);
  }

  return {
    name: options.name ?? draftName(file),
    target,
    language,
    languageReason: options.language ? 'given (--language)' : guessed.reason,
    ...(sheet !== undefined ? { sheet } : {}),
    ...(otherSheets.length > 0 ? { otherSheets } : {}),
    ...(sheetReason ? { sheetReason } : {}),
    headerRow,
    key,
    ...(decimalSeparator ? { decimalSeparator } : {}),
    columns: suggestions,
    ...(Object.keys(defaults).length > 0 ? { defaults } : {}),
    source: basename(file),
    notes,
    ...(missingKey ? { missingKey } : {}),
    ...(missingRequired.length > 0 ? { missingRequired } : {}),
  };
}

/**
 * What the draft says when no column feeds the key: what was looked for, the columns of GTIN-length numbers whose
 * check digits fail (the likeliest ones), and the line to add.
 */
function missingKeyText(
  columns: readonly SheetColumn[],
  suggestions: readonly ColumnSuggestion[],
  language: string,
): string {
  const suspects = columns
    .filter((c) => c.cells.length > 0 && !c.unusable && suggestions[c.index]!.field !== 'gtin')
    .filter((c) => shareFitting('gtin', c.cells, language) >= VALUES_MATCH_FROM)
    .map((c) => `"${c.header.trim()}" (column ${c.index + 1}: ${sampleList(c.cells, 2)})`);
  return [
    'no GTIN column found: no header names one (GTIN, EAN, Barcode, Code-barres…) and no column holds GTINs with valid check digits;',
    suspects.length > 0
      ? `${suspects.join(', ')} ${suspects.length === 1 ? 'holds numbers of a GTIN length whose check digits fail' : 'hold numbers of a GTIN length whose check digits fail'};`
      : '',
    'every row needs its GTIN (the key): add the line - { column: <header of the GTINs>, field: gtin } under columns, or a column of GTINs to the sheet, before using the mapping',
  ]
    .filter(Boolean)
    .join(' ');
}

// ---------------------------------------------------------------------------------------------------------------------
// The mapping file of a draft.

const PLAIN = /^[\p{L}\p{N}_][\p{L}\p{N}_ '’()./-]*$/u;
const RESERVED =
  /^(?:true|false|yes|no|on|off|y|n|null|~|[-+]?(?:\d[\d_]*(?:\.\d*)?|\.\d+)(?:e[-+]?\d+)?|0x[0-9a-f]+|0o[0-7]+|[-+]?\.inf|\.nan)$/i;

/** A string as a YAML scalar that reads back as the same string (plain when safe in a flow map, else double-quoted). */
function scalar(s: string): string {
  return PLAIN.test(s) && !s.endsWith(' ') && !RESERVED.test(s) ? s : JSON.stringify(s);
}

/** A lookup value in flow style. */
function lookupText(lookup: unknown): string {
  if (typeof lookup === 'string') return scalar(lookup);
  if (lookup && typeof lookup === 'object') {
    const parts = Object.entries(lookup as Record<string, unknown>).map(
      ([k, v]) =>
        `${scalar(k)}: ${v && typeof v === 'object' ? lookupText(v) : typeof v === 'string' ? scalar(v) : String(v)}`,
    );
    return `{ ${parts.join(', ')} }`;
  }
  return String(lookup);
}

/**
 * A column's `column` value: its header, or `{ header, group }` / `{ header, occurrence }` for a header on several
 * columns.
 */
function addressText(address: ColumnAddress): string {
  const parts = [`header: ${scalar(address.header)}`];
  if (address.group !== undefined) parts.push(`group: ${scalar(address.group)}`);
  if (address.occurrence !== undefined)
    parts.push(
      `occurrence: ${Number.isInteger(address.occurrence) ? address.occurrence : JSON.stringify(String(address.occurrence))}`,
    );
  return `{ ${parts.join(', ')} }`;
}

const columnText = (c: ColumnSuggestion): string => (c.column ? addressText(c.column) : scalar(c.header));

/** A comment's text on one line. */
const commentText = (s: string): string => s.replace(/\s+/g, ' ').trim();

/**
 * The values a list will not resolve as comments under their column: each with its nearest labels, then a `values:`
 * line of the nearest ones to check and add to the column.
 */
function unresolvedLines(unresolved: readonly UnresolvedValue[]): string[] {
  const shown = unresolved.slice(0, UNRESOLVED_LISTED);
  const lines = ['  #   values no label of the list matches (the run would reject their rows):'];
  for (const u of shown)
    lines.push(
      `  #     ${commentText(quote(u.value))}: ${u.nearest.length > 0 ? `nearest labels ${u.nearest.map((n) => commentText(quote(n))).join(', ')}` : 'no label close'}`,
    );
  if (unresolved.length > shown.length) lines.push(`  #     … and ${unresolved.length - shown.length} more`);
  const guesses = shown.filter((u) => u.nearest.length > 0);
  if (guesses.length > 0)
    lines.push(
      `  #   values: { ${guesses.map((u) => `${commentText(JSON.stringify(u.value))}: ${commentText(scalar(u.nearest[0]!))}`).join(', ')} }   # to check, then add to the column's line`,
    );
  return lines;
}

/**
 * The mapping file text of a draft: YAML with the `# yaml-language-server: $schema=...` line, mapped columns, unmatched
 * headers as comments with their samples. parseMapping() accepts it when a column feeds the key.
 */
export function mappingText(draft: MappingDraft, options: { schemaRef?: string } = {}): string {
  const lines: string[] = [];
  lines.push(`# yaml-language-server: $schema=${options.schemaRef ?? '../schemas/mapping.schema.json'}`);
  lines.push(
    `# Draft written by product-sync mapping init${draft.source ? ` from ${commentText(draft.source)}` : ''}: check each column, then try it with`,
  );
  lines.push(`# product-sync validate <sheet> --mapping ${draft.name} --preview`);
  for (const n of draft.notes) lines.push(`# NOTE: ${commentText(n)}`);
  lines.push(`name: ${scalar(draft.name)}`);
  lines.push(`target: ${scalar(draft.target)}`);
  lines.push(
    `language: ${scalar(draft.language)}${draft.languageReason ? `   # ${commentText(draft.languageReason)}` : ''}`,
  );
  if (draft.sheet !== undefined) lines.push(`sheet: ${scalar(draft.sheet)}`);
  if (draft.headerRow !== 1) lines.push(`headerRow: ${draft.headerRow}`);
  lines.push(`key: ${scalar(draft.key)}${draft.missingKey ? '   # no GTIN column found: see the NOTE above' : ''}`);
  if (draft.decimalSeparator)
    lines.push(
      `decimalSeparator: ${JSON.stringify(draft.decimalSeparator)}   # the sheet's numbers use it, not the language's`,
    );
  lines.push('columns:');
  // The line the key needs, to complete: the run refuses the mapping until a column feeds it.
  if (draft.missingKey)
    lines.push(
      `  # - { column: <header of the GTINs>, field: ${draft.key} }   # NO GTIN COLUMN FOUND: add this line with the header of the column that holds them`,
    );
  for (const m of draft.missingRequired ?? [])
    lines.push(
      `  # - { column: <header of its values>, field: ${m.field} }   # REQUIRED, NO COLUMN FOUND: add this line (see the NOTE above)`,
    );
  const mapped = draft.columns.filter((c) => c.field);
  for (const c of mapped) {
    const parts = [`column: ${columnText(c)}`, `field: ${scalar(c.field!)}`];
    if (c.type) parts.push(`type: ${scalar(c.type)}`);
    if (c.split) parts.push(`split: ${JSON.stringify(c.split)}`);
    if (c.values && Object.keys(c.values).length > 0)
      parts.push(
        `values: { ${Object.entries(c.values)
          .map(([k, v]) => `${JSON.stringify(k)}: ${JSON.stringify(v)}`)
          .join(', ')} }`,
      );
    if (c.lookup !== undefined) parts.push(`lookup: ${lookupText(c.lookup)}`);
    if (c.format) parts.push(`format: ${scalar(c.format)}`);
    if (c.decimal) parts.push(`decimal: ${JSON.stringify(c.decimal)}`);
    if (c.warning) lines.push(`  # CHECK: ${commentText(c.warning)}`);
    lines.push(`  - { ${parts.join(', ')} }${c.reason ? `   # ${commentText(c.reason)}` : ''}`);
    if (c.unresolved && c.unresolved.length > 0) lines.push(...unresolvedLines(c.unresolved));
    if (c.unknownUnits && c.unknownUnits.length > 0)
      lines.push(
        '  #   words no unit matches (the run would reject their rows); give each its unit code (GRM, KGM, MLT, LTR, H87…):',
        `  #   values: { ${c.unknownUnits.map((w) => `${commentText(JSON.stringify(w))}: ?`).join(', ')} }   # to complete, then add to the column's line`,
      );
  }
  // Columns with neither a header nor a value (the end of a worksheet's used range) are left out.
  const unmatched = draft.columns.filter((c) => !c.field && (c.header.trim() !== '' || c.samples.length > 0));
  if (unmatched.length > 0) {
    lines.push('  # Not mapped (to use one, add a line with its field):');
    for (const c of unmatched) {
      const samples =
        c.samples.length > 0 ? `samples: ${c.samples.map(quote).join(', ')}` : 'no values in the first rows';
      lines.push(
        `  # - { column: ${columnText(c)}, field: ? }   # column ${c.position}; ${commentText(samples)}${c.reason ? `; ${commentText(c.reason)}` : ''}`,
      );
    }
  }
  if (draft.defaults && Object.keys(draft.defaults).length > 0) {
    lines.push('defaults:');
    for (const [k, v] of Object.entries(draft.defaults)) lines.push(`  ${scalar(k)}: ${scalar(v)}`);
  }
  return `${lines.join('\n')}\n`;
}
