/**
 * The file system said no: a failed write, create or rename turned into one typed error (PS_ERR_FILE_WRITE) naming the
 * file or directory and the reason in plain words, e.g. `cannot write the report to /r/x: no space left on device`.
 * Every writer of the project goes through {@link fileWriteError} (or {@link writingTo}); the CLI prints it as one
 * line.
 */
import { ProductSyncError } from './errors.ts';

/** Plain words for the errno codes a write may meet. */
const REASONS: Record<string, string> = {
  ENOSPC: 'no space left on device',
  EDQUOT: 'disk quota exceeded',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EROFS: 'read-only file system',
  ENOTDIR: 'a part of the path is a file, not a directory',
  EEXIST: 'it is a file, not a directory',
  EISDIR: 'it is a directory, not a file',
  ENOENT: 'a directory of the path does not exist (removed meanwhile?)',
  EIO: 'input/output error (the disk or its connection failed)',
  EFBIG: 'file too large for this file system or for the limit set on this process',
  EMFILE: 'too many open files in this process',
  ENFILE: 'too many open files on this machine',
  ENAMETOOLONG: 'the path is too long',
  ELOOP: 'too many symbolic links in the path',
};

/** Errno codes where trying again later may succeed (space freed, disk back). */
const TRANSIENT = new Set(['ENOSPC', 'EDQUOT', 'EIO', 'EMFILE', 'ENFILE']);

/**
 * True for a path under /proc or /sys, the kernel's virtual file systems: no file can be created there, whatever the
 * permissions say.
 */
export const isVirtualPath = (path: string): boolean => /^\/(proc|sys)(\/|$)/.test(path);

/** System calls of the file system (a `connect` or `spawn` error is no business of this file). */
const FS_SYSCALLS = new Set([
  'open',
  'write',
  'writev',
  'close',
  'mkdir',
  'rename',
  'link',
  'symlink',
  'unlink',
  'rmdir',
  'rm',
  'copyfile',
  'ftruncate',
  'fsync',
  'fdatasync',
  'futime',
  'utime',
  'chmod',
  'mkdtemp',
]);

/** A refusal of the file system: a Node system error of a file-system call with an errno this file words. */
export function isFileSystemError(err: unknown): err is NodeJS.ErrnoException & { code: string; syscall: string } {
  const e = err as { code?: unknown; syscall?: unknown } | null;
  return (
    typeof e?.code === 'string' &&
    REASONS[e.code] !== undefined &&
    typeof e.syscall === 'string' &&
    FS_SYSCALLS.has(e.syscall)
  );
}

/**
 * The reason a write of `path` failed, in plain words (a path under /proc or /sys says so, whatever errno came back).
 */
export function fsReason(err: unknown, path?: string): string {
  if (path !== undefined && isVirtualPath(path))
    return `${path.split('/')[1] === 'proc' ? '/proc' : '/sys'} is a virtual file system of the kernel: nothing can be written there`;
  const code = (err as { code?: unknown } | null)?.code;
  if (typeof code === 'string' && REASONS[code]) return REASONS[code];
  return (err as Error | null)?.message ?? String(err);
}

/**
 * A refusal of the file system (PS_ERR_FILE_WRITE). `writesSent`: the command had already sent writes to the API (exit
 * 3, else 2).
 */
export class FileWriteError extends ProductSyncError {
  readonly path: string | undefined;
  readonly writesSent: boolean;
  constructor(
    message: string,
    options: { cause?: unknown; path?: string; retryable?: boolean; writesSent?: boolean } = {},
  ) {
    super('PS_ERR_FILE_WRITE', message, {
      cause: options.cause,
      ...(options.retryable !== undefined ? { retryable: options.retryable } : {}),
    });
    this.name = 'FileWriteError';
    this.path = options.path;
    this.writesSent = options.writesSent ?? false;
  }
}

