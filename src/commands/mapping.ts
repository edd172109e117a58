/** `product-sync mapping init`: a draft mapping for a new supplier sheet (issue 11). */
import { existsSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { ProductSyncError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { writingTo } from '../fs-errors.ts';
import { makeDir } from '../make-dir.ts';
import { MappingError, parseMapping } from '../pipeline/map/mapping.ts';
import { schemaRefFor } from '../onboarding/mapping-json-schema.ts';
import { draftName, mappingText, suggestMapping, type MappingDraft } from '../onboarding/suggest.ts';
import { checkSheetFile } from '../pipeline/read/read-sheet.ts';
import { openReference } from './reference-access.ts';
import { textTable } from './text-table.ts';

/** Flags of `mapping init` (src/cli.ts). */
export interface MappingInitFlags {
  target?: 'tradeItem' | 'manufacturedItem';
  language?: string;
  name?: string;
  sheet?: string;
  headerRow?: number;
  /** Where to write the draft (default `mappings/<name>.yaml`); `-` prints it. */
  out?: string;
  force?: boolean;
  sandbox?: boolean;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9._-]*$/;

/** A word as a shell reads it back: as is when safe, else single-quoted. */
const shellWord = (w: string): string => (/^[\w./:@%+=-]+$/.test(w) ? w : `'${w.replace(/'/g, `'\\''`)}'`);

/** The summary printed after a draft: each header → field and why, then the notes. */
export function formatDraftSummary(draft: MappingDraft, written: string): string {
  const rows = draft.columns
    .filter((c) => c.field || c.header.trim() !== '' || c.samples.length > 0)
    .map((c) => [
      String(c.position),
      c.header,
      c.field ? `${c.field}${c.type ? ` (${c.type})` : ''}` : '—',
      [c.reason, c.warning ? `CHECK: ${c.warning}` : ''].filter(Boolean).join('; '),
    ]);
  const mapped = draft.columns.filter((c) => c.field).length;
  const required = new Set((draft.missingRequired ?? []).map((m) => m.add));
  const notes = draft.notes.filter((n) => n !== draft.missingKey && !required.has(n));
  return [
    `Draft mapping ${written}: ${draft.target}, language ${draft.language} (${draft.languageReason ?? ''}), key ${draft.key}${draft.missingKey ? ' (NO GTIN COLUMN FOUND)' : ''}; ${mapped} of ${draft.columns.length} columns mapped`,
    // Which table was read: the worksheet (and the others a workbook has), the header row.
    draft.sheet !== undefined
      ? `Worksheet "${draft.sheet}"${draft.otherSheets?.length ? ` (of ${[draft.sheet, ...draft.otherSheets].map((n) => `"${n}"`).join(', ')}: --sheet <name> reads another)` : ''}, headers on row ${draft.headerRow}`
      : `Headers on row ${draft.headerRow}`,
    '',
    textTable(['col', 'header', 'field', 'why'], rows),
    ...(notes.length > 0 ? ['', ...notes.map((n) => `note: ${n}`)] : []),
    // Last before the problems, where it is read: without its key the draft cannot be used at all.
    ...(draft.missingKey
      ? ['', `No GTIN column found: ${draft.missingKey.replace(/^no GTIN column found: /, '')}`]
      : []),
    ...(draft.missingRequired ?? []).map((m) => `\nRequired field missing: ${m.add}`),
  ].join('\n');
}

/**
 * Writes a draft mapping for a sheet (never over an existing file without `--force`; `--out -` prints it) and prints
 * what each header became and why. List labels are checked against the reference API (`--sandbox`: the embedded
 * sandbox) when one is configured, else the check is skipped and a note says so. Exit 0 when the draft is a valid
 * mapping, 1 when it is written but needs an edit first (no key column, or a required field no column feeds: the
 * name, a manufactured item's supplier), 2 for bad input.
 */
export async function mappingInitCommand(file: string, flags: MappingInitFlags): Promise<number> {
  await checkSheetFile(file);
  const name = flags.name ?? draftName(file);
  if (!NAME.test(name))
    throw new ProductSyncError(
      'PS_ERR_CLI_USAGE',
      `--name "${name}" is not a mapping name (letters, digits, ".", "_" and "-", starting with a letter or digit)`,
    );
  const out = flags.out ?? `mappings/${name}.yaml`;
  const toStdout = out === '-';
  if (!toStdout && existsSync(out) && !flags.force) {
    throw new ProductSyncError(
      'PS_ERR_CLI_USAGE',
      `${out} already exists: --force overwrites it, --out <file> writes elsewhere, --out - prints the draft`,
    );
  }
  const access = await openReference({ sandbox: Boolean(flags.sandbox) });
  let draft: MappingDraft;
  try {
    draft = await suggestMapping(file, {
      ...(flags.target ? { target: flags.target } : {}),
      ...(flags.language ? { language: flags.language } : {}),
      ...(flags.sheet ? { sheet: flags.sheet } : {}),
      ...(flags.headerRow ? { headerRow: flags.headerRow } : {}),
      name,
      ...('unavailable' in access ? { labelsUnavailable: access.unavailable } : { labels: access.labels }),
    });
  } finally {
    if (!('unavailable' in access)) await access.close();
  }
  if (!('unavailable' in access) && !draft.notes.some((n) => n.startsWith('list labels not checked')))
    draft.notes.push(`list labels checked against ${access.where}`);
  const text = mappingText(draft, { schemaRef: toStdout ? '../schemas/mapping.schema.json' : schemaRefFor(out) });
  let problems: string | undefined;
  try {
    parseMapping(text, toStdout ? `${name}.yaml` : out);
  } catch (err) {
    if (!(err instanceof MappingError)) throw err;
    problems = err.message;
  }
  if (toStdout) process.stdout.write(text);
  else {
    await writingTo('cannot write the mapping', resolve(out), async () => {
      await makeDir(dirname(resolve(out)));
      await writeFile(out, text);
    });
  }
  const report = toStdout ? process.stderr : process.stdout;
  report.write(`${formatDraftSummary(draft, toStdout ? '(printed)' : out)}\n`);
  // A required field no column feeds: every row would fail, so the draft is not called usable.
  const required = (draft.missingRequired ?? []).map((m) => `- ${m.add}`);
  if (problems || required.length > 0) {
    report.write(
      `\nThe draft needs an edit before it can be used:\n${[problems, ...required].filter(Boolean).join('\n')}\n`,
    );
    return EXIT.rowsFailed;
  }
  const mappingArg = shellWord(toStdout || resolve(out) === resolve(`mappings/${name}.yaml`) ? name : out);
  // A draft checked against the sandbox is tried against it too: without the flag, validate needs a configured API.
  const sandbox = flags.sandbox ? ' --sandbox' : '';
  report.write(
    `\nNext: product-sync validate ${shellWord(file)} --mapping ${mappingArg} --preview${sandbox}\n      product-sync import ${shellWord(file)} --mapping ${mappingArg}${sandbox}\n`,
  );
  return EXIT.ok;
}
