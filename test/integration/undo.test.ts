import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { acquireLease, holderOf } from '../../src/lease/lease.ts';
import { leaseStoreFor } from '../../src/lease/lease-store.ts';
import { leaseApi } from '../../src/pipeline/run/open-run.ts';
import { runImport } from '../../src/pipeline/run/run.ts';
import { runUndo, type UndoItem } from '../../src/pipeline/undo/undo.ts';
import type { LedgerLine } from '../../src/pipeline/undo/ledger.ts';
import { contextFromConfig, type CommandContext } from '../../src/runtime.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';
import { cliInProcess, spawnCli } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { until } from '../helpers/wait.ts';
import { useSandbox, withContext } from '../helpers/sandbox.ts';

const owner = DEMO_COMPANY_ID;
const sandbox = useSandbox();

const g14 = (i: number) => testGtin(i).padStart(14, '0');

const env = (dir: string) => inlineEnv(sandbox.url, dir, { LOG_LEVEL: 'silent' });

/** A case on an empty sandbox: its own directory `<prefix>…`, an inline run context over both (closed after `fn`). */
async function undoCase(
  prefix: string,
  fn: (c: { dir: string; e: Record<string, string>; reportDir: string; cc: CommandContext }) => Promise<void>,
): Promise<void> {
  sandbox.handle.reset();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const e = env(dir);
  await withContext(e, (cc) => fn({ dir, e, reportDir: e.REPORT_DIR!, cc }));
}

/** The owner's items as `gtin → {name, archived}`. */
function snapshot(): Map<string, { name: unknown; archived: boolean; id: string }> {
  return new Map(
    sandbox.handle.store
      .dump()
      .tradeItems.filter((t) => t.ownerCompanyId === owner)
      .map((t) => [String(t.gtin), { name: t.tradeItemName, archived: t.archived, id: t.tradeItemId }]),
  );
}

/** Someone else's edit, straight through the API. */
async function patchName(id: string, name: string): Promise<void> {
  const res = await fetch(`${sandbox.url}/api/tradeItems/${id}`, {
    method: 'PATCH',
    headers: { authorization: 'Bearer sandbox-token', 'content-type': 'application/json' },
    body: JSON.stringify({ tradeItemName: name }),
  });
  expect(res.status).toBe(200);
}

