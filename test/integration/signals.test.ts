// SIGINT / SIGTERM during an inline run (issue 22): nothing more is sent, what is in flight settles, the report is
// written and true (rows sent as sent, the rest not attempted, `aborted: "interrupted"`), the exit code is 130 / 143,
// no temporary file stays behind, the run's run.aborted event (issue 25) is delivered before the exit; a second signal
// exits at once and the same command then resumes without a duplicate. Each command runs again without the slow API,
// in-process (its output and exit code are what is checked there, not the process).
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startSandbox } from '../../src/sandbox/server.ts';
import { cliInProcess, spawnCli } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import {
  expectAbortedEvent,
  finishedRuns,
  OWNER,
  ownerItems,
  useReceiver,
  useRunSandbox,
} from '../helpers/lease-runs.ts';
import { expectOneItemPerGtin, reportRows } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { sleep, until } from '../helpers/wait.ts';

const owner = OWNER;
const sandbox = useRunSandbox({ assignIds: true });
const rx = useReceiver();

const cli = (args: string[], env: Record<string, string>) => spawnCli(args, { env });
const again = (args: string[], env: Record<string, string>) => cliInProcess(args, { env });

const items = () => ownerItems(sandbox);

const env = (dir: string) => inlineEnv(sandbox.url, dir);

/** Every file under `dir` (recursively). */
function filesUnder(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name));
}

const summaries = (reportDir: string) => finishedRuns(reportDir).map(({ dir, summary }) => ({ dir, s: summary }));

