/** `product-sync lists [name]`: the reference lists a mapping's lookups name, and one list's labels and codes. */
import { LIST_NAMES, LOOKUPS, type ListName } from '../api/fields.ts';
import { ProductSyncError } from '../errors.ts';
import { EXIT } from '../exit-codes.ts';
import { FIELD_ALIASES } from '../onboarding/header-aliases.ts';
import { closest } from '../pipeline/map/mapping.ts';
import { languageChain } from '../pipeline/resolve/reference-resolver.ts';
import { openReference } from './reference-access.ts';
import { textTable } from './text-table.ts';

/** Flags of `lists` (src/cli.ts). */
export interface ListsFlags {
  language?: string;
  json?: boolean;
  sandbox?: boolean;
}

/**
 * The lookups a mapping can name: the 16 lists, the single-record kinds, harmonized codes and brands, with the fields
 * that usually take them.
 */
export function lookupCatalog(): {
  lists: { name: ListName; lookup: string; fields: string[] }[];
  kinds: { kind: string; lookup: string }[];
  others: { lookup: string; field: string; what: string }[];
} {
  const fieldsOf = (list: string) =>
    FIELD_ALIASES.filter(
      (a) => a.lookup && typeof a.lookup === 'object' && 'list' in a.lookup && a.lookup.list === list,
    ).map((a) => a.field);
  return {
    lists: LIST_NAMES.map((name) => ({ name, lookup: `{ list: ${name} }`, fields: fieldsOf(name) })),
    kinds: LOOKUPS.map((l) => ({ kind: l.kind, lookup: `{ kind: ${l.kind} }` })),
    others: [
      { lookup: 'harmonized-code', field: 'harmonizedCode', what: 'a harmonized (HS) code, verified' },
      {
        lookup: '{ brand: { create: true } }',
        field: 'brandId',
        what: "a brand name: the owner's brand id (created when missing)",
      },
    ],
  };
}

function catalogText(): string {
  const c = lookupCatalog();
  return [
    "Reference lists (lookup: { list: <name> }; `product-sync lists <name>` prints a list's labels and codes):",
    '',
    textTable(
      ['list', 'lookup', 'usual field'],
      c.lists.map((l) => [l.name, l.lookup, l.fields.join(', ')]),
    ),
    '',
    "Single-record lookups (lookup: { kind: <kind> }; the cell holds the record's id, which is verified):",
    '',
    textTable(
      ['kind', 'lookup'],
      c.kinds.map((k) => [k.kind, k.lookup]),
    ),
    '',
    'Other lookups:',
    '',
    textTable(
      ['lookup', 'field', 'resolves'],
      c.others.map((o) => [o.lookup, o.field, o.what]),
    ),
  ].join('\n');
}

/**
 * Refuses a name that is no list: a single-record kind says why it cannot be listed, another name gets the closest
 * list.
 */
function listName(name: string): ListName {
  if ((LIST_NAMES as readonly string[]).includes(name)) return name as ListName;
  if (LOOKUPS.some((l) => l.kind === name)) {
    throw new ProductSyncError(
      'PS_ERR_CLI_USAGE',
      `${name} is a single-record lookup (lookup: { kind: ${name} }): the reference API looks its records up by id only, it has no list to print`,
    );
  }
  const near = closest(name, LIST_NAMES);
  throw new ProductSyncError(
    'PS_ERR_CLI_USAGE',
    `unknown list "${name}"${near ? ` (did you mean ${near}?)` : ''}; the lists are: ${LIST_NAMES.join(', ')}`,
  );
}

/**
 * Without a name, prints the lookups a mapping can use (no API needed); with one, the list's items — label (in the
 * language, else a fallback language of its chain, marked), code and id — from the reference API (`--sandbox`: the
 * embedded sandbox). `--json` prints the same as JSON.
 */
export async function listsCommand(
  name: string | undefined,
  flags: ListsFlags,
  out: NodeJS.WritableStream = process.stdout,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  if (name === undefined) {
    out.write(flags.json ? `${JSON.stringify(lookupCatalog(), null, 2)}\n` : `${catalogText()}\n`);
    return EXIT.ok;
  }
  const list = listName(name);
  const access = await openReference({ sandbox: Boolean(flags.sandbox) }, env);
  if ('unavailable' in access)
    throw new ProductSyncError('PS_ERR_CONFIG_INVALID', `product-sync lists ${list}: ${access.unavailable}`);
  try {
    const chain = languageChain(flags.language ?? access.language);
    const items = await access.labels.list(list, chain);
    if (flags.json) {
      out.write(`${JSON.stringify({ list, languages: chain, items }, null, 2)}\n`);
      return EXIT.ok;
    }
    const rows = items.map((i) => [i.name, i.code, i.fallback ? `${i.language} *` : i.language, i.id]);
    const fallbacks = items.filter((i) => i.fallback).length;
    out.write(
      [
        `${list}: ${items.length} item${items.length === 1 ? '' : 's'} in ${chain.join(', ')} (from ${access.where}); a mapping names it lookup: { list: ${list} }, and a cell may hold a label or a code`,
        '',
        items.length > 0
          ? textTable(['label', 'code', 'language', 'id'], rows)
          : '(no item has a label in these languages)',
        ...(fallbacks > 0
          ? [
              '',
              `* ${fallbacks} label${fallbacks === 1 ? ' is' : 's are'} in a fallback language: the list has no ${chain[0]} label for ${fallbacks === 1 ? 'that item' : 'those items'}`,
            ]
          : []),
      ].join('\n') + '\n',
    );
    return EXIT.ok;
  } finally {
    await access.close();
  }
}
