// Every write is retried the same way (issue 33, deliver 4): a brand create whose answer is lost or refused for a while
// follows the rule of trade-item creates (look up, then send again), and a brand the API will not create fails the rows
// that name it, not the run.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { runImport } from '../../src/pipeline/run/run.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import type { FaultSpec } from '../../src/sandbox/faults.ts';
import { expectOneItemPerGtin, useSandbox, withContext, reportRows } from '../helpers/sandbox.ts';
import { testGtin } from '../helpers/sheets.ts';
import { eanMapping } from '../helpers/mappings.ts';
import { apiEnv } from '../helpers/env.ts';

const owner = DEMO_COMPANY_ID;
const MAPPING = eanMapping('brands-under-faults', owner, { brand: true });

const sandbox = useSandbox();
let dir: string;
let mapping: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ps-write-retries-'));
  mapping = join(dir, 'brands.yaml');
  writeFileSync(mapping, MAPPING);
});

/**
 * An inline run against the sandbox: reports and state in the test's directory. A create is sent again after a pause
 * of at most 5 ms, and refusals lower the pace no further than 1000 requests a second (CREATE_RETRY_MAX_MS,
 * API_MIN_RPS): what is checked is what is sent again, and what ends failed, not how long the run waits between.
 */
const env = () =>
  apiEnv(sandbox.url, {
    REPORT_DIR: join(dir, 'reports'),
    STATE_DIR: join(dir, 'state'),
    LOG_LEVEL: 'silent',
    CREATE_RETRY_MAX_MS: '5',
    API_MIN_RPS: '1000',
  });

/** A sheet of `rows` items naming `brands` brands in turn (`Marque 0`, `Marque 1`…). */
function sheet(name: string, rows: number, brands: number, prefix = '035000'): string {
  const lines = ['EAN;Nom;Marque;Poids;Unité'];
  for (let i = 0; i < rows; i++) lines.push(`${testGtin(i, prefix)};Biscuits ${i};Marque ${i % brands};${100 + i};g`);
  const file = join(dir, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

async function importWith(faults: FaultSpec, file: string): Promise<Awaited<ReturnType<typeof runImport>>> {
  sandbox.handle.reset();
  sandbox.handle.setFaults({ retryAfterSeconds: 0, ...faults });
  try {
    return await withContext(env(), (cc) => runImport({ file, mapping }, cc.ctx));
  } finally {
    sandbox.handle.setFaults({});
  }
}

function brandsNamed(): Map<string, number> {
  const m = new Map<string, number>();
  for (const b of sandbox.handle.store.dump().brands.filter((x) => x.companyId === owner))
    m.set(b.name, (m.get(b.name) ?? 0) + 1);
  return m;
}

describe('brand creates follow the create rule', () => {
  it('a 503 on a brand create is sent again; a create answered 500 after it was made is looked up, not sent twice', async () => {
    const file = sheet('two-brands.csv', 20, 2);
    const r = await importWith({ routes: ['POST /api/brands'], sequence: ['503', '500after', '503'] }, file);
    expect(r.exitCode).toBe(0);
    expect(r.summary.counts).toMatchObject({ rows: 20, created: 20, failed: 0, notAttempted: 0 });
    expect([...brandsNamed()].sort()).toEqual([
      ['Marque 0', 1],
      ['Marque 1', 1],
    ]);
    expectOneItemPerGtin(sandbox, owner, 20);
  }, 60_000);

  it('a brand the API will not create fails the rows that name it: reported, exit 1, not the run', async () => {
    const file = sheet('one-bad-brand.csv', 12, 3, '035001');
    // Every brand create is refused (503), however many times it is sent.
    const r = await importWith({ routes: ['POST /api/brands'], rate503: 1 }, file);
    expect(r.exitCode).toBe(1);
    expect(r.summary.counts).toMatchObject({ rows: 12, created: 0, failed: 12, notAttempted: 0 });
    expect(existsSync(join(r.reportDir, 'summary.json'))).toBe(true);
    const rows = reportRows(r.reportDir);
    expect(rows.map((l) => l[2])).toEqual(Array(12).fill('failed'));
    const rejected = readFileSync(join(r.reportDir, 'rejected.csv'), 'utf8');
    expect(rejected).toContain('BRAND_CREATE_FAILED');
    expect(brandsNamed().size).toBe(0);
  }, 60_000);

  it('rows of a brand that cannot be created fail, rows of brands that exist are created', async () => {
    const file = sheet('mixed.csv', 12, 3, '035002');
    sandbox.handle.reset();
    // Two of the three brands exist: only "Marque 2" needs a create, which is always refused.
    await withContext(env(), async (cc) => {
      await cc.ctx.clients.product.createBrand({ companyId: owner, name: 'Marque 0' });
      await cc.ctx.clients.product.createBrand({ companyId: owner, name: 'Marque 1' });
    });
    sandbox.handle.setFaults({ routes: ['POST /api/brands'], rate503: 1, retryAfterSeconds: 0 });
    let r;
    try {
      r = await withContext(env(), (cc) => runImport({ file, mapping }, cc.ctx));
    } finally {
      sandbox.handle.setFaults({});
    }
    expect(r.exitCode).toBe(1);
    expect(r.summary.counts).toMatchObject({ rows: 12, created: 8, failed: 4, notAttempted: 0 });
    const failed = reportRows(r.reportDir)
      .filter((l) => l[2] === 'failed')
      .map((l) => l[1]);
    expect(failed).toEqual([2, 5, 8, 11].map((i) => testGtin(i, '035002').padStart(14, '0')));
  }, 60_000);

  it('5 % of all product writes answered 503 (the issue): the import ends with its report, one brand per name, one item per GTIN', async () => {
    // 120 rows of 12 brands: a few brand creates and a few item creates among the 503s (the seed draws them).
    const file = sheet('faults.csv', 120, 12, '035003');
    const r = await importWith({ rate503: 0.05, seed: 7 }, file);
    expect(sandbox.handle.counts().faults['503']).toBeGreaterThan(2);
    expect(existsSync(join(r.reportDir, 'summary.json'))).toBe(true);
    expect(r.exitCode).toBe(0);
    expect(r.summary.counts).toMatchObject({ rows: 120, created: 120 });
    const brands = brandsNamed();
    expect(brands.size).toBe(12);
    expect([...brands.values()].every((n) => n === 1)).toBe(true);
    expectOneItemPerGtin(sandbox, owner, 120);
  }, 120_000);
});
