// An aborted run always writes its report (issue 33, deliver 5): whatever ends a run early — the API unavailable after
// its retries (writes, or the look-ups of a brand), a credential refused, the archive guard — summary.json, rows.* and
// rejected.* are written with every row's outcome, `not_attempted` for what was not sent; inline and queued alike.
// A lost lease and a signal: test/integration/lease-fencing.test.ts and signals.test.ts (inline), run-lease.test.ts.
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { runImport, type RunResult } from '../../src/pipeline/run/run.ts';
import { importQueueClient } from '../../src/queue/enqueue.ts';
import { startWorkers } from '../../src/queue/workers.ts';
import { contextFromConfig } from '../../src/runtime.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import type { FaultSpec } from '../../src/sandbox/faults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { testGtin } from '../helpers/sheets.ts';
import { eanMapping } from '../helpers/mappings.ts';
import { inlineEnv, queueEnv } from '../helpers/env.ts';
import { reportRows } from '../helpers/sandbox.ts';

const owner = DEMO_COMPANY_ID;
const redisUrl = inject('redisUrl');
let sandbox: RunningSandbox;
let dir: string;

const MAPPING = (withBrand: boolean) =>
  eanMapping(`aborted-${withBrand ? 'brand' : 'plain'}`, owner, { brand: withBrand, scope: 'owner' });

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'ps-aborted-'));
});
// Queued cases use key prefixes of their own on the suite's private Redis (gone with the suite).
afterAll(async () => {
  await sandbox?.close();
});

let n = 0;
/** A sheet of `rows` items (with a brand column when `withBrand`) and its mapping, in a fresh folder. */
function sheet(rows: number, withBrand: boolean, prefix: string): { file: string; mapping: string; sub: string } {
  const sub = join(dir, `case-${++n}`);
  const lines = [`EAN;Nom;${withBrand ? 'Marque;' : ''}Poids;Unité`];
  for (let i = 0; i < rows; i++)
    lines.push(`${testGtin(i, prefix)};Biscuits ${i};${withBrand ? `Marque ${i % 3};` : ''}${100 + i};g`);
  const file = join(dir, `sheet-${n}.csv`);
  writeFileSync(file, `${lines.join('\n')}\n`);
  const mapping = join(dir, `mapping-${n}.yaml`);
  writeFileSync(mapping, MAPPING(withBrand));
  return { file, mapping, sub };
}

function env(sub: string, queued: boolean, extra: Record<string, string> = {}): Record<string, string> {
  const both = { UPLOAD_DIR: join(sub, 'uploads'), STATE_DIR: join(sub, 'state'), API_CONCURRENCY: '4' };
  return queued
    ? queueEnv(sandbox.url, redisUrl, `ps-aborted-${process.pid}-${n}`, sub, { ...both, LOG_LEVEL: 'silent', ...extra })
    : inlineEnv(sandbox.url, sub, { ...both, LOG_LEVEL: 'silent', ...extra });
}

/** Runs the import inline or through a worker; the result as the command would have it. */
async function runIt(
  queued: boolean,
  e: Record<string, string>,
  req: { file: string; mapping: string; mode?: 'full' },
): Promise<RunResult> {
  if (!queued) {
    const cc = await contextFromConfig(loadConfig(e), {});
    try {
      return await runImport(req, cc.ctx);
    } finally {
      await cc.close();
    }
  }
  const workers = await startWorkers(loadConfig(e), { jobsDir: join(dir, 'no-jobs'), chunkSize: 10 });
  const client = importQueueClient(loadConfig(e));
  try {
    const { jobId } = await client.enqueue({ request: req, origin: 'cli', step: 'prepare' });
    const r = await client.wait(jobId, 60_000);
    return {
      runId: r.summary.runId,
      exitCode: r.summary.exitCode,
      summary: r.summary,
      reportDir: r.reportDir,
      files: [],
    };
  } finally {
    await client.close();
    await workers.close();
  }
}

