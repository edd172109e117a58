// The fence's last window (docs/concurrency.md), the queued variant of late-create-duplicates.test.ts: the late create
// is a chunk job's, on a worker frozen past its fence check (PS_TEST_FENCE_HOLD) while its lease (2 s) runs out, its
// lease keeper frozen with it; the owner's inline run takes the lease over. The queued run's finish step sweeps as the
// inline run does: as the lost run, its own late item (after); the inline run, as the new holder, the queued run's
// (before) — the queued run's journal is on this machine. The worker keeps its job (the default job lock): once let
// go, its chunk finds the lease lost for good and reports what it did not send.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { spawnCli, type CliProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { expectLateCreateRemoved, lateCreateCatalogue } from '../helpers/late-create.ts';
import { fenceHold as hold, OWNER, useRunSandbox } from '../helpers/lease-runs.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const owner = OWNER;
const redisUrl = inject('redisUrl');
const sandbox = useRunSandbox({ assignIds: true });
const { live } = lateCreateCatalogue(sandbox);

describe('the queued variant: a chunk job let out a create after its lease was taken over', () => {
  for (const order of ['before', 'after'] as const)
    it(`the late create lands ${order === 'before' ? 'while the inline run still runs: it archives it' : 'after the inline run ended: the queued run archives its own'}`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ps-late-create-q-'));
      const rows = 60;
      const night = writeProductSheet(dir, rows, { owner, file: 'night.csv', name: (i) => `Night ${i}` });
      const fix = writeProductSheet(dir, rows, { owner, file: 'fix.csv', name: (i) => `Fix ${i}` });
      const shared = {
        API_CONCURRENCY: '1',
        CHUNK_SIZE: '100',
        REDIS_URL: redisUrl,
        QUEUE_PREFIX: `lateq-${process.pid}-${Date.now()}`,
      };
      const holdA = hold(dir, 'a', 10);
      const holdB = hold(dir, 'b', 40);
      const aReports = join(dir, 'a-reports');
      const bReports = join(dir, 'b-reports');
      const envA = inlineEnv(sandbox.url, dir, {
        ...shared,
        REPORT_DIR: aReports,
        LEASE_TTL_SECONDS: '2',
        PS_TEST_FENCE_HOLD: holdA.env,
      });
      const envB = inlineEnv(sandbox.url, dir, {
        ...shared,
        LEASE_TTL_SECONDS: '60',
        ...(order === 'before' ? { PS_TEST_FENCE_HOLD: holdB.env } : {}),
      });
      const procs: CliProcess[] = [];
      try {
        // The worker passes its fence for the chunk's 10th create and is held there, its lease running out.
        const worker = spawnCli(['worker', '--jobs-dir', join(dir, 'no-jobs')], { env: envA });
        procs.push(worker);
        const enq = spawnCli(['enqueue', night.file, '--mapping', night.mapping, '--wait', '--wait-lock', '60'], {
          env: { ...envA, PS_TEST_FENCE_HOLD: '' },
        });
        procs.push(enq);
        await until('the worker to be held past its fence check', () => existsSync(holdA.held), 60_000);
        expect(live()).toHaveLength(9);
        // The inline run takes the lease over once the queued run's ran out, and creates the GTIN the held create is
        // about to create.
        const b = spawnCli(
          ['import', fix.file, '--mapping', fix.mapping, '--report-dir', bReports, '--wait-lock', '60'],
          { env: envB },
        );
        procs.push(b);
        await expectLateCreateRemoved(
          sandbox,
          order,
          { run: enq, hold: holdA, reports: aReports },
          { run: b, hold: holdB, reports: bReports },
          rows,
        );
      } finally {
        holdA.release();
        holdB.release();
        for (const p of procs) p.child.kill('SIGKILL');
      }
    }, 150_000);
});
