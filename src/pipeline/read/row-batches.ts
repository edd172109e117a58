import type { BatchedRows, Sheet, SheetRow } from '../types.ts';

/**
 * A sheet's rows in batches: the reader's own when it has them (BatchedRows: a CSV's decoded chunks), else one row per
 * batch. For the loops that take every row of a large sheet (a run's passes): an await per batch, not per row.
 */
export async function* rowBatches(rows: Sheet['rows']): AsyncGenerator<readonly SheetRow[]> {
  if ('nextBatch' in rows) {
    const batched = rows as BatchedRows;
    try {
      for (let b = await batched.nextBatch(); b !== null; b = await batched.nextBatch()) yield b;
    } finally {
      await batched.return?.();
    }
    return;
  }
  for await (const row of rows) yield [row];
}
