/** Plain-text tables of the CLI's listings (`lists`, `mapping init`'s summary). */

/**
 * Rows under a header, columns padded to their widest cell (the last one is not padded); cells are single-line text.
 */
export function textTable(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header, ...rows].map((r) => r.map((c) => c.replace(/\s+/g, ' ')));
  const widths = header.map((_, i) => Math.max(...all.map((r) => [...(r[i] ?? '')].length)));
  const line = (r: readonly string[]) =>
    r
      .map((c, i) => (i === r.length - 1 ? c : c + ' '.repeat(widths[i]! - [...c].length)))
      .join('  ')
      .trimEnd();
  return [line(all[0]!), ...all.slice(1).map(line)].join('\n');
}