/**
 * `err` as the typed error `<action> <path>: <reason>` when the file system refused (a system error, or a
 * PS_ERR_FILE_WRITE already); any other error is returned as it is (a bug stays a bug). `action` says what was being
 * done: `cannot write the report to`, `cannot create the report directory`…
 */
export function fileWriteError(err: unknown, action: string, path: string): unknown {
  if (err instanceof ProductSyncError || !isFileSystemError(err)) return err;
  return new FileWriteError(`${action} ${path}: ${fsReason(err, path)}`, {
    cause: err,
    path,
    retryable: TRANSIENT.has(err.code),
  });
}

/** Runs `fn`; a refusal of the file system comes out as {@link fileWriteError}(err, action, path). */
export async function writingTo<T>(action: string, path: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw fileWriteError(err, action, path);
  }
}

/** System calls that only write: a typed error caused by one of their refusals is a refusal of the file system. */
const WRITE_SYSCALLS = new Set([
  'write',
  'writev',
  'mkdir',
  'rename',
  'link',
  'symlink',
  'copyfile',
  'ftruncate',
  'fsync',
  'fdatasync',
  'mkdtemp',
]);
/** Errno codes an open(2) meets only when it would create or write. */
const WRITE_ONLY_CODES = new Set(['ENOSPC', 'EDQUOT', 'EROFS']);

/** A typed error of another code whose cause is a refused write (e.g. a lock file no space was left for). */
function causedByRefusedWrite(
  err: ProductSyncError,
): (NodeJS.ErrnoException & { code: string; syscall: string }) | null {
  const c = err.cause;
  if (!isFileSystemError(c)) return null;
  return WRITE_SYSCALLS.has(c.syscall) || (c.syscall === 'open' && WRITE_ONLY_CODES.has(c.code)) ? c : null;
}

/**
 * The error that ended a command, as a FileWriteError when the file system refused (typed already, typed in a worker
 * thread, a typed error caused by a refused write, or a system error no writer named: its own path, if any, is named),
 * else null. `writesSent` > 0: the command had sent that many writes (exit 3, and the message says a rerun resumes).
 */
export function commandFileWriteError(err: unknown, writesSent = 0): FileWriteError | null {
  let e: FileWriteError;
  const cause = err instanceof ProductSyncError && err.code !== 'PS_ERR_FILE_WRITE' ? causedByRefusedWrite(err) : null;
  if (err instanceof FileWriteError) e = err;
  else if (err instanceof ProductSyncError && err.code === 'PS_ERR_FILE_WRITE')
    e = new FileWriteError(err.message, { cause: err.cause ?? err, retryable: err.retryable });
  else if (err instanceof ProductSyncError && cause) {
    // Its message ends with Node's words (`ENOSPC: no space left on device, write`): the plain reason instead.
    e = new FileWriteError(err.message.replace(cause.message, fsReason(cause, cause.path)), {
      cause,
      retryable: TRANSIENT.has(cause.code),
      ...(cause.path ? { path: cause.path } : {}),
    });
  } else if (isFileSystemError(err)) {
    const path = err.path;
    const verb = err.syscall === 'open' ? 'open' : err.syscall === 'mkdir' ? 'create' : 'write';
    e = new FileWriteError(
      path
        ? `cannot ${verb} ${path}: ${fsReason(err, path)}`
        : `cannot write a file (${err.syscall}): ${fsReason(err)}`,
      { cause: err, ...(path ? { path } : {}), retryable: TRANSIENT.has(err.code) },
    );
  } else return null;
  if (writesSent <= 0 || e.writesSent) return e;
  return new FileWriteError(
    `${e.message} — ${writesSent} write${writesSent === 1 ? ' was' : 's were'} sent; the run's journal is kept: run the same command again once this is fixed, it resumes`,
    {
      cause: e.cause,
      retryable: e.retryable,
      writesSent: true,
      ...(e.path ? { path: e.path } : {}),
    },
  );
}
