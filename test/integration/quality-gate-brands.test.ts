// A held run writes nothing (issue 38 item 3), brands included: through the CLI against the sandbox, an import whose
// mapping creates brands (`lookup: { brand: { create: true } }`) plans a new brand while its gate is undecided and
// creates it only once the gate lets the run write — once, every item linked to it — also when the run is killed
// around that create and run again. Held, the sandbox has no new brand and the report says which rows name one.
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { cliInProcess, spawnCli } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { fenceHold } from '../helpers/lease-runs.ts';
import { testGtin } from '../helpers/sheets.ts';
import { COLUMNS, tradeItemMapping } from '../helpers/mappings.ts';
import { until } from '../helpers/wait.ts';

let sandbox: RunningSandbox;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
});
afterAll(async () => {
  await sandbox?.close();
});

const BRAND = '  - { column: Marque, field: brandId, lookup: { brand: { create: true } } }';

/**
 * A sheet of `rows` rows from GTIN `offset`, the first `invalid` with a wrong check digit, every row naming the brand
 * `brand` (the first in capitals: the same brand); its mapping creates brands, under `gate`.
 */
function setup(gate: string, rows: number, invalid: number, offset: number, brand: string) {
  const dir = mkdtempSync(join(tmpdir(), 'ps-gate-brands-'));
  const mapping = join(dir, 'm.yaml');
  writeFileSync(mapping, tradeItemMapping('gate-brands', DEMO_COMPANY_ID, [COLUMNS.gtin, COLUMNS.name, BRAND], gate));
  const lines = ['GTIN;Désignation;Marque'];
  for (let i = 0; i < rows; i++) {
    const g = testGtin(offset + i);
    const gtin = i < invalid ? g.slice(0, -1) + String((Number(g.at(-1)) + 1) % 10) : g;
    lines.push(`${gtin};Sablés ${i};${i === 0 ? brand.toUpperCase() : brand}`);
  }
  const file = join(dir, 'sheet.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  // Chunks of 3 rows: a brand named in several chunks is created once, and linked in each.
  return { dir, file, mapping, env: inlineEnv(sandbox.url, dir, { CHUNK_SIZE: '3' }) };
}

const brandsNamed = (name: string) =>
  [...sandbox.handle.store.brands.values()].filter(
    (b) => b.companyId === DEMO_COMPANY_ID && b.name.toLowerCase() === name.toLowerCase(),
  );

/** The sandbox's items of GTINs `offset`…`offset + rows - 1`, by GTIN. */
function items(offset: number, rows: number) {
  const wanted = new Set(Array.from({ length: rows }, (_, i) => `0${testGtin(offset + i)}`));
  return [...sandbox.handle.store.tradeItems.values()].filter((t) => wanted.has(t.fields.gtin as string));
}

/** The finished runs' directories of `dir`, oldest first. */
function runDirs(dir: string): string[] {
  const reports = join(dir, 'reports');
  return readdirSync(reports)
    .filter((d) => !d.startsWith('.') && existsSync(join(reports, d, 'summary.json')))
    .sort()
    .map((d) => join(reports, d));
}

const summaryOf = (runDir: string) =>
  JSON.parse(readFileSync(join(runDir, 'summary.json'), 'utf8')) as {
    counts: Record<string, number>;
    abortCode?: string;
  };

/** issues.csv of a run (a line per issue code and column): each code's count of rows and its first rows. */
function issueRows(runDir: string): Map<string, { rows: number; firstRows: number[] }> {
  const lines = readFileSync(join(runDir, 'issues.csv'), 'utf8')
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/);
  const out = new Map<string, { rows: number; firstRows: number[] }>();
  // code,severity,column,field,rows,firstRows,… : the first six hold no comma.
  for (const [code, , , , rows, firstRows] of lines.slice(1).map((l) => l.split(',')))
    out.set(code!, { rows: Number(rows), firstRows: firstRows!.split('; ').map(Number) });
  return out;
}

/** Every valid item of the run is linked to the one brand `name` of the owner, and there is one such brand. */
function expectLinkedToOneBrand(name: string, offset: number, rows: number, invalid: number): void {
  const brands = brandsNamed(name);
  expect(brands).toHaveLength(1);
  const linked = items(offset + invalid, rows - invalid);
  expect(linked).toHaveLength(rows - invalid);
  for (const t of linked) expect(t.fields.brandId).toBe(brands[0]!.brandId);
}