describe('signals during an inline run', () => {
  it('SIGTERM during an import: in-flight requests settle, a true report says "interrupted", exit 143, its run.aborted delivered before the exit (issue 25); the same command then sends the rest', async () => {
    sandbox.handle.setFaults({ latencyMs: [20, 30], seed: 11 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-sig-'));
    const rows = 300;
    const sheet = writeProductSheet(dir, rows, { owner });
    const webhook = { WEBHOOK_URL: rx.receiver.url, WEBHOOK_SECRET: rx.receiver.secret, WEBHOOK_RETRY_BASE_MS: '50' };
    const run = cli(['import', sheet.file, '--mapping', sheet.mapping], { ...env(dir), ...webhook });
    await until(() => items().length >= 20);
    run.child.kill('SIGTERM');
    const r = await run.exit;
    expect(r.code, r.stderr).toBe(143);
    expect(r.stderr).toMatch(/SIGTERM: stopping/);
    // Nothing was sent after the report was written.
    const after = items().length;
    await sleep(300);
    expect(items().length).toBe(after);
    const [run1] = summaries(join(dir, 'reports'));
    expect(run1!.s).toMatchObject({ exitCode: 143, aborted: 'interrupted', abortCode: 'PS_ERR_RUN_INTERRUPTED' });
    expect(run1!.s.counts.created).toBe(after);
    expect(run1!.s.counts.notAttempted).toBe(rows - after);
    expectAbortedEvent(rx.receiver, run1!.s, 'interrupted');
    const lines = reportRows(run1!.dir);
    expect(lines).toHaveLength(rows);
    const byGtin = new Map(items().map((t) => [String(t.gtin), t.tradeItemId]));
    for (const [, key, outcome, id] of lines) {
      if (outcome === 'created') expect(id).toBe(byGtin.get(key!));
      else expect(outcome).toBe('not_attempted');
    }
    // No temporary file anywhere; the lease is free.
    expect(filesUnder(dir).filter((f) => /\.tmp$|\.part$|\.mutex$/.test(f))).toEqual([]);
    const lease = JSON.parse(
      readFileSync(
        filesUnder(join(dir, 'state')).find((f) => f.endsWith('.json'))!,
        'utf8',
      ),
    ) as { grant: unknown };
    expect(lease.grant).toBeNull();
    // The same command again: the rest is sent, nothing twice.
    sandbox.handle.setFaults({});
    const rest = await again(['import', sheet.file, '--mapping', sheet.mapping], env(dir));
    expect(rest.code, rest.stderr).toBe(0);
    expectOneItemPerGtin(sandbox, owner, rows);
  }, 90_000);

  it('a second signal exits at once; the same command resumes the run from its journal without a duplicate', async () => {
    // Requests take long enough that the run is still settling them when the second signal comes.
    sandbox.handle.setFaults({ latencyMs: [300, 400], seed: 12 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-sig2-'));
    const rows = 300;
    const sheet = writeProductSheet(dir, rows, { owner });
    const run = cli(['import', sheet.file, '--mapping', sheet.mapping], env(dir));
    await until(() => items().length >= 20);
    run.child.kill('SIGINT');
    // The second signal once the first was taken: two signals close together may reach the process as one.
    await until(() => /SIGINT: stopping/.test(run.stderr()));
    run.child.kill('SIGINT');
    const r = await run.exit;
    expect(r.code).toBe(130);
    expect(r.stderr).toMatch(/SIGINT again: exiting now/);
    sandbox.handle.setFaults({});
    const rest = await again(['import', sheet.file, '--mapping', sheet.mapping], env(dir));
    expect(rest.code, rest.stderr).toBe(0);
    expectOneItemPerGtin(sandbox, owner, rows);
  }, 60_000);

  it('a run resumed after a second signal counts each row once in its issue breakdown', async () => {
    sandbox.handle.setFaults({ latencyMs: [20, 30], seed: 14 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-sig-issues-'));
    const rows = 300;
    // Every 10th row without a name: 30 invalid rows, spread over the chunks sent before and after the kill.
    const sheet = writeProductSheet(dir, rows, { owner, name: (i) => (i % 10 === 3 ? '' : `Biscuits ${i}`) });
    const run = cli(['import', sheet.file, '--mapping', sheet.mapping], { ...env(dir), CHUNK_SIZE: '50' });
    await until(() => items().length >= 120);
    // The requests sent from now on take long: the run is still settling them when the second signal comes.
    sandbox.handle.setFaults({ latencyMs: 2000, seed: 14 });
    const sent = sandbox.handle.counts().total;
    await until('slow requests in flight', () => sandbox.handle.counts().total >= sent + 4);
    run.child.kill('SIGINT');
    // The second signal once the first was taken: two signals close together may reach the process as one.
    await until(() => /SIGINT: stopping/.test(run.stderr()));
    run.child.kill('SIGINT');
    expect((await run.exit).code).toBe(130);
    sandbox.handle.setFaults({});
    // Killed before its report: the next command resumes this run (its chunks' results replayed), not a new one.
    expect(summaries(join(dir, 'reports'))).toEqual([]);
    const runDirs = readdirSync(join(dir, 'reports')).filter((d) => !d.startsWith('.'));
    expect(runDirs).toHaveLength(1);
    expect(readdirSync(join(dir, 'reports', runDirs[0]!, 'chunks')).some((f) => f.endsWith('.results.jsonl'))).toBe(
      true,
    );
    const rest = await again(['import', sheet.file, '--mapping', sheet.mapping], { ...env(dir), CHUNK_SIZE: '50' });
    expect(rest.code, rest.stderr).toBe(1);
    expectOneItemPerGtin(sandbox, owner, rows - 30);
    const [done] = summaries(join(dir, 'reports'));
    expect(done!.dir).toBe(join(dir, 'reports', runDirs[0]!));
    expect(done!.s.counts).toMatchObject({ rows, invalid: 30 });
    expect(done!.s.issues).toMatchObject([
      { code: 'FIELD_REQUIRED', column: 'Désignation', rows: 30, firstRows: [5, 15, 25, 35, 45] },
    ]);
    expect(rest.stdout).toMatch(/30\s+FIELD_REQUIRED\s+Désignation/);
  }, 60_000);

  it('SIGINT during validate and SIGTERM during reconcile: the report is written, rows not reached are not attempted, exit 130 / 143', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-sig3-'));
    // A list lookup, answered slowly: the run is still resolving when the signal comes.
    const lines = ['GTIN;Name;Status'];
    const sheet = writeProductSheet(dir, 2, { owner });
    for (let i = 0; i < 40; i++)
      lines.push(`${readFileSync(sheet.file, 'utf8').split('\n')[1]!.split(';')[0]};Item ${i};Status ${i}`);
    const file = join(dir, 'status.csv');
    writeFileSync(file, `${lines.join('\n')}\n`);
    const mapping = join(dir, 'status.yaml');
    writeFileSync(
      mapping,
      `name: status\ntarget: tradeItem\nownerCompanyId: ${owner}\nlanguage: fr-FR\nkey: gtin\ncolumns:\n  - { column: GTIN, field: gtin, type: gtin }\n  - { column: Name, field: tradeItemName }\n  - { column: Status, field: tradeItemStatusId, lookup: { list: trade-item-status } }\nscope: owner\n`,
    );
    // Both commands at once, each against a sandbox of its own: its list lookups are its own to count.
    const interrupted = async (command: 'validate' | 'reconcile', signal: 'SIGINT' | 'SIGTERM', code: number) => {
      const api = await startSandbox({ port: 0 });
      try {
        api.handle.setFaults({ latencyMs: 1500, seed: 13 });
        const listed = () => api.handle.counts().byRoute['GET /v2/lists/:listName'] ?? 0;
        const run = cli([command, file, '--mapping', mapping, '--report-dir', join(dir, command)], {
          ...inlineEnv(api.url, join(dir, `${command}-state`)),
          CHUNK_SIZE: '10',
        });
        // Its list lookup has reached the (slow) sandbox: the run is resolving, its signal handlers in place.
        await until(() => listed() > 0);
        run.child.kill(signal);
        const r = await run.exit;
        expect(r.code, `${command}: ${r.stderr}`).toBe(code);
        const [s] = summaries(join(dir, command));
        expect(s!.s).toMatchObject({ exitCode: code, aborted: 'interrupted' });
        expect(s!.s.counts.notAttempted).toBeGreaterThan(0);
        expect(readFileSync(join(s!.dir, 'rows.csv'), 'utf8').trim().split(/\r?\n/)).toHaveLength(41);
      } finally {
        await api.close();
      }
    };
    await Promise.all([interrupted('validate', 'SIGINT', 130), interrupted('reconcile', 'SIGTERM', 143)]);
  }, 60_000);
});
