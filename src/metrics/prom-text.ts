/**
 * Merging pages of the Prometheus text format (version 0.0.4) into one valid page: BullMQ writes a whole page per
 * queue (`exportPrometheusMetrics`), each with its own HELP and TYPE lines, and prom-client writes its registry's. A
 * metric may have one HELP and one TYPE line, and its samples must stand together after them: the pages are read into
 * families, merged by name, and written out again, each sample's labels in one form (`a="x",b="y"`), ending with a
 * newline.
 */

/** One sample line: the name (with its `_bucket`/`_sum`/`_count` suffix), its labels as written, its value. */
interface Sample {
  name: string;
  labels: [string, string][];
  value: string;
  timestamp?: string;
}

/** A metric family: its name, HELP, TYPE and samples. */
interface Family {
  name: string;
  help?: string;
  type?: string;
  samples: Sample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+(-?\d+))?\s*$/;
const LABEL = /\s*([a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"((?:[^"\\]|\\.)*)"\s*(,|$)/y;
const SUFFIXES: Record<string, string[]> = {
  histogram: ['_bucket', '_sum', '_count'],
  summary: ['_sum', '_count'],
};

function parseLabels(text: string, line: string): [string, string][] {
  const labels: [string, string][] = [];
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < text.length) {
    const at = LABEL.lastIndex;
    const m = LABEL.exec(text);
    if (!m) {
      if (text.slice(at).trim() === '') break;
      throw new Error(`unreadable labels in metrics line: ${line}`);
    }
    labels.push([m[1]!, m[2]!]);
  }
  return labels;
}

/** The family a sample named `name` belongs to, given the family being read. */
function familyOf(name: string, current: Family | undefined): string {
  if (!current) return name;
  if (name === current.name) return name;
  const suffixes = SUFFIXES[current.type ?? ''] ?? [];
  return suffixes.some((s) => name === current.name + s) ? current.name : name;
}

/** Reads pages of the text format into families, merged by name in order of first appearance. */
export function mergeFamilies(pages: readonly string[]): Map<string, Family> {
  const families = new Map<string, Family>();
  const get = (name: string): Family => {
    let f = families.get(name);
    if (!f) families.set(name, (f = { name, samples: [] }));
    return f;
  };
  for (const page of pages) {
    let current: Family | undefined;
    for (const raw of page.split('\n')) {
      const line = raw.trim();
      if (line === '') continue;
      const meta = /^#\s*(HELP|TYPE)\s+([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\s+(.*))?$/.exec(line);
      if (meta) {
        current = get(meta[2]!);
        if (meta[1] === 'HELP') current.help ??= meta[3] ?? '';
        else current.type ??= meta[3] ?? 'untyped';
        continue;
      }
      if (line.startsWith('#')) continue;
      const m = SAMPLE.exec(line);
      if (!m) throw new Error(`unreadable metrics line: ${line}`);
      const family = familyOf(m[1]!, current);
      if (family !== current?.name) current = get(family);
      current.samples.push({
        name: m[1]!,
        labels: m[2] ? parseLabels(m[2], line) : [],
        value: m[3]!,
        ...(m[4] ? { timestamp: m[4] } : {}),
      });
    }
  }
  return families;
}

/** Writes families as one page: per family its HELP, TYPE and samples, ending with a newline. */
export function renderFamilies(families: Iterable<Family>): string {
  const out: string[] = [];
  for (const f of families) {
    if (f.help !== undefined) out.push(`# HELP ${f.name} ${f.help}`);
    if (f.type !== undefined) out.push(`# TYPE ${f.name} ${f.type}`);
    for (const s of f.samples) {
      const labels = s.labels.length ? `{${s.labels.map(([k, v]) => `${k}="${v}"`).join(',')}}` : '';
      out.push(`${s.name}${labels} ${s.value}${s.timestamp ? ` ${s.timestamp}` : ''}`);
    }
  }
  return out.length ? `${out.join('\n')}\n` : '';
}

/** Several pages of the text format as one valid page. */
export function mergePages(pages: readonly string[]): string {
  return renderFamilies(mergeFamilies(pages).values());
}

/** A label value escaped for the text format. */
export function labelValue(v: string): string {
  return v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

/** One gauge family as text: HELP, TYPE and a sample per entry (labels, value). */
export function gaugeText(name: string, help: string, samples: readonly [Record<string, string>, number][]): string {
  const lines = [`# HELP ${name} ${help}`, `# TYPE ${name} gauge`];
  for (const [labels, value] of samples) {
    const l = Object.entries(labels).map(([k, v]) => `${k}="${labelValue(v)}"`);
    lines.push(`${name}${l.length ? `{${l.join(',')}}` : ''} ${value}`);
  }
  return `${lines.join('\n')}\n`;
}
