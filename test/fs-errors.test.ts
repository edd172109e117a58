// A refusal of the file system as one typed error in plain words (src/fs-errors.ts), the exit code it ends a command
// with, and a mkdir -p that ends under /proc (src/make-dir.ts). Nothing here needs root.
import { mkdirSync, mkdtempSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProductSyncError } from '../src/errors.ts';
import { exitCodeFor } from '../src/exit-codes.ts';
import { commandFileWriteError, fileWriteError, FileWriteError } from '../src/fs-errors.ts';
import { makeDir } from '../src/make-dir.ts';
import { ensureReportDir } from '../src/runtime.ts';

/** An error as Node's fs raises it. */
const sysErr = (code: string, syscall: string, path?: string) =>
  Object.assign(new Error(`${code}: something, ${syscall}${path ? ` '${path}'` : ''}`), {
    code,
    syscall,
    ...(path ? { path } : {}),
  });

/** Rejects (or resolves) within `ms`, or fails the test: a loop is the bug looked for. */
const within = <T>(p: Promise<T>, ms: number) =>
  Promise.race([
    p,
    new Promise<never>((_, reject) => setTimeout(() => reject(new Error(`still running after ${ms} ms`)), ms)),
  ]);

describe('a refusal of the file system, in plain words', () => {
  it('names what was being done, the path and the reason; only a full disk (or quota, or EIO) is worth a retry', () => {
    const full = fileWriteError(sysErr('ENOSPC', 'write'), 'cannot write the report to', '/r/run-1');
    expect(full).toBeInstanceOf(FileWriteError);
    expect(full).toMatchObject({
      code: 'PS_ERR_FILE_WRITE',
      message: 'cannot write the report to /r/run-1: no space left on device',
      retryable: true,
    });
    expect(fileWriteError(sysErr('EROFS', 'open', '/r/x'), 'cannot write the run state', '/r/x')).toMatchObject({
      message: 'cannot write the run state /r/x: read-only file system',
      retryable: false,
    });
    expect(fileWriteError(sysErr('EDQUOT', 'write'), 'cannot write the run journal', '/j')).toMatchObject({
      message: 'cannot write the run journal /j: disk quota exceeded',
    });
    expect(fileWriteError(sysErr('ENOENT', 'mkdir', '/proc/nope'), 'cannot create', '/proc/nope')).toMatchObject({
      message: expect.stringMatching(/^cannot create \/proc\/nope: \/proc is a virtual file system of the kernel/),
    });
  });

  it('leaves other errors as they are: a typed error, a network error, a bug', () => {
    const typed = new ProductSyncError('PS_ERR_JOURNAL', 'chunk unreadable');
    const network = sysErr('ECONNREFUSED', 'connect');
    const bug = new TypeError('x is undefined');
    for (const e of [typed, network, bug]) expect(fileWriteError(e, 'cannot write', '/x')).toBe(e);
    for (const e of [network, bug]) expect(commandFileWriteError(e)).toBeNull();
  });

  it('exit 2 when the command sent no write, 3 once it had (the message then says the same command resumes)', () => {
    const e = fileWriteError(sysErr('ENOSPC', 'write'), 'cannot write the report to', '/r/run-1');
    expect(exitCodeFor(commandFileWriteError(e, 0))).toBe(2);
    const after = commandFileWriteError(e, 12)!;
    expect(exitCodeFor(after)).toBe(3);
    expect(after.message).toBe(
      "cannot write the report to /r/run-1: no space left on device — 12 writes were sent; the run's journal is kept: run the same command again once this is fixed, it resumes",
    );
    // As a report thread sends it back (code and message, no class), and a system error nobody worded.
    expect(
      exitCodeFor(
        commandFileWriteError(new ProductSyncError('PS_ERR_FILE_WRITE', e instanceof Error ? e.message : ''), 1),
      ),
    ).toBe(3);
    expect(commandFileWriteError(sysErr('ENOSPC', 'write', '/r/x.tmp'))).toMatchObject({
      code: 'PS_ERR_FILE_WRITE',
      message: 'cannot write /r/x.tmp: no space left on device',
    });
    // A typed error of another code caused by a refused write (a lock file no space was left for) is worded the same.
    const lock = new ProductSyncError(
      'PS_ERR_REPORT',
      'cannot create the run lock /r/.locks/a.lock: ENOSPC: something, write',
      { cause: sysErr('ENOSPC', 'write') },
    );
    expect(commandFileWriteError(lock)).toMatchObject({
      code: 'PS_ERR_FILE_WRITE',
      message: 'cannot create the run lock /r/.locks/a.lock: no space left on device',
    });
    // …but not one caused by a read (a chunk file that is missing is no refusal to write).
    expect(
      commandFileWriteError(
        new ProductSyncError('PS_ERR_JOURNAL', 'chunk missing', { cause: sysErr('ENOENT', 'open', '/r/c.json') }),
      ),
    ).toBeNull();
  });
});

describe('makeDir: mkdir -p that always ends', () => {
  it("refuses a path under /proc or /sys at once, where Node's recursive mkdir never returns", async () => {
    for (const p of ['/proc/nope', '/proc/self/nope/deeper', '/sys/nope']) {
      await expect(within(makeDir(p), 2000), p).rejects.toMatchObject({ syscall: 'mkdir' });
    }
  });

  it('makes missing parents, accepts a directory that exists (or a link to one), refuses a file in the way', async () => {
    const base = mkdtempSync(join(tmpdir(), 'ps-makedir-'));
    await makeDir(join(base, 'a', 'b', 'c'));
    expect(statSync(join(base, 'a', 'b', 'c')).isDirectory()).toBe(true);
    await makeDir(join(base, 'a', 'b'));
    mkdirSync(join(base, 'real'));
    symlinkSync(join(base, 'real'), join(base, 'link'));
    await makeDir(join(base, 'link'));
    writeFileSync(join(base, 'file'), 'x');
    await expect(makeDir(join(base, 'file'))).rejects.toMatchObject({ code: 'EEXIST' });
    await expect(makeDir(join(base, 'file', 'below'))).rejects.toMatchObject({ code: 'ENOTDIR' });
    symlinkSync(join(base, 'gone'), join(base, 'dangling'));
    await expect(within(makeDir(join(base, 'dangling', 'x')), 2000)).rejects.toMatchObject({
      code: expect.stringMatching(/^E/),
    });
  });

  it('ensureReportDir: /proc/nope is refused in plain words within a second', async () => {
    const t0 = Date.now();
    const err = await within(ensureReportDir('/proc/nope', '--report-dir'), 2000).catch((e: unknown) => e);
    expect(Date.now() - t0).toBeLessThan(1000);
    expect(err).toMatchObject({
      code: 'PS_ERR_FILE_WRITE',
      message:
        'cannot create or write the report directory given by --report-dir /proc/nope: /proc is a virtual file system of the kernel: nothing can be written there',
    });
    expect(exitCodeFor(err)).toBe(2);
  });
});
