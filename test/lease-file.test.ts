// The lock-file lease of inline runs without Redis (pipeline/run/lease.ts): a lock being created is never taken for a
// stale one, a stale one is taken over, and two runs racing for it never both get it.
import { mkdtempSync, readdirSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { acquireLease, type LeaseOptions } from '../src/pipeline/run/lease.ts';

const OWNER = '5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f';
const options = (reportDir: string, runId: string): LeaseOptions => ({ owner: OWNER, api: 'http://api.test', runId, reportDir, prefix: 'ps', redis: null, autoRenew: false, ttlMs: 60_000 });
const lockFile = (reportDir: string) => {
  const dir = join(reportDir, '.locks');
  return join(dir, readdirSync(dir).find((f) => f.endsWith('.lock'))!);
};

describe('the lock-file lease', () => {
  it('a lock another run has created but not yet written is busy, not stale', async () => {
    const reportDir = mkdtempSync(join(tmpdir(), 'ps-lease-file-'));
    const first = await acquireLease(options(reportDir, 'a'));
    const file = lockFile(reportDir);
    await first.release();
    // What another run's lock looks like between its creation and its content.
    writeFileSync(file, '');
    await expect(acquireLease(options(reportDir, 'b'))).rejects.toMatchObject({ code: 'PS_ERR_RUN_LOCKED' });
    // Not renewed for longer than the lease lives: taken over.
    const old = new Date(Date.now() - 120_000);
    utimesSync(file, old, old);
    const taken = await acquireLease(options(reportDir, 'b'));
    expect(taken.holder).toMatch(/^run b /);
    await taken.release();
  });

  it('a lock whose holder process is gone is taken over; a live one is not', async () => {
    const reportDir = mkdtempSync(join(tmpdir(), 'ps-lease-file-'));
    const first = await acquireLease(options(reportDir, 'a'));
    await expect(acquireLease(options(reportDir, 'b'))).rejects.toMatchObject({ code: 'PS_ERR_RUN_LOCKED', message: expect.stringContaining('run a ') });
    const file = lockFile(reportDir);
    await first.release();
    writeFileSync(file, JSON.stringify({ holder: 'run dead (pid 2147483646)', pid: 2147483646, host: (await import('node:os')).hostname() }));
    const taken = await acquireLease(options(reportDir, 'c'));
    expect(taken.holder).toMatch(/^run c /);
    await taken.release();
  });

  it('runs racing for a free lease: exactly one gets it', async () => {
    for (let round = 0; round < 20; round++) {
      const reportDir = mkdtempSync(join(tmpdir(), 'ps-lease-race-'));
      const results = await Promise.allSettled(Array.from({ length: 4 }, (_, i) => acquireLease(options(reportDir, `r${i}`))));
      expect(results.filter((r) => r.status === 'fulfilled'), `round ${round}`).toHaveLength(1);
      expect(readdirSync(join(reportDir, '.locks')).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    }
  });
});
