/**
 * A synchronous evaluator of the common subset of JSONata, compiled from jsonata's own parse tree (`expression.ast()`):
 * paths over the row (with index and filter predicates), literals, comparisons, `and`/`or`, arithmetic, `&`, `in`,
 * conditions, blocks, array constructors, regex literals, `$`/`$$` and a list of built-in functions whose
 * implementations and signatures are jsonata's own (looked up once). jsonata 2's `evaluate` awaits every node of the
 * tree, which makes it the cost of a mapping's rules on large sheets (docs/performance.md "Issue 38").
 *
 * An expression with any node outside the subset does not compile (null): jsonata evaluates it. A compiled function
 * that throws says only "jsonata must evaluate this row": the caller then evaluates it with jsonata, which gives the
 * result or the error with its own message. So the subset need only be exact where it does not throw; the node
 * evaluators below follow jsonata 2.1's (evaluatePath, evaluateStep, evaluateFilter, evaluateBinary…) one for one,
 * and test/jsonata-sync.test.ts compares both on many expressions and rows.
 */
import { jsonata, type JsonataExpression } from './jsonata-lib.ts';
import { emitExpression, type CallSite, type EmitContext, type Fn, type Node } from './jsonata-emit.ts';

/** A compiled expression: its result on a row; throws when jsonata must evaluate the row instead. */
export type SyncExpression = (row: unknown) => unknown;

type Seq = unknown[] & { sequence?: boolean; keepSingleton?: boolean; cons?: boolean };

interface Builtin {
  implementation: (...args: unknown[]) => unknown;
  signature?: { validate: (args: unknown[], context: unknown) => unknown[] };
}

/** Built-ins whose implementation is synchronous and pure (no `this`, no callbacks); `contains` is done here. */
const SYNC_BUILTINS = [
  'length',
  'substring',
  'substringBefore',
  'substringAfter',
  'uppercase',
  'lowercase',
  'trim',
  'pad',
  'number',
  'string',
  'boolean',
  'not',
  'exists',
  'count',
  'sum',
  'max',
  'min',
  'average',
  'abs',
  'floor',
  'ceil',
  'round',
  'join',
  'type',
  'lookup',
  'append',
  'error',
  'assert',
  'contains',
] as const;

/**
 * The argument types with which a built-in's signature takes its arguments as they are (each a `typeof`; `?`:
 * optional): there the signature's check (a string of type symbols matched by a regular expression, a new array of
 * arguments) is skipped. Any other call goes through the signature.
 */
const STR = 'string';
const NUM = 'number';
const SCALAR = 'string number boolean';
const PLAIN_ARGS: Record<string, string[]> = {
  length: [STR],
  uppercase: [STR],
  lowercase: [STR],
  trim: [STR],
  substring: [STR, NUM, `${NUM}?`],
  substringBefore: [STR, STR],
  substringAfter: [STR, STR],
  contains: [STR, STR],
  number: [SCALAR],
  string: [SCALAR],
  boolean: [SCALAR],
  not: [SCALAR],
  exists: [SCALAR],
  abs: [NUM],
  floor: [NUM],
  ceil: [NUM],
  round: [NUM, `${NUM}?`],
};

type Builtins = Record<(typeof SYNC_BUILTINS)[number], Builtin>;
let builtins: Promise<Builtins> | undefined;

/** jsonata's own function objects (`$length` evaluates to it), looked up once. */
function loadBuiltins(): Promise<Builtins> {
  builtins ??= (async () => {
    const out: Partial<Builtins> = {};
    for (const name of SYNC_BUILTINS) out[name] = (await jsonata(`$${name}`).evaluate({})) as Builtin;
    return out as Builtins;
  })();
  return builtins;
}

/** Raised to hand a row to jsonata; never reaches a user (the caller evaluates the row with jsonata instead). */
class Unsupported extends Error {}
const bail = (): never => {
  throw new Unsupported('outside the synchronous subset');
};

const createSequence = (...items: unknown[]): Seq => {
  const s: Seq = items;
  s.sequence = true;
  return s;
};
const isSequence = (v: unknown): v is Seq => Array.isArray(v) && (v as Seq).sequence === true;
const isFunction = (v: unknown): boolean =>
  typeof v === 'function' ||
  (v !== null &&
    typeof v === 'object' &&
    ((v as Record<string, unknown>)._jsonata_function === true ||
      (v as Record<string, unknown>)._jsonata_lambda === true));

