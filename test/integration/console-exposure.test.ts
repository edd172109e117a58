// `serve` is closed by default (docs/errors.md): without credentials it listens on loopback only; another address is
// refused (exit 2, saying how to set them) unless --insecure-no-auth, which warns at every start.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';

interface Proc {
  child: ChildProcess;
  out: { stdout: string; stderr: string };
  exit: Promise<number | null>;
}

function serve(args: string[], extra: Record<string, string> = {}): Proc {
  const dir = mkdtempSync(join(tmpdir(), 'ps-exposure-'));
  const env: Record<string, string | undefined> = {
    ...process.env,
    REDIS_URL: inject('redisUrl'),
    QUEUE_PREFIX: `ps-exposure-${process.pid}`,
    REPORT_DIR: join(dir, 'reports'),
    UPLOAD_DIR: join(dir, 'uploads'),
    LOG_LEVEL: 'warn',
    CONSOLE_TOKEN: undefined,
    CONSOLE_USER: undefined,
    CONSOLE_PASSWORD: undefined,
    ...extra,
  };
  const child = spawn(process.execPath, ['bin/product-sync.mjs', 'serve', '--port', '0', ...args], {
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout!.on('data', (d) => (out.stdout += String(d)));
  child.stderr!.on('data', (d) => (out.stderr += String(d)));
  return { child, out, exit: new Promise((resolve) => child.once('exit', (code) => resolve(code))) };
}

/** The console's port once it listens (or null when it exited first). */
async function listening(p: Proc): Promise<number | null> {
  for (let i = 0; i < 400; i++) {
    const m = /console on http:\/\/\S+:(\d+)\//.exec(p.out.stdout);
    if (m) return Number(m[1]);
    if (p.child.exitCode !== null) return null;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`the console did not start: ${p.out.stderr}`);
}

async function stop(p: Proc): Promise<number | null> {
  p.child.kill('SIGTERM');
  return p.exit;
}

describe('serve without credentials', () => {
  it('listens on 127.0.0.1 by default, without a warning', async () => {
    const p = serve([]);
    const port = await listening(p);
    expect(p.out.stdout).toContain(`console on http://127.0.0.1:${port}/`);
    expect((await fetch(`http://127.0.0.1:${port}/mappings`)).status).toBe(200);
    expect(await stop(p)).toBe(0);
    expect(p.out.stderr).toBe('');
  });

  it('refuses another address with exit 2 and one line saying how to set credentials', async () => {
    const p = serve(['--host', '0.0.0.0']);
    expect(await p.exit).toBe(2);
    const lines = p.out.stderr.trim().split('\n');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^product-sync: the console would listen on 0\.0\.0\.0 without authentication, open to anyone who reaches it: set CONSOLE_TOKEN .* or CONSOLE_USER and CONSOLE_PASSWORD .*; or listen on 127\.0\.0\.1 .*; or give --insecure-no-auth to run it open anyway \[PS_ERR_CONFIG_INVALID\]$/,
    );
    expect(p.out.stdout).toBe('');
  });

  it('--insecure-no-auth listens there anyway, with a warning at start', async () => {
    const p = serve(['--host', '0.0.0.0', '--insecure-no-auth']);
    const port = await listening(p);
    expect(p.out.stderr).toMatch(
      /^product-sync: WARNING: the console listens on 0\.0\.0\.0 without authentication \(--insecure-no-auth\): anyone who reaches it can upload sheets/,
    );
    expect((await fetch(`http://127.0.0.1:${port}/mappings`)).status).toBe(200);
    expect(await stop(p)).toBe(0);
  });
});

describe('serve with credentials', () => {
  it('listens on any address with CONSOLE_TOKEN, guarded, without a warning', async () => {
    const p = serve(['--host', '0.0.0.0'], { CONSOLE_TOKEN: 'a-long-console-token' });
    const port = await listening(p);
    expect((await fetch(`http://127.0.0.1:${port}/mappings`)).status).toBe(401);
    expect(
      (await fetch(`http://127.0.0.1:${port}/mappings`, { headers: { authorization: 'Bearer a-long-console-token' } }))
        .status,
    ).toBe(200);
    expect(await stop(p)).toBe(0);
    expect(p.out.stderr).toBe('');
  });

  it('refuses CONSOLE_USER without CONSOLE_PASSWORD, even on loopback', async () => {
    const p = serve([], { CONSOLE_USER: 'steward' });
    expect(await p.exit).toBe(2);
    expect(p.out.stderr).toBe(
      'product-sync: CONSOLE_USER is set but CONSOLE_PASSWORD is not: basic auth of the console needs both [PS_ERR_CONFIG_INVALID]\n',
    );
  });
});
