// `product-sync lists` (issue 11): the lookups a mapping can name, and one reference list's labels and codes.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { LIST_NAMES, LOOKUPS } from '../src/api/fields.ts';
import { listsCommand } from '../src/commands/lists.ts';
import { cliInProcess } from './helpers/cli.ts';

/** Runs `listsCommand` and returns what it printed. */
async function lists(
  name: string | undefined,
  flags: Parameters<typeof listsCommand>[1],
): Promise<{ code: number; text: string }> {
  // No API configured, whatever the shell running the tests has set: only --sandbox reaches one.
  const env = { LANGUAGE_CODE: 'en-US' };
  const out = new PassThrough();
  let text = '';
  out.on('data', (d: Buffer) => (text += d.toString()));
  const code = await listsCommand(name, flags, out, env);
  return { code, text };
}

/** The CLI in-process, in an empty directory, with no API configured. */
const cli = (args: string[]) =>
  cliInProcess(args, {
    cwd: mkdtempSync(join(tmpdir(), 'ps-lists-')),
    unset: ['PRODUCT_API_URL', 'REFERENCE_API_URL', 'API_TOKEN', 'REDIS_URL'],
    env: { LOG_LEVEL: 'error' },
  });

describe('product-sync lists', () => {
  it('without a name: the 16 lists and the lookup kinds, without any API', async () => {
    const { code, text } = await lists(undefined, {});
    expect(code).toBe(0);
    for (const l of LIST_NAMES) expect(text).toMatch(new RegExp(`^${l} +\\{ list: ${l} \\}`, 'm'));
    for (const k of LOOKUPS) expect(text).toMatch(new RegExp(`^${k.kind} +\\{ kind: ${k.kind} \\}`, 'm'));
    expect(text).toMatch(/^trade-item-status .*tradeItemStatusId/m);
    const json = JSON.parse((await lists(undefined, { json: true })).text) as {
      lists: { name: string }[];
      kinds: unknown[];
    };
    expect(json.lists.map((l) => l.name)).toEqual([...LIST_NAMES]);
    expect(json.kinds).toHaveLength(LOOKUPS.length);
  });

  it("with a name: the list's labels in the language, codes and ids, from the sandbox", async () => {
    const { code, text } = await lists('trade-item-status', { sandbox: true, language: 'fr-FR' });
    expect(code).toBe(0);
    expect(text).toMatch(/^trade-item-status: 4 items in fr-FR, fr, en-US/);
    expect(text).toMatch(/^Actif +ACTIVE +fr-FR +[0-9a-f-]{36}$/m);
    expect(text).toMatch(/^Brouillon +DRAFT +fr-FR +[0-9a-f-]{36}$/m);
    const en = await lists('trade-item-status', { sandbox: true, language: 'en-US' });
    expect(en.text).toMatch(/^Active +ACTIVE +en-US/m);
  });

  it('labels a language lacks come from the fallback language, marked', async () => {
    const { text } = await lists('origin-type', { sandbox: true, language: 'fr-FR' });
    expect(text).toMatch(/^Pays d’origine +COUNTRY_OF_ORIGIN +fr-FR /m);
    expect(text).toMatch(/^Packed in +PACKED_IN +en-US \* /m);
    expect(text).toMatch(/1 label is in a fallback language/);
    const json = JSON.parse((await lists('origin-type', { sandbox: true, language: 'fr-FR', json: true })).text) as {
      items: { code: string; language: string; fallback: boolean }[];
    };
    expect(json.items.find((i) => i.code === 'PACKED_IN')).toMatchObject({ language: 'en-US', fallback: true });
  });

  it('a lookup kind or an unknown name is refused with why (exit 2), before any API is needed', async () => {
    await expect(lists('countries', {})).rejects.toThrow(/single-record lookup .* by id only/);
    await expect(lists('trade-item-statuses', {})).rejects.toThrow(
      /unknown list "trade-item-statuses" \(did you mean trade-item-status\?\)/,
    );
    await expect(lists('trade-item-status', {})).rejects.toMatchObject({ code: 'PS_ERR_CONFIG_INVALID' });
  });

  it("the CLI prints a list's labels (embedded sandbox) and exits 2 on an unknown list", async () => {
    const [ok, bad] = await Promise.all([
      cli(['lists', 'trade-item-status', '--sandbox', '--language', 'fr-FR']),
      cli(['lists', 'nope']),
    ]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^Inactif +INACTIVE +fr-FR/m);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/unknown list "nope".*\[PS_ERR_CLI_USAGE\]/);
  }, 60_000);
});
