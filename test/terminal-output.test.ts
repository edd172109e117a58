import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { sandboxBanner } from '../src/commands/sandbox.ts';
import { loadConfig } from '../src/config.ts';
import { progressReporter } from '../src/commands/progress.ts';
import { logFormat, prettyLine } from '../src/logger.ts';
import { LiveLine } from '../src/terminal.ts';

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

/** What a terminal shows after `out`: carriage return, erase to the end of the line and newline; colours left out. */
function screen(out: string): string[] {
  const lines: string[] = [''];
  let col = 0;
  // eslint-disable-next-line no-control-regex
  const text = out.replace(/\x1b\[[0-9;]*m/g, '');
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    const at = lines.length - 1;
    if (c === '\r') col = 0;
    else if (c === '\n') {
      lines.push('');
      col = 0;
    } else if (text.startsWith('\x1b[K', i)) {
      lines[at] = lines[at]!.slice(0, col);
      i += 2;
    } else {
      lines[at] = lines[at]!.slice(0, col) + c + lines[at]!.slice(col + 1);
      col++;
    }
  }
  return lines.at(-1) === '' ? lines.slice(0, -1) : lines;
}

describe('progress and log lines', () => {
  it('on a terminal: a log line clears the progress line, and the progress line is drawn again below it, in one write', () => {
    const writes: string[] = [];
    const line = new LiveLine((t) => writes.push(t), true);
    line.above('before\n');
    line.status('[push] 1/10');
    line.above('a log line\n');
    line.status('[push] 5/10');
    line.end();
    line.above('after\n');
    expect(writes).toEqual([
      'before\n',
      '\r\x1b[K[push] 1/10',
      '\r\x1b[Ka log line\n[push] 1/10',
      '\r\x1b[K[push] 5/10',
      '\n',
      'after\n',
    ]);
    expect(screen(writes.join(''))).toEqual(['before', 'a log line', '[push] 5/10', 'after']);
  });

  it('not on a terminal: plain lines, no carriage return, the progress every second at most', () => {
    const writes: string[] = [];
    const p = progressReporter(new LiveLine((t) => writes.push(t), false));
    p.update({ stage: 'push', rowsRead: 1, rowsTotal: 10, operationsSent: 1, errors: 0 });
    p.update({ stage: 'push', rowsRead: 2, rowsTotal: 10, operationsSent: 2, errors: 0 });
    p.done();
    expect(writes).toEqual(['[push] rows read 1/10 · operations sent 1/10 · writes 0 · errors 0\n']);
  });

  const script = ['/usr/bin/script', '/bin/script'].find((f) => existsSync(f));
  it.skipIf(!script)(
    'under a pseudo-terminal: the log lines stand above the progress line, which ends drawn once, the summary below',
    () => {
      const r = spawnSync(script!, ['-qfec', 'node --import tsx test/fixtures/progress-and-log.ts', '/dev/null'], {
        cwd: root,
        encoding: 'utf8',
        env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', TERM: 'dumb', LOG_LEVEL: 'info' },
        timeout: 30_000,
      });
      expect(r.status, r.stderr).toBe(0);
      const shown = screen(r.stdout);
      expect(shown).toHaveLength(4);
      expect(shown[0]).toMatch(/^\d\d:\d\d:\d\d INFO {2}first log line {2}runId=r-1$/);
      expect(shown[1]).toMatch(/^\d\d:\d\d:\d\d WARN {2}second log line$/);
      expect(shown[2]).toMatch(/^\[push\] rows read 5\/10 .* errors 0 \[#{10}\.{10}\]$/);
      expect(shown[3]).toBe('summary');
    },
    40_000,
  );

  it('without a terminal: the same output as plain lines, the log as JSON', () => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', 'test/fixtures/progress-and-log.ts'], {
      cwd: root,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', LOG_LEVEL: 'info' },
    });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stderr).not.toContain('\r');
    expect(r.stderr).not.toContain('\x1b');
    const lines = r.stderr.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^\[push\] rows read 1\/10 /);
    expect(JSON.parse(lines[1]!)).toMatchObject({ msg: 'first log line', runId: 'r-1' });
    expect(JSON.parse(lines.at(-1)!)).toMatchObject({ msg: 'second log line' });
    expect(r.stdout).toBe('summary\n');
  });
});
