/** Mapping files (docs/mapping.md): which sheet column feeds which API field, with transforms and lookups. */
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import * as z from 'zod';
import {
  LIST_NAMES,
  LOOKUPS,
  MANUFACTURED_ITEM_FIELDS,
  NESTED_OBJECTS,
  TRADE_ITEM_FIELDS,
  type FieldType,
  type LookupKind,
} from '../../api/fields.ts';
import { ProductSyncError } from '../../errors.ts';
import { editDistance } from '../../edit-distance.ts';
import { formatPath, parseYamlDocument } from '../../yaml-document.ts';
import { columnLetters, letterPosition } from '../../formats/column-letters.ts';
import { COLUMN_TYPES, localeNumberSeparators, valueMapKey, type ColumnType } from './transforms.ts';
import { scopeSchema, type ScopeSpec } from '../scope.ts';
import { RULES } from '../../rule-catalogue.ts';
import { assertionProblem, type UserRule } from './user-rules.ts';
import { REPORT_LANGUAGES, reportLanguageOf, type ReportLanguage } from '../report-language.ts';
import type { LookupSpec, Target } from '../types.ts';

/** A field path resolved against the target's field rules: where to put a value and what the API wants there. */
export interface FieldTarget {
  /** The path as written in the mapping (`netContents[0].value`). */
  path: string;
  /**
   * The path as keys and indexes (`['netContents', 0, 'value']`); keys are field names from the rules, never from the
   * sheet.
   */
  segments: readonly (string | number)[];
  /** The top-level API field (`netContents`). */
  top: string;
  /** The API type of the value at the end of the path. */
  leaf: 'string' | 'uuid' | 'number' | 'weightUnit';
  /** True when the path ends on an array (`countriesOfOrigin`): the value is a list. */
  array: boolean;
  /**
   * Only for a `quantity` column: where the unit goes (`netContents[0].unitOfMeasure`) and what the API wants there (a
   * unit code, or a weight-unit uuid); `segments` and `leaf` above are then those of the number
   * (`netContents[0].value`).
   */
  unit?: { path: string; segments: readonly (string | number)[]; leaf: 'string' | 'weightUnit' };
}

/**
 * Where a column is read in the sheet: by header name (alternatives: the first present in the sheet is used), narrowed
 * by the title of its group on the row above the header and/or by its occurrence among the columns of that name; or by
 * position (1-based; `{letter: G}` in the file is position 7).
 */
export type HeaderRef = { names: readonly string[]; group?: string; occurrence?: number } | { position: number };

/** One column of a mapping after validation, defaults filled in. */
export interface MappingColumn {
  /**
   * Header names that may hold the column, in order of preference (the first one present in the sheet is used); `column
   * G` for one read by position.
   */
  columns: readonly string[];
  /**
   * Where the column's cells are read: `sources[0]` from `column`, then each `fallback` in order, used on a row whose
   * cells before it are empty.
   */
  sources: readonly HeaderRef[];
  field: FieldTarget;
  type: ColumnType;
  split?: string;
  /** Value map, keyed by `valueMapKey(label)`. */
  values?: ReadonlyMap<string, string>;
  lookup?: LookupSpec;
  empty: 'ignore' | 'clear';
  /** Date format of the column (`dd/mm/yyyy`), else the mapping's `dateFormat`. */
  format?: string;
  /** Decimal separator of the column's text cells: its `decimal`, else the mapping's `decimalSeparator`. */
  decimal: ',' | '.';
  required: boolean;
  /**
   * `drop-field`: a cell that cannot be read, or a value the API rules refuse, leaves the field out with a
   * FIELD_DROPPED warning; `reject-row` (default): the row is rejected.
   */
  onInvalid: 'reject-row' | 'drop-field';
  /** Line of the column's entry in the mapping file. */
  line: number;
}

/** A value the mapping gives a field when the row does not. */
export interface MappingDefault {
  field: FieldTarget;
  value: string | number | string[];
}

/** A validated mapping file. */
export interface Mapping {
  name: string;
  /** The file it was read from. */
  file: string;
  /** sha256 of the file's text (run ids change when the mapping does). */
  hash: string;
  target: Target;
  ownerCompanyId?: string;
  language: string;
  /** Languages tried after `language` when a label has no translation (default: its primary subtag, then en-US). */
  fallbackLanguages: readonly string[];
  sheet?: string;
  headerRow: number;
  key: 'gtin' | 'tradeItemId';
  empty: 'ignore' | 'clear';
  /**
   * Decimal separator of the sheet's text numbers: the file's `decimalSeparator`, else the one of `language` (fr-FR →
   * `,`, en-US → `.`).
   */
  decimalSeparator: ',' | '.';
  dateFormat?: string;
  columns: readonly MappingColumn[];
  defaults: readonly MappingDefault[];
  /** Which part of the owner's catalogue the sheets cover (src/pipeline/scope.ts); a feed may override it. */
  scope?: ScopeSpec;
  /** The language of the report's messages (`reportLanguage`, else the one of `language`; docs/reports.md). */
  reportLanguage: ReportLanguage;
  /** The mapping's own rules (`rules:`, src/pipeline/map/user-rules.ts); empty when it has none. */
  rules: readonly UserRule[];
  /** The quality gate (`gate:`): a run over it writes nothing (docs/mapping.md "Quality gates"). */
  gate?: QualityGate;
}

