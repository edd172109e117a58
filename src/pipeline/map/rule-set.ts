/**
 * The own rules of a mapping or a feed (docs/mapping.md "Your own rules"), where they are written: a list inline
 * (`rules: [...]`), or a rules file the mapping or feed names (`rules: ./acme-rules.yaml`, relative to the file that
 * names it) holding a list (or `rules:` and a list). Each rule is checked there — a unique id, none of the catalogue's,
 * an assertion that parses and reads only the target's fields — and a problem names the rule's id, its file and line
 * (PS_ERR_MAPPING_INVALID: exit 2, nothing read or sent). So are the ids a gate lists.
 */
import { readFileSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import * as z from 'zod';
import { ProductSyncError } from '../../errors.ts';
import { RULES } from '../../rule-catalogue.ts';
import { formatPath, parseYamlDocument } from '../../yaml-document.ts';
import { closest } from './closest.ts';
import { MappingError } from './mapping-error.ts';
import { assertionProblem, type UserRule } from './user-rules.ts';

/** A rule (`rules:`): a JSONata assertion over the mapped row, docs/mapping.md "Your own rules". */
export const userRuleSchema = z.strictObject({
  /** Yours: unique within the mapping and its feed, shown wherever its issue is (PS- ids are the catalogue's). */
  id: z
    .string()
    .regex(/^[A-Za-z][A-Za-z0-9_.-]{0,63}$/, 'a rule id is a letter then letters, digits, _ . - (at most 64)'),
  /** A JSONata expression over the mapped row (API field names) that is true when the row is right. */
  assert: z.string().min(1),
  /** warning: reported, the row goes on; error: the row is rejected. */
  severity: z.enum(['warning', 'error']).default('error'),
  message: z.string().min(1),
  /** The sheet column the issue points at (default: the column of the one field the assertion reads). */
  column: z.string().min(1).optional(),
});

/** `rules:` of a mapping or a feed: the rules, or the path of a rules file (relative to the file naming it). */
export const rulesSchema = z.union([
  z.string().regex(/\.(ya?ml|json)$/i, 'a rules file is a .yaml, .yml or .json file'),
  z.array(userRuleSchema),
]);

type RawRule = z.output<typeof userRuleSchema>;
type Path = (string | number)[];
/** A problem at a path of the file being checked. */
export interface RuleProblem {
  path: Path;
  message: string;
}

const CATALOGUE_IDS: ReadonlySet<string> = new Set(RULES.map((r) => r.id));

/**
 * Rules checked where they are written (`at`: the path of the list in its file): unique ids (`taken`: those defined
 * before, filled as it goes), none of the catalogue's, each assertion reading only `fields`.
 */
export function checkRules(
  raws: readonly { raw: RawRule; i: number }[],
  fields: ReadonlySet<string>,
  lineOf: (path: Path) => number | null,
  at: Path,
  taken: Set<string>,
  problems: RuleProblem[],
): UserRule[] {
  const out: UserRule[] = [];
  for (const { raw: r, i } of raws) {
    if (taken.has(r.id)) problems.push({ path: [...at, i, 'id'], message: `rule ${r.id} is defined twice` });
    else if (/^PS-/i.test(r.id))
      problems.push({ path: [...at, i, 'id'], message: `rule ${r.id}: ids starting with PS- are the catalogue's` });
    taken.add(r.id);
    const problem = assertionProblem(r, fields, (n) => closest(n, fields));
    if (problem) problems.push({ path: [...at, i, 'assert'], message: problem });
    out.push({
      id: r.id,
      assert: r.assert,
      severity: r.severity,
      message: r.message,
      ...(r.column !== undefined ? { column: r.column } : {}),
      line: lineOf([...at, i]) ?? 0,
    });
  }
  return out;
}

/** The ids of a gate (`gate.rules`, at `at`) that are no rule of the catalogue nor of `ids`. */
export function gateRuleProblems(gateRules: readonly string[] | undefined, ids: ReadonlySet<string>, at: Path) {
  const problems: RuleProblem[] = [];
  (gateRules ?? []).forEach((id, i) => {
    if (!CATALOGUE_IDS.has(id) && !ids.has(id))
      problems.push({
        path: [...at, i],
        message: `${id} is no rule of the catalogue (product-sync rules) nor of this mapping or feed`,
      });
  });
  return problems;
}

/** Rules read from a file, and that file's text (a run's id follows it). */
export interface FileRules {
  file: string;
  text: string;
  rules: UserRule[];
}

/** The rules file `rules` names, relative to the file `from` that names it. */
export const rulesFileOf = (from: string, rules: string): string => resolve(dirname(from), rules);

/**
 * The rules a file holds, checked: a rules file (a list, or `rules:` and a list) or a feed file (its `rules:` list).
 * Any problem throws, naming the file, each problem's line and the rule's id.
 */
export function readRulesFile(file: string, fields: ReadonlySet<string>, taken: Set<string>): FileRules {
  let text: string;
  try {
    // A FIFO or a device would block the read: only a regular file is read.
    if (!statSync(file).isFile()) throw new Error('not a regular file');
    text = readFileSync(file, 'utf8').replace(/^\uFEFF/, '');
  } catch (cause) {
    throw new ProductSyncError(
      'PS_ERR_MAPPING_INVALID',
      `rules file ${file} cannot be read: ${(cause as Error).message}`,
      {
        cause,
      },
    );
  }
  const doc = parseYamlDocument(text, z.unknown());
  if (!doc.ok) throw new MappingError(file, doc.problems, 'rules file');
  const data = doc.data;
  const at: Path = Array.isArray(data) ? [] : ['rules'];
  const list = Array.isArray(data)
    ? data
    : data && typeof data === 'object'
      ? (data as { rules?: unknown }).rules
      : null;
  if (!Array.isArray(list))
    throw new MappingError(
      file,
      [
        {
          line: doc.lineAt(at),
          path: formatPath(at),
          message: 'a rules file holds a list of rules (or rules: and a list)',
        },
      ],
      'rules file',
    );
  const problems: RuleProblem[] = [];
  const raws: { raw: RawRule; i: number }[] = [];
  list.forEach((r: unknown, i) => {
    const parsed = userRuleSchema.safeParse(r);
    if (parsed.success) raws.push({ raw: parsed.data, i });
    else
      for (const issue of parsed.error.issues) {
        const id = r && typeof r === 'object' ? (r as { id?: unknown }).id : undefined;
        problems.push({
          path: [...at, i, ...(issue.path as Path)],
          message: `${typeof id === 'string' ? `rule ${id}: ` : ''}${issue.message}`,
        });
      }
  });
  const rules = checkRules(raws, fields, doc.lineAt, at, taken, problems);
  if (problems.length > 0)
    throw new MappingError(
      file,
      problems.map((p) => ({ line: doc.lineAt(p.path), path: formatPath(p.path), message: p.message })),
      'rules file',
    );
  return { file, text, rules };
}
