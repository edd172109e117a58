/**
 * A feed's file pattern: a glob of `*` (any run of characters) and `?` (one character), case-insensitive, over the
 * whole name — the semantics of `patternRegExp` in src/queue/feeds.ts (src/sources must not import src/queue).
 */
export function patternRegExp(pattern: string): RegExp {
  const body = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 'i');
}

/** A name a source may hand out or take back: one path segment (no `/` or `\`), not `.` or `..`, no NUL. */
export function isPlainName(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !/[/\\\0]/.test(name);
}
