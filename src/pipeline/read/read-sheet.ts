import { constants, type Stats } from 'node:fs';
import { access, lstat, readlink, stat } from 'node:fs/promises';
import { ProductSyncError } from '../../errors.ts';
import { DEFAULT_LIMITS, type ReadLimits } from '../../formats/limits.ts';
import { readCsv } from '../../formats/read-csv.ts';
import { sniffFile } from '../../formats/sniff.ts';
import type { Sheet } from '../types.ts';

/** Options of openSheet. */
export interface OpenSheetOptions {
  /** XLSX worksheet name (default: the first visible one). */
  sheet?: string;
  /** 1-based row of the header (default 1). */
  headerRow?: number;
  limits?: Partial<ReadLimits>;
  /** The sheet's decimal separator as the mapping names it; recorded in `info` for the report. */
  decimalSeparator?: string;
}

/** What a stat says a path is, when it is not a regular file. */
function notRegular(st: Stats): string {
  if (st.isDirectory()) return 'is a directory, not a file';
  if (st.isFIFO()) return 'is a FIFO (named pipe), not a regular file';
  if (st.isCharacterDevice()) return 'is a character device, not a regular file';
  if (st.isBlockDevice()) return 'is a block device, not a regular file';
  if (st.isSocket()) return 'is a socket, not a regular file';
  return 'is not a regular file';
}

/** Why a path cannot be opened, from the error of stat/access. */
function accessProblem(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ENOENT':
      return 'no such file';
    case 'ENOTDIR':
      return 'a part of the path is not a directory';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'ELOOP':
      return 'too many levels of symbolic links';
    case 'ENAMETOOLONG':
      return 'the path is too long';
    default:
      return err.message;
  }
}

/**
 * Refuses, before anything reads it, a sheet that is not a readable regular file: missing, a dangling symlink, a
 * directory, a FIFO or a device (reading those hangs or never ends: `/dev/zero`, a named pipe nobody writes to). A
 * symlink to a regular file is fine (stat follows it; lstat only tells a dangling link from a missing file). Throws
 * PS_ERR_FILE_UNREADABLE naming the file and why; callers that hash or read the file run it first (openSheet does).
 */
export async function checkSheetFile(file: string): Promise<Stats> {
  const fail = (why: string, cause?: unknown) =>
    new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: ${why}`, cause === undefined ? undefined : { cause });
  let st: Stats;
  try {
    st = await stat(file);
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'ENOENT') {
      const link = await lstat(file).then(
        (l) => (l.isSymbolicLink() ? readlink(file) : null),
        () => null,
      );
      if (link !== null) throw fail(`is a symbolic link to ${link}, which does not exist`, err);
    }
    throw fail(accessProblem(e), err);
  }
  if (!st.isFile()) throw fail(notRegular(st));
  await access(file, constants.R_OK).catch((err: NodeJS.ErrnoException) => {
    throw fail(`cannot be read: ${accessProblem(err)}`, err);
  });
  return st;
}

/**
 * Opens a sheet for streaming: the file type is sniffed from its bytes (not its name), caps are checked, headers are
 * read, rows come lazily. File-level problems throw a ProductSyncError naming the file and why.
 */
export async function openSheet(file: string, options: OpenSheetOptions = {}): Promise<Sheet> {
  const limits: ReadLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const headerRow = options.headerRow ?? 1;
  const st = await checkSheetFile(file);
  if (st.size > limits.fileBytes)
    throw new ProductSyncError(
      'PS_ERR_FILE_TOO_LARGE',
      `${file}: ${Math.round(st.size / 1024 ** 2)} MB, more than the limit of ${Math.round(limits.fileBytes / 1024 ** 2)} MB`,
    );
  const { kind, head } = await sniffFile(file);
  if (kind === 'xlsx-zip') {
    const { readXlsx } = await import('../../formats/read-xlsx.ts');
    return readXlsx(file, { ...(options.sheet ? { sheet: options.sheet } : {}), headerRow, limits });
  }
  if (/\.xlsx?$/i.test(file)) {
    throw new ProductSyncError(
      'PS_ERR_FILE_TYPE',
      `${file}: named like a workbook but holds text; if it is a CSV, rename it .csv`,
    );
  }
  return readCsv(file, head, {
    headerRow,
    limits,
    ...(options.decimalSeparator ? { decimalSeparator: options.decimalSeparator } : {}),
  });
}