/** A quality gate: the largest share of invalid rows, and rules whose any failure holds the run. */
export interface QualityGate {
  maxInvalidShare?: number;
  rules?: readonly string[];
}

/** One problem of a mapping file, with the line that has it. */
export interface MappingProblem {
  line: number | null;
  path: string;
  message: string;
}

/** PS_ERR_MAPPING_INVALID with each problem and its line (the message lists them as `file:line: path: message`). */
export class MappingError extends ProductSyncError {
  readonly file: string;
  readonly problems: readonly MappingProblem[];
  constructor(file: string, problems: readonly MappingProblem[]) {
    const lines = problems.map(
      (p) => `  ${file}${p.line === null ? '' : `:${p.line}`}: ${p.path ? `${p.path}: ` : ''}${p.message}`,
    );
    super(
      'PS_ERR_MAPPING_INVALID',
      `invalid mapping ${file} (${problems.length} problem${problems.length === 1 ? '' : 's'}):\n${lines.join('\n')}`,
    );
    this.name = 'MappingError';
    this.file = file;
    this.problems = problems;
  }
}

const lookupKinds = LOOKUPS.map((l) => l.kind) as [string, ...string[]];
const scalar = z.union([z.string(), z.number().transform(String), z.boolean().transform(String)]);
const headerName = z.union([z.string().trim().min(1, 'must not be empty'), z.number().transform(String)]);
const LOOKUP_HELP =
  'lookup must be harmonized-code, {list: <list name>}, {brand: {create: true|false}} or {kind: <lookup kind>}';

/** The candidate `word` most likely misspells (case, a letter or two, a missing or extra `s`), or undefined. */
export function closest(word: string, candidates: Iterable<string>): string | undefined {
  let best: string | undefined;
  let bestD = Infinity;
  const max = word.length <= 4 ? 1 : word.length <= 8 ? 2 : 3;
  const w = word.toLowerCase();
  for (const c of candidates) {
    const d = editDistance(w, c.toLowerCase());
    if (d < bestD) [best, bestD] = [c, d];
  }
  return bestD <= max ? best : undefined;
}

/** ` (did you mean x?)` when a candidate is close to `word`, else ''. */
function didYouMean(word: string, candidates: Iterable<string>): string {
  const near = closest(word, candidates);
  return near !== undefined && near !== word ? ` (did you mean ${near}?)` : '';
}

/** What is wrong with a lookup value, naming the valid list names or lookup kinds. */
function lookupProblem(input: unknown): string {
  if (typeof input === 'string') return `${LOOKUP_HELP}; got "${input}"${didYouMean(input, ['harmonized-code'])}`;
  if (input && typeof input === 'object' && !Array.isArray(input)) {
    const o = input as Record<string, unknown>;
    if ('list' in o && typeof o.list === 'string' && !(LIST_NAMES as readonly string[]).includes(o.list)) {
      return `unknown list "${o.list}"${didYouMean(o.list, LIST_NAMES)}; the lists are: ${LIST_NAMES.join(', ')}`;
    }
    if ('kind' in o && typeof o.kind === 'string' && !lookupKinds.includes(o.kind)) {
      return `unknown lookup kind "${o.kind}"${didYouMean(o.kind, lookupKinds)}; the kinds are: ${lookupKinds.join(', ')}`;
    }
  }
  return LOOKUP_HELP;
}

const lookupSchema = z.union(
  [
    z.literal('harmonized-code'),
    z.strictObject({ list: z.enum(LIST_NAMES) }),
    z.strictObject({ brand: z.strictObject({ create: z.boolean().optional() }).nullable() }),
    z.strictObject({ kind: z.enum(lookupKinds) }),
  ],
  { error: (iss) => lookupProblem(iss.input) },
);

const HEADER_REF_HELP =
  'a column is a header, a list of alternative headers, {header: <name>, group: <title above it>, occurrence: <n>}, {position: <n>} or {letter: <A…XFD>}';

/** What is wrong with a `column` / `fallback` entry that matches none of its forms. */
function headerRefProblem(input: unknown): string {
  if (!input || typeof input !== 'object' || Array.isArray(input)) return HEADER_REF_HELP;
  const k = Object.keys(input).find((key) => !['header', 'group', 'occurrence', 'position', 'letter'].includes(key));
  return k === undefined
    ? HEADER_REF_HELP
    : `unknown key "${k}"${didYouMean(k, ['header', 'group', 'occurrence', 'position', 'letter'])}: ${HEADER_REF_HELP}`;
}

