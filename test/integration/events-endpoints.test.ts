// Several endpoints from a `webhooks:` file (issue 25): each gets the events its filter names, signed with its own
// secret (each receiver verifies with `standardwebhooks` and its secret only), and summary.json lists each delivery by
// endpoint. An inline import, so no Redis: the filter is the endpoint's, whichever path delivers.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';

let sandbox: RunningSandbox;
let all: Receiver;
let ends: Receiver;
beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  all = await startReceiver();
  ends = await startReceiver();
});
afterAll(async () => {
  await all?.close();
  await ends?.close();
  await sandbox?.close();
});

describe('webhook endpoints from a file', () => {
  it('sends each endpoint the events its filter names, signed with its own secret', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-ev-endpoints-'));
    const { file, mapping } = writeProductSheet(dir, 2, { owner: DEMO_COMPANY_ID });
    const hooks = join(dir, 'webhooks.yaml');
    writeFileSync(
      hooks,
      `webhooks:\n  - { name: all, url: "${all.url}", secret: "${all.secret}" }\n` +
        `  - { name: ends, url: "${ends.url}", secretEnv: ENDS_SECRET, events: ["run.finished", "run.aborted"] }\n`,
    );
    const env = inlineEnv(sandbox.url, dir, {
      WEBHOOKS_FILE: hooks,
      ENDS_SECRET: ends.secret,
      WEBHOOK_RETRY_BASE_MS: '50',
    });
    const r = await cliInProcess(['import', file, '--mapping', mapping], {
      env,
      unset: ['WEBHOOK_URL', 'WEBHOOK_SECRET'],
    });
    expect(r.code, r.stdout + r.stderr).toBe(0);

    const types = (r: Receiver) => r.received.map((x) => `${x.type} ${x.verified ? 'verified' : 'NOT verified'}`);
    expect(types(all)).toEqual(['run.started verified', 'run.finished verified']);
    expect(types(ends)).toEqual(['run.finished verified']);
    // The same event to both: one id.
    expect(ends.received[0]!.id).toBe(all.received[1]!.id);

    const runId = readdirSync(join(dir, 'reports')).filter((n) => !n.startsWith('.'))[0]!;
    const summary = JSON.parse(readFileSync(join(dir, 'reports', runId, 'summary.json'), 'utf8'));
    expect(
      summary.events.map(
        (e: { type: string; endpoint: string; state: string }) => `${e.endpoint} ${e.type} ${e.state}`,
      ),
    ).toEqual(['all run.started delivered', 'all run.finished delivered', 'ends run.finished delivered']);
    expect(JSON.stringify(summary)).not.toContain(ends.secret.slice('whsec_'.length));
  }, 30_000);
});
