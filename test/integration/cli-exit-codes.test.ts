// Bad input ends the CLI with exit 2 and one line naming a PS_ERR_* code — never exit 3 "unexpected failure", never a
// stack trace, never a hang (issue 9; docs/commands.md, "Exit codes"). Nothing here needs an API or Redis: every case
// fails before.
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { cliInProcess, type CliResult } from '../helpers/cli.ts';

let dir: string;
let mapping: string;
let sheet: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'ps-cli-exit-'));
  mapping = join(dir, 'products.yaml');
  writeFileSync(
    mapping,
    `name: exit-codes\ntarget: tradeItem\nownerCompanyId: ${DEMO_COMPANY_ID}\nkey: gtin\ncolumns:\n  - { column: GTIN, field: gtin, type: gtin }\n  - { column: Nom, field: tradeItemName }\n`,
  );
  sheet = join(dir, 'ok.csv');
  writeFileSync(sheet, 'GTIN;Nom\n3017620422003;Pâte\n');
});

/**
 * Runs the CLI in-process without Redis, against an API nobody serves; gives up after `timeoutMs` (a hang is a failure,
 * not a stuck suite).
 */
function cli(args: string[], timeoutMs = 20_000, extraEnv: Record<string, string> = {}): Promise<CliResult> {
  return cliInProcess(args, {
    timeoutMs,
    unset: ['REDIS_URL'],
    env: {
      PRODUCT_API_URL: 'http://127.0.0.1:9',
      REFERENCE_API_URL: 'http://127.0.0.1:9',
      API_TOKEN: 'unused',
      REPORT_DIR: join(dir, 'reports'),
      LOG_LEVEL: 'error',
      ...extraEnv,
    },
  });
}

/**
 * Exit 2, and stderr carries `code` and matches `text`, without a stack trace; one line unless the error lists several
 * problems (mapping and feed errors list them one per line under a first line).
 */
function expectRefused(
  r: { code: number | null; stderr: string; killed: boolean },
  code: string,
  text: RegExp,
  oneLine = true,
): void {
  expect(r.killed, 'the command hung').toBe(false);
  expect(r.code, r.stderr).toBe(2);
  expect(r.stderr).not.toMatch(/unexpected failure/);
  expect(r.stderr).not.toMatch(/^\s+at /m);
  if (oneLine) expect(r.stderr.trim().split('\n'), r.stderr).toHaveLength(1);
  expect(r.stderr).toContain(code);
  expect(r.stderr).toMatch(text);
}

describe('validate refuses a sheet that is not a readable regular file (exit 2)', () => {
  it('missing file, dangling symlink, directory', async () => {
    const dangling = join(dir, 'dangling.csv');
    symlinkSync(join(dir, 'gone.csv'), dangling);
    const folder = join(dir, 'folder.csv');
    mkdirSync(folder);
    const [missing, link, directory] = await Promise.all([
      cli(['validate', join(dir, 'missing.csv'), '--mapping', mapping]),
      cli(['validate', dangling, '--mapping', mapping]),
      cli(['validate', folder, '--mapping', mapping]),
    ]);
    expectRefused(missing, 'PS_ERR_FILE_UNREADABLE', /missing\.csv: no such file/);
    expectRefused(
      link,
      'PS_ERR_FILE_UNREADABLE',
      /dangling\.csv: is a symbolic link to .*gone\.csv, which does not exist/,
    );
    expectRefused(directory, 'PS_ERR_FILE_UNREADABLE', /folder\.csv: is a directory/);
  }, 60_000);

  it('a FIFO and a character device, at once instead of hanging', async () => {
    const fifo = join(dir, 'pipe.csv');
    execFileSync('mkfifo', [fifo]);
    const [pipe, zero, queued] = await Promise.all([
      cli(['validate', fifo, '--mapping', mapping]),
      cli(['import', '/dev/zero', '--mapping', mapping, '--dry-run']),
      cli(['enqueue', fifo, '--mapping', mapping]),
    ]);
    expectRefused(pipe, 'PS_ERR_FILE_UNREADABLE', /pipe\.csv: is a FIFO/);
    expectRefused(zero, 'PS_ERR_FILE_UNREADABLE', /\/dev\/zero: is a character device/);
    expectRefused(queued, 'PS_ERR_FILE_UNREADABLE', /pipe\.csv: is a FIFO/);
    // The mapping too: a FIFO given as --mapping is refused, not read forever.
    expectRefused(
      await cli(['validate', sheet, '--mapping', fifo]),
      'PS_ERR_MAPPING_INVALID',
      /pipe\.csv cannot be read: not a regular file/,
    );
  }, 60_000);
});