const OCCURRENCE = 'occurrence must be a whole number from 1 (the first column of that header) to 100';
const POSITION = 'position must be a column number from 1 (column A) to 16384';
const LETTER = 'letter must be a column letter from A to XFD';
const headerNames = z.union([headerName, z.array(headerName).min(1, 'must name at least one header')]);
const headerRefSchema = z.union(
  [
    headerName,
    z.strictObject({
      header: headerNames,
      group: headerName.optional(),
      occurrence: z.number({ error: OCCURRENCE }).int(OCCURRENCE).min(1, OCCURRENCE).max(100, OCCURRENCE).optional(),
    }),
    z.strictObject({ position: z.number({ error: POSITION }).int(POSITION).min(1, POSITION).max(16384, POSITION) }),
    z.strictObject({
      letter: z
        .string({ error: LETTER })
        .regex(/^[A-Za-z]{1,3}$/, LETTER)
        .refine((l) => letterPosition(l) <= 16384, LETTER),
    }),
  ],
  { error: (iss) => headerRefProblem(iss.input) },
);

export const columnSchema = z.strictObject({
  column: z.union([headerRefSchema, z.array(headerName).min(1, 'must name at least one header')], {
    error: (iss) => headerRefProblem(iss.input),
  }),
  /** Columns read in order when the row's cell of `column` is empty (French name, else English). */
  fallback: z.union([headerRefSchema, z.array(headerRefSchema).min(1, 'must name at least one column')]).optional(),
  field: z.string().min(1, 'must not be empty'),
  type: z
    .enum(COLUMN_TYPES, {
      error: (iss) =>
        `type must be one of ${COLUMN_TYPES.join(', ')}${typeof iss.input === 'string' ? didYouMean(iss.input, COLUMN_TYPES) : ''}`,
    })
    .optional(),
  split: z.string().min(1, 'must not be empty').optional(),
  values: z.record(z.string(), scalar).optional(),
  lookup: lookupSchema.optional(),
  empty: z.enum(['ignore', 'clear']).optional(),
  format: z.string().min(1).optional(),
  decimal: z.enum([',', '.']).optional(),
  required: z.boolean().optional(),
  onInvalid: z.enum(['reject-row', 'drop-field'], { error: 'onInvalid must be reject-row or drop-field' }).optional(),
});

const languageCode = z
  .string()
  .regex(/^[a-zA-Z]{2,3}(?:[-_][a-zA-Z0-9]{2,8})*$/, 'must be a language code such as fr-FR');

/** A rule of the mapping (`rules:`): a JSONata assertion over the mapped row, docs/mapping.md "Your own rules". */
const userRuleSchema = z.strictObject({
  /** Yours: unique within the mapping, shown wherever its issue is (PS- ids are the catalogue's). */
  id: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, 'a rule id is a letter then letters, digits, _ . - (at most 64)'),
  /** A JSONata expression over the mapped row (API field names) that is true when the row is right. */
  assert: z.string().min(1),
  /** warning: reported, the row goes on; error: the row is rejected. */
  severity: z.enum(['warning', 'error']).default('error'),
  message: z.string().min(1),
  /** The sheet column the issue points at (default: the column of the one field the assertion reads). */
  column: z.string().min(1).optional(),
});

/** A quality gate (`gate:`): a run over it plans and reports everything and writes nothing (exit 3). */
export const gateSchema = z
  .strictObject({
    /** Largest share of invalid rows (0 to 1) a run may have and still write. */
    maxInvalidShare: z.number().min(0).max(1).optional(),
    /** Rule ids (the catalogue's, docs/rules.md, or the mapping's own) whose any failure holds the run. */
    rules: z.array(z.string().min(1)).optional(),
  })
  .refine((g) => g.maxInvalidShare !== undefined || (g.rules?.length ?? 0) > 0, {
    message: 'a gate needs maxInvalidShare or rules',
  });

/** The mapping file's shape (the JSON Schema in schemas/mapping.schema.json is generated from it). */
export const mappingSchema = z.strictObject({
  /** The JSON Schema the file follows (editors read it for completion); ignored by the run. */
  $schema: z.string().optional(),
  name: z.string().min(1).optional(),
  target: z.enum(['tradeItem', 'manufacturedItem'], { error: 'target must be tradeItem or manufacturedItem' }),
  ownerCompanyId: z.uuid({ error: 'must be a uuid' }).optional(),
  language: languageCode.default('en-US'),
  fallbackLanguages: z.array(languageCode).optional(),
  sheet: headerName.optional(),
  headerRow: z.number().int().min(1).max(1000).default(1),
  key: z.enum(['gtin', 'tradeItemId']).default('gtin'),
  empty: z.enum(['ignore', 'clear']).default('ignore'),
  // Without it, the language's (localeNumberSeparators): fr-FR → ",", en-US → ".".
  decimalSeparator: z.enum([',', '.']).optional(),
  dateFormat: z.string().min(1).optional(),
  columns: z.array(columnSchema).min(1, 'a mapping needs at least one column'),
  defaults: z.record(z.string(), z.union([scalar, z.array(scalar)])).optional(),
  /** The part of the owner's catalogue the sheets cover: brands, suppliers, gtinPrefixes or owner (docs/scopes.md). */
  scope: scopeSchema.optional(),
  /** The mapping's own rules: JSONata assertions over the mapped row (docs/mapping.md "Your own rules"). */
  rules: z.array(userRuleSchema).optional(),
  /** A quality gate: hold a run whose quality collapsed before it writes (docs/mapping.md "Quality gates"). */
  gate: gateSchema.optional(),
  /** The language of rejected.*, issues.csv and the scorecard file (en, fr, de; default the one of `language`). */
  reportLanguage: languageCode
    .refine((l) => reportLanguageOf(l) === l.split(/[-_]/)[0]!.toLowerCase(), {
      error: `reports are written in ${REPORT_LANGUAGES.join(', ')}`,
    })
    .optional(),
});

