/**
 * The second pass over the sheet: rows in chunks through map → validate → resolve → plan (prepare-chunk.ts), each
 * chunk written to the run directory as it is produced (chunks.ts) so pushing starts while the pass goes on.
 */
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { ProductSyncError } from '../../errors.ts';
import { rowBatches } from '../read/row-batches.ts';
import type { Draft } from '../types.ts';
import { chunkExists, resultsExist, type ResultRow, type RowChunk } from './chunks.ts';
import type { Fence } from '../../api/fence.ts';
import { draftReader, openMappedSheet } from './sheet-pass.ts';
import type { RunContext } from './run-context.ts';
import type { OpenedRun } from './open-run.ts';
import { prepareChunk } from './prepare-chunk.ts';
import { ColumnStats } from './column-stats.ts';
import { matchSheetHeaders } from '../map/headers.ts';

// Rows of the second pass read between two turns of the event loop.
const YIELD_ROWS = 128;

/** One chunk of the second pass: its index, and its rows unless an earlier attempt already prepared or pushed it. */
export interface ProducedChunk {
  index: number;
  /**
   * 'pushed': results exist; 'prepared': the chunk file exists (push it); 'new': `chunk` was just prepared and written;
   * 'settled' (with `settle`, and always for validate, which sends nothing): the chunk needs no request, `results` are
   * its outcomes in report order (`chunk` what they came from).
   */
  status: 'pushed' | 'prepared' | 'new' | 'settled';
  chunk?: RowChunk;
  results?: ResultRow[];
  rowsRead: number;
}

/** Options of {@link produceChunks}. */
export interface ProduceOptions {
  /**
   * A chunk that needs no request (validate, a dry run, rows all invalid or unchanged) gets its outcomes at once
   * instead of a chunk file to push: written as its results (an import: a rerun skips it), not written at all by
   * validate (nothing to resume). The inline driver sets it; queue chunk jobs need their chunk files.
   */
  settle?: boolean;
  /** Checked before each chunk file is written (a queued run's import job lock). */
  guard?: Fence;
}

/**
 * The second pass: streams the sheet in chunks of `chunkSize` rows, each mapped, validated, resolved, planned and
 * written.
 */
export async function* produceChunks(
  run: OpenedRun,
  ctx: RunContext,
  options: ProduceOptions = {},
): AsyncGenerator<ProducedChunk> {
  const { mapping, state } = run;
  const sheet = run.sheet ?? (await openMappedSheet(state.request, mapping));
  delete run.sheet;
  const learn = Boolean(run.keysFromRows);
  const pushes = state.kind === 'import';
  const draftOf = draftReader(sheet, mapping, run.keys, learn);
  // The mapped columns' empty cells and distinct values, for the run's OpenLineage events (only when they are sent).
  const stats = ctx.config.OPENLINEAGE_URL ? new ColumnStats(sheet.headers, matchSheetHeaders(sheet, mapping)) : null;
  // Chunk files and results go here (a chunk settled without a push writes no chunk file that would make it).
  if (state.kind === 'import') await mkdir(join(run.workDir, 'chunks'), { recursive: true });
  let rowsRead = 0;
  let index = 0;
  let status: ProducedChunk['status'] = chunkStatus(run, 0);
  let drafts: Draft[] = [];
  let inChunk = 0;
  const emit = async (): Promise<ProducedChunk> => {
    const out: ProducedChunk =
      status === 'new'
        ? { ...(await prepareChunk(run, index, drafts, Boolean(options.settle), options.guard)), rowsRead }
        : { index, status, rowsRead };
    drafts = [];
    inChunk = 0;
    index++;
    status = chunkStatus(run, index);
    return out;
  };
  // A batch of rows at a time (rowBatches): one await per batch of the reader, not per row.
  // Read whole even when the run stops (interrupted, lease lost): every row gets its outcome in the report.
  for await (const batch of rowBatches(sheet.rows)) {
    // By index: a for-of in an async generator makes an iterator result a row.
    for (let b = 0; b < batch.length; b++) {
      const row = batch[b]!;
      rowsRead++;
      if (learn) run.fill?.add(row);
      stats?.add(row.cells);
      if (status === 'new') drafts.push(draftOf(row));
      if (rowsRead % 1000 === 0)
        ctx.onProgress?.({
          stage: 'read',
          rowsRead,
          operationsSent: 0,
          errors: 0,
          ...(learn ? {} : { rowsTotal: state.rows }),
        });
      // Rows come from a buffer without a turn of the event loop: let the chunks being pushed meanwhile take their
      // answers and send their next requests now and then, rather than wait for the whole chunk to be read. Validate
      // pushes nothing (its report's writes get their turns when the reader waits for the file).
      if (pushes && rowsRead % YIELD_ROWS === 0) await new Promise<void>((resolve) => setImmediate(resolve));
      if (++inChunk === state.chunkSize) yield await emit();
    }
  }
  if (inChunk > 0) yield await emit();
  await stats?.write(run.workDir);
  if (learn) {
    run.keys.finish();
    if (run.fill) state.fill = run.fill.result();
    state.rows = rowsRead;
    state.rowChunks = index;
    return;
  }
  if (rowsRead !== state.rows)
    throw new ProductSyncError(
      'PS_ERR_FILE_UNREADABLE',
      `${state.request.file}: the second read gave ${rowsRead} rows, the first ${state.rows}: was the file changed during the run?`,
    );
}

function chunkStatus(run: OpenedRun, index: number): ProducedChunk['status'] {
  // Validate writes no chunk file nor results (nothing to resume): no file to look for.
  if (run.state.kind === 'validate') return 'new';
  if (resultsExist(run.workDir, 'rows', index)) return 'pushed';
  return chunkExists(run.workDir, 'rows', index) ? 'prepared' : 'new';
}
