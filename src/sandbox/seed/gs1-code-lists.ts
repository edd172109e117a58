// GS1 Web Vocabulary code lists, read from the N-Quads file that the @vocabulary/gs1 package ships. The vocabulary
// publishes English labels and definitions only.
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';

/** One code of a GS1 code list: the code, its English label and definition. */
export interface Gs1Code {
  code: string;
  label: string;
  definition?: string;
}

const LINE =
  /^<https:\/\/ref\.gs1\.org\/voc\/([A-Za-z]+)-([^>]+)> <http:\/\/www\.w3\.org\/2000\/01\/rdf-schema#(label|comment)> "((?:[^"\\]|\\.)*)"@en /gm;

let cache: Map<string, Map<string, Gs1Code>> | undefined;

function unescapeLiteral(s: string): string {
  return s.replace(/\\(["\\nrt])/g, (_m, c: string) => ({ n: '\n', r: '\r', t: '\t' })[c] ?? c).trim();
}

function parseAll(): Map<string, Map<string, Gs1Code>> {
  const require = createRequire(import.meta.url);
  const text = readFileSync(require.resolve('@vocabulary/gs1/gs1.nq'), 'utf8');
  const lists = new Map<string, Map<string, Gs1Code>>();
  for (const m of text.matchAll(LINE)) {
    const [, list, rawCode, predicate, literal] = m as unknown as [string, string, string, string, string];
    if (!list.endsWith('Code')) continue;
    const code = decodeURIComponent(rawCode);
    let codes = lists.get(list);
    if (!codes) lists.set(list, (codes = new Map()));
    const entry = codes.get(code) ?? { code, label: '' };
    if (predicate === 'label') entry.label = unescapeLiteral(literal);
    else entry.definition = unescapeLiteral(literal);
    codes.set(code, entry);
  }
  return lists;
}

/**
 * The codes of one GS1 code list (e.g. 'PackagingMaterialTypeCode'), sorted by code; throws if the package lacks it.
 */
export function gs1CodeList(listName: string): Gs1Code[] {
  cache ??= parseAll();
  const codes = cache.get(listName);
  if (!codes || codes.size === 0) throw new Error(`@vocabulary/gs1 has no code list ${listName}`);
  return [...codes.values()]
    .filter((c) => c.label !== '')
    .sort((a, b) => (a.code < b.code ? -1 : a.code > b.code ? 1 : 0));
}
