/** Canonical JSON of an API value for comparison: keys sorted, null / undefined / empty-string properties dropped. */
export function canonical(value: unknown): string {
  return JSON.stringify(normalize(value)) ?? 'null';
}

function normalize(value: unknown): unknown {
  if (value === undefined || value === null || value === '') return null;
  if (Array.isArray(value)) return value.length === 0 ? null : value.map(normalize);
  if (typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const k of Object.keys(value as object).sort()) {
      const v = normalize((value as Record<string, unknown>)[k]);
      if (v !== null) out[k] = v;
    }
    return Object.keys(out).length === 0 ? null : out;
  }
  return value;
}

/** True when an API value carries nothing (null, undefined, '', [] or an object of such). */
export function isEmptyValue(value: unknown): boolean {
  return normalize(value) === null;
}

const COMPOUND = Symbol('compound');

/** A scalar as canonical() would see it (empties and non-finite numbers as null), or COMPOUND for anything else. */
function scalarForm(value: unknown): unknown {
  if (value === undefined || value === null || value === '') return null;
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : null;
    default:
      return COMPOUND;
  }
}

/**
 * `canonical(a) === canonical(b)` without building the strings where both are scalars (most fields of a row, compared
 * once per field by the planner's diff); objects and arrays go through canonical().
 */
export function sameCanonical(a: unknown, b: unknown): boolean {
  const sa = scalarForm(a);
  const sb = scalarForm(b);
  if (sa !== COMPOUND && sb !== COMPOUND) return sa === sb;
  return canonical(a) === canonical(b);
}