function isNumeric(n: unknown): n is number {
  if (typeof n !== 'number' || Number.isNaN(n)) return false;
  if (!Number.isFinite(n)) bail();
  return true;
}

/** The collapse jsonata's `evaluate` applies to every node's result. */
function collapse(result: unknown): unknown {
  if (result && isSequence(result)) {
    if (result.length === 0) return undefined;
    if (result.length === 1) return result.keepSingleton ? result : result[0];
  }
  return result;
}

/**
 * Compiles an expression, or null when it has a node outside the subset: one generated function (jsonata-emit.ts)
 * over the evaluators below, which it calls on the values it does not expect.
 */
export async function compileSync(expression: JsonataExpression): Promise<SyncExpression | null> {
  const fns = await loadBuiltins();
  const compiler = new Compiler(fns);
  const root = expression.ast() as unknown as Node;
  const compiled = compiler.node(root);
  if (!compiled) return null;
  const emitted = emitExpression(root, compiler.emitContext());
  return emitted ?? ((row) => (Array.isArray(row) ? bail() : compiled(row, row)));
}

// Nodes whose result may be a sequence (the others return a single value or a plain array).
const COLLAPSED = new Set(['path', 'function', 'variable', 'block', 'condition']);
const STEP_KEYS_REFUSED = ['focus', 'index', 'tuple', 'ancestor', 'consarray', 'group', 'predicate', 'keepArray'];

class Compiler {
  readonly own: Record<string, (...args: unknown[]) => unknown>;
  /** Each node's evaluator and each function call's site, for the generated function (jsonata-emit.ts). */
  readonly evaluators = new Map<Node, Fn>();
  readonly calls = new Map<Node, CallSite>();
  constructor(readonly fns: Builtins) {
    this.own = ownImplementations(fns);
  }

  /** A node's evaluator with jsonata's collapse of sequences, or null. */
  node(n: Node): Fn | null {
    if (Object.hasOwn(n, 'predicate') || Object.hasOwn(n, 'group') || n.keepArray) return null;
    const f = this.bare(n);
    if (!f) return null;
    const out: Fn = COLLAPSED.has(n.type!) ? (c, r) => collapse(f(c, r)) : f;
    this.evaluators.set(n, out);
    return out;
  }

  emitContext(): EmitContext {
    const known =
      <T>(map: Map<Node, T>) =>
      (n: Node) =>
        map.get(n) ?? bail();
    const fns = this.fns;
    return {
      general: known(this.evaluators),
      call: known(this.calls),
      helpers: {
        collapse,
        boolean: fns.boolean.implementation,
        string: fns.string.implementation,
        deepEqual,
        compare,
        arithmetic: arithmeticOf,
        within,
        negate: (v) => (isNumeric(v) ? -v : bail()),
        synchronous: (v) => (v instanceof Promise ? bail() : v),
        bail,
      },
    };
  }

  bare(n: Node): Fn | null {
    switch (n.type) {
      case 'string':
      case 'number':
      case 'value': {
        const v = n.value;
        return () => v;
      }
      case 'variable':
        if (n.value === '') return (c) => c;
        if (n.value === '$') return (_c, r) => r;
        return null;
      case 'path':
        return this.path(n);
      case 'binary':
        return this.binary(n);
      case 'unary':
        return this.unary(n);
      case 'condition':
        return this.condition(n);
      case 'block': {
        const items = this.all(n.expressions);
        if (!items) return null;
        return (c, r) => {
          let result: unknown;
          for (const f of items) result = f(c, r);
          return result;
        };
      }
      case 'regex':
        return n.value instanceof RegExp ? regex(n.value) : null;
      case 'function':
        return this.call(n);
      default:
        return null;
    }
  }

  all(nodes: unknown): Fn[] | null {
    if (!Array.isArray(nodes)) return null;
    const out: Fn[] = [];
    for (const n of nodes as Node[]) {
      const f = this.node(n);
      if (!f) return null;
      out.push(f);
    }
    return out;
  }

