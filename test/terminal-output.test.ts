import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxBanner } from '../src/commands/sandbox.ts';
import { loadConfig } from '../src/config.ts';
import { logFormat, prettyLine } from '../src/logger.ts';

const root = new URL('..', import.meta.url).pathname;

/** Runs a few lines against the real root logger in a fresh process; returns what it wrote to stderr. */
function logOnce(env: Record<string, string>): string {
  const code = `import { logger } from './src/logger.ts';
logger.info({ runId: 'r-1', rows: 30, file: 'a b.csv' }, 'run finished');
logger.warn({ err: new Error('boom') }, 'something failed');`;
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], {
    cwd: root,
    encoding: 'utf8',
    env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info', ...env },
  });
  expect(r.status, r.stderr).toBe(0);
  return r.stderr;
}

describe('terminal output', () => {
  it('picks readable lines on a terminal, JSON elsewhere, LOG_FORMAT first', () => {
    expect(logFormat({}, true)).toBe('pretty');
    expect(logFormat({}, false)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'json' }, true)).toBe('json');
    expect(logFormat({ LOG_FORMAT: 'PRETTY' }, false)).toBe('pretty');
    expect(loadConfig({ LOG_FORMAT: 'json' }).LOG_FORMAT).toBe('json');
    expect(() => loadConfig({ LOG_FORMAT: 'xml' })).toThrow(/LOG_FORMAT: must be json or pretty/);
  });

  it('writes readable lines with LOG_FORMAT=pretty (as on a terminal): time, level, message, fields, the stack below', () => {
    const lines = logOnce({ LOG_FORMAT: 'pretty' }).trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\d\d:\d\d:\d\d INFO {2}run finished {2}runId=r-1 rows=30 file="a b.csv"$/);
    expect(lines[1]).toMatch(/^\d\d:\d\d:\d\d WARN {2}something failed$/);
    expect(lines[2]).toMatch(/^ {4}Error: boom$/);
    expect(lines.some((l) => l.startsWith('{'))).toBe(false);
  });

  it('writes one JSON object per line when stderr is not a terminal and LOG_FORMAT is unset', () => {
    const lines = logOnce({}).trimEnd().split('\n');
    expect(lines).toHaveLength(2);
    expect(JSON.parse(lines[0]!)).toMatchObject({ level: 30, msg: 'run finished', runId: 'r-1', app: 'product-sync' });
  });

  it('keeps a line it cannot parse as it is', () => {
    expect(prettyLine('not json\n')).toBe('not json');
  });

  it('the sandbox banner names the token (and the settings) to use', () => {
    const banner = sandboxBanner('http://127.0.0.1:4010');
    expect(banner).toContain(
      'PRODUCT_API_URL=http://127.0.0.1:4010 REFERENCE_API_URL=http://127.0.0.1:4010 API_TOKEN=sandbox-token',
    );
    expect(banner).toContain('sandbox-internal-token (demo company, internal)');
    expect(banner).toContain('API_CLIENT_ID=sandbox-client API_CLIENT_SECRET=sandbox-secret');
  });
});

describe('the demo', () => {
  it("prints its summaries and table without the runs' log lines in between", () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-demo-'));
    const r = spawnSync(process.execPath, ['bin/product-sync.mjs', 'demo', '--report-dir', dir], {
      cwd: root,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/Second pass: every valid row unchanged/);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/"level":|run opened|run finished/);
  }, 60_000);
});
