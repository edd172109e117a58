// A strict reader of the Prometheus text format 0.0.4, written from the format's description (not from src/): it
// throws on anything a Prometheus server would refuse or read differently — a second HELP or TYPE of a metric, a TYPE
// after its samples, a metric's samples split apart, the same series twice, bad names, escapes or values, histogram
// buckets out of order or without +Inf, a page without its final newline. Where promtool is installed, the page is also
// checked by it (`promtool check metrics`, Prometheus's own parser).
import { spawnSync } from 'node:child_process';

export interface PromSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}
export interface PromFamily {
  type: string;
  help?: string;
  samples: PromSample[];
}

const METRIC = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

function parseValue(s: string, line: string): number {
  if (s === 'NaN') return NaN;
  if (s === '+Inf' || s === 'Inf') return Infinity;
  if (s === '-Inf') return -Infinity;
  if (!/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(s)) throw new Error(`bad value "${s}" in: ${line}`);
  return Number(s);
}

/** Reads `{a="x",b="y"}` from `s` at `i` (just after the `{`); returns the labels and the index after the `}`. */
function parseLabels(s: string, i: number, line: string): [Record<string, string>, number] {
  const labels: Record<string, string> = {};
  const fail = (why: string) => {
    throw new Error(`${why} in: ${line}`);
  };
  for (;;) {
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (s[i] === '}') return [labels, i + 1];
    const start = i;
    while (i < s.length && /[a-zA-Z0-9_]/.test(s[i]!)) i++;
    const name = s.slice(start, i);
    if (!LABEL_NAME.test(name) || name.startsWith('__')) fail(`bad label name "${name}"`);
    if (name in labels) fail(`label "${name}" twice`);
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (s[i++] !== '=') fail('expected =');
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (s[i++] !== '"') fail('expected "');
    let value = '';
    for (;;) {
      const c = s[i++];
      if (c === undefined) fail('unterminated label value');
      if (c === '"') break;
      if (c === '\n') fail('newline in label value');
      if (c === '\\') {
        const e = s[i++];
        if (e === '\\') value += '\\';
        else if (e === '"') value += '"';
        else if (e === 'n') value += '\n';
        else fail(`bad escape \\${e}`);
      } else value += c;
    }
    labels[name] = value;
    while (s[i] === ' ' || s[i] === '\t') i++;
    if (s[i] === ',') i++;
    else if (s[i] !== '}') fail('expected , or }');
  }
}

/** Parses a page strictly; throws naming the first problem. */
export function parsePromStrict(text: string): Map<string, PromFamily> {
  if (!text.endsWith('\n')) throw new Error('the page does not end with a newline');
  if (text.includes('\r')) throw new Error('carriage return in the page');
  const families = new Map<string, PromFamily>();
  const helpSeen = new Set<string>();
  const typeSeen = new Set<string>();
  const closed = new Set<string>();
  const series = new Set<string>();
  let current: string | undefined;
  const enter = (name: string) => {
    if (current === name) return;
    if (closed.has(name)) throw new Error(`the samples of ${name} are not together`);
    if (current !== undefined) closed.add(current);
    current = name;
  };
  const family = (name: string) => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { type: 'untyped', samples: [] }));
    return f;
  };
  for (const line of text.slice(0, -1).split('\n')) {
    if (line.trim() === '') continue;
    if (line.startsWith('#')) {
      const m = /^#[ \t]+(HELP|TYPE)[ \t]+(\S+)(?:[ \t]+(.*))?$/.exec(line);
      if (!m) continue; // a comment
      const [, kind, name, rest = ''] = m as unknown as [string, string, string, string | undefined];
      if (!METRIC.test(name)) throw new Error(`bad metric name in: ${line}`);
      enter(name);
      if (kind === 'HELP') {
        if (helpSeen.has(name)) throw new Error(`second HELP of ${name}`);
        helpSeen.add(name);
        if (/\\[^\\n]/.test(rest.replace(/\\\\/g, ''))) throw new Error(`bad escape in HELP of ${name}`);
        family(name).help = rest;
      } else {
        if (typeSeen.has(name)) throw new Error(`second TYPE of ${name}`);
        if (family(name).samples.length > 0) throw new Error(`TYPE of ${name} after its samples`);
        if (!TYPES.has(rest)) throw new Error(`unknown TYPE "${rest}" of ${name}`);
        typeSeen.add(name);
        family(name).type = rest;
      }
      continue;
    }
    const nm = /^[a-zA-Z_:][a-zA-Z0-9_:]*/.exec(line);
    if (!nm) throw new Error(`bad sample line: ${line}`);
    const name = nm[0];
    let i = name.length;
    let labels: Record<string, string> = {};
    if (line[i] === '{') [labels, i] = parseLabels(line, i + 1, line);
    const rest = line
      .slice(i)
      .trim()
      .split(/[ \t]+/);
    if (rest.length < 1 || rest.length > 2 || rest[0] === '') throw new Error(`bad sample line: ${line}`);
    const value = parseValue(rest[0]!, line);
    if (rest[1] !== undefined && !/^-?\d+$/.test(rest[1])) throw new Error(`bad timestamp in: ${line}`);
    const base = name.replace(/_(bucket|sum|count)$/, '');
    const fam = base !== name && ['histogram', 'summary'].includes(families.get(base)?.type ?? '') ? base : name;
    const f = family(fam);
    enter(fam);
    if (f.type === 'counter' && !(value >= 0)) throw new Error(`negative counter in: ${line}`);
    const key = `${name}${JSON.stringify(Object.entries(labels).sort())}`;
    if (series.has(key)) throw new Error(`the same series twice: ${line}`);
    series.add(key);
    f.samples.push({ name, labels, value });
  }
  for (const [name, f] of families) if (f.type === 'histogram') checkHistogram(name, f);
  return families;
}

