import { stat } from 'node:fs/promises';
import { ProductSyncError } from '../../errors.ts';
import { DEFAULT_LIMITS, type ReadLimits } from './limits.ts';
import { readCsv } from './read-csv.ts';
import { sniffFile } from './sniff.ts';
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

/**
 * Opens a sheet for streaming: the file type is sniffed from its bytes (not its name), caps are checked, headers are read,
 * rows come lazily. File-level problems throw a ProductSyncError naming the file and why.
 */
export async function openSheet(file: string, options: OpenSheetOptions = {}): Promise<Sheet> {
  const limits: ReadLimits = { ...DEFAULT_LIMITS, ...options.limits };
  const headerRow = options.headerRow ?? 1;
  const st = await stat(file).catch((err: NodeJS.ErrnoException) => {
    throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: ${err.code === 'ENOENT' ? 'no such file' : err.message}`, { cause: err });
  });
  if (!st.isFile()) throw new ProductSyncError('PS_ERR_FILE_UNREADABLE', `${file}: not a file`);
  if (st.size > limits.fileBytes) throw new ProductSyncError('PS_ERR_FILE_TOO_LARGE', `${file}: ${Math.round(st.size / 1024 ** 2)} MB, more than the limit of ${Math.round(limits.fileBytes / 1024 ** 2)} MB`);
  const { kind, head } = await sniffFile(file);
  if (kind === 'xlsx-zip') {
    // exceljs costs ~30 MB of memory once loaded: only a workbook pays for it.
    const { readXlsx } = await import('./read-xlsx.ts');
    return readXlsx(file, { ...(options.sheet ? { sheet: options.sheet } : {}), headerRow, limits });
  }
  if (/\.xlsx?$/i.test(file)) {
    throw new ProductSyncError('PS_ERR_FILE_TYPE', `${file}: named like a workbook but holds text; if it is a CSV, rename it .csv`);
  }
  return readCsv(file, head, { headerRow, limits, ...(options.decimalSeparator ? { decimalSeparator: options.decimalSeparator } : {}) });
}
