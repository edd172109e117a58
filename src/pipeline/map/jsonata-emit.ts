/**
 * One function per rule, generated from jsonata's parse tree as JavaScript source. The closures of jsonata-sync.ts
 * cost a call per node, an array of arguments per function call and a sequence per path step; this code reads the
 * row's fields, calls the built-ins and compares inline, allocating nothing on a row of the expected types (figures:
 * docs/performance.md "Issue 38: a mapping's own rules").
 *
 * It is exact by construction: each node is emitted for the values it expects (a path's steps reaching one object
 * each, a built-in's arguments of the types it takes as they are, numbers compared with numbers…), and wherever a
 * value is anything else the node's own evaluator of jsonata-sync.ts (`general`, or a tail taking the values already
 * computed) gives the result. A node the emitter does not know is that evaluator whole. The source holds no text of
 * the expression but string literals and names written with JSON.stringify; every other constant (regular
 * expressions, numbers that are not plain, the evaluators) is passed in an array, `K`, and bound to a name `kN`.
 */

/** A node of jsonata's parse tree. */
export type Node = Record<string, unknown> & { type?: string; value?: unknown };
/** A node's evaluator: its result with jsonata's collapse of sequences; throws to hand the row to jsonata. */
export type Fn = (ctx: unknown, root: unknown) => unknown;

/** A function call of the subset (jsonata-sync.ts's `call`). */
export interface CallSite {
  /** The implementation called when the arguments are of `plain`'s types. */
  impl: (...args: unknown[]) => unknown;
  /** Per argument, the `typeof`s taken as they are; null: every call goes through `apply`. */
  plain: readonly (readonly string[])[] | null;
  /** The call on arguments already evaluated (the signature's check, then the implementation), not collapsed. */
  apply: (values: unknown[], ctx: unknown) => unknown;
}

/** What the emitted code calls: jsonata-sync.ts's evaluators and its value-level helpers. */
export interface EmitContext {
  general: (n: Node) => Fn;
  call: (n: Node) => CallSite;
  helpers: {
    collapse: (v: unknown) => unknown;
    boolean: (v: unknown) => unknown;
    string: (v: unknown) => unknown;
    deepEqual: (a: unknown, b: unknown) => boolean;
    compare: (op: string, a: unknown, b: unknown) => unknown;
    arithmetic: (op: string, a: unknown, b: unknown) => unknown;
    within: (a: unknown, b: unknown) => boolean;
    negate: (v: unknown) => unknown;
    synchronous: (v: unknown) => unknown;
    bail: () => never;
  };
}

const COMPARISONS = new Set(['<', '<=', '>', '>=']);
const ARITHMETIC = new Set(['+', '-', '*', '/', '%']);

/** The expression's function over a row (the same results as `general(root)`), or null when it cannot be emitted. */
export function emitExpression(root: Node, ctx: EmitContext): ((row: unknown) => unknown) | null {
  const e = new Emitter(ctx);
  let body: string;
  try {
    body = e.expr(root);
  } catch {
    return null;
  }
  const temps = e.temps > 0 ? `let ${Array.from({ length: e.temps }, (_, i) => `t${i}`).join(', ')};` : '';
  // Each constant bound once to a name of its own: the generated code calls them as known functions.
  const constants = e.constants.map((_, i) => `const k${i} = K[${i}];`).join('\n');
  const source = `"use strict";
${constants}
${e.functions.join('\n')}
return function rule(row) {
  if (Array.isArray(row)) return H.bail();
  ${temps}
  return ${body};
};`;
  try {
    // Generated from the parse tree: string literals and names through JSON.stringify, every other constant in K.
    return new Function('K', 'H', source)(e.constants, ctx.helpers) as (row: unknown) => unknown;
  } catch {
    return null;
  }
}

class Emitter {
  readonly constants: unknown[] = [];
  readonly functions: string[] = [];
  temps = 0;
  constructor(readonly ctx: EmitContext) {}

  constant(v: unknown): string {
    this.constants.push(v);
    return `k${this.constants.length - 1}`;
  }
  temp(): string {
    return `t${this.temps++}`;
  }
  /** The node's own evaluator, at the row. */
  general(n: Node): string {
    return `${this.constant(this.ctx.general(n))}(row, row)`;
  }

  expr(n: Node): string {
    switch (n.type) {
      case 'string':
        return JSON.stringify(n.value);
      case 'number': {
        const v = n.value as number;
        return Number.isFinite(v) && !Object.is(v, -0) ? `(${String(v)})` : this.constant(v);
      }
      case 'value':
        return n.value === true ? 'true' : n.value === false ? 'false' : n.value === null ? 'null' : this.general(n);
      case 'variable':
        // `$` and `$$` at the top are the row (an object: arrays are handed back above).
        return n.value === '' || n.value === '$' ? 'row' : this.general(n);
      case 'path':
        return this.path(n) ?? this.general(n);
      case 'function':
        return this.call(n);
      case 'binary':
        return this.binary(n);
      case 'unary':
        return this.unary(n);
      case 'condition': {
        const cond = this.bool(this.expr(n.condition as Node), false);
        const then = this.expr(n.then as Node);
        const otherwise = n.else === undefined ? 'undefined' : this.expr(n.else as Node);
        return `H.collapse(${cond} ? ${then} : ${otherwise})`;
      }
      case 'block': {
        if ((n.expressions as Node[]).length === 0) return this.general(n);
        const items = (n.expressions as Node[]).map((x) => this.expr(x));
        return `H.collapse((${items.join(', ')}))`;
      }
      default:
        return this.general(n);
    }
  }

