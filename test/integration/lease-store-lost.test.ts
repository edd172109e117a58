// A lease is never used after its store lost it (docs/concurrency.md, "Fencing"): a holder whose Redis connection
// dropped sends nothing until a renewal says the lease is still its own — and ends as lease lost when Redis came back
// without the lease (a restart without persistence), where another run could have been granted it meanwhile. Real
// processes (the CLI), a redis-server of the test's own that it kills and starts again, the sandbox over HTTP.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { spawnCli } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { finishedRuns, OWNER, ownerItems, useRunSandbox } from '../helpers/lease-runs.ts';
import { ownRedis } from '../helpers/redis-server.ts';
import { expectOneItemPerGtin } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { sleep, until } from '../helpers/wait.ts';

const owner = OWNER;
const sandbox = useRunSandbox({ assignIds: true });
const items = () => ownerItems(sandbox);

const CONCURRENCY = 4;

describe('an inline import whose Redis goes away sends nothing until the lease is confirmed there', () => {
  for (const aof of [false, true]) {
    it(`Redis killed and started again ${aof ? 'with its data (AOF): the import goes on once its lease is confirmed, exit 0' : 'without persistence: the import ends as lease lost (exit 3), nothing sent after the drop but what was in flight'}`, async () => {
      sandbox.handle.setFaults({ latencyMs: [20, 30], seed: 21 });
      const dir = mkdtempSync(join(tmpdir(), 'ps-lease-store-lost-'));
      const redis = await ownRedis(dir, { aof });
      await redis.start();
      const rows = 600;
      const sheet = writeProductSheet(dir, rows, { owner });
      const reportDir = join(dir, 'reports');
      const run = spawnCli(['import', sheet.file, '--mapping', sheet.mapping], {
        env: inlineEnv(sandbox.url, dir, {
          REDIS_URL: redis.url,
          QUEUE_PREFIX: 'lost',
          API_CONCURRENCY: String(CONCURRENCY),
          LOG_FORMAT: 'json',
        }),
      });
      try {
        await until('the import to write', () => items().length >= 50);
        await redis.stop('SIGKILL');
        const atDrop = sandbox.handle.counts().writes;
        // Away for a while: the import's requests in flight settle; nothing new goes out.
        await sleep(1500);
        const duringOutage = sandbox.handle.counts().writes - atDrop;
        await redis.start();
        // What is left goes out without latency (the outage's window above is what the slow API was for).
        sandbox.handle.setFaults({});
        const r = await run.exit;
        const after = sandbox.handle.counts().writes - atDrop;
        expect(duringOutage, 'writes sent while Redis was away').toBeLessThanOrEqual(CONCURRENCY);
        const [{ summary }] = finishedRuns(reportDir) as [ReturnType<typeof finishedRuns>[number]];
        if (aof) {
          expect(r.code, r.stderr).toBe(0);
          expectOneItemPerGtin(sandbox, owner, rows);
        } else {
          // Redis came back without the lease: another run could hold it now. What was in flight when it dropped is all
          // that went out after.
          expect(r.code, r.stderr + r.stdout).toBe(3);
          expect(r.stdout + r.stderr).toMatch(/lease lost/);
          expect(summary.abortCode).toBe('PS_ERR_LEASE_LOST');
          expect(after, 'writes sent after Redis dropped').toBeLessThanOrEqual(CONCURRENCY);
          expect(summary.counts.notAttempted).toBeGreaterThan(0);
          expectOneItemPerGtin(sandbox, owner, items().length);
        }
      } finally {
        run.child.kill('SIGKILL');
        await redis.stop();
      }
    }, 90_000);
  }
});
