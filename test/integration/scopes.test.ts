/**
 * Many suppliers, one catalogue (docs/scopes.md): two suppliers feed one owner, each in its own scope (brands,
 * suppliers, GTIN prefixes). Each one's full run archives only its own dropped items; reconcile reports only its own;
 * unreadable keys never archive; full mode without a scope exits 2 before any request; a stray row is refused.
 */
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProductSyncError } from '../../src/errors.ts';
import { exitCodeFor } from '../../src/exit-codes.ts';
import { runReconcile } from '../../src/pipeline/run/reconcile.ts';
import { runImport, runValidate } from '../../src/pipeline/run/run.ts';
import { runUndo } from '../../src/pipeline/undo/undo.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { testGtin } from '../helpers/sheets.ts';
import { useSandboxContext } from '../helpers/sandbox.ts';
import { apiEnv } from '../helpers/env.ts';

const owner = DEMO_COMPANY_ID;
const S1 = '7c1e0000-0000-4000-8000-000000000001';
const S2 = '7c1e0000-0000-4000-8000-000000000002';
const setup = useSandboxContext('ps-scopes-');
const { sandbox } = setup;

interface Row {
  gtin: string;
  brand?: string;
  supplier?: string;
}

let files = 0;
/** Writes a sheet of `rows` (GTIN, name, brand or supplier) and its mapping with `scope` (YAML text, or none). */
function sheet(rows: Row[], scope: string | null, target: 'tradeItem' | 'manufacturedItem' = 'tradeItem') {
  const n = ++files;
  const file = join(setup.dir, `sheet-${n}.csv`);
  const lines = ['GTIN;Désignation;Marque;Fournisseur'];
  for (const r of rows) lines.push(`${r.gtin};Produit ${r.gtin};${r.brand ?? ''};${r.supplier ?? ''}`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  const mapping = join(setup.dir, `mapping-${n}.yaml`);
  writeFileSync(
    mapping,
    `name: scoped-${n}
target: ${target}
ownerCompanyId: ${owner}
language: fr-FR
columns:
  - { column: GTIN, field: gtin, type: gtin }
  - { column: Désignation, field: tradeItemName }
  - { column: Marque, field: brandId, lookup: { brand: { create: true } } }
${target === 'manufacturedItem' ? '  - { column: Fournisseur, field: supplierCompanyId, type: uuid }\n' : ''}${scope === null ? '' : `scope: ${scope}\n`}`,
  );
  return { file, mapping };
}

const gtinsOf = (archived: boolean) =>
  new Set(
    sandbox.handle.store
      .dump()
      .tradeItems.filter((t) => t.archived === archived)
      .map((t) => String(t.gtin)),
  );
const active = () => gtinsOf(false);
const archived = () => gtinsOf(true);
/** GTINs as the API holds them (GTIN-14). */
const range = (n: number, prefix: string) => Array.from({ length: n }, (_, i) => `0${testGtin(i, prefix)}`);

describe('scopes: two suppliers feed one owner', () => {
  it('by brand: each full run archives only its own dropped items; reconcile reports only its own; a stray row is refused', async () => {
    sandbox.handle.reset();
    const alpha = [...range(20, '376000'), ...range(20, '379000')];
    const beta = range(20, '400000');
    const alphaScope = '{ brands: [Alpha] }';
    const betaScope = '{ brands: [Beta] }';
    const a0 = sheet(
      alpha.map((gtin) => ({ gtin, brand: 'Alpha' })),
      alphaScope,
    );
    const b0 = sheet(
      beta.map((gtin) => ({ gtin, brand: 'Beta' })),
      betaScope,
    );
    expect((await runImport(a0, setup.cc.ctx)).exitCode).toBe(0);
    expect((await runImport(b0, setup.cc.ctx)).exitCode).toBe(0);
    expect(active().size).toBe(60);

    // Reconcile of each unchanged sheet: nothing missing, though the other's items are in the catalogue.
    const ra = await runReconcile(a0, setup.cc.ctx);
    expect(ra.summary.reconcile).toMatchObject({ inSync: 40, missingInSheet: 0 });
    expect(ra.summary.scope).toMatchObject({ items: 40, active: 40 });
    expect(ra.exitCode).toBe(0);
    expect((await runReconcile(b0, setup.cc.ctx)).summary.reconcile).toMatchObject({ inSync: 20, missingInSheet: 0 });

    // Alpha drops two items, and a row of Beta's brand strays into its sheet: Beta's items are left alone.
    const stray = testGtin(99, '400000');
    const dropped = [alpha[25]!, alpha[26]!];
    const a1 = sheet(
      [
        ...alpha.filter((g) => !dropped.includes(g)).map((gtin) => ({ gtin, brand: 'Alpha' })),
        { gtin: stray, brand: 'Beta' },
      ],
      alphaScope,
    );
    const full = await runImport({ ...a1, mode: 'full' }, setup.cc.ctx);
    expect(full.summary.counts).toMatchObject({ archived: 2, invalid: 1, created: 0 });
    expect(full.summary.scope).toMatchObject({ spec: { brands: ['Alpha'] }, items: 40, active: 40 });
    expect([...archived()].sort()).toEqual([...dropped].sort());
    for (const g of beta) expect(active().has(g)).toBe(true);
    expect(sandbox.handle.store.dump().tradeItems.some((t) => t.gtin === stray)).toBe(false);
    const strayIssue = full.summary.issues?.find((i) => i.code === 'SCOPE_OUTSIDE');
    expect(strayIssue).toMatchObject({ column: 'Marque', field: 'brandId', rows: 1 });

    // Reconcile of Beta's sheet still reports only Beta's.
    const rb = await runReconcile(b0, setup.cc.ctx);
    expect(rb.summary.reconcile).toMatchObject({ inSync: 20, missingInSheet: 0 });
  });

  it('never archives the items of rows whose key it cannot read, and still archives the truly dropped ones', async () => {
    sandbox.handle.reset();
    const a = range(20, '376000');
    const b = range(20, '379000');
    // A brand of its own: the process's reference cache remembers brands across the sandbox's resets.
    const scope = '{ brands: [Delta] }';
    const all = [...a, ...b].map((gtin) => ({ gtin, brand: 'Delta' }));
    expect((await runImport(sheet(all, scope), setup.cc.ctx)).exitCode).toBe(0);
    // a[5] damaged by Excel (3.76E+12), b[7] with a wrong check digit; a[10], b[15], b[16] truly dropped.
    const wrong = `${b[7]!.slice(0, -1)}${(Number(b[7]!.slice(-1)) + 1) % 10}`;
    const rows = all
      .filter((r) => ![a[10], b[15], b[16]].includes(r.gtin))
      .map((r) => (r.gtin === a[5] ? { ...r, gtin: '3.76E+12' } : r.gtin === b[7] ? { ...r, gtin: wrong } : r));
    const next = sheet(rows, scope);
    const full = await runImport({ ...next, mode: 'full' }, setup.cc.ctx);
    expect([...archived()].sort(), JSON.stringify(full.summary, null, 1)).toEqual([b[15], b[16]].sort());
    const withheld = full.summary.withheld!;
    expect(withheld).toMatchObject({ count: 3, all: false });
    const sci = withheld.rows.find((r) => r.value === '3.76E+12')!;
    expect(sci.withheld.map((i) => i.gtin).sort()).toEqual([a[5], a[10]].sort());
    const check = withheld.rows.find((r) => r.value === wrong)!;
    expect(check.withheld.map((i) => i.gtin)).toEqual([b[7]]);

    // An empty key gives nothing to narrow by: every archive of the run is withheld, and said so.
    const empty = sheet(
      [...rows.filter((r) => r.gtin !== '3.76E+12' && r.gtin !== wrong), { gtin: '', brand: 'Delta' }].filter(
        (r) => r.gtin !== b[0],
      ),
      scope,
    );
    const none = await runImport({ ...empty, mode: 'full' }, setup.cc.ctx);
    expect(none.summary.counts.archived).toBe(0);
    expect(none.summary.withheld).toMatchObject({ all: true });
    expect(active().has(b[0]!)).toBe(true);

    // --archive-despite-invalid-keys lifts it.
    const lifted = await runImport(
      { ...empty, mode: 'full', archiveDespiteInvalidKeys: true, maxArchiveRatio: 0.2 },
      setup.cc.ctx,
    );
    expect(lifted.summary.withheld).toMatchObject({ count: 0 });
    expect(archived().has(b[0]!)).toBe(true);
  });

  it('by supplier: each full run archives only its own supplier’s dropped items', async () => {
    sandbox.handle.reset();
    const one = range(10, '376100');
    const two = range(10, '376200');
    const s1 = (gtins: string[]) =>
      sheet(
        gtins.map((gtin) => ({ gtin, brand: 'Alpha', supplier: S1 })),
        `{ suppliers: [${S1}] }`,
        'manufacturedItem',
      );
    const s2 = sheet(
      two.map((gtin) => ({ gtin, brand: 'Alpha', supplier: S2 })),
      `{ suppliers: [${S2}] }`,
      'manufacturedItem',
    );
    expect((await runImport(s1(one), setup.cc.ctx)).exitCode).toBe(0);
    expect((await runImport(s2, setup.cc.ctx)).exitCode).toBe(0);
    const full = await runImport({ ...s1(one.slice(1)), mode: 'full' }, setup.cc.ctx);
    expect(full.summary.counts.archived).toBe(1);
    expect([...archived()]).toEqual([one[0]]);
    expect(full.summary.scope).toMatchObject({ items: 10 });
    const rec = await runReconcile(s2, setup.cc.ctx);
    expect(rec.summary.reconcile).toMatchObject({ missingInSheet: 0 });
    // A row of the other supplier is refused.
    const stray = sheet(
      [{ gtin: testGtin(50, '376100'), brand: 'Alpha', supplier: S2 }],
      `{ suppliers: [${S1}] }`,
      'manufacturedItem',
    );
    const v = await runValidate(stray, setup.cc.ctx);
    expect(v.summary.issues?.find((i) => i.code === 'SCOPE_OUTSIDE')).toMatchObject({
      column: 'Fournisseur',
      field: 'supplierCompanyId',
      rows: 1,
    });
  });

  it('by GTIN prefix: each full run archives only its own dropped items; a GTIN outside the prefixes is refused', async () => {
    sandbox.handle.reset();
    const p1 = range(15, '376300');
    const p2 = range(15, '376400');
    const first = (gtins: string[]) =>
      sheet(
        gtins.map((gtin) => ({ gtin })),
        '{ gtinPrefixes: ["376300"] }',
      );
    const second = (gtins: string[]) =>
      sheet(
        gtins.map((gtin) => ({ gtin })),
        '{ gtinPrefixes: ["376400"] }',
      );
    await runImport(first(p1), setup.cc.ctx);
    await runImport(second(p2), setup.cc.ctx);
    const f1 = await runImport({ ...first([...p1.slice(0, 14), testGtin(1, '376400')]), mode: 'full' }, setup.cc.ctx);
    expect([...archived()]).toEqual([p1[14]]);
    expect(f1.summary.issues?.find((i) => i.code === 'SCOPE_OUTSIDE')).toMatchObject({ column: 'GTIN' });
    const f2 = await runImport({ ...second(p2.slice(1)), mode: 'full' }, setup.cc.ctx);
    expect([...archived()].sort()).toEqual([p1[14], p2[0]].sort());
    expect(f2.summary.scope).toMatchObject({ items: 15, active: 15 });
    expect((await runReconcile(second(p2.slice(1)), setup.cc.ctx)).summary.reconcile).toMatchObject({
      missingInSheet: 0,
    });
  });

  it('an undo never touches an item that left the run’s scope since', async () => {
    sandbox.handle.reset();
    const gtins = range(3, '376500');
    const r1 = await runImport(
      sheet(
        gtins.map((gtin) => ({ gtin, brand: 'Epsilon' })),
        '{ brands: [Epsilon] }',
      ),
      setup.cc.ctx,
    );
    expect(r1.summary.scope).toMatchObject({ spec: { brands: ['Epsilon'] } });
    await runImport(sheet([{ gtin: testGtin(1, '376600'), brand: 'Zeta' }], '{ brands: [Zeta] }'), setup.cc.ctx);
    const { tradeItems, brands } = sandbox.handle.store.dump();
    const zeta = brands.find((b) => b.name === 'Zeta')!.brandId;
    const moved = tradeItems.find((t) => t.gtin === gtins[0])!;
    // Another supplier's tool moves the first item to its brand.
    const res = await fetch(`${sandbox.url}/api/tradeItems/${moved.tradeItemId}`, {
      method: 'PATCH',
      headers: { authorization: 'Bearer sandbox-token', 'content-type': 'application/json' },
      body: JSON.stringify({ brandId: zeta }),
    });
    expect(res.status).toBe(200);
    const u = await runUndo({ target: r1.runId, reportDir: join(setup.dir, 'reports'), force: true }, setup.cc.ctx);
    expect(u.summary.counts).toMatchObject({ restored: 2, conflict: 1 });
    expect(active().has(gtins[0]!)).toBe(true);
    expect(archived()).toEqual(new Set([gtins[1], gtins[2]]));
  });

  it('full mode and reconcile without a scope exit 2 before any request, --allow-archive or not', async () => {
    sandbox.handle.reset();
    const s = sheet([{ gtin: testGtin(1, '376000') }], null);
    const before = setup.cc.ctx.clients.stats.product;
    for (const run of [
      () => runImport({ ...s, mode: 'full', allowArchive: true }, setup.cc.ctx),
      () => runReconcile(s, setup.cc.ctx),
    ]) {
      const err = await run().then(
        () => null,
        (e: unknown) => e,
      );
      expect(err).toBeInstanceOf(ProductSyncError);
      expect((err as ProductSyncError).code).toBe('PS_ERR_SCOPE_MISSING');
      expect(exitCodeFor(err)).toBe(2);
    }
    expect(setup.cc.ctx.clients.stats.product).toBe(before);
    // Upsert needs none.
    expect((await runImport(s, setup.cc.ctx)).exitCode).toBe(0);

    const cli = spawnSync(
      process.execPath,
      ['bin/product-sync.mjs', 'import', s.file, '-m', s.mapping, '--mode', 'full', '--allow-archive'],
      {
        encoding: 'utf8',
        env: {
          ...process.env,
          ...apiEnv(sandbox.url),
          REPORT_DIR: join(setup.dir, 'reports'),
          REDIS_URL: '',
          STATE_DIR: join(setup.dir, 'state'),
        },
      },
    );
    expect(cli.status).toBe(2);
    expect(cli.stderr.trim().split('\n')).toHaveLength(1);
    expect(cli.stderr).toContain('scope: owner');
  });
});