type RawMapping = z.infer<typeof mappingSchema>;

const PATH = /^([A-Za-z][A-Za-z0-9]*)(?:\[(\d{1,2})\])?(?:\.([A-Za-z][A-Za-z0-9]*))?$/;

function fieldTypes(target: Target): ReadonlyMap<string, FieldType> {
  const m = new Map<string, FieldType>();
  for (const f of TRADE_ITEM_FIELDS) if (f.ops.includes('C')) m.set(f.name, f.type);
  // A manufactured item mapping feeds both the trade item and the manufactured item (route B plus follow-up writes).
  if (target === 'manufacturedItem') for (const f of MANUFACTURED_ITEM_FIELDS) m.set(f.name, f.type);
  return m;
}

const FIELD_TYPES: Readonly<Record<Target, ReadonlyMap<string, FieldType>>> = {
  tradeItem: fieldTypes('tradeItem'),
  manufacturedItem: fieldTypes('manufacturedItem'),
};

/**
 * Resolves a dotted field path (`gtin`, `netContents[0].value`, `drainedNetWeight.unitOfMeasure`, `countriesOfOrigin`)
 * against the target's create fields; a string is the reason it is not one.
 */
export function resolveFieldPath(target: Target, path: string): FieldTarget | string {
  const m = PATH.exec(path);
  if (!m) return `"${path}" is not a field path (name, name[i], name.sub or name[i].sub)`;
  const [, top = '', idx, sub] = m;
  const types = FIELD_TYPES[target];
  const type = types.get(top);
  if (!type) return `unknown field "${top}" for target ${target}${didYouMean(top, types.keys())}`;
  const index = idx === undefined ? undefined : Number(idx);
  const make = (leafType: FieldType, segments: (string | number)[]): FieldTarget | string => {
    if (leafType.kind === 'array') return { path, segments, top, leaf: leafType.of, array: true };
    if (leafType.kind === 'object' || leafType.kind === 'objectArray') return `"${path}" names an object, not a value`;
    return { path, segments, top, leaf: leafType.kind, array: false };
  };
  switch (type.kind) {
    case 'string':
    case 'uuid':
    case 'number':
    case 'weightUnit':
      if (index !== undefined || sub !== undefined) return `"${top}" is a single value: write just ${top}`;
      return make(type, [top]);
    case 'array':
      if (sub !== undefined) return `"${top}" is a list of values, it has no "${sub}"`;
      return index === undefined ? make(type, [top]) : make({ kind: type.of }, [top, index]);
    case 'object':
    case 'objectArray': {
      if (type.kind === 'objectArray' && index === undefined)
        return `"${top}" is a list of objects: write ${top}[0].${sub ?? '<field>'}`;
      if (type.kind === 'object' && index !== undefined)
        return `"${top}" is one object: write ${top}.${sub ?? '<field>'}`;
      const nested = NESTED_OBJECTS[type.of];
      const rule = nested.find((n) => n.name === sub);
      const quantityHint =
        sub === undefined && nested.some((n) => n.name === 'unitOfMeasure')
          ? ` (or type: quantity reads a cell such as "500 g" into ${path})`
          : '';
      if (!rule)
        return `"${top}" has the fields ${nested.map((n) => n.name).join(', ')}${
          sub
            ? `, not "${sub}"${didYouMean(
                sub,
                nested.map((n) => n.name),
              )}`
            : ''
        }${quantityHint}`;
      if (rule.ops && !rule.ops.includes('C'))
        return `"${top}[].${rule.name}" is accepted by updates only, not by creates`;
      return make(rule.type, index === undefined ? [top, rule.name] : [top, index, rule.name]);
    }
  }
}

const QUANTITY_HELP =
  'type quantity feeds an object with a number and a unit: netContents[i], drainedNetWeight, variableWeight.minimumValue or variableWeight.maximumValue';

/**
 * Resolves the field of a `quantity` column: an object with a `value` and a `unitOfMeasure` (`netContents[0]`,
 * `drainedNetWeight`), or a number field of an object with a `unitOfMeasure` (`variableWeight.minimumValue`,
 * `netContents[0].value`). The number goes to the value field, the unit to `unitOfMeasure`; a string is the reason it
 * is not one.
 */
