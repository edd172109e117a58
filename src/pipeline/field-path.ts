/**
 * Writing a value at a field path of a draft's fields (`netContents[0].value` as its segments): map-row builds the
 * fields with it, resolve-drafts puts the resolved ids there, so it sits below both.
 */

// Field paths come from the validated mapping (names of the spec's field tables), never from headers; this guard
// keeps that true if a future change lets other keys through.
export const FORBIDDEN_KEYS = new Set(['__proto__', 'constructor', 'prototype']);

/** Sets `value` at a path of keys and indexes, creating objects and arrays on the way (keys from the mapping only). */
export function setAt(root: Record<string, unknown>, segments: readonly (string | number)[], value: unknown): void {
  let node = root as Record<string | number, unknown>;
  const last = segments.length - 1;
  for (let i = 0; i <= last; i++) {
    const seg = segments[i]!;
    if (typeof seg === 'string' && FORBIDDEN_KEYS.has(seg)) throw new Error(`unsafe field key ${seg}`);
    if (i === last) {
      node[seg] = value;
      return;
    }
    let next = node[seg];
    if (next === undefined) {
      next = typeof segments[i + 1] === 'number' ? [] : {};
      node[seg] = next;
    }
    node = next as Record<string | number, unknown>;
  }
}
