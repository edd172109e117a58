/**
 * `mkdir -p` that always ends. Node's own `mkdir(path, { recursive: true })` never returns where a parent exists but
 * answers ENOENT for a child — any path under /proc (`/proc/nope`): it makes the parent (EEXIST, fine), tries the child
 * again (ENOENT), makes the parent… forever, at 100 % CPU. Here each missing directory is tried once after its parent
 * exists, and paths under /proc and /sys (the kernel's, where a directory may even be a cgroup) are refused at once.
 * Failures are Node's system errors, for the caller to word (fs-errors.ts fileWriteError).
 */
import { mkdir, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { isVirtualPath } from './fs-errors.ts';

function systemError(code: string, path: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(`${code}: ${message}, mkdir '${path}'`), { code, syscall: 'mkdir', path });
}

/** Creates `dir` and its missing parents; resolves when it is a directory (made now or before). */
export async function makeDir(dir: string): Promise<void> {
  const abs = resolve(dir);
  if (isVirtualPath(abs)) throw systemError('EPERM', abs, 'a virtual file system of the kernel');
  await makeAbs(abs);
}

async function makeAbs(abs: string): Promise<void> {
  try {
    await mkdir(abs);
    return;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return isDirectoryOrThrow(abs, err);
    const parent = dirname(abs);
    if (code !== 'ENOENT' || parent === abs) throw err;
  }
  await makeAbs(dirname(abs));
  // The parent exists now: a second ENOENT is the answer, not a missing parent.
  try {
    await mkdir(abs);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return isDirectoryOrThrow(abs, err);
    throw err;
  }
}

/** Something is at `abs` already: fine if it is a directory (or a link to one), else the EEXIST stands. */
async function isDirectoryOrThrow(abs: string, eexist: unknown): Promise<void> {
  const s = await stat(abs).catch(() => null);
  if (!s?.isDirectory()) throw eexist;
}
