import { checkSheetFile } from '../pipeline/read/read-sheet.ts';
import { previewSheet, type Preview, type PreviewField, type PreviewResolved } from '../pipeline/run/preview.ts';
import { commandContext } from '../runtime.ts';
import type { ImportFlags } from './import.ts';

/** Flags of `validate --preview [N] [--json]`. */
export interface PreviewFlags extends ImportFlags {
  /** The row count, or true for the default. */
  preview: number | true;
  json?: boolean;
}

/**
 * `product-sync validate <sheet> -m <mapping> --preview [N]`: the first N rows as they would be sent, as a table (or
 * JSON with --json) on stdout; exit 0 when every previewed row is valid, 1 when one has an error.
 */
export async function previewCommand(
  file: string,
  flags: PreviewFlags,
  out: NodeJS.WriteStream = process.stdout,
): Promise<number> {
  await checkSheetFile(file);
  const cc = await commandContext(flags);
  try {
    const p = await previewSheet(
      {
        file,
        mapping: flags.mapping,
        ...(typeof flags.preview === 'number' ? { rows: flags.preview } : {}),
        ...(cc.owner ? { owner: cc.owner } : {}),
        ...(flags.language ? { language: flags.language } : {}),
        ...(flags.sheet ? { sheet: flags.sheet } : {}),
      },
      cc.ctx,
    );
    out.write(
      flags.json ? `${JSON.stringify(p, null, 2)}\n` : formatPreview(p, out.isTTY ? (out.columns ?? 100) : 100),
    );
    return p.counts.invalid > 0 ? 1 : 0;
  } finally {
    await cc.close();
  }
}

const HEAD = ['field', 'column', 'sheet value', 'mapped', 'resolved'] as const;
const GAP = '  ';
const INDENT = '  ';
// Narrowest each column gets when the table does not fit: field paths and headers keep most of their text.
const MIN_WIDTH = [30, 12, 8, 8, 16] as const;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A value as one line of text: lists joined with ", ", objects as JSON, line breaks as spaces. */
function text(v: unknown): string {
  if (v === null || v === undefined) return '';
  if (Array.isArray(v)) return v.map(text).join(', ');
  const s = typeof v === 'object' ? JSON.stringify(v) : String(v);
  return s.replace(/\s*[\r\n]+\s*/g, ' ');
}

/**
 * A resolved label for the table: the reference's label and the id's first 8 digits (--json has them whole), ✓ for a
 * verified code.
 */
function resolvedText(r: PreviewResolved): string {
  if (r.problem === 'BRAND_WOULD_CREATE') return 'new brand';
  if (r.id === null) return `✗ ${r.problem ?? 'unresolved'}`;
  const id = UUID.test(r.id) ? r.id.slice(0, 8) : r.id;
  if (r.label === null) return r.code === r.id || r.code === undefined ? `${id} ✓` : `${r.code} [${id}]`;
  return `${r.label} [${id}]`;
}

function cells(f: PreviewField): string[] {
  return [
    f.field,
    f.column ?? '(default)',
    text(f.sheetValue),
    text(f.mapped),
    f.resolved ? f.resolved.map(resolvedText).join(', ') : '',
  ];
}

/** Column widths that fit `width`: natural widths, the widest column above its minimum shrunk first. */
function widths(rows: string[][], width: number): number[] {
  const w = HEAD.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const min = w.map((n, i) => Math.min(n, MIN_WIDTH[i]!));
  const avail = width - INDENT.length - GAP.length * (HEAD.length - 1);
  let total = w.reduce((a, b) => a + b, 0);
  while (total > avail) {
    let i = -1;
    for (let k = 0; k < w.length; k++) if (w[k]! > min[k]! && (i < 0 || w[k]! > w[i]!)) i = k;
    if (i < 0) break;
    w[i]!--;
    total--;
  }
  return w;
}

function fit(s: string, w: number): string {
  return s.length <= w ? s.padEnd(w) : `${s.slice(0, w - 1)}…`;
}

/** `s` in lines of at most `width` characters, after `first` on the first line and `hang` on the others. */
function wrap(first: string, s: string, width: number, hang: string): string[] {
  const lines: string[] = [];
  let line = first;
  for (const word of s.split(/\s+/).filter(Boolean)) {
    if (line.trim() !== '' && line.length + 1 + word.length > width) {
      lines.push(line);
      line = hang + word;
    } else line = line.trim() === '' ? line + word : `${line} ${word}`;
  }
  if (line.trim() !== '') lines.push(line);
  return lines.map((l) => (l.length > width ? `${l.slice(0, width - 1)}…` : l));
}

/**
 * The preview as text blocks, one per row (field | column | sheet value | mapped | resolved, then its issues), lines of
 * at most `width` characters.
 */
export function formatPreview(p: Preview, width = 100): string {
  const w = Math.max(60, width);
  const table = p.rows.map((r) => r.fields.map(cells));
  const cw = widths(table.flat(), w);
  const line = (c: readonly string[]) => (INDENT + c.map((x, i) => fit(x, cw[i]!)).join(GAP)).trimEnd();
  const out: string[] = [
    `preview of ${p.file}${p.sheet ? ` [${p.sheet}]` : ''} — mapping ${p.mapping} (${p.target}, ${p.language})`,
    '',
  ];
  p.rows.forEach((r, i) => {
    const errors = r.issues.filter((x) => x.severity === 'error').length;
    const warnings = r.issues.length - errors;
    const tally = [
      errors ? `${errors} error${errors > 1 ? 's' : ''}` : '',
      warnings ? `${warnings} warning${warnings > 1 ? 's' : ''}` : '',
    ]
      .filter(Boolean)
      .join(', ');
    out.push(
      `row ${r.row} · key ${r.key ?? '—'} · ${r.outcome === 'valid' ? 'valid' : 'INVALID'}${tally ? ` (${tally})` : ''}`,
    );
    out.push(line(HEAD), line(cw.map((n) => '─'.repeat(n))));
    for (const c of table[i]!) out.push(line(c));
    for (const x of r.issues) {
      const where = [x.column, x.value === null ? '' : JSON.stringify(x.value)].filter(Boolean).join(' ');
      out.push(
        ...wrap(
          INDENT,
          `${x.severity === 'error' ? 'error  ' : 'warning'} ${x.code}${where ? ` ${where}` : ''}: ${x.message}`,
          w,
          INDENT.repeat(3),
        ),
      );
    }
    out.push('');
  });
  out.push(
    `${p.counts.rows} row${p.counts.rows === 1 ? '' : 's'} previewed: ${p.counts.valid} valid, ${p.counts.invalid} invalid${p.more ? ' (the sheet has more rows)' : ''}`,
  );
  for (const n of p.notes) out.push(...wrap('-', n, w, '  '));
  return `${out.join('\n')}\n`;
}