describe('other bad input the contract says is exit 2', () => {
  it('--report-dir below a regular file, with and without --sandbox', async () => {
    const plain = join(dir, 'plain.txt');
    writeFileSync(plain, 'x');
    const [inline, sandboxed] = await Promise.all([
      cli(['validate', sheet, '--mapping', mapping, '--report-dir', join(plain, 'reports')]),
      cli(['validate', sheet, '--mapping', mapping, '--sandbox', '--report-dir', join(plain, 'reports')]),
    ]);
    expectRefused(
      inline,
      'PS_ERR_FILE_WRITE',
      /--report-dir .*plain\.txt\/reports: a part of the path is a file, not a directory/,
    );
    expectRefused(
      sandboxed,
      'PS_ERR_FILE_WRITE',
      /--report-dir .*plain\.txt\/reports: a part of the path is a file, not a directory/,
    );
  }, 60_000);

  it('--report-dir under /proc or /sys: exit 2 within seconds instead of a mkdir loop that never ends', async () => {
    const t0 = Date.now();
    const [proc, deeper, sandboxed, sys] = await Promise.all([
      cli(['validate', sheet, '--mapping', mapping, '--report-dir', '/proc/nope'], 15_000),
      cli(['import', sheet, '--mapping', mapping, '--report-dir', '/proc/self/nope/reports'], 15_000),
      cli(['import', sheet, '--mapping', mapping, '--sandbox', '--report-dir', '/proc/nope'], 15_000),
      cli(['validate', sheet, '--mapping', mapping, '--report-dir', '/sys/nope'], 15_000),
    ]);
    expect(Date.now() - t0).toBeLessThan(15_000);
    const virtual = (p: string, fs: string) =>
      new RegExp(`--report-dir ${p}: ${fs} is a virtual file system of the kernel: nothing can be written there`);
    expectRefused(proc, 'PS_ERR_FILE_WRITE', virtual('/proc/nope', '/proc'));
    expectRefused(deeper, 'PS_ERR_FILE_WRITE', virtual('/proc/self/nope/reports', '/proc'));
    expectRefused(sandboxed, 'PS_ERR_FILE_WRITE', virtual('/proc/nope', '/proc'));
    expectRefused(sys, 'PS_ERR_FILE_WRITE', virtual('/sys/nope', '/sys'));
  }, 60_000);

  it('REPORT_DIR of the worker and UPLOAD_DIR of the console under /proc: exit 2 before anything starts', async () => {
    const [worker, serve] = await Promise.all([
      cli(['worker'], 15_000, { REPORT_DIR: '/proc/nope' }),
      cli(['serve', '--port', '0'], 15_000, { UPLOAD_DIR: '/proc/nope/uploads' }),
    ]);
    expectRefused(
      worker,
      'PS_ERR_FILE_WRITE',
      /report directory given by REPORT_DIR \/proc\/nope: \/proc is a virtual file system/,
    );
    expectRefused(
      serve,
      'PS_ERR_FILE_WRITE',
      /upload directory given by UPLOAD_DIR \/proc\/nope\/uploads: \/proc is a virtual file system/,
    );
  }, 60_000);

  it('a YAML alias bomb as the mapping', async () => {
    const bomb = join(dir, 'bomb.yaml');
    const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
    for (const [x, y] of ['ab', 'bc', 'cd', 'de', 'ef', 'fg', 'gh', 'hi'])
      lines.push(`${y}: &${y} [${Array(9).fill(`*${x}`).join(',')}]`);
    writeFileSync(bomb, `${lines.join('\n')}\ntarget: tradeItem\n`);
    expectRefused(
      await cli(['validate', sheet, '--mapping', bomb]),
      'PS_ERR_MAPPING_INVALID',
      /too many YAML aliases/,
      false,
    );
  }, 30_000);

  it('an invalid cron in jobs/: feeds list and the worker refuse it', async () => {
    const jobs = join(dir, 'jobs');
    mkdirSync(jobs);
    writeFileSync(
      join(jobs, 'nightly.yaml'),
      'schedule: "0 25 * * *"\nsource: { dir: /srv/x, pattern: "*.csv" }\nmapping: m\n',
    );
    const [list, worker] = await Promise.all([
      cli(['feeds', 'list', '--jobs-dir', jobs]),
      cli(['worker', '--jobs-dir', jobs]),
    ]);
    // The feed problems are listed one per line under a first line: exit 2, the code, no stack.
    for (const r of [list, worker]) {
      expect(r.killed, 'the command hung').toBe(false);
      expect(r.code, r.stderr).toBe(2);
      expect(r.stderr).toContain('PS_ERR_FEED_INVALID');
      expect(r.stderr).toMatch(/nightly\.yaml:1: schedule: is not a valid cron expression/);
      expect(r.stderr).not.toMatch(/unexpected failure|^\s+at /m);
    }
  }, 60_000);

  it('a CSV with a NUL past its first 8 KB', async () => {
    const lines = ['GTIN;Nom'];
    for (let i = 0; i < 1000; i++) lines.push(`3017620422003;Pâte ${i}${i === 900 ? '\0' : ''}`);
    const f = join(dir, 'nul.csv');
    writeFileSync(f, `${lines.join('\n')}\n`);
    expectRefused(
      await cli(['validate', f, '--mapping', mapping]),
      'PS_ERR_FILE_UNREADABLE',
      /nul\.csv: a NUL character .* row 902, column Nom/,
    );
  }, 30_000);
});

describe('a checkout without dist/', () => {
  it('says in one line to build it (exit 2)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-nodist-'));
    mkdirSync(join(dir, 'bin'));
    copyFileSync('bin/product-sync.mjs', join(dir, 'bin', 'product-sync.mjs'));
    const r = spawnSync(process.execPath, [join(dir, 'bin', 'product-sync.mjs'), '--version'], { encoding: 'utf8' });
    expect(r.status).toBe(2);
    expect(r.stderr).toBe('product-sync: dist/ is missing: run npm run build\n');
  });
});