function checkHistogram(name: string, f: PromFamily): void {
  const groups = new Map<string, PromSample[]>();
  for (const s of f.samples) {
    const { le: _le, ...rest } = s.labels;
    const k = JSON.stringify(Object.entries(rest).sort());
    groups.set(k, [...(groups.get(k) ?? []), s]);
  }
  for (const [k, samples] of groups) {
    const buckets = samples.filter((s) => s.name === `${name}_bucket`);
    const count = samples.find((s) => s.name === `${name}_count`);
    if (!samples.some((s) => s.name === `${name}_sum`) || !count)
      throw new Error(`${name}${k}: _sum or _count missing`);
    const les = buckets.map((b) => parseValue(b.labels.le ?? '', `${name} le`));
    if (les.at(-1) !== Infinity) throw new Error(`${name}${k}: no +Inf bucket`);
    for (let i = 1; i < buckets.length; i++) {
      if (!(les[i]! > les[i - 1]!)) throw new Error(`${name}${k}: buckets out of order`);
      if (buckets[i]!.value < buckets[i - 1]!.value) throw new Error(`${name}${k}: buckets not cumulative`);
    }
    if (buckets.at(-1)!.value !== count.value) throw new Error(`${name}${k}: +Inf bucket differs from _count`);
  }
}

/**
 * `promtool check metrics` of the page when promtool is installed: its complaints (empty: none), or null without it.
 * One naming lint is left out: BullMQ's own gauge is called `bullmq_job_count`, a name promtool's style guide would
 * keep for histograms; it is BullMQ's name, kept as BullMQ exports it.
 */
export function promtoolCheck(text: string): string | null {
  const r = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (r.error) return null;
  if (r.status === 0) return '';
  const lines = `${r.stdout}${r.stderr}`.split('\n').filter((l) => l.trim() !== '');
  return lines
    .filter((l) => !/^bullmq_job_count non-histogram and non-summary metrics should not have "_count" suffix$/.test(l))
    .join('\n');
}

/** One sample's value by name and labels (all of them given), undefined when absent. */
export function sampleValue(
  families: Map<string, PromFamily>,
  name: string,
  labels: Record<string, string> = {},
): number | undefined {
  for (const f of families.values())
    for (const s of f.samples)
      if (
        s.name === name &&
        Object.keys(s.labels).length === Object.keys(labels).length &&
        Object.entries(labels).every(([k, v]) => s.labels[k] === v)
      )
        return s.value;
  return undefined;
}
