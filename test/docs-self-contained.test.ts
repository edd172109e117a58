// The repository explains itself (issue 36): no file points at a design document that is not in it, and every docs/
// page a file names exists.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = new URL('..', import.meta.url).pathname;
const SKIP = new Set(['node_modules', 'dist', '.git', 'reports', 'uploads', 'coverage', '.data', '.output']);
const TEXT = /\.(?:ts|js|mjs|cjs|md|json|ya?ml|html|css|sh)$|^(?:Dockerfile|\.[a-z]+rc)$/;

/** The repository's text files (what a newcomer reads), as paths from its root. */
function textFiles(dir = ROOT): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    if (SKIP.has(name)) continue;
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...textFiles(path));
    else if (TEXT.test(name) && name !== 'package-lock.json') out.push(relative(ROOT, path));
  }
  return out;
}

/** `file:line: text` of every line matching `re`. */
function linesMatching(re: RegExp, files: readonly string[]): string[] {
  const hits: string[] = [];
  for (const file of files) {
    readFileSync(join(ROOT, file), 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (re.test(line)) hits.push(`${file}:${i + 1}: ${line.trim()}`);
      });
  }
  return hits;
}

describe('the repository explains itself', () => {
  const files = textFiles();

  it('reads the files it checks', () => {
    expect(files).toEqual(expect.arrayContaining(['README.md', 'docs/architecture.md', 'src/cli.ts']));
  });

  it('points at no design document outside it (what the code relies on is in docs/)', () => {
    // Spelled in two parts so that this file does not match itself.
    const design = new RegExp(`${'DESIGN'}(?: ?§|\\.md)`);
    expect(linesMatching(design, files)).toEqual([]);
  });

  it('names only docs/ pages that exist', () => {
    const pages = new Set(readdirSync(join(ROOT, 'docs')));
    const missing = new Set<string>();
    for (const file of files) {
      for (const m of readFileSync(join(ROOT, file), 'utf8').matchAll(/\bdocs\/([\w-]+\.md)\b/g)) {
        if (!pages.has(m[1]!)) missing.add(`${file}: docs/${m[1]}`);
      }
    }
    expect([...missing]).toEqual([]);
  });

  it('names only sections that exist: docs/<page>.md "Heading" (or `, "Heading"`) and docs/api-contract.md §N', () => {
    const headings = new Map(
      readdirSync(join(ROOT, 'docs')).map((page) => [
        page,
        [...readFileSync(join(ROOT, 'docs', page), 'utf8').matchAll(/^#+ (.*)$/gm)].map((m) => m[1]!.trim()),
      ]),
    );
    const missing: string[] = [];
    for (const file of files) {
      const text = readFileSync(join(ROOT, file), 'utf8');
      for (const m of text.matchAll(/\bdocs\/([\w-]+\.md)`?\)?,? \(?"([^"]+)"/g)) {
        const section = m[2]!.replace(/\s+/g, ' ');
        if (!headings.get(m[1]!)?.some((h) => h.startsWith(section)))
          missing.push(`${file}: docs/${m[1]} "${section}"`);
      }
      for (const m of text.matchAll(/\bdocs\/([\w-]+\.md)`? §(\d+)/g)) {
        if (!headings.get(m[1]!)?.some((h) => h.startsWith(`${m[2]}. `)))
          missing.push(`${file}: docs/${m[1]} §${m[2]}`);
      }
    }
    expect(missing).toEqual([]);
  });
});