export function resolveQuantityPath(target: Target, path: string): FieldTarget | string {
  const m = PATH.exec(path);
  if (!m) return `"${path}" is not a field path (name, name[i], name.sub or name[i].sub)`;
  const [, top = '', idx, sub] = m;
  const type = FIELD_TYPES[target].get(top);
  if (!type) return resolveFieldPath(target, path) as string;
  if (type.kind !== 'object' && type.kind !== 'objectArray') return `${QUANTITY_HELP}; "${path}" is not one`;
  const nested = NESTED_OBJECTS[type.of];
  if (!nested.some((n) => n.name === 'unitOfMeasure')) return `${QUANTITY_HELP}; ${top} has no unit`;
  const object = idx === undefined ? top : `${top}[${idx}]`;
  const valueName = sub ?? 'value';
  if (
    valueName === 'unitOfMeasure' ||
    !nested.some((n) => n.name === valueName && (n.type.kind === 'string' || n.type.kind === 'number'))
  ) {
    const numbers = nested
      .filter((n) => n.name !== 'unitOfMeasure' && (n.type.kind === 'number' || n.name === 'value'))
      .map((n) => `${object}.${n.name}`);
    return sub === undefined
      ? `${top} has no value field: write ${numbers.join(' or ')}`
      : `${QUANTITY_HELP}; write ${numbers.join(' or ')}`;
  }
  const value = resolveFieldPath(target, `${object}.${valueName}`);
  if (typeof value === 'string') return value;
  const unit = resolveFieldPath(target, `${object}.unitOfMeasure`);
  if (typeof unit === 'string') return unit;
  return {
    ...value,
    path,
    unit: { path: unit.path, segments: unit.segments, leaf: unit.leaf === 'weightUnit' ? 'weightUnit' : 'string' },
  };
}

/**
 * The path of a place in the draft (`netContents[0].value`), whatever the mapping wrote (`netContents[0]` for a
 * quantity).
 */
function placeOf(segments: readonly (string | number)[]): string {
  return segments.map((s, i) => (typeof s === 'number' ? `[${s}]` : i === 0 ? s : `.${s}`)).join('');
}

/** The type a column feeding `field` has when the mapping names none. */
export function defaultType(field: FieldTarget): ColumnType {
  if (field.top === 'gtin') return 'gtin';
  if (field.leaf === 'number') return 'decimal';
  if (field.leaf === 'weightUnit') return 'weightUnit';
  if (field.leaf === 'uuid') return 'uuid';
  return 'string';
}

const NUMERIC_TYPES: readonly ColumnType[] = ['decimal', 'integer', 'number'];

interface Located {
  path: (string | number)[];
  message: string;
}

/** What a column's checks need of the mapping around it. */
interface ColumnContext {
  target: Target;
  key: 'gtin' | 'tradeItemId';
  headerRow: number;
}

// Fields a create cannot do without: a column feeding one cannot drop it (the row would be refused all the same).
const CREATE_REQUIRED: Readonly<Record<Target, ReadonlySet<string>>> = {
  tradeItem: new Set(TRADE_ITEM_FIELDS.filter((f) => f.requiredOn?.includes('C')).map((f) => f.name)),
  manufacturedItem: new Set([
    ...TRADE_ITEM_FIELDS.filter((f) => f.requiredOn?.includes('C')).map((f) => f.name),
    ...MANUFACTURED_ITEM_FIELDS.filter((f) => f.requiredOn?.includes('B')).map((f) => f.name),
  ]),
};

const usesGroup = (ref: unknown): boolean => !!ref && typeof ref === 'object' && !Array.isArray(ref) && 'group' in ref;

function checkColumn(
  raw: RawMapping['columns'][number],
  i: number,
  field: FieldTarget,
  problems: Located[],
  cc: ColumnContext,
): ColumnType {
  const at = (key: string, message: string) => problems.push({ path: ['columns', i, key], message });
  const type = raw.type ?? defaultType(field);
  if (field.top === 'gtin' && type !== 'gtin')
    at('type', 'the gtin field takes type gtin (it normalises GTINs to 14 digits)');
  if (field.leaf === 'number' && !NUMERIC_TYPES.includes(type) && type !== 'quantity')
    at('type', `${field.path} is a number: use type decimal, integer or number`);
  if (field.leaf === 'weightUnit' && type !== 'weightUnit')
    at('type', `${field.path} takes a weight unit: use type weightUnit`);
  if (type === 'weightUnit' && field.leaf !== 'weightUnit')
    at('type', `type weightUnit is only for drainedNetWeight.unitOfMeasure and variableWeight.unitOfMeasure`);
  if (raw.split !== undefined && !field.array)
    at('split', `${field.path} holds one value, so it cannot be split (use a list field such as countriesOfOrigin)`);
  if (raw.format !== undefined && type !== 'date') at('format', 'format is only for type date');
  if (raw.decimal !== undefined && !NUMERIC_TYPES.includes(type) && type !== 'quantity')
    at('decimal', 'decimal is only for types decimal, integer, number and quantity');
  if (cc.headerRow < 2 && [raw.column, ...[raw.fallback ?? []].flat()].some(usesGroup)) {
    at('column', 'a group is the title on the row above the header: it needs headerRow 2 or more');
  }
  if (raw.onInvalid === 'drop-field') {
    const keyField = cc.key === 'gtin' ? 'gtin' : 'tradeItemId';
    if (field.top === keyField)
      at('onInvalid', `the key column cannot drop its field: a row without ${keyField} cannot be matched`);
    else if (raw.required) at('onInvalid', 'a required column cannot drop its field: remove required or onInvalid');
    else if (CREATE_REQUIRED[cc.target].has(field.top))
      at(
        'onInvalid',
        `${field.top} is required by the API to create an item: a row without it is refused all the same`,
      );
    else if (raw.lookup !== undefined)
      at(
        'onInvalid',
        'drop-field is for read and API-rule problems; the labels of a lookup column are resolved later, and a label not found stays an error',
      );
  }
  if (raw.lookup !== undefined) {
    if (raw.type !== undefined && raw.type !== 'string')
      at('lookup', 'a lookup column holds labels: leave type out (or string)');
    if (field.leaf === 'number' || field.leaf === 'weightUnit') at('lookup', `${field.path} cannot be looked up`);
    if (typeof raw.lookup === 'object' && 'brand' in raw.lookup && field.top !== 'brandId')
      at('lookup', 'a brand lookup feeds brandId');
    if (raw.lookup === 'harmonized-code' && field.top !== 'harmonizedCode')
      at('lookup', 'a harmonized-code lookup feeds harmonizedCode');
  }
  if (raw.format !== undefined && type === 'date') {
    if (!/^(?=.*y)(?=.*m)(?=.*d)[ymd/.\- ]+$/i.test(raw.format))
      at('format', `"${raw.format}" is not a date format such as dd/mm/yyyy`);
  }
  return type;
}