/** The report of an aborted run: complete, every row once, nothing sent `not_attempted`, rejected.* holding them. */
function expectCompleteAbortedReport(r: RunResult, rows: number, abortCode: string, archives = 0): string[] {
  expect(r.exitCode).toBe(3);
  expect(r.summary.abortCode).toBe(abortCode);
  const summary = JSON.parse(readFileSync(join(r.reportDir, 'summary.json'), 'utf8')) as RunResult['summary'];
  expect(summary.counts.rows).toBe(rows);
  const lines = reportRows(r.reportDir);
  expect(lines).toHaveLength(rows + archives);
  const outcomes = lines.map((l) => l[2]!);
  expect(
    outcomes.every((o) => o === 'not_attempted' || o === 'failed' || o === 'created'),
    outcomes.join(),
  ).toBe(true);
  expect(summary.counts.notAttempted).toBe(outcomes.filter((o) => o === 'not_attempted').length);
  expect(summary.counts.notAttempted).toBeGreaterThan(0);
  expect(existsSync(join(r.reportDir, 'rows.xlsx'))).toBe(true);
  // rejected.* holds the rows not sent (archives have no row, nothing to fix in the sheet).
  const rejected = readFileSync(join(r.reportDir, 'rejected.csv'), 'utf8');
  const unsentRows = lines.filter((l) => l[0] !== '' && (l[2] === 'not_attempted' || l[2] === 'failed')).length;
  expect(rejected.trim().split(/\r?\n/).length - 1).toBe(unsentRows);
  expect(unsentRows).toBeGreaterThan(0);
  expect(rejected).toContain('NOT_ATTEMPTED');
  return outcomes;
}

function faults(spec: FaultSpec): void {
  sandbox.handle.reset();
  sandbox.handle.setFaults({ retryAfterSeconds: 0, ...spec });
}

// Queued, the API unavailable is no abort: its chunk jobs are retried with backoff (PS_ERR_CIRCUIT_OPEN),
// then their rows are failed in the run's report.
describe('an aborted inline run writes its whole report', () => {
  it('the API answers every create 503: the circuit opens, the rows not sent are not_attempted', async () => {
    const s = sheet(60, false, '036001');
    faults({ routes: ['POST /api/tradeItem'], rate503: 1 });
    try {
      // Refusals that do not depend on the rate: the pace the limiter learns, and each create's pause before it is
      // sent again, are made short (API_MIN_RPS, CREATE_RETRY_MAX_MS) so that the run reaches its circuit soon.
      const r = await runIt(false, env(s.sub, false, { API_MIN_RPS: '1000', CREATE_RETRY_MAX_MS: '5' }), s);
      expectCompleteAbortedReport(r, 60, 'PS_ERR_CIRCUIT_OPEN');
    } finally {
      sandbox.handle.setFaults({});
    }
  }, 90_000);
});

describe.each([false, true])('an aborted run writes its whole report (queued: %s)', (queued) => {
  it("the owner's brands cannot be listed (503 after the retries): the run stops with its report", async () => {
    const s = sheet(30, true, queued ? '036003' : '036004');
    faults({ routes: ['GET /api/brands'], rate503: 1 });
    try {
      const r = await runIt(queued, env(s.sub, queued), s);
      const outcomes = expectCompleteAbortedReport(r, 30, 'PS_ERR_HTTP_UNAVAILABLE');
      expect(new Set(outcomes)).toEqual(new Set(['not_attempted']));
      expect(sandbox.handle.counts().writes).toBe(0);
    } finally {
      sandbox.handle.setFaults({});
    }
  }, 90_000);

  it('the credential is refused (401): every row not_attempted, nothing sent', async () => {
    const s = sheet(25, false, queued ? '036005' : '036006');
    sandbox.handle.reset();
    const r = await runIt(queued, env(s.sub, queued, { API_TOKEN: 'not-a-token' }), s);
    const outcomes = expectCompleteAbortedReport(r, 25, 'PS_ERR_HTTP_UNAUTHORIZED');
    expect(new Set(outcomes)).toEqual(new Set(['not_attempted']));
    expect(sandbox.handle.counts().writes).toBe(0);
  }, 90_000);

  it('the archive guard trips: every row and every archive not_attempted, nothing sent', async () => {
    const prefix = queued ? '036007' : '036008';
    const s = sheet(5, false, prefix);
    sandbox.handle.reset();
    // 20 items of the owner; the sheet names 5 of them: a full run would archive 15 of 20.
    const full = sheet(20, false, prefix);
    await runIt(false, env(full.sub, false), full);
    const writes = sandbox.handle.counts().writes;
    const r = await runIt(queued, env(s.sub, queued), { ...s, mode: 'full' });
    expectCompleteAbortedReport(r, 5, 'PS_ERR_ARCHIVE_GUARD', 15);
    expect(sandbox.handle.counts().writes).toBe(writes);
  }, 90_000);
});
