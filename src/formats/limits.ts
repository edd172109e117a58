/** Caps every reader enforces (as data; a caller may lower or raise them through openSheet's `limits`). */
export interface ReadLimits {
  /** Bytes of the file itself. */
  fileBytes: number;
  /** Bytes of a workbook once unzipped (all entries, as actually inflated — not only as declared). */
  unzippedBytes: number;
  /** Largest allowed uncompressed / compressed ratio of a zip entry larger than `ratioFloorBytes` (zip bombs). */
  compressionRatio: number;
  /** Entries smaller than this once inflated are not held to `compressionRatio` (tiny XML parts compress very well). */
  ratioFloorBytes: number;
  /** Data rows of a sheet. */
  rows: number;
  /** Columns of a sheet (header cells). */
  columns: number;
  /** Characters of one cell (Excel's own limit is 32 767). */
  cellChars: number;
  /** Characters of one CSV record: a record still open past this is a runaway quote. */
  recordChars: number;
  /** Merged ranges of a worksheet that the reader keeps track of (beyond, the workbook is refused). */
  mergedRanges: number;
  /**
   * Entries of a workbook's zip: more are refused from the zip's end record, before any entry is read (each one is
   * inflated and checked; docs/queue.md, "The input gate", says why this number).
   */
  zipEntries: number;
}

/** Defaults: generous for real catalogues, far below what would exhaust the machine. */
export const DEFAULT_LIMITS: Readonly<ReadLimits> = Object.freeze({
  fileBytes: 1024 ** 3,
  unzippedBytes: 2 * 1024 ** 3,
  compressionRatio: 200,
  ratioFloorBytes: 10 * 1024 * 1024,
  rows: 2_000_000,
  columns: 1000,
  cellChars: 32_767,
  recordChars: 1024 * 1024,
  mergedRanges: 100_000,
  zipEntries: 10_000,
});
