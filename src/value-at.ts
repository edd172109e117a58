/**
 * The value at `path` in a parsed document (`['comments', 0, 'id']`: a zod issue's path, a mapping field's
 * segments), own properties only; undefined where the path runs out of objects.
 */
export function valueAt(root: unknown, path: readonly PropertyKey[]): unknown {
  let v = root;
  for (const p of path) {
    if (v === null || typeof v !== 'object' || !Object.prototype.hasOwnProperty.call(v, p)) return undefined;
    v = (v as Record<PropertyKey, unknown>)[p];
  }
  return v;
}