  /**
   * jsonata's truthiness of a value: `strict` (and/or) a boolean that is true; else (conditions) any value the
   * boolean cast makes truthy.
   */
  bool(code: string, strict: boolean): string {
    const t = this.temp();
    return `((${t} = ${code}) === true || (${t} !== false && ${strict ? `H.boolean(${t}) === true` : `!!H.boolean(${t})`}))`;
  }

  /** A path of names with index stages over one object a step; any other value: the path's own evaluator. */
  path(n: Node): string | null {
    const steps = n.steps as Node[];
    for (const s of steps) {
      if (s.type !== 'name') return null;
      for (const st of (s.stages as Node[] | undefined) ?? []) {
        const at = (st.expr as Node | undefined)?.value;
        if (
          st.type !== 'filter' ||
          (st.expr as Node).type !== 'number' ||
          !Number.isSafeInteger(Math.floor(at as number)) ||
          (at as number) < 0
        )
          return null;
      }
    }
    const whole = `return ${this.general(n)};`;
    const lines = ['let v = row;'];
    steps.forEach((s, i) => {
      lines.push(
        `if (Array.isArray(v)) ${whole}`,
        'if (v === null || typeof v !== "object" || v._jsonata_function === true || v._jsonata_lambda === true) ' +
          'return undefined;',
        `v = v[${JSON.stringify(String(s.value))}];`,
        'if (v === undefined) return undefined;',
      );
      for (const st of (s.stages as Node[] | undefined) ?? []) {
        const at = Math.floor((st.expr as Node).value as number);
        lines.push(
          `if (Array.isArray(v)) { if (v.sequence === true) ${whole} v = v[${at}]; ` +
            `if (v === undefined) return undefined; if (Array.isArray(v)) ${whole} }`,
          at === 0 ? '' : 'else return undefined;',
        );
      }
      if (i === steps.length - 1) lines.push(`if (Array.isArray(v) && v.sequence === true) ${whole}`);
    });
    const name = `p${this.functions.length}`;
    this.functions.push(`function ${name}(row) {\n  ${lines.filter(Boolean).join('\n  ')}\n  return v;\n}`);
    return `${name}(row)`;
  }

  call(n: Node): string {
    const site = this.ctx.call(n);
    const args = (n.arguments as Node[]).map((a) => this.expr(a));
    const temps = args.map(() => this.temp());
    const assign = args.map((a, i) => `${temps[i]} = ${a}`).join(', ');
    const apply = `H.collapse(${this.constant(site.apply)}([${temps.join(', ')}], row))`;
    if (!site.plain) return `(${assign}${args.length > 0 ? ', ' : ''}${apply})`;
    const checks = site.plain.map((types, i) => `(${types.map((t) => `typeof ${temps[i]} === "${t}"`).join(' || ')})`);
    const impl = this.constant(site.impl);
    // The built-ins of the subset return a string, a number or a boolean on such arguments: nothing to collapse.
    return `(${assign}, ${checks.join(' && ')} ? H.synchronous(${impl}(${temps.join(', ')})) : ${apply})`;
  }

  binary(n: Node): string {
    const op = n.value as string;
    if (op === 'and' || op === 'or') {
      const l = this.bool(this.expr(n.lhs as Node), true);
      const r = this.bool(this.expr(n.rhs as Node), true);
      return `(${l} ${op === 'and' ? '&&' : '||'} ${r})`;
    }
    const a = this.temp();
    const b = this.temp();
    const both = `${a} = ${this.expr(n.lhs as Node)}, ${b} = ${this.expr(n.rhs as Node)}`;
    if (op === '=' || op === '!=') {
      const equal = `(${a} === ${b} || (typeof ${a} === "object" && typeof ${b} === "object" && H.deepEqual(${a}, ${b})))`;
      return `(${both}, ${a} === undefined || ${b} === undefined ? false : ${op === '=' ? '' : '!'}${equal})`;
    }
    if (COMPARISONS.has(op)) {
      const same = `(typeof ${a} === "number" && typeof ${b} === "number") || (typeof ${a} === "string" && typeof ${b} === "string")`;
      return `(${both}, ${same} ? ${a} ${op} ${b} : H.compare(${JSON.stringify(op)}, ${a}, ${b}))`;
    }
    if (ARITHMETIC.has(op))
      return `(${both}, Number.isFinite(${a}) && Number.isFinite(${b}) ? ${a} ${op} ${b} : H.arithmetic(${JSON.stringify(op)}, ${a}, ${b}))`;
    if (op === '&') {
      const str = (t: string) => `(typeof ${t} === "string" ? ${t} : ${t} === undefined ? "" : H.string(${t}))`;
      return `(${both}, ${str(a)} + ${str(b)})`;
    }
    if (op === 'in') return `(${both}, H.within(${a}, ${b}))`;
    return this.general(n);
  }

  unary(n: Node): string {
    if (n.value !== '-') return this.general(n);
    const t = this.temp();
    return `((${t} = ${this.expr(n.expression as Node)}) === undefined ? undefined : Number.isFinite(${t}) ? -${t} : H.negate(${t}))`;
  }
}
