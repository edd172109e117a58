import * as z from 'zod';
import {
  NESTED_OBJECTS,
  operationFields,
  type BodyOperation,
  type FieldType,
  type NestedName,
  type QueryParamRule,
  PAGING,
} from './fields.ts';
import { WEIGHT_UNIT_IDS } from './units.ts';

const uuid = z.uuid({ message: 'must be a uuid' });
const weightUnit = z.string().refine((v) => WEIGHT_UNIT_IDS.has(v.toLowerCase()), {
  message: 'must be the uuid of one of the units g, kg, mg, cg, dg, mcg, ton',
});

function scalarSchema(type: FieldType, op: string): z.ZodType {
  switch (type.kind) {
    case 'string':
      return z.string();
    case 'uuid':
      return uuid;
    case 'number':
      return z.number().finite();
    case 'weightUnit':
      return weightUnit;
    case 'array':
      return z.array(type.of === 'uuid' ? uuid : z.string());
    case 'object':
      return nestedSchema(type.of, op);
    case 'objectArray':
      return z.array(nestedSchema(type.of, op));
  }
}

function nestedSchema(name: NestedName, op: string): z.ZodType {
  const shape: Record<string, z.ZodType> = {};
  for (const f of NESTED_OBJECTS[name]) {
    if (f.ops && !f.ops.includes(op)) continue;
    shape[f.name] = scalarSchema(f.type, op).nullable().optional();
  }
  return z.strictObject(shape);
}

const cache = new Map<BodyOperation, z.ZodObject>();

/**
 * The zod schema of one body operation, derived from the field tables: unknown or operation-forbidden fields
 * are rejected (strict), required fields enforced, everything else optional and nullable.
 */
export function bodySchema(operation: BodyOperation): z.ZodObject {
  const hit = cache.get(operation);
  if (hit) return hit;
  const shape: Record<string, z.ZodType> = {};
  for (const { rule, op } of operationFields(operation)) {
    let s = scalarSchema(rule.type, op);
    if (rule.nonEmptyOn?.includes(op) && s instanceof z.ZodString) s = s.trim().min(1, 'must not be empty');
    shape[rule.name] = rule.requiredOn?.includes(op) ? s : s.nullable().optional();
  }
  // Compiled (zod 4's generated parser, same issues as the runtime one, which it falls back to on any failure).
  const schema = z.compile(z.strictObject(shape));
  cache.set(operation, schema);
  return schema;
}

/** The names of the fields an operation accepts. */
export function acceptedFields(operation: BodyOperation): ReadonlySet<string> {
  return new Set(operationFields(operation).map((f) => f.rule.name));
}

/**
 * Zod schema of a search endpoint's query string, derived from its parameter table (strings; uuid / integer where the
 * rule says).
 */
export function querySchema(params: readonly QueryParamRule[]): z.ZodObject {
  const shape: Record<string, z.ZodType> = {};
  for (const p of params) {
    let s: z.ZodType = p.uuid ? uuid : p.integer ? z.coerce.number().int().min(0) : z.string();
    if (p.name === 'Take') s = z.coerce.number().int().min(0).max(PAGING.maxTake);
    shape[p.name] = p.required ? s : s.optional();
  }
  return z.object(shape);
}
