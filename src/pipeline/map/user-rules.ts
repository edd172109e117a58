/**
 * A mapping's own rules (`rules:`, docs/mapping.md "Your own rules"): JSONata assertions over the mapped row (API field
 * names), evaluated with the jsonata package. Checked when the mapping loads (an assertion that does not parse, or
 * names a field the target does not have, is a mapping problem on its line); evaluated once per row after the labels
 * are resolved, each failure an issue (USER_RULE) carrying the rule's id, an assertion that raises an error on a row an
 * issue of that row (USER_RULE_FAILED). Each expression is compiled once per run.
 */
import { jsonata, type JsonataExpression } from './jsonata-lib.ts';
import { issue } from '../../issue-codes.ts';
import { compileSync, type SyncExpression } from './jsonata-sync.ts';
import type { Draft, Issue, Severity } from '../types.ts';

/** A rule of the mapping file, as loaded. */
export interface UserRule {
  id: string;
  assert: string;
  severity: Severity;
  message: string;
  /** The sheet column its issues point at; else the column of the one field it reads, if it reads one. */
  column?: string;
  /** The mapping file's line of the rule (its problems name it). */
  line: number;
}

interface AstNode {
  type?: string;
  value?: unknown;
  position?: number;
  steps?: AstNode[];
  body?: AstNode;
  [key: string]: unknown;
}

/**
 * The names a JSONata expression reads from the row's top level (`tradeItemName`, `netContents` of
 * `netContents[0].value`); `whole`: it also reads the row as a whole (`$`, `$$`, `*`, `**`).
 */
export function rootNames(expression: string): { name: string; position: number }[] & { whole?: true } {
  const out: { name: string; position: number }[] & { whole?: true } = [];
  const walk = (node: unknown, root: boolean): void => {
    if (node === null || typeof node !== 'object') return;
    if (Array.isArray(node)) {
      for (const n of node) walk(n, root);
      return;
    }
    const n = node as AstNode;
    if (n.type === 'path' && Array.isArray(n.steps)) {
      const [s0, s1] = n.steps;
      if (root && s0) {
        const self = s0.type === 'variable' && (s0.value === '' || s0.value === '$');
        const first = s0.type === 'name' ? s0 : self ? s1 : undefined;
        if (first?.type === 'name') out.push({ name: String(first.value), position: first.position ?? 0 });
        else if (self || s0.type === 'wildcard' || s0.type === 'descendant') out.whole = true;
      }
      // Filters and later steps read the items the path reached, not the row.
      for (const s of n.steps) for (const [k, v] of Object.entries(s)) if (k !== 'value') walk(v, false);
      return;
    }
    if (n.type === 'name' && root) out.push({ name: String(n.value), position: n.position ?? 0 });
    if (root && (n.type === 'wildcard' || n.type === 'descendant')) out.whole = true;
    if (root && n.type === 'variable' && (n.value === '' || n.value === '$')) out.whole = true;
    if (n.type === 'lambda') {
      walk(n.body, false);
      return;
    }
    for (const [k, v] of Object.entries(n)) if (k !== 'value') walk(v, root);
  };
  walk(jsonata(expression).ast(), true);
  return out;
}

/**
 * The problem of a rule's assertion, or null: it does not parse, or it reads a name that is none of `fields` (the
 * target's). `suggest` proposes the closest field.
 */
export function assertionProblem(
  rule: Pick<UserRule, 'id' | 'assert'>,
  fields: ReadonlySet<string>,
  suggest: (name: string) => string | undefined,
): string | null {
  let names: { name: string; position: number }[];
  try {
    names = rootNames(rule.assert);
  } catch (err) {
    const e = err as { message?: string; position?: number };
    return `rule ${rule.id}: the assertion does not parse: ${e.message ?? String(err)}${e.position !== undefined ? ` (at character ${e.position})` : ''}`;
  }
  for (const { name, position } of names) {
    if (fields.has(name)) continue;
    const close = suggest(name);
    return `rule ${rule.id}: the assertion reads ${name} (at character ${position}), not a field of the target${close ? `; did you mean ${close}?` : ''}`;
  }
  return null;
}

// Memoising results by the values a rule reads pays for fields with few distinct values (a status, a unit): a rule
// whose first MEMO_PROBE rows hit less than one time in MEMO_MIN_HIT_RATE stops memoising.
const MEMO_MAX = 10_000;
const MEMO_PROBE = 1000;
const MEMO_MIN_HIT_RATE = 10;

/** A result not computed yet: jsonata's evaluate is to give it. */
const JSONATA = Symbol('jsonata');

interface Compiled {
  rule: UserRule;
  expr: JsonataExpression;
  /** The synchronous evaluator of the expression, when it is in its subset (jsonata-sync.ts); null: jsonata's. */
  sync: SyncExpression | null;
  reads: readonly string[];
  memo: Map<string, unknown> | null;
  evaluated: number;
  hits: number;
}

