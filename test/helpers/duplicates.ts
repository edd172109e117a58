import { SheetKeys } from '../../src/pipeline/run/sheet-keys.ts';
import type { Issue } from '../../src/pipeline/types.ts';

/**
 * The DUPLICATE_KEY issue of every row whose key other rows share, by row: the first pass of a run (SheetKeys) over
 * these keys.
 */
export function duplicateIssues(
  keysByRow: Iterable<readonly [number, string | null]>,
  options: { column?: string | null; field?: string | null } = {},
): Map<number, Issue> {
  const rows = [...keysByRow];
  const keys = new SheetKeys();
  for (const [row, key] of rows) keys.add(row, key);
  keys.finish();
  const out = new Map<number, Issue>();
  for (const [row, key] of rows) {
    const issue = keys.duplicateIssue(row, key, options);
    if (issue) out.set(row, issue);
  }
  return out;
}