function toLookup(raw: NonNullable<RawMapping['columns'][number]['lookup']>): LookupSpec {
  if (raw === 'harmonized-code') return raw;
  if ('brand' in raw) return { brand: { create: raw.brand?.create ?? false } };
  if ('list' in raw) return { list: raw.list };
  return { kind: raw.kind as LookupKind };
}

function defaultValue(field: FieldTarget, value: string | string[]): string | number | string[] | string {
  if (field.array) return Array.isArray(value) ? value : [value];
  if (Array.isArray(value)) return `\u0000${field.path} takes one value, not a list`;
  if (field.leaf === 'number') {
    const n = Number(value);
    return Number.isFinite(n) && value.trim() !== '' ? n : `\u0000${field.path} takes a number`;
  }
  return field.leaf === 'uuid' ? value.toLowerCase() : value;
}

function build(
  raw: RawMapping,
  file: string,
  text: string,
  lineOf: (path: (string | number)[]) => number | null,
): Mapping {
  const problems: Located[] = [];
  const columns: MappingColumn[] = [];
  const seen = new Map<string, Feeder>();
  const decimalSeparator = raw.decimalSeparator ?? localeNumberSeparators(raw.language).decimal;
  const cc: ColumnContext = { target: raw.target, key: raw.key, headerRow: raw.headerRow };
  raw.columns.forEach((c, i) => {
    const field = columnField(raw.target, c.field, c.type === 'quantity', i, seen, problems);
    if (!field) return;
    const type = checkColumn(c, i, field, problems, cc);
    const sources = [toHeaderRef(c.column), ...[c.fallback ?? []].flat().map(toHeaderRef)];
    const first = sources[0]!;
    const values = c.values ? new Map(Object.entries(c.values).map(([k, v]) => [valueMapKey(k), v])) : undefined;
    const format = c.format ?? (type === 'date' ? raw.dateFormat : undefined);
    columns.push({
      columns: 'names' in first ? first.names : [`column ${columnLetters(first.position)}`],
      sources,
      field,
      type,
      ...(c.split !== undefined ? { split: c.split } : {}),
      ...(values ? { values } : {}),
      ...(c.lookup !== undefined ? { lookup: toLookup(c.lookup) } : {}),
      empty: c.empty ?? raw.empty,
      ...(format !== undefined ? { format } : {}),
      decimal: c.decimal ?? decimalSeparator,
      required: c.required ?? false,
      onInvalid: c.onInvalid ?? 'reject-row',
      line: lineOf(['columns', i]) ?? 0,
    });
  });
  const defaults: MappingDefault[] = [];
  for (const [path, value] of Object.entries(raw.defaults ?? {})) {
    const field = resolveFieldPath(raw.target, path);
    if (typeof field === 'string') {
      problems.push({ path: ['defaults', path], message: field });
      continue;
    }
    const v = defaultValue(field, value);
    if (typeof v === 'string' && v.startsWith('\u0000'))
      problems.push({ path: ['defaults', path], message: v.slice(1) });
    else defaults.push({ field, value: v });
  }
  const keyField = raw.key === 'gtin' ? 'gtin' : 'tradeItemId';
  if (!columns.some((c) => c.field.path === keyField) && !problems.some((p) => p.path[0] === 'columns')) {
    problems.push({ path: ['key'], message: `key ${raw.key} needs a column with field ${keyField}` });
  }
  const rules = userRules(raw, lineOf, problems);
  if (raw.dateFormat !== undefined && !/^(?=.*y)(?=.*m)(?=.*d)[ymd/.\- ]+$/i.test(raw.dateFormat)) {
    problems.push({ path: ['dateFormat'], message: `"${raw.dateFormat}" is not a date format such as dd/mm/yyyy` });
  }
  if (problems.length > 0) {
    throw new MappingError(
      file,
      problems.map((p) => ({ line: lineOf(p.path), path: formatPath(p.path), message: p.message })),
    );
  }
  const primary = raw.language.split(/[-_]/)[0] ?? raw.language;
  const fallbackLanguages = raw.fallbackLanguages ?? [...new Set([primary, 'en-US'])].filter((l) => l !== raw.language);
  return {
    name: raw.name ?? basename(file, extname(file)),
    file,
    hash: createHash('sha256').update(text).digest('hex'),
    target: raw.target,
    ...(raw.ownerCompanyId !== undefined ? { ownerCompanyId: raw.ownerCompanyId.toLowerCase() } : {}),
    language: raw.language,
    fallbackLanguages,
    ...(raw.sheet !== undefined ? { sheet: raw.sheet } : {}),
    headerRow: raw.headerRow,
    key: raw.key,
    empty: raw.empty,
    decimalSeparator,
    ...(raw.dateFormat !== undefined ? { dateFormat: raw.dateFormat } : {}),
    columns,
    defaults,
    ...(raw.scope !== undefined ? { scope: raw.scope } : {}),
    rules,
    ...(raw.gate !== undefined ? { gate: raw.gate } : {}),
    reportLanguage: reportLanguageOf(raw.reportLanguage ?? raw.language),
  };
}

