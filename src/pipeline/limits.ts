/** Caps every reader enforces (as data; a caller may lower or raise them). */
export interface ReadLimits {
  /** Bytes of the file itself. */
  fileBytes: number;
  /** Bytes of a workbook once unzipped (all entries). */
  unzippedBytes: number;
  /** Largest allowed uncompressed / compressed ratio of a zip entry (zip bombs). */
  compressionRatio: number;
  /** Data rows of a sheet. */
  rows: number;
  /** Columns of a sheet. */
  columns: number;
  /** Characters of one cell (Excel's own limit is 32 767). */
  cellChars: number;
}

/** Defaults: generous for real catalogues, far below what would exhaust the machine. */
export const DEFAULT_LIMITS: ReadLimits = {
  fileBytes: 1024 ** 3,
  unzippedBytes: 2 * 1024 ** 3,
  compressionRatio: 200,
  rows: 2_000_000,
  columns: 1000,
  cellChars: 32_767,
};