  path(n: Node): Fn | null {
    if (n.keepSingletonArray || Object.hasOwn(n, 'tuple')) return null;
    const steps = n.steps as Node[] | undefined;
    if (!Array.isArray(steps) || steps.length === 0) return null;
    const compiled: { fn: Fn; stages: Fn[] }[] = [];
    for (const s of steps) {
      if (STEP_KEYS_REFUSED.some((k) => Object.hasOwn(s, k)) || s.type === 'sort') return null;
      const fn = s.type === 'name' ? name(String(s.value)) : this.node(s);
      if (!fn) return null;
      const stages: Fn[] = [];
      for (const st of (s.stages as Node[] | undefined) ?? []) {
        if (st.type !== 'filter') return null;
        const p = this.filter(st.expr as Node);
        if (!p) return null;
        stages.push(p);
      }
      compiled.push({ fn, stages });
    }
    const firstIsVariable = steps[0]!.type === 'variable';
    const general = (c: unknown, r: unknown, from: number): Seq | undefined => {
      let input: Seq = Array.isArray(c) && (from > 0 || !firstIsVariable) ? (c as Seq) : createSequence(c);
      let result: Seq | undefined;
      for (let i = from; i < compiled.length; i++) {
        result = step(compiled[i]!, input, r, i === compiled.length - 1);
        if (result.length === 0) break;
        input = result;
      }
      return result;
    };
    // While each step reaches one item that is not an array (a row's field, `netContents[0]`), the sequences of
    // jsonata's evaluatePath hold that one item: it is carried as it is, and the general walk takes over from the first
    // step that reaches several items or an array.
    return (c, r) => {
      if (Array.isArray(c)) return general(c, r, 0);
      let cur = c;
      for (let i = 0; i < compiled.length; i++) {
        const s = compiled[i]!;
        let res = s.fn(cur, r);
        for (const stage of s.stages) res = stage(res, r);
        if (res === undefined) return undefined;
        if (Array.isArray(res)) {
          if (isSequence(res) && res.length <= 1 && !Array.isArray(res[0])) {
            if (res.length === 0) return undefined;
            res = res[0];
          } else if (i === compiled.length - 1 && !isSequence(res)) return res;
          else return general(cur, r, i);
        }
        cur = res;
      }
      return cur;
    };
  }

  /** A filter stage: jsonata's evaluateFilter, the input made a sequence. */
  filter(pred: Node): Fn | null {
    if (pred.type === 'number') {
      const at = Math.floor(pred.value as number);
      return (input) => {
        const seq = Array.isArray(input) ? input : createSequence(input);
        const item = seq[at < 0 ? seq.length + at : at];
        if (item === undefined) return createSequence();
        return Array.isArray(item) ? item : createSequence(item);
      };
    }
    const p = this.node(pred);
    if (!p) return null;
    return (input, root) => {
      const seq = Array.isArray(input) ? input : createSequence(input);
      const out = createSequence();
      for (let index = 0; index < seq.length; index++) {
        const item = seq[index];
        let res = p(item, root);
        if (isNumeric(res)) res = [res];
        if (Array.isArray(res) && res.every((x) => isNumeric(x))) {
          for (const ires of res as number[]) {
            let ii = Math.floor(ires);
            if (ii < 0) ii = seq.length + ii;
            if (ii === index) out.push(item);
          }
        } else if (this.fns.boolean.implementation(res)) out.push(item);
      }
      return out;
    };
  }

  binary(n: Node): Fn | null {
    const lhs = this.node(n.lhs as Node);
    const rhs = this.node(n.rhs as Node);
    if (!lhs || !rhs) return null;
    const bool = (v: unknown) => this.fns.boolean.implementation(v) === true;
    const str = (v: unknown) => (v === undefined ? '' : (this.fns.string.implementation(v) as string));
    const op = String(n.value);
    // Arguments are evaluated left to right: the left operand first, as jsonata does.
    if (ARITHMETIC.has(op)) return (c, r) => arithmeticOf(op, lhs(c, r), rhs(c, r));
    if (ORDER.has(op)) return (c, r) => compare(op, lhs(c, r), rhs(c, r));
    switch (n.value) {
      case 'and':
        return (c, r) => bool(lhs(c, r)) && bool(rhs(c, r));
      case 'or':
        return (c, r) => bool(lhs(c, r)) || bool(rhs(c, r));
      case '=':
      case '!=': {
        const eq = n.value === '=';
        return (c, r) => {
          const a = lhs(c, r);
          const b = rhs(c, r);
          if (a === undefined || b === undefined) return false;
          return deepEqual(a, b) === eq;
        };
      }
      case '&':
        return (c, r) => {
          const a = lhs(c, r);
          return str(a) + str(rhs(c, r));
        };
      case 'in':
        return (c, r) => {
          const a = lhs(c, r);
          return within(a, rhs(c, r));
        };
      default:
        return null;
    }
  }