const CATALOGUE_IDS: ReadonlySet<string> = new Set(RULES.map((r) => r.id));

/**
 * The mapping's rules, checked: unique ids, none of the catalogue's, each assertion parsed and reading only the
 * target's fields; and the gate's rule ids, each the catalogue's or the mapping's.
 */
function userRules(
  raw: RawMapping,
  lineOf: (path: (string | number)[]) => number | null,
  problems: Located[],
): UserRule[] {
  const fields = FIELD_TYPES[raw.target];
  const names = new Set(fields.keys());
  const out: UserRule[] = [];
  const ids = new Set<string>();
  (raw.rules ?? []).forEach((r, i) => {
    if (ids.has(r.id)) problems.push({ path: ['rules', i, 'id'], message: `rule ${r.id} is defined twice` });
    else if (/^PS-/i.test(r.id))
      problems.push({ path: ['rules', i, 'id'], message: `rule ${r.id}: ids starting with PS- are the catalogue's` });
    ids.add(r.id);
    const problem = assertionProblem(r, names, (n) => closest(n, names));
    if (problem) problems.push({ path: ['rules', i, 'assert'], message: problem });
    out.push({
      id: r.id,
      assert: r.assert,
      severity: r.severity,
      message: r.message,
      ...(r.column !== undefined ? { column: r.column } : {}),
      line: lineOf(['rules', i]) ?? 0,
    });
  });
  (raw.gate?.rules ?? []).forEach((id, i) => {
    if (!CATALOGUE_IDS.has(id) && !ids.has(id))
      problems.push({
        path: ['gate', 'rules', i],
        message: `${id} is no rule of the catalogue (product-sync rules) nor of this mapping`,
      });
  });
  return out;
}

/**
 * The field problems of a mapping whose schema check failed: each column's field path and type rules, the defaults'
 * paths, checked on whatever parts are well-formed, so that one load reports every problem (not schema problems
 * first, field problems on the next try).
 */
function fieldProblems(data: unknown): Located[] {
  const d = (data && typeof data === 'object' ? data : {}) as Record<string, unknown>;
  if (d.target !== 'tradeItem' && d.target !== 'manufacturedItem') return [];
  const target: Target = d.target;
  const problems: Located[] = [];
  const seen = new Map<string, Feeder>();
  const cc: ColumnContext = {
    target,
    key: d.key === 'tradeItemId' ? 'tradeItemId' : 'gtin',
    headerRow: typeof d.headerRow === 'number' ? d.headerRow : 1,
  };
  (Array.isArray(d.columns) ? d.columns : []).forEach((c: unknown, i) => {
    const o = c && typeof c === 'object' ? (c as Record<string, unknown>) : {};
    const fieldPath = o.field;
    if (typeof fieldPath !== 'string' || fieldPath === '') return;
    const field = columnField(target, fieldPath, o.type === 'quantity', i, seen, problems);
    if (!field) return;
    const column = columnSchema.safeParse(c, { jitless: true });
    if (column.success) checkColumn(column.data, i, field, problems, cc);
  });
  if (d.defaults && typeof d.defaults === 'object' && !Array.isArray(d.defaults)) {
    for (const [path, value] of Object.entries(d.defaults)) {
      const field = resolveFieldPath(target, path);
      if (typeof field === 'string') problems.push({ path: ['defaults', path], message: field });
      else if (typeof value === 'string' || (Array.isArray(value) && value.every((v) => typeof v === 'string'))) {
        const v = defaultValue(field, value as string | string[]);
        if (typeof v === 'string' && v.startsWith('\u0000'))
          problems.push({ path: ['defaults', path], message: v.slice(1) });
      }
    }
  }
  return problems;
}

/**
 * The column that feeds a place of the draft; `unit`: the place is the unit a quantity column fills (quantity columns
 * may share it).
 */
interface Feeder {
  column: number;
  unit: boolean;
}

/**
 * The field a column feeds, resolved against the target's rules; a problem (unknown field, or one fed twice) otherwise.
 */