describe('a gated run that creates brands', () => {
  it('held: creates no brand and no item, and reports the rows that name a new brand', async () => {
    const { dir, file, mapping, env } = setup('gate: { maxInvalidShare: 0.1 }\n', 10, 3, 5100, 'Biscuiterie Held');
    const writes = sandbox.handle.counts().writes;
    const r = await cliInProcess(['import', file, '--mapping', mapping], { env });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain('HELD: held by the quality gate');
    expect(sandbox.handle.counts().writes).toBe(writes);
    expect(brandsNamed('Biscuiterie Held')).toEqual([]);
    expect(items(5100, 10)).toEqual([]);
    const [run] = runDirs(dir);
    expect(summaryOf(run!)).toMatchObject({
      abortCode: 'PS_ERR_QUALITY_GATE',
      counts: { invalid: 3, notAttempted: 7 },
    });
    // Every row names the new brand as planned: valid rows (not attempted) and rejected ones alike.
    expect(issueRows(run!).get('BRAND_WOULD_CREATE')?.rows).toBe(10);
    expect(issueRows(run!).has('BRAND_CREATED')).toBe(false);

    // Applied anyway: the brand is created then, once, and every item is linked to it.
    const again = await cliInProcess(['import', file, '--mapping', mapping, '--waive-gate'], { env });
    expect(again.code, again.stderr).toBe(1);
    expectLinkedToOneBrand('Biscuiterie Held', 5100, 10, 3);
    expect(summaryOf(runDirs(dir)[1]!).counts).toMatchObject({ invalid: 3, created: 7 });
  });

  it('under the gate: the brand is created once after the verdict, every item linked to it', async () => {
    const { dir, file, mapping, env } = setup('gate: { maxInvalidShare: 0.5 }\n', 10, 3, 5200, 'Biscuiterie Passe');
    const r = await cliInProcess(['import', file, '--mapping', mapping], { env });
    expect(r.code, r.stderr).toBe(1);
    expectLinkedToOneBrand('Biscuiterie Passe', 5200, 10, 3);
    const [run] = runDirs(dir);
    expect(summaryOf(run!).counts).toMatchObject({ invalid: 3, created: 7 });
    const codes = issueRows(run!);
    // As without a gate: the first valid row is told the brand was created; the rejected rows that it would be.
    expect(codes.get('BRAND_CREATED')).toEqual({ rows: 1, firstRows: [5] });
    expect(codes.get('BRAND_WOULD_CREATE')).toEqual({ rows: 3, firstRows: [2, 3, 4] });
  });

  it('a gate on the rule of a created brand holds the run before the brand is created', async () => {
    const { file, mapping, env } = setup('gate: { rules: [PS-REF-009] }\n', 4, 0, 5300, 'Biscuiterie Regle');
    const r = await cliInProcess(['import', file, '--mapping', mapping], { env });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain('1 row fails rule PS-REF-009');
    expect(brandsNamed('Biscuiterie Regle')).toEqual([]);
    expect(items(5300, 4)).toEqual([]);
  });

  it('a brand the API will not create after the verdict fails the rows naming it: nothing sent for them', async () => {
    const { dir, file, mapping, env } = setup('gate: { maxInvalidShare: 0.5 }\n', 4, 0, 5350, 'Biscuiterie Refusee');
    sandbox.handle.setFaults({ routes: ['POST /api/brands'], rate503: 1, retryAfterSeconds: 0 });
    try {
      const r = await cliInProcess(['import', file, '--mapping', mapping], { env });
      expect(r.code, r.stderr).toBe(1);
    } finally {
      sandbox.handle.setFaults({});
    }
    expect(brandsNamed('Biscuiterie Refusee')).toEqual([]);
    expect(items(5350, 4)).toEqual([]);
    const [run] = runDirs(dir);
    expect(summaryOf(run!).counts).toMatchObject({ rows: 4, failed: 4, created: 0, notAttempted: 0 });
    expect(issueRows(run!).get('BRAND_CREATE_FAILED')?.rows).toBe(4);
  }, 60_000);

  // Killed once the gate passed: before the brand's create is sent, and after it (before any item): the run again
  // creates the brand once, and links every item to it.
  for (const [when, match] of [
    ['before the brand is created', 'POST /api/brands'],
    ['after the brand is created', 'POST /api/tradeItem'],
  ] as const) {
    it(`killed ${when}, run again: one brand, every item linked to it`, async () => {
      const name = `Biscuiterie Reprise ${match.length}`;
      const offset = 5400 + match.length * 10;
      const { dir, file, mapping, env } = setup('gate: { maxInvalidShare: 0.5 }\n', 6, 1, offset, name);
      const hold = fenceHold(dir, 'killed', 1, match);
      const first = spawnCli(['import', file, '--mapping', mapping], { env: { ...env, PS_TEST_FENCE_HOLD: hold.env } });
      await until('the run held at its first fenced write', () => existsSync(hold.held), 60_000);
      first.child.kill('SIGKILL');
      await first.exit;
      expect(brandsNamed(name)).toHaveLength(match === 'POST /api/brands' ? 0 : 1);
      expect(items(offset, 6)).toEqual([]);
      const again = await cliInProcess(['import', file, '--mapping', mapping], { env });
      expect(again.code, again.stderr).toBe(1);
      expectLinkedToOneBrand(name, offset, 6, 1);
      expect(runDirs(dir)).toHaveLength(1);
    }, 120_000);
  }
});
