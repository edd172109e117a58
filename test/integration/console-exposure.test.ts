// `serve` is closed by default (docs/errors.md): without credentials it listens on loopback only; another address is
// refused (exit 2, saying how to set them) unless --insecure-no-auth, which warns at every start.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { type CliOptions } from '../helpers/cli.ts';
import { servePort, useProcesses, type TestProcess } from '../helpers/processes.ts';

const procs = useProcesses();

/** The environment of `serve`: the suite's Redis, directories of its own, no credentials unless `extra` sets them. */
function serveEnv(extra: Record<string, string>): CliOptions {
  const dir = mkdtempSync(join(tmpdir(), 'ps-exposure-'));
  return {
    env: {
      REDIS_URL: inject('redisUrl'),
      QUEUE_PREFIX: `ps-exposure-${process.pid}`,
      REPORT_DIR: join(dir, 'reports'),
      UPLOAD_DIR: join(dir, 'uploads'),
      LOG_LEVEL: 'warn',
      ...extra,
    },
    unset: ['CONSOLE_TOKEN', 'CONSOLE_USER', 'CONSOLE_PASSWORD'].filter((k) => !(k in extra)),
  };
}

/** `serve` as a process: what is tested is where it listens and what it says at start. */
const serve = (args: string[], extra: Record<string, string> = {}) =>
  procs.spawn(['serve', '--port', '0', ...args], serveEnv(extra));

/** The processes of the tests below, started together (each test checks its own): a start is most of a test's time. */
let started: Record<'local' | 'wide' | 'insecure' | 'token' | 'userOnly', TestProcess>;
beforeAll(async () => {
  started = {
    local: serve([]),
    wide: serve(['--host', '0.0.0.0']),
    insecure: serve(['--host', '0.0.0.0', '--insecure-no-auth']),
    token: serve(['--host', '0.0.0.0'], { CONSOLE_TOKEN: 'a-long-console-token' }),
    userOnly: serve([], { CONSOLE_USER: 'steward' }),
  };
  // Each one listening or exited before the tests (the hook's timeout, not a test's, bounds the starts).
  await Promise.all(Object.values(started).map((p) => servePort(p, 60_000)));
});

async function stop(p: TestProcess): Promise<number | null> {
  p.child.kill('SIGTERM');
  return (await p.exit).code;
}

describe('serve without credentials', () => {
  it('listens on 127.0.0.1 by default, without a warning', async () => {
    const p = started.local;
    const port = await servePort(p);
    expect(p.out.stdout, p.output()).toContain(`console on http://127.0.0.1:${port}/`);
    expect((await fetch(`http://127.0.0.1:${port}/mappings`)).status).toBe(200);
    expect(await stop(p)).toBe(0);
    expect(p.out.stderr).toBe('');
  });

  it('refuses another address with exit 2 and one line saying how to set credentials', async () => {
    const p = await started.wide.exit;
    expect(p.code).toBe(2);
    const lines = p.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^product-sync: the console would listen on 0\.0\.0\.0 without authentication, open to anyone who reaches it: set CONSOLE_TOKEN .* or CONSOLE_USER and CONSOLE_PASSWORD .*; or listen on 127\.0\.0\.1 .*; or give --insecure-no-auth to run it open anyway \[PS_ERR_CONFIG_INVALID\]$/,
    );
    expect(p.stdout).toBe('');
  });

  it('--insecure-no-auth listens there anyway, with a warning at start', async () => {
    const p = started.insecure;
    const port = await servePort(p);
    expect(p.out.stderr).toMatch(
      /^product-sync: WARNING: the console listens on 0\.0\.0\.0 without authentication \(--insecure-no-auth\): anyone who reaches it can upload sheets/,
    );
    expect((await fetch(`http://127.0.0.1:${port}/mappings`)).status).toBe(200);
    expect(await stop(p)).toBe(0);
  });
});

describe('serve with credentials', () => {
  it('listens on any address with CONSOLE_TOKEN, guarded, without a warning', async () => {
    const p = started.token;
    const port = await servePort(p);
    expect((await fetch(`http://127.0.0.1:${port}/mappings`)).status).toBe(401);
    expect(
      (await fetch(`http://127.0.0.1:${port}/mappings`, { headers: { authorization: 'Bearer a-long-console-token' } }))
        .status,
    ).toBe(200);
    expect(await stop(p)).toBe(0);
    expect(p.out.stderr).toBe('');
  });

  it('refuses CONSOLE_USER without CONSOLE_PASSWORD, even on loopback', async () => {
    const p = await started.userOnly.exit;
    expect(p.code).toBe(2);
    expect(p.stderr).toBe(
      'product-sync: CONSOLE_USER is set but CONSOLE_PASSWORD is not: basic auth of the console needs both [PS_ERR_CONFIG_INVALID]\n',
    );
  });
});