function columnField(
  target: Target,
  path: string,
  quantity: boolean,
  i: number,
  seen: Map<string, Feeder>,
  problems: Located[],
): FieldTarget | undefined {
  const field = quantity ? resolveQuantityPath(target, path) : resolveFieldPath(target, path);
  if (typeof field === 'string') {
    problems.push({ path: ['columns', i, 'field'], message: field });
    return undefined;
  }
  const place = placeOf(field.segments);
  const prev = seen.get(place);
  if (prev !== undefined)
    problems.push({ path: ['columns', i, 'field'], message: `${place} is already fed by columns[${prev.column}]` });
  seen.set(place, { column: i, unit: false });
  if (field.unit) {
    // Two quantity columns may fill one unit (variableWeight's minimum and maximum): a row giving two units is an
    // issue.
    const other = seen.get(field.unit.path);
    if (other !== undefined && !other.unit)
      problems.push({
        path: ['columns', i, 'field'],
        message: `${field.unit.path}, the unit of this quantity, is already fed by columns[${other.column}]`,
      });
    else seen.set(field.unit.path, { column: i, unit: true });
  }
  return field;
}

/** A `column` / `fallback` entry of the file as a HeaderRef. */
function toHeaderRef(raw: z.infer<typeof columnSchema>['column']): HeaderRef {
  if (typeof raw === 'string') return { names: [raw] };
  if (Array.isArray(raw)) return { names: raw };
  if ('position' in raw) return { position: raw.position };
  if ('letter' in raw) return { position: letterPosition(raw.letter) };
  return {
    names: Array.isArray(raw.header) ? raw.header : [raw.header],
    ...(raw.group !== undefined ? { group: raw.group } : {}),
    ...(raw.occurrence !== undefined ? { occurrence: raw.occurrence } : {}),
  };
}

/**
 * Parses and validates a mapping from its text (YAML or JSON); throws MappingError naming the line of each problem (all
 * of them at once).
 */
export function parseMapping(text: string, file: string): Mapping {
  const parsed = parseYamlDocument(text, mappingSchema, (path) =>
    path.length === 0
      ? 'top-level keys are $schema, name, target, ownerCompanyId, language, fallbackLanguages, sheet, headerRow, key, empty, decimalSeparator, dateFormat, columns, defaults, scope, rules, gate, reportLanguage'
      : path[0] === 'columns' && path.length === 2
        ? 'column keys are column, fallback, field, type, split, values, lookup, empty, format, decimal, required, onInvalid'
        : path[0] === 'columns' && (path[2] === 'column' || path[2] === 'fallback')
          ? HEADER_REF_HELP
          : '',
  );
  if (!parsed.ok) {
    // Schema problems, plus the field problems the parts that are well-formed have (the YAML itself parses).
    const loose = parseYamlDocument(text, z.unknown());
    if (!loose.ok) throw new MappingError(file, parsed.problems);
    const reported = new Set(parsed.problems.map((p) => `${p.path}\u0000${p.message}`));
    const more = fieldProblems(loose.data)
      .map((p) => ({ line: loose.lineAt(p.path), path: formatPath(p.path), message: p.message }))
      .filter((p) => !reported.has(`${p.path}\u0000${p.message}`));
    const all = [...parsed.problems, ...more].map((p, i) => ({ p, i }));
    // In file order (a problem without a line last), the order found within a line.
    all.sort((a, b) => (a.p.line ?? Infinity) - (b.p.line ?? Infinity) || a.i - b.i);
    throw new MappingError(
      file,
      all.map((x) => x.p),
    );
  }
  return build(parsed.data, file, text, parsed.lineAt);
}

/** The file a mapping name or path designates: a path as given, else `<mappingsDir>/<name>.yaml|.yml|.json`. */
export function mappingFile(nameOrPath: string, mappingsDir = 'mappings'): string {
  if (/[\\/]/.test(nameOrPath) || /\.(ya?ml|json)$/i.test(nameOrPath)) return resolve(nameOrPath);
  for (const ext of ['.yaml', '.yml', '.json']) {
    const f = resolve(join(mappingsDir, nameOrPath + ext));
    if (existsSync(f)) return f;
  }
  throw new ProductSyncError(
    'PS_ERR_MAPPING_INVALID',
    `mapping "${nameOrPath}" not found in ${resolve(mappingsDir)} (looked for ${nameOrPath}.yaml, .yml, .json)`,
  );
}

/**
 * Loads and validates a mapping by name (from `mappingsDir`, default ./mappings) or path; throws PS_ERR_MAPPING_INVALID
 * with file and line.
 */
export async function loadMapping(nameOrPath: string, options: { mappingsDir?: string } = {}): Promise<Mapping> {
  const file = mappingFile(nameOrPath, options.mappingsDir);
  let text: string;
  try {
    // A FIFO or a device given as the mapping would block the read forever: only a regular file is read.
    if (!(await stat(file)).isFile()) throw new Error('not a regular file');
    text = await readFile(file, 'utf8');
  } catch (cause) {
    throw new ProductSyncError(
      'PS_ERR_MAPPING_INVALID',
      `mapping ${file} cannot be read: ${(cause as Error).message}`,
      { cause },
    );
  }
  return parseMapping(text.replace(/^\uFEFF/, ''), file);
}
