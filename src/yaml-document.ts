import { isMap, isSeq, LineCounter, parseDocument, type Node as YamlNode } from 'yaml';
import type * as z from 'zod';
import { valueAt } from './value-at.ts';

/** Aliases (`*name`) a document may expand (the yaml package's maxAliasCount; its default too). */
export const MAX_ALIAS_COUNT = 100;

/** One problem of a YAML/JSON file, with the line that has it. */
export interface DocumentProblem {
  line: number | null;
  path: string;
  message: string;
}

/** `a.b[0].c` from a path. */
export function formatPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : s === '' ? String(p) : `.${String(p)}`;
  return s;
}

/**
 * The node at `path`, or the deepest node on the way (the map a missing key belongs in); `key` selects a map key's own
 * node.
 */
function nodeAt(root: unknown, path: readonly PropertyKey[], key?: string): YamlNode | null {
  let node = root as YamlNode | null;
  const seq = [...path, ...(key === undefined ? [] : [key])];
  for (let i = 0; i < seq.length; i++) {
    const p = seq[i];
    let next: unknown = undefined;
    if (isMap(node)) {
      const pair = node.items.find(
        (it) =>
          (it.key as { value?: unknown } | null)?.value === p ||
          String((it.key as { value?: unknown } | null)?.value) === String(p),
      );
      if (pair) next = key !== undefined && i === seq.length - 1 ? pair.key : (pair.value ?? pair.key);
    } else if (isSeq(node) && typeof p === 'number') {
      next = node.items[p];
    }
    if (!next) break;
    node = next as YamlNode;
  }
  return node;
}

/** A parsed, schema-checked document and a way to find the line of any path in it. */
export type ParsedDocument<T> =
  | { ok: true; data: T; lineAt: (path: readonly PropertyKey[]) => number | null }
  | { ok: false; problems: DocumentProblem[] };

/**
 * Parses YAML (JSON is YAML) and checks it with a zod schema; every syntax or schema problem comes back with its line.
 * `unknownKeyHint(path)` may add the list of allowed keys to an "unknown key" problem.
 */
export function parseYamlDocument<S extends z.ZodType>(
  text: string,
  schema: S,
  unknownKeyHint: (path: readonly PropertyKey[]) => string = () => '',
): ParsedDocument<z.output<S>> {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: true, uniqueKeys: true });
  if (doc.errors.length > 0) {
    return {
      ok: false,
      problems: doc.errors.map((e) => ({
        line: e.linePos?.[0].line ?? null,
        path: '',
        message: (e.message.split('\n')[0] ?? e.message).replace(/ at line \d+, column \d+:?$/, ''),
      })),
    };
  }
  const lineAt = (path: readonly PropertyKey[], key?: string): number | null => {
    const offset = nodeAt(doc.contents, path, key)?.range?.[0];
    return offset === undefined ? null : lineCounter.linePos(offset).line;
  };
  // An alias bomb ("billion laughs": anchors of lists of aliases of lists…) expands exponentially: the yaml package
  // refuses it past maxAliasCount by throwing (a ReferenceError), as it does an alias to an anchor it cannot resolve.
  let data: unknown;
  try {
    data = doc.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
  } catch (err) {
    const message = (err as Error)?.message ?? String(err);
    return {
      ok: false,
      problems: [
        {
          line: null,
          path: '',
          message: /alias count/i.test(message)
            ? `too many YAML aliases (more than ${MAX_ALIAS_COUNT} expansions): refused as a possible alias bomb; write the values out instead`
            : message,
        },
      ],
    };
  }
  // jitless: zod would compile a parser for this one parse (a cost every start would pay); a document is parsed once.
  const parsed = schema.safeParse(data ?? {}, { jitless: true });
  if (parsed.success) return { ok: true, data: parsed.data, lineAt: (p) => lineAt(p) };
  const problems: DocumentProblem[] = [];
  for (const issue of parsed.error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const k of issue.keys) {
        const hint = unknownKeyHint(issue.path);
        problems.push({
          line: lineAt(issue.path, k),
          path: formatPath([...issue.path, k]),
          message: `unknown key "${k}"${hint ? ` (${hint})` : ''}`,
        });
      }
      continue;
    }
    problems.push({
      line: lineAt(issue.path),
      path: formatPath(issue.path),
      message: valueAt(data, issue.path) === undefined ? 'is required' : issue.message,
    });
  }
  return { ok: false, problems };
}