/** Night 2: rows 0-27 and 30-32; 0-4 renamed; 28-29 left out (archived by mode full); 30-32 new. */
function night2Sheet(dir: string): string {
  const lines = ['GTIN;Désignation;Poids net;Unité'];
  for (const i of [...Array.from({ length: 28 }, (_, i) => i), 30, 31, 32])
    lines.push(`${testGtin(i)};${i < 5 ? `Biscuits nuit 2 ${i}` : `Biscuits au beurre ${i}`};${(i % 900) + 100};g`);
  const file = join(dir, 'night2.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('undo a run', () => {
  it('--force over a later run leaves its changes as conflicts; that run can then be undone, and this one after it', async () => {
    await undoCase('ps-undo-force-', async ({ dir, reportDir, cc }) => {
      const n1 = writeProductSheet(dir, 3, { owner });
      const r1 = await runImport({ file: n1.file, mapping: n1.mapping }, cc.ctx);
      const n2 = writeProductSheet(dir, 3, { owner, name: (i) => `Renamed ${i}`, file: 'n2.csv' });
      const r2 = await runImport({ file: n2.file, mapping: n2.mapping }, cc.ctx);
      const w = sandbox.handle.counts().writes;
      // r1 created the items, r2 renamed them: every item is a conflict, none is archived, nothing is sent.
      const forced = await runUndo({ target: r1.runId, reportDir, force: true }, cc.ctx);
      expect(forced.summary).toMatchObject({ forcedOver: [r2.runId], counts: { conflict: 3, restored: 0 } });
      expect(sandbox.handle.counts().writes).toBe(w);
      expect([...snapshot().values()].map((t) => [t.name, t.archived])).toEqual(
        [0, 1, 2].map((i) => [`Renamed ${i}`, false]),
      );
      // The forced undo changed nothing, so it does not stand in r2's way; then r1 goes without --force.
      expect((await runUndo({ target: r2.runId, reportDir }, cc.ctx)).summary.counts).toMatchObject({ restored: 3 });
      const again = await runUndo({ target: r1.runId, reportDir }, cc.ctx);
      expect(again.summary.counts).toEqual({ items: 3, restored: 3, conflict: 0, unchanged: 0, failed: 0 });
      expect([...snapshot().values()].map((t) => t.archived)).toEqual([true, true, true]);
    });
  });

  it('finds an item whose GTIN the run changed (a run keyed by tradeItemId) and puts its GTIN back', async () => {
    await undoCase('ps-undo-gtin-', async ({ dir, reportDir, cc }) => {
      const n1 = writeProductSheet(dir, 2, { owner });
      await runImport({ file: n1.file, mapping: n1.mapping }, cc.ctx);
      const id0 = snapshot().get(g14(0))!.id;
      const mapping = join(dir, 'by-id.yaml');
      writeFileSync(
        mapping,
        `name: by-id\ntarget: tradeItem\nownerCompanyId: ${owner}\nlanguage: fr-FR\nkey: tradeItemId\ncolumns:\n` +
          '  - { column: ID, field: tradeItemId }\n  - { column: GTIN, field: gtin, type: gtin }\n' +
          '  - { column: Nom, field: tradeItemName }\n',
      );
      const sheet = join(dir, 'by-id.csv');
      writeFileSync(sheet, `ID;GTIN;Nom\n${id0};${testGtin(7)};Biscuits au beurre 0\n`);
      const r2 = await runImport({ file: sheet, mapping }, cc.ctx);
      expect(r2.summary.counts, JSON.stringify(r2.summary)).toMatchObject({ updated: 1, failed: 0 });
      expect(snapshot().get(g14(7))?.id).toBe(id0);

      const u = await runUndo({ target: r2.runId, reportDir }, cc.ctx);
      expect(u.summary.counts).toEqual({ items: 1, restored: 1, conflict: 0, unchanged: 0, failed: 0 });
      expect(snapshot().get(g14(0))?.id).toBe(id0);
      expect(snapshot().has(g14(7))).toBe(false);
    });
  });

  it('reports the items the run created and the API no longer holds failed, not unchanged (exit 1)', async () => {
    await undoCase('ps-undo-gone-', async ({ dir, reportDir, cc }) => {
      const n1 = writeProductSheet(dir, 3, { owner });
      const r1 = await runImport({ file: n1.file, mapping: n1.mapping }, cc.ctx);
      expect(r1.summary.counts).toMatchObject({ created: 3 });
      // The API forgot them (another catalogue behind the same address, an API that deletes).
      sandbox.handle.reset();
      const items: UndoItem[] = [];
      const u = await runUndo({ target: r1.runId, reportDir }, { ...cc.ctx, onItem: (i) => void items.push(i) });
      expect(u.summary.counts).toEqual({ items: 3, restored: 0, conflict: 0, unchanged: 0, failed: 3 });
      expect(u.exitCode).toBe(1);
      expect(items.map((i) => [i.outcome, i.message])).toEqual(
        Array(3).fill(['failed', 'the item the run created is not in the API any more']),
      );
      expect(sandbox.handle.counts().writes).toBe(0);
    });
  });

  it('holds the owner lease: refused while another run holds it; two undos of one run at once make two runs, one sends', async () => {
    await undoCase('ps-undo-lease-', async ({ dir, e, reportDir, cc }) => {
      const n1 = writeProductSheet(dir, 4, { owner });
      const r1 = await runImport({ file: n1.file, mapping: n1.mapping }, cc.ctx);
      const store = leaseStoreFor({ redis: null, prefix: 'x', stateDir: e.STATE_DIR! }, owner, leaseApi(cc.ctx));
      const held = await acquireLease({ store, owner, holder: holderOf('an-import', 'inline'), ttlMs: 60_000 });
      const w = sandbox.handle.counts().writes;
      await expect(runUndo({ target: r1.runId, reportDir }, cc.ctx)).rejects.toMatchObject({
        code: 'PS_ERR_RUN_LOCKED',
      });
      await held.release();
      expect(sandbox.handle.counts().writes).toBe(w);
      // A refused undo leaves no run directory behind.
      expect(readdirSync(reportDir).filter((d) => d.startsWith('undo-'))).toEqual([]);

      // Two at once (the second waits for the lease): the one that waited finds everything as before.
      const waiting = { ...cc.ctx, lease: { waitMs: 60_000 } };
      const [a, b] = await Promise.all([
        runUndo({ target: r1.runId, reportDir }, waiting),
        runUndo({ target: r1.runId, reportDir }, waiting),
      ]);
      expect(a.runId).not.toBe(b.runId);
      expect([a.summary.counts.restored, b.summary.counts.restored].sort()).toEqual([0, 4]);
      expect(a.writes + b.writes).toBe(1);
      expect(sandbox.handle.counts().writes - w).toBe(1);
      for (const u of [a, b])
        expect(JSON.parse(readFileSync(join(u.dir!, 'summary.json'), 'utf8')).writes).toBe(u.writes);
    });
  });

  it('refuses while the changes of a later run on the same items are live, and goes once that run is undone', async () => {
    await undoCase('ps-undo-later-', async ({ dir, reportDir, cc }) => {
      const n1 = writeProductSheet(dir, 4, { owner });
      const r1 = await runImport({ file: n1.file, mapping: n1.mapping }, cc.ctx);
      const n2 = writeProductSheet(dir, 4, { owner, name: (i) => `Renamed ${i}`, file: 'n2.csv' });
      const r2 = await runImport({ file: n2.file, mapping: n2.mapping }, cc.ctx);
      expect(r2.summary.counts).toMatchObject({ updated: 4 });
      const blockedBy = async (runId: string) =>
        expect(runUndo({ target: r1.runId, reportDir, dryRun: true }, cc.ctx)).rejects.toMatchObject({
          code: 'PS_ERR_UNDO_BLOCKED',
          message: expect.stringContaining(runId),
        });
      await blockedBy(r2.runId);
      // Undo the newer run first: then r1 can be undone.
      const u = await runUndo({ target: r2.runId, reportDir }, cc.ctx);
      expect(u.summary.counts).toMatchObject({ restored: 4 });
      expect((await runUndo({ target: r1.runId, reportDir, dryRun: true }, cc.ctx)).newer).toEqual([]);
      // Undoing that undo gives r2's changes back: r1 is blocked again, by r2.
      const v = await runUndo({ target: u.runId, reportDir }, cc.ctx);
      expect(v.summary.counts).toMatchObject({ restored: 4 });
      await blockedBy(r2.runId);
      // And once more: r2 is taken back, r1 undone, its four creates archived.
      await runUndo({ target: v.runId, reportDir }, cc.ctx);
      const w = await runUndo({ target: r1.runId, reportDir }, cc.ctx);
      expect(w.summary.counts).toEqual({ items: 4, restored: 4, conflict: 0, unchanged: 0, failed: 0 });
      expect([...snapshot().values()].map((t) => t.archived)).toEqual([true, true, true, true]);
    });
  });

  it('restores night 1 except what others changed since, archives what night 2 created, can be undone, and survives kill -9', async () => {
    sandbox.handle.reset();
    const dir = mkdtempSync(join(tmpdir(), 'ps-undo-'));
    const e = env(dir);
    const reportDir = e.REPORT_DIR!;
    const cc: CommandContext = await contextFromConfig(loadConfig(e), {});
    let target = '';
    let beforeState = new Map<string, unknown>();
    try {
      // Night 1: 30 items; item 27 archived since (so night 2 unarchives it).
      const n1 = writeProductSheet(dir, 30, { owner });
      const night1 = await runImport({ file: n1.file, mapping: n1.mapping }, cc.ctx);
      expect(night1.summary.counts).toMatchObject({ created: 30 });
      await cc.ctx.clients.product.archiveTradeItems([snapshot().get(g14(27))!.id]);
      const before = snapshot();
      beforeState = before;

      // Night 2, mode full: 5 patched, 1 unarchived, 2 archived, 3 created.
      const night2 = await runImport({ file: night2Sheet(dir), mapping: n1.mapping, mode: 'full' }, cc.ctx);
      expect(night2.summary.counts).toMatchObject({ updated: 5, unarchived: 1, archived: 2, created: 3, failed: 0 });
      target = night2.runId;
      const after2 = snapshot();
      const ledger = readFileSync(join(night2.reportDir, 'undo.jsonl'), 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as LedgerLine);
      expect(ledger).toHaveLength(11);
      const renamed = ledger.find((l) => l.gtin === g14(2))!;
      expect(renamed.fields).toEqual([
        { item: 'tradeItem', field: 'tradeItemName', before: 'Biscuits au beurre 2', sent: 'Biscuits nuit 2 2' },
      ]);
      expect(ledger.find((l) => l.gtin === g14(27))!.archived).toEqual({ before: true, after: false });
      expect(ledger.find((l) => l.gtin === g14(31))!.created).toEqual(['tradeItem']);

      // Someone else edits three items night 2 changed.
      for (const i of [0, 1, 30]) await patchName(after2.get(g14(i))!.id, `edited by hand ${i}`);
      const edited = snapshot();

      // --dry-run reads and sends nothing.
      let w = sandbox.handle.counts().writes;
      const plan: UndoItem[] = [];
      const dry = await runUndo(
        { target: night2.runId, reportDir, dryRun: true },
        { ...cc.ctx, onItem: (i) => plan.push(i) },
      );
      expect(sandbox.handle.counts().writes).toBe(w);
      expect(dry.dir).toBeNull();
      expect(dry.summary.counts).toEqual({ items: 11, restored: 8, conflict: 3, unchanged: 0, failed: 0 });
      expect(plan.filter((i) => i.outcome === 'conflict').map((i) => i.gtin)).toEqual([0, 1, 30].map((i) => g14(i)));

      // The undo: night 1's state except the three edited items; night 2's creates archived; 6 writes, no more.
      w = sandbox.handle.counts().writes;
      const routes = { ...sandbox.handle.counts().byRoute };
      const undo = await runUndo({ target: night2.runId, reportDir }, cc.ctx);
      expect(undo.summary.counts).toEqual({ items: 11, restored: 8, conflict: 3, unchanged: 0, failed: 0 });
      expect(undo.exitCode).toBe(1);
      // 3 PATCHes (items 2-4), 2 unarchives (28, 29), 1 archive collection (27, 31, 32).
      expect(sandbox.handle.counts().writes - w).toBe(6);
      const delta = Object.entries(sandbox.handle.counts().byRoute)
        .filter(([k, v]) => !k.startsWith('GET') && v !== (routes[k] ?? 0))
        .map(([k, v]) => [k, v - (routes[k] ?? 0)]);
      expect(delta).toHaveLength(3);
      const now = snapshot();
      for (const [gtin, item] of before) {
        if ([0, 1].some((i) => g14(i) === gtin)) expect(now.get(gtin)).toEqual(edited.get(gtin));
        else expect(now.get(gtin), gtin).toEqual(item);
      }
      for (const i of [31, 32]) expect(now.get(g14(i))!.archived).toBe(true);
      expect(now.get(g14(30))).toEqual(edited.get(g14(30)));
      const conflicts = readFileSync(join(undo.dir!, 'conflicts.csv'), 'utf8');
      expect(conflicts).toContain(
        `${g14(0)},${after2.get(g14(0))!.id},tradeItem,tradeItemName,"""Biscuits au beurre 0""","""Biscuits nuit 2 0""","""edited by hand 0"""`,
      );
      expect(conflicts).toContain(`${g14(30)},${after2.get(g14(30))!.id},tradeItem,tradeItemName,,`);
      const summary = JSON.parse(readFileSync(join(undo.dir!, 'summary.json'), 'utf8'));
      expect(summary.counts).toMatchObject({ restored: 8, conflict: 3, unchanged: 0, failed: 0 });

      // Undoing it again: nothing to send.
      w = sandbox.handle.counts().writes;
      const again = await runUndo({ target: night2.runId, reportDir }, cc.ctx);
      expect(sandbox.handle.counts().writes).toBe(w);
      expect(again.summary.counts).toMatchObject({ restored: 0, conflict: 3, unchanged: 8 });
      expect(again.runId).not.toBe(undo.runId);

      // The undo of the undo gives night 2 back (the three edited items were never the undo's).
      const redo = await runUndo({ target: undo.runId, reportDir }, cc.ctx);
      expect(redo.summary.counts).toEqual({ items: 8, restored: 8, conflict: 0, unchanged: 0, failed: 0 });
      expect(redo.exitCode).toBe(0);
      const back = snapshot();
      for (const [gtin, item] of after2) expect(back.get(gtin), gtin).toEqual(edited.get(gtin) ?? item);

      // Night 2's changes are live again (the undo of its undo), and nothing else came since: it can be undone again.
      const again2 = await runUndo({ target: night2.runId, reportDir, dryRun: true }, cc.ctx);
      expect(again2.newer).toEqual([]);
      expect(again2.summary.counts).toMatchObject({ restored: 8, conflict: 3 });
    } finally {
      await cc.close();
    }

    // kill -9 in the middle of the CLI's undo (one write at a time, slowed down), then the same command converges.
    sandbox.handle.setFaults({ latencyMs: 150 });
    const slow = { ...e, API_CONCURRENCY: '1' };
    const w0 = sandbox.handle.counts().writes;
    const killed = spawnCli(['undo', target, '--force'], { env: slow });
    await until('the undo to send two writes', () => sandbox.handle.counts().writes - w0 >= 2, 60_000);
    killed.child.kill('SIGKILL');
    await killed.exit;
    const sentBeforeKill = sandbox.handle.counts().writes - w0;
    expect(sentBeforeKill).toBeLessThan(6);
    sandbox.handle.setFaults({});
    // The same command again, and what follows, in-process: their output and exit codes are what is checked.
    const resumed = await cliInProcess(['undo', target, '--force'], { env: e });
    expect(resumed.code, resumed.stderr).toBe(1);
    expect(resumed.stdout).toContain('restored 8, conflict 3');
    const converged = snapshot();
    for (const [gtin, item] of beforeState) {
      if (![0, 1, 30].some((i) => g14(i) === gtin)) expect(converged.get(gtin), gtin).toEqual(item);
    }
    // Its ledger holds every restore, those of the killed attempt too: a dry run of its undo would restore all 8.
    const resumedId = /undo (\S+) of run/.exec(resumed.stdout)![1]!;
    const redoPlan = await cliInProcess(['undo', resumedId, '--dry-run'], { env: e });
    expect(redoPlan.stdout).toContain('to restore 8');
    // And undoing the run once more sends nothing.
    const w1 = sandbox.handle.counts().writes;
    const noop = await cliInProcess(['undo', target, '--force'], { env: e });
    expect(noop.stdout).toContain('writes 0');
    expect(sandbox.handle.counts().writes).toBe(w1);
  });
});