  unary(n: Node): Fn | null {
    if (n.value === '-') {
      const e = this.node(n.expression as Node);
      if (!e) return null;
      return (c, r) => {
        const v = e(c, r);
        if (v === undefined) return undefined;
        return isNumeric(v) ? -v : bail();
      };
    }
    if (n.value !== '[' || n.consarray) return null;
    const exprs = n.expressions as Node[];
    const items = this.all(exprs);
    if (!items) return null;
    const append = this.fns.append.implementation;
    return (c, r) => {
      let result: unknown = [];
      for (let i = 0; i < items.length; i++) {
        const v = items[i]!(c, r);
        if (v === undefined) continue;
        if (exprs[i]!.value === '[') (result as unknown[]).push(v);
        else result = append(result, v);
      }
      return result;
    };
  }

  condition(n: Node): Fn | null {
    const cond = this.node(n.condition as Node);
    const then = this.node(n.then as Node);
    const otherwise = n.else === undefined ? undefined : this.node(n.else as Node);
    if (!cond || !then || otherwise === null) return null;
    const truthy = this.fns.boolean.implementation;
    return (c, r) => (truthy(cond(c, r)) ? then(c, r) : otherwise?.(c, r));
  }

  call(n: Node): Fn | null {
    const proc = n.procedure as Node;
    if (proc.type !== 'variable' || !(SYNC_BUILTINS as readonly unknown[]).includes(proc.value)) return null;
    const def = this.fns[proc.value as (typeof SYNC_BUILTINS)[number]];
    const args = this.all(n.arguments);
    if (!args) return null;
    const impl = this.own[proc.value as string] ?? def.implementation;
    const plain = (PLAIN_ARGS[proc.value as string] ?? []).map((t) => t.replace('?', '').split(' '));
    const optional = PLAIN_ARGS[proc.value as string]?.filter((t) => t.endsWith('?')).length ?? 0;
    const asIs = args.length <= plain.length && args.length >= plain.length - optional;
    const signature = def.signature;
    const apply = (values: unknown[], c: unknown) => {
      const result = impl(...(signature ? signature.validate(values, c) : values));
      return result instanceof Promise ? bail() : result;
    };
    this.calls.set(n, { impl, plain: asIs ? plain.slice(0, args.length) : null, apply });
    return (c, r) => {
      const values: unknown[] = [];
      let plainArgs = asIs;
      for (let i = 0; i < args.length; i++) {
        const v = args[i]!(c, r);
        if (plainArgs && !plain[i]!.includes(typeof v)) plainArgs = false;
        values.push(v);
      }
      const validated = plainArgs || !signature ? values : signature.validate(values, c);
      const result = impl(...validated);
      return result instanceof Promise ? bail() : result;
    };
  }
}

/** A name step on one item: jsonata's fn.lookup (arrays are looked into, their results flattened). */
function name(key: string): Fn {
  const lookup = (input: unknown): unknown => {
    if (Array.isArray(input)) {
      const out = createSequence();
      for (const item of input) {
        const res = lookup(item);
        if (res === undefined) continue;
        if (Array.isArray(res)) for (const v of res) out.push(v);
        else out.push(res);
      }
      return out;
    }
    if (input !== null && typeof input === 'object' && !isFunction(input))
      return (input as Record<string, unknown>)[key];
    return undefined;
  };
  return (c) => collapse(lookup(c));
}

/** jsonata's evaluateStep (no tuples, no sort). */
function step(s: { fn: Fn; stages: Fn[] }, input: Seq, root: unknown, last: boolean): Seq {
  const result: unknown[] = [];
  for (const item of input) {
    let res = s.fn(item, root);
    for (const stage of s.stages) res = stage(res, root);
    if (res !== undefined) result.push(res);
  }
  if (last && result.length === 1 && Array.isArray(result[0]) && !isSequence(result[0])) return result[0] as Seq;
  const out = createSequence();
  for (const res of result) {
    if (!Array.isArray(res) || (res as Seq).cons) out.push(res);
    else for (const v of res) out.push(v);
  }
  return out;
}

/** jsonata's arithmetic on two values (evaluateNumericExpression); throws where jsonata must say why. */
const ARITHMETIC = new Set(['+', '-', '*', '/', '%']);
const ORDER = new Set(['<', '<=', '>', '>=']);

function arithmeticOf(op: string, a: unknown, b: unknown): unknown {
  if ((a !== undefined && !isNumeric(a)) || (b !== undefined && !isNumeric(b))) bail();
  if (a === undefined || b === undefined) return undefined;
  const x = a as number;
  const y = b as number;
  return op === '+' ? x + y : op === '-' ? x - y : op === '*' ? x * y : op === '/' ? x / y : x % y;
}

