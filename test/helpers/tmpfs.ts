/**
 * Small real file systems for the tests of a full or read-only disk: tmpfs mounts of a few hundred KB. Mounting needs
 * root (CAP_SYS_ADMIN); CI runs as root (.ci/run sets PS_REQUIRE_MOUNT so a runner that cannot mount fails instead of
 * skipping). Elsewhere `mountUnavailable` says why the tests that need one are skipped.
 */
import { execFileSync } from 'node:child_process';
import { closeSync, mkdtempSync, openSync, rmdirSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

function tryMount(): string | null {
  if (process.platform !== 'linux') return `tmpfs mounts need Linux (this is ${process.platform})`;
  const dir = mkdtempSync(join(tmpdir(), 'ps-mount-probe-'));
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'pipe' });
    execFileSync('umount', [dir], { stdio: 'pipe' });
    return null;
  } catch (err) {
    const why = String((err as { stderr?: Buffer }).stderr ?? (err as Error).message)
      .trim()
      .split('\n')[0];
    return `cannot mount a tmpfs here (needs root / CAP_SYS_ADMIN): ${why}`;
  } finally {
    rmdirSync(dir);
  }
}

/** Null when tmpfs can be mounted here, else why not (the reason a skipped test gives). */
export const mountUnavailable: string | null = tryMount();
if (mountUnavailable && process.env.PS_REQUIRE_MOUNT)
  throw new Error(`PS_REQUIRE_MOUNT is set but ${mountUnavailable}`);

/**
 * Mounts a tmpfs of `size` (e.g. `512k`) on `at` (an existing directory) or a new one; returns it, how to change its
 * options (`ro`, `size=1m`: its files stay) and how to unmount it.
 */
export function mountTmpfs(
  size: string,
  at?: string,
): { dir: string; remount(options: string): void; unmount(): void } {
  const dir = at ?? mkdtempSync(join(tmpdir(), 'ps-tmpfs-'));
  execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${size}`, 'tmpfs', dir]);
  return {
    dir,
    remount: (options) => execFileSync('mount', ['-o', `remount,${options}`, dir]),
    unmount() {
      execFileSync('umount', ['-l', dir]);
      if (!at) rmdirSync(dir);
    },
  };
}

/**
 * Fills the file system of `dir` with one file until it has no byte left; returns the file (remove it to free the
 * space).
 */
export function fillUp(dir: string): string {
  const file = join(dir, 'filler');
  const fd = openSync(file, 'a');
  try {
    for (const size of [64 * 1024, 4096, 1]) {
      const block = Buffer.alloc(size, 0x2e);
      for (;;) {
        try {
          writeSync(fd, block);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOSPC') break;
          throw err;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
  return file;
}
