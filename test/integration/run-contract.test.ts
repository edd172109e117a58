import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { useSandbox } from '../helpers/sandbox.ts';

const owner = DEMO_COMPANY_ID;
const sandbox = useSandbox();

/** The CLI in-process, without Redis. */
const cli = (args: string[], env: Record<string, string>) =>
  cliInProcess(args, { env: { REDIS_URL: '', LOG_LEVEL: 'silent', ...env } });

const apiEnv = (dir: string, token = 'sandbox-token') => ({
  PRODUCT_API_URL: sandbox.url,
  REFERENCE_API_URL: sandbox.url,
  API_TOKEN: token,
  REPORT_DIR: join(dir, 'reports'),
});
const summaries = (dir: string) =>
  readdirSync(join(dir, 'reports'))
    .filter((d) => existsSync(join(dir, 'reports', d, 'summary.json')))
    .map((d) => JSON.parse(readFileSync(join(dir, 'reports', d, 'summary.json'), 'utf8')));

/**
 * A sheet with brands (created on demand): rows 2 and 4 have a wrong check digit, rows 3 and 5 an unknown status label.
 */
function brandSheet(dir: string): { file: string; mapping: string } {
  const lines = ['GTIN;Désignation;Marque;Statut'];
  for (let i = 0; i < 6; i++) {
    const g = testGtin(i, '036000');
    const gtin = i === 1 || i === 3 ? g.slice(0, -1) + String((Number(g.at(-1)) + 1) % 10) : g;
    lines.push(`${gtin};Produit ${i};Marque ${i};${i === 2 || i === 4 ? 'Nope' : 'Actif'}`);
  }
  const file = join(dir, 'brands.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const mapping = join(dir, 'brands.yaml');
  writeFileSync(
    mapping,
    `name: brands\ntarget: tradeItem\nownerCompanyId: ${owner}\nlanguage: fr-FR\nkey: gtin\ncolumns:\n  - { column: GTIN, field: gtin, type: gtin }\n  - { column: Désignation, field: tradeItemName }\n  - { column: Marque, field: brandId, lookup: { brand: { create: true } } }\n  - { column: Statut, field: tradeItemStatusId, lookup: { list: trade-item-status } }\n`,
  );
  return { file, mapping };
}

describe('the run contract', () => {
  it('prints its version', async () => {
    const r = await cli(['--version'], {});
    expect(r.code).toBe(0);
    expect(r.stdout.trim()).toBe(JSON.parse(readFileSync('package.json', 'utf8')).version);
  });

  it('refuses an owner that is not a uuid before reading or sending anything (exit 2)', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-contract-'));
    const { file, mapping } = brandSheet(dir);
    const before = sandbox.handle.counts().writes;
    const r = await cli(['import', file, '--mapping', mapping, '--owner', 'not-a-uuid'], apiEnv(dir));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/owner company "not-a-uuid" is not a uuid/);
    expect(sandbox.handle.counts().writes).toBe(before);
    expect(sandbox.handle.store.dump().brands).toHaveLength(0);
  }, 60_000);

  it('creates brands only for rows that are otherwise valid', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-contract-'));
    const { file, mapping } = brandSheet(dir);
    const r = await cli(['import', file, '--mapping', mapping], apiEnv(dir));
    expect(r.code).toBe(1);
    const brands = sandbox.handle.store
      .dump()
      .brands.map((b) => b.name)
      .sort();
    // Rows 0 and 5 are valid; 1 and 3 fail validation, 2 and 4 a lookup resolved before the brand.
    expect(brands).toEqual(['Marque 0', 'Marque 5']);
  }, 60_000);

  it('refuses a mapping that feeds createdBy unless API_CREDENTIAL_INTERNAL says the credential is internal', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-contract-'));
    const { file, mapping } = writeProductSheet(dir, 3, { owner });
    writeFileSync(mapping, `${readFileSync(mapping, 'utf8')}defaults:\n  createdBy: importer\n`);
    const refused = await cli(['import', file, '--mapping', mapping], apiEnv(dir));
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/createdBy.*API_CREDENTIAL_INTERNAL/);
    expect(sandbox.handle.counts().writes).toBe(0);
    const internal = await cli(['import', file, '--mapping', mapping], {
      ...apiEnv(dir, 'sandbox-internal-token'),
      API_CREDENTIAL_INTERNAL: 'true',
    });
    expect(internal.code, internal.stderr).toBe(0);
    expect(sandbox.handle.store.dump().tradeItems).toHaveLength(3);
  }, 60_000);

  it('a credential rejected while preparing: exit 3, the run id printed, summary.json lists every row not_attempted', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-contract-'));
    const { file, mapping } = writeProductSheet(dir, 30, { owner });
    const r = await cli(['import', file, '--mapping', mapping], apiEnv(dir, 'wrong-token'));
    expect(r.code).toBe(3);
    const [s] = summaries(dir);
    expect(r.stdout).toContain(s.runId);
    expect(s.counts).toMatchObject({ rows: 30, notAttempted: 30 });
    expect(s.aborted).toMatch(/401/);
    const rows = readFileSync(join(dir, 'reports', s.runId, 'rows.csv'), 'utf8')
      .trim()
      .split(/\r?\n/)
      .slice(1);
    expect(rows).toHaveLength(30);
    for (const l of rows) expect(l).toContain('not_attempted');
  }, 60_000);

  it('validate calls valid rows valid; reconcile prints in-sync / differ / missing counts, exits 1 on differences, 4 on invalid rows alone', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-contract-'));
    const base = writeProductSheet(dir, 5, { owner });
    const v = await cli(['validate', base.file, '--mapping', base.mapping], apiEnv(dir));
    expect(v.code).toBe(0);
    expect(v.stdout).toMatch(/rows 5: valid 5, invalid 0/);
    expect(readFileSync(join(dir, 'reports', summaries(dir)[0].runId, 'rows.csv'), 'utf8')).toMatch(/,valid,/);

    expect((await cli(['import', base.file, '--mapping', base.mapping], apiEnv(dir))).code).toBe(0);
    const same = await cli(['reconcile', base.file, '--mapping', base.mapping], apiEnv(dir));
    expect(same.code).toBe(0);
    expect(same.stdout).toMatch(/in sync 5, differ 0, missing in the API 0, invalid 0; items missing from the sheet 0/);
    // 1 renamed, 1 dropped from the sheet, 1 new in it.
    const changed = writeProductSheet(dir, 5, {
      owner,
      file: 'changed.csv',
      prefix: '035000',
      name: (i) => (i === 0 ? 'Renamed' : `Biscuits au beurre ${i}`),
    });
    const text = readFileSync(changed.file, 'utf8').split('\n');
    text[5] = `${testGtin(7)};New;100;g`;
    writeFileSync(changed.file, text.join('\n'));
    const diff = await cli(['reconcile', changed.file, '--mapping', changed.mapping], apiEnv(dir));
    expect(diff.code).toBe(1);
    expect(diff.stdout).toMatch(/in sync 3, differ 1, missing in the API 1, invalid 0; items missing from the sheet 1/);
    expect(
      (await cli(['reconcile', changed.file, '--mapping', changed.mapping, '--no-fail-on-diff'], apiEnv(dir))).code,
    ).toBe(0);

    // Invalid rows are the only problem: 4, with or without --no-fail-on-diff; with differences too, 1.
    const invalid = join(dir, 'invalid.csv');
    writeFileSync(invalid, `${readFileSync(base.file, 'utf8')}3760987652002;Bad check digit;100;g\n`);
    const inv = await cli(['reconcile', invalid, '--mapping', base.mapping], apiEnv(dir));
    expect(inv.code, inv.stderr).toBe(4);
    expect(inv.stdout).toMatch(/in sync 5, differ 0, missing in the API 0, invalid 1; items missing from the sheet 0/);
    expect((await cli(['reconcile', invalid, '--mapping', base.mapping, '--no-fail-on-diff'], apiEnv(dir))).code).toBe(
      4,
    );
    writeFileSync(changed.file, `${text.join('\n')}3760987652002;Bad check digit;100;g\n`);
    expect((await cli(['reconcile', changed.file, '--mapping', changed.mapping], apiEnv(dir))).code).toBe(1);
    expect(
      (await cli(['reconcile', changed.file, '--mapping', changed.mapping, '--no-fail-on-diff'], apiEnv(dir))).code,
    ).toBe(4);
  }, 120_000);
});