/** A run's evaluator of a mapping's rules (compiled once). */
export class UserRuleChecker {
  readonly #rules: Compiled[];
  #compiled: Promise<void> | undefined;
  constructor(rules: readonly UserRule[]) {
    this.#rules = rules.map((rule) => {
      const names = rootNames(rule.assert);
      return {
        rule,
        expr: jsonata(rule.assert),
        sync: null,
        reads: [...new Set(names.map((n) => n.name))],
        // A rule reading the whole row, or nothing of it ($now()), is evaluated on every row.
        memo: names.whole || names.length === 0 ? null : new Map(),
        evaluated: 0,
        hits: 0,
      };
    });
  }

  /** Adds to each draft the issues of the rules that do not hold on it. */
  async check(drafts: readonly Draft[]): Promise<void> {
    await (this.#compiled ??= this.#compileSync());
    for (let i = 0; i < drafts.length; i++) {
      const d = drafts[i]!;
      const from = this.#checkSync(d);
      if (from < this.#rules.length) await this.#checkFrom(d, from);
    }
  }

  /**
   * The rules evaluated synchronously on a draft, in order, until one that jsonata must evaluate on it (outside the
   * subset, or its function threw): that rule's index (the number of rules when there is none). No promise, no
   * allocation on a row where every rule holds.
   */
  #checkSync(d: Draft): number {
    const rules = this.#rules;
    const fields = d.fields;
    for (let k = 0; k < rules.length; k++) {
      const c = rules[k]!;
      if (!c.sync) return k;
      let result: unknown;
      try {
        result = c.sync(fields);
      } catch {
        return k;
      }
      if (fails(result)) d.issues.push(this.#issue(c, d, 'USER_RULE', c.rule.message));
    }
    return rules.length;
  }

  /** The rules from index `from` on a draft, each with its function when it has one, else (or if it throws) jsonata. */
  async #checkFrom(d: Draft, from: number): Promise<void> {
    for (let k = from; k < this.#rules.length; k++) {
      const c = this.#rules[k]!;
      let result: unknown = JSONATA;
      if (c.sync && k > from)
        try {
          result = c.sync(d.fields);
        } catch {
          // Outside the subset on this row, or an error: jsonata's evaluate gives the result or the error's message.
        }
      try {
        if (result === JSONATA) result = await this.#evaluate(c, d.fields);
      } catch (err) {
        d.issues.push(this.#issue(c, d, 'USER_RULE_FAILED', `${c.rule.id}: ${(err as Error).message ?? String(err)}`));
        continue;
      }
      if (fails(result)) d.issues.push(this.#issue(c, d, 'USER_RULE', c.rule.message));
    }
  }

  async #compileSync(): Promise<void> {
    for (const c of this.#rules) {
      c.sync = await compileSync(c.expr);
      // Evaluated synchronously, a rule costs less than the key of its memo.
      if (c.sync) c.memo = null;
    }
  }

  async #evaluate(c: Compiled, fields: Record<string, unknown>): Promise<unknown> {
    if (c.memo === null) return c.expr.evaluate(fields);
    let key = '';
    for (const name of c.reads) {
      const v = fields[name];
      key += `${typeof v === 'string' ? v : v === undefined ? '\u0001' : JSON.stringify(v)}\u0000`;
    }
    c.evaluated++;
    if (c.memo.has(key)) {
      c.hits++;
      return c.memo.get(key);
    }
    const result: unknown = await c.expr.evaluate(fields);
    if (c.evaluated === MEMO_PROBE && c.hits * MEMO_MIN_HIT_RATE < MEMO_PROBE) c.memo = null;
    else if (c.memo.size < MEMO_MAX) c.memo.set(key, result);
    return result;
  }

  #issue(c: Compiled, d: Draft, code: 'USER_RULE' | 'USER_RULE_FAILED', message: string): Issue {
    const field = c.reads.length === 1 ? c.reads[0]! : null;
    const origin = field !== null ? originOf(d, field) : undefined;
    const i = issue(
      code,
      {
        row: d.row,
        column: c.rule.column ?? origin?.column ?? null,
        field,
        value: origin?.value ?? null,
        message,
      },
      c.rule.severity,
    );
    i.rule = c.rule.id;
    return i;
  }
}

/**
 * The sheet cell a field came from: its own origin, else the first of a path under it (`netContents[0].value`). A
 * for-in rather than Object.entries: no array a failing row.
 */
function originOf(d: Draft, field: string): { column: string; value: string | null } | undefined {
  const origins = d.origins;
  if (!origins) return undefined;
  if (origins[field]) return origins[field];
  const n = field.length;
  for (const p in origins) {
    const after = p.charCodeAt(n);
    if ((after === 0x5b || after === 0x2e) && p.startsWith(field) && Object.hasOwn(origins, p)) return origins[p];
  }
  return undefined;
}

/**
 * Whether an assertion's result says the rule does not hold: false, or a value JSONata casts to false (0, '', an
 * empty list). Undefined (the fields it reads are absent) holds: the rule has nothing to say on the row.
 */
function fails(result: unknown): boolean {
  if (result === undefined || result === true) return false;
  if (result === false || result === null || result === 0 || result === '') return true;
  if (Array.isArray(result)) return result.length === 0 || result.every((r) => fails(r));
  return typeof result === 'function';
}

const checkers = new WeakMap<readonly UserRule[], UserRuleChecker>();

/** The checker of a mapping's rules, compiled once per loaded mapping. */
export function userRuleChecker(rules: readonly UserRule[]): UserRuleChecker {
  let c = checkers.get(rules);
  if (!c) {
    c = new UserRuleChecker(rules);
    checkers.set(rules, c);
  }
  return c;
}
