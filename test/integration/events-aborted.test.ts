// run.aborted of an inline import (issue 25) beyond the archive guard: a run that lost its owner lease (paused past it
// while another import took it over) and a run interrupted by SIGTERM. The event reaches a receiver that verifies its
// signature with `standardwebhooks`, and its data is the run's report: the same run id, reason, exit code and counts.
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { spawnCli } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { sleep, until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
let sandbox: RunningSandbox;
let receiver: Receiver;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0, assignIds: true });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver?.close();
  await sandbox?.close();
});

const cli = (args: string[], env: Record<string, string>) => spawnCli(args, { env });

const items = () => sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);

function env(dir: string, extra: Record<string, string> = {}): Record<string, string> {
  return inlineEnv(sandbox.url, dir, {
    WEBHOOK_URL: receiver.url,
    WEBHOOK_SECRET: receiver.secret,
    WEBHOOK_RETRY_BASE_MS: '50',
    ...extra,
  });
}

interface Summary {
  runId: string;
  exitCode: number;
  aborted?: string;
  abortCode?: string;
  counts: Record<string, number>;
  events?: { id: string; type: string; state: string }[];
}

const summaries = (reportDir: string): Summary[] =>
  readdirSync(reportDir)
    .filter((d) => existsSync(join(reportDir, d, 'summary.json')))
    .map((d) => JSON.parse(readFileSync(join(reportDir, d, 'summary.json'), 'utf8')) as Summary);

/** The run.aborted the receiver accepted for `run`: signed, listed as delivered in its summary, true to its report. */
function expectAbortedEvent(run: Summary, reason: string): void {
  const listed = run.events?.find((e) => e.type === 'run.aborted');
  expect(listed, JSON.stringify(run.events)).toMatchObject({ state: 'delivered' });
  const got = receiver.accepted().get(listed!.id);
  expect(got).toMatchObject({ type: 'run.aborted', verified: true });
  expect(got!.data).toMatchObject({
    runId: run.runId,
    reason,
    code: run.abortCode,
    exitCode: run.exitCode,
    counts: run.counts,
  });
  expect(run.aborted).toContain(String(got!.data.message));
  // One end event per run: no run.finished beside it.
  expect(
    [...receiver.accepted().values()].filter((r) => r.data.runId === run.runId && r.type.startsWith('run.')),
  ).toHaveLength(2);
}

describe('run.aborted of an inline import', () => {
  it('lease lost: a run paused past its lease while another import took it over', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [15, 25], seed: 3 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-ev-lease-'));
    const rows = 200;
    // Two sheets of other contents, so two runs (a run's id comes from its sheet and mapping).
    const a = writeProductSheet(dir, rows, { owner, file: 'night.csv', name: (i) => `Night ${i}` });
    const b = writeProductSheet(dir, rows, { owner, file: 'fix.csv', name: (i) => `Fix ${i}` });
    const e = env(dir, { LEASE_TTL_SECONDS: '2' });
    const first = cli(['import', a.file, '--mapping', a.mapping], e);
    try {
      await until(() => items().length >= 30);
      first.child.kill('SIGSTOP');
      // Paused past its lease (2 s): the second import takes it over.
      await sleep(3000);
      const second = await cli(['import', b.file, '--mapping', b.mapping], e).exit;
      expect(second.code, second.stderr).toBe(0);
      first.child.kill('SIGCONT');
      const resumed = await first.exit;
      expect(resumed.code, resumed.stderr).toBe(3);
      const lost = summaries(join(dir, 'reports')).find((s) => s.exitCode === 3)!;
      expect(lost.abortCode).toBe('PS_ERR_LEASE_LOST');
      expect(lost.counts.notAttempted).toBeGreaterThan(0);
      expectAbortedEvent(lost, 'lease_lost');
    } finally {
      first.child.kill('SIGCONT');
      first.child.kill('SIGKILL');
      sandbox.handle.setFaults({});
    }
  }, 60_000);

  it('interrupted: SIGTERM during the import still delivers its run.aborted before the process exits', async () => {
    sandbox.handle.reset();
    sandbox.handle.setFaults({ latencyMs: [20, 30], seed: 11 });
    const dir = mkdtempSync(join(tmpdir(), 'ps-ev-sigterm-'));
    const sheet = writeProductSheet(dir, 200, { owner, name: (i) => `Term ${i}` });
    try {
      const run = cli(['import', sheet.file, '--mapping', sheet.mapping], env(dir));
      await until(() => items().length >= 20);
      run.child.kill('SIGTERM');
      const r = await run.exit;
      expect(r.code, r.stderr).toBe(143);
      const [interrupted] = summaries(join(dir, 'reports'));
      expect(interrupted).toMatchObject({ aborted: 'interrupted', abortCode: 'PS_ERR_RUN_INTERRUPTED' });
      expectAbortedEvent(interrupted!, 'interrupted');
    } finally {
      sandbox.handle.setFaults({});
    }
  }, 60_000);
});