const COMPARABLE = new Set(['undefined', 'string', 'number']);

/** jsonata's `<`, `<=`, `>`, `>=` on two values (evaluateComparisonExpression). */
function compare(op: string, a: unknown, b: unknown): unknown {
  const ta = typeof a;
  const tb = typeof b;
  if (!COMPARABLE.has(ta) || !COMPARABLE.has(tb)) bail();
  if (a === undefined || b === undefined) return undefined;
  if (ta !== tb) bail();
  const x = a as number;
  const y = b as number;
  return op === '<' ? x < y : op === '<=' ? x <= y : op === '>' ? x > y : x >= y;
}

/** jsonata's `in` on two values (evaluateIncludesExpression). */
function within(a: unknown, b: unknown): boolean {
  if (a === undefined || b === undefined) return false;
  return Array.isArray(b) ? b.some((x) => x === a) : b === a;
}

/** jsonata's isDeepEqual. */
function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) && Array.isArray(b)) {
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  }
  const ka = Object.getOwnPropertyNames(a).sort();
  const kb = Object.getOwnPropertyNames(b).sort();
  if (ka.length !== kb.length || ka.some((k, i) => k !== kb[i])) return false;
  return ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]));
}

/**
 * Whether a string has a UTF-16 surrogate among its first `end` code units: without one, they are as many code points.
 * A loop: on the short strings of a row's fields it costs less than a regular expression's call.
 */
function hasSurrogate(str: string, end: number): boolean {
  for (let i = 0; i < end; i++) if ((str.charCodeAt(i) & 0xf800) === 0xd800) return true;
  return false;
}

/** The decimal numbers `$number` reads from a string: jsonata's own regular expression, made once here. */
const DECIMAL = /^-?[0-9]+(\.[0-9]+)?([Ee][-+]?[0-9]+)?$/;

/**
 * jsonata's own implementations, but for `$contains`, for the code-point counting of `$length` and `$substring` (an
 * array of the string's characters each call), done on the string itself when it has no surrogate pair, and for
 * `$number` of a number or a decimal string (jsonata's makes its regular expression at each call).
 */
function ownImplementations(fns: Builtins): Record<string, (...args: unknown[]) => unknown> {
  const length = fns.length.implementation;
  const substring = fns.substring.implementation;
  const number = fns.number.implementation;
  return {
    contains,
    number: (arg) => {
      if (typeof arg === 'number') return arg;
      // Both parseFloat and jsonata's isFinite(arg) read such a string as the same number.
      const n = typeof arg === 'string' && DECIMAL.test(arg) ? parseFloat(arg) : NaN;
      return Number.isFinite(n) ? n : number(arg);
    },
    length: (str) => (typeof str === 'string' && !hasSurrogate(str, str.length) ? str.length : length(str)),
    substring: (str, start, len) => {
      // From the start, only the code units it reaches need be code points (the rest is not counted).
      const reach = (start as number) >= 0 && len !== undefined ? (start as number) + (len as number) : Infinity;
      if (typeof str !== 'string' || hasSurrogate(str, Math.min(reach, str.length))) return substring(str, start, len);
      let from = start as number;
      if (str.length + from < 0) from = 0;
      if (len === undefined) return str.slice(from);
      if ((len as number) <= 0) return '';
      return str.slice(from, from >= 0 ? from + (len as number) : str.length + from + (len as number));
    },
  };
}

/** `$contains`, whose jsonata implementation is async (a matcher may be a lambda); the same rules, synchronously. */
function contains(str: unknown, token: unknown): unknown {
  if (str === undefined) return undefined;
  if (typeof token === 'string') return (str as string).includes(token);
  if (typeof token !== 'function') return bail();
  const m = (token as (s: unknown) => unknown)(str);
  if (m instanceof Promise) return bail();
  return m !== undefined;
}

/** A regex literal: jsonata's evaluateRegex matcher (what `$contains` calls); its `next` is left to jsonata. */
function regex(value: RegExp): Fn {
  const re = new RegExp(value);
  const matcher = (str: string, fromIndex?: number) => {
    re.lastIndex = fromIndex ?? 0;
    const m = re.exec(str);
    if (m === null) return undefined;
    return { match: m[0], start: m.index, end: m.index + m[0].length, groups: m.slice(1), next: bail };
  };
  return () => matcher;
}
