// Never a duplicate (docs/concurrency.md): the owner lease is fenced — a writer paused past its lease, or a worker
// paused past its job lock, sends nothing more once it resumes. Real processes (the CLI, `worker`) stopped with
// SIGSTOP, a real Redis, and a sandbox that assigns its own ids on create, as many real APIs do: a create sent twice is
// a second item, so every test here counts items per GTIN. (One run at a time per owner, no pause: run-lease.test.ts.)
// The process that is paused holds a short lease or job lock, which its pause outlasts on its own clock (the fence it
// trusts); the ones that go on run on long ones, which a loaded machine cannot let run out under them. A queue worker
// paused past its job lock: lease-fencing-queue.test.ts.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { spawnCli } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import {
  expectAbortedEvent,
  expectReportTrue,
  finishedRuns,
  OWNER,
  ownerItems,
  useReceiver,
  useRunSandbox,
} from '../helpers/lease-runs.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const owner = OWNER;
const redisUrl = inject('redisUrl');
const sandbox = useRunSandbox({ assignIds: true });
const rx = useReceiver();

const cli = (args: string[], env: Record<string, string>) => spawnCli(args, { env });
const items = () => ownerItems(sandbox);
/** The items a run archived as a late second item of a key (its duplicates.jsonl). */
const removedIds = (runDir: string): string[] => {
  const file = join(runDir, 'duplicates.jsonl');
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((l) => String((JSON.parse(l) as { tradeItemId: string }).tradeItemId));
};

describe('the owner lease is fenced', () => {
  for (const withRedis of [false, true]) {
    it(`an inline import paused past its lease${withRedis ? ' (Redis)' : ' (lock file; its run.aborted event, issue 25)'} sends nothing more once another import took over: it ends as lease lost, exit 3`, async () => {
      sandbox.handle.setFaults({ latencyMs: [15, 25], seed: 3 });
      const dir = mkdtempSync(join(tmpdir(), 'ps-fence-inline-'));
      const rows = 300;
      const a = writeProductSheet(dir, rows, { owner, file: 'night.csv', name: (i) => `Night ${i}` });
      const b = writeProductSheet(dir, rows, { owner, file: 'fix.csv', name: (i) => `Fix ${i}` });
      const env = inlineEnv(sandbox.url, dir, {
        LOG_FORMAT: 'json',
        LEASE_TTL_SECONDS: '2',
        ...(withRedis
          ? { REDIS_URL: redisUrl, QUEUE_PREFIX: `fence-${process.pid}-${Date.now()}` }
          : { WEBHOOK_URL: rx.receiver.url, WEBHOOK_SECRET: rx.receiver.secret, WEBHOOK_RETRY_BASE_MS: '50' }),
      });
      const first = cli(['import', a.file, '--mapping', a.mapping], env);
      try {
        await until('the first import to create items', () => items().length >= 30);
        first.child.kill('SIGSTOP');
        const pausedAt = items().length;
        // Paused past its lease (2 s): the second import, waiting for it, takes it over and writes every row.
        const second = await cli(['import', b.file, '--mapping', b.mapping, '--wait-lock', '30'], {
          ...env,
          LEASE_TTL_SECONDS: '30',
        }).exit;
        expect(second.code, second.stderr).toBe(0);
        first.child.kill('SIGCONT');
        const resumed = await first.exit;
        expect(resumed.code, resumed.stderr).toBe(3);
        expect(resumed.stdout + resumed.stderr).toMatch(/lease lost/);
        const runs = finishedRuns(join(dir, 'reports'));
        expect(runs).toHaveLength(2);
        // One live item per GTIN, with the second import's names: the first one wrote nothing after it resumed.
        // A SIGSTOP that lands between the fence's last check and the socket lets one create out when the first
        // resumes (docs/concurrency.md "The window that remains"): that item must be archived and named in a
        // run's duplicates.jsonl (reported duplicate_removed), never left live.
        const live = items().filter((t) => !t.archived);
        expect(new Set(live.map((t) => String(t.gtin))).size).toBe(rows);
        expect(live).toHaveLength(rows);
        expect(live.every((t) => String(t.tradeItemName).startsWith('Fix '))).toBe(true);
        const removed = new Set(runs.flatMap((r) => removedIds(r.dir)));
        for (const t of items().filter((i) => i.archived)) {
          expect(String(t.tradeItemName)).toMatch(/^Night /);
          expect(removed.has(String(t.tradeItemId))).toBe(true);
        }
        const lost = runs.find((r) => r.summary.exitCode === 3)!;
        expect(lost.summary).toMatchObject({
          abortCode: 'PS_ERR_LEASE_LOST',
          aborted: expect.stringMatching(/^lease lost: /),
        });
        expect(lost.summary.counts.notAttempted).toBeGreaterThan(0);
        expect(lost.summary.counts.created).toBeGreaterThanOrEqual(pausedAt - 8);
        for (const r of runs) expectReportTrue(sandbox, r.dir);
        if (!withRedis) expectAbortedEvent(rx.receiver, lost.summary, 'lease_lost');
      } finally {
        // Never leave a child stopped (a failed assertion above may come before SIGCONT).
        first.child.kill('SIGCONT');
        first.child.kill('SIGKILL');
      }
    }, 90_000);
  }
});
