/**
 * Fast yes/no checks of operation bodies, derived from the same field tables as the zod schemas (schemas.ts), rule
 * for rule: a body passes here exactly when `bodySchema(operation).safeParse(body)` succeeds. The row hot path asks
 * this first and runs zod only for the rows that fail, so every issue still comes from zod, worded as before
 * (test/body-check.test.ts runs both over generated bodies). A check is plain closures over precomputed arrays, built
 * once per operation: no issue objects, no copy of the body, no parsed output.
 */
import * as z from 'zod';
import { NESTED_OBJECTS, operationFields, type BodyOperation, type FieldType, type NestedName } from './fields.ts';
import { WEIGHT_UNIT_IDS } from './units.ts';

/** True when a value passes a field's rule. */
type ValueCheck = (v: unknown) => boolean;

/** One field of an object check: its name, whether undefined / null pass, and the rule of other values. */
export interface FieldCheck {
  name: string;
  /** undefined (or the key absent) passes. */
  optional: boolean;
  /** null passes. */
  nullable: boolean;
  check: ValueCheck;
}

// The uuid pattern z.uuid() tests (RFC 9562 versions and variant, nil and max).
const UUID = z.regexes.uuid();

const isString: ValueCheck = (v) => typeof v === 'string';
const isUuid: ValueCheck = (v) => typeof v === 'string' && UUID.test(v);
const isFiniteNumber: ValueCheck = (v) => typeof v === 'number' && Number.isFinite(v);
const isWeightUnit: ValueCheck = (v) => typeof v === 'string' && WEIGHT_UNIT_IDS.has(v.toLowerCase());
const isNonEmptyString: ValueCheck = (v) => typeof v === 'string' && v.trim().length >= 1;
// zod's object test: arrays are not objects (a Date is).
const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

function arrayOf(item: ValueCheck): ValueCheck {
  return (v) => {
    if (!Array.isArray(v)) return false;
    for (let i = 0; i < v.length; i++) if (!item(v[i])) return false;
    return true;
  };
}

/**
 * A strict object: each field's rule on `obj[name]` (absent reads as undefined), and no key outside the fields
 * (for…in, as zod's strictObject looks). `skipUndefined`: a field the caller supplies when it is missing (the run's
 * ownerCompanyId) passes when undefined. The keys the object has are walked (a row fills a few of the many fields an
 * operation takes), then the required fields it lacks are looked for.
 */
export function objectCheck(
  fields: readonly FieldCheck[],
  skipUndefined: ReadonlySet<string> = new Set(),
): (obj: Record<string, unknown>) => boolean {
  const byName = new Map<string, FieldCheck>();
  for (const f of fields) byName.set(f.name, { ...f, optional: f.optional || skipUndefined.has(f.name) });
  const required = [...byName.values()].filter((f) => !f.optional).map((f) => f.name);
  return (obj) => {
    for (const k in obj) {
      const f = byName.get(k);
      if (f === undefined) return false;
      const v = obj[k];
      if (v === undefined ? !f.optional : v === null ? !f.nullable : !f.check(v)) return false;
    }
    for (let i = 0; i < required.length; i++) if (obj[required[i]!] === undefined) return false;
    return true;
  };
}

function scalarCheck(type: FieldType, op: string): ValueCheck {
  switch (type.kind) {
    case 'string':
      return isString;
    case 'uuid':
      return isUuid;
    case 'number':
      return isFiniteNumber;
    case 'weightUnit':
      return isWeightUnit;
    case 'array':
      return arrayOf(type.of === 'uuid' ? isUuid : isString);
    case 'object':
      return nestedCheck(type.of, op);
    case 'objectArray':
      return arrayOf(nestedCheck(type.of, op));
  }
}

function nestedCheck(name: NestedName, op: string): ValueCheck {
  const fields: FieldCheck[] = [];
  for (const f of NESTED_OBJECTS[name]) {
    if (f.ops && !f.ops.includes(op)) continue;
    fields.push({ name: f.name, optional: true, nullable: true, check: scalarCheck(f.type, op) });
  }
  const obj = objectCheck(fields);
  return (v) => isObject(v) && obj(v);
}

const cache = new Map<BodyOperation, readonly FieldCheck[]>();

/**
 * The field checks of one body operation, as bodySchema builds its shape: required fields neither undefined nor null,
 * non-empty strings trimmed first.
 */
export function bodyFieldChecks(operation: BodyOperation): readonly FieldCheck[] {
  const hit = cache.get(operation);
  if (hit) return hit;
  const out: FieldCheck[] = [];
  for (const { rule, op } of operationFields(operation)) {
    let check = scalarCheck(rule.type, op);
    if (rule.nonEmptyOn?.includes(op) && rule.type.kind === 'string') check = isNonEmptyString;
    const required = rule.requiredOn?.includes(op) === true;
    out.push({ name: rule.name, optional: !required, nullable: !required, check });
  }
  cache.set(operation, out);
  return out;
}

/** True exactly when `bodySchema(operation).safeParse(body)` succeeds. */
export function bodyCheck(operation: BodyOperation): (body: Record<string, unknown>) => boolean {
  return objectCheck(bodyFieldChecks(operation));
}
