/**
 * A run's undo ledger, `<run>/undo.jsonl`: its chunks' ledgers (rows in order, then archives) copied into one file when
 * the report is assembled, before summary.json. Streamed: a chunk file at a time, never the run in memory.
 */
import { createReadStream, existsSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { writingTo } from '../../fs-errors.ts';
import { commitTemp, discardTemp, tempPathFor } from '../report/atomic.ts';
import type { LedgerLine } from './ledger.ts';
import { chunkPaths, type ChunkKind } from '../run/chunks.ts';

export const LEDGER_FILE = 'undo.jsonl';

/** The ledger files to merge, in order: `parts` are paths (some may be missing: a chunk that sent nothing). */
async function mergeFiles(target: string, parts: readonly string[]): Promise<void> {
  // Part of the report: a refusal is worded as the report's own.
  await writingTo('cannot write the report to', dirname(target), async () => {
    const fh = await open(tempPathFor(target), 'w');
    try {
      for (const part of parts) {
        if (!existsSync(part)) continue;
        for await (const chunk of createReadStream(part)) await fh.write(chunk as Buffer);
      }
    } catch (err) {
      await fh.close().catch(() => undefined);
      await discardTemp(target).catch(() => undefined);
      throw err;
    }
    await fh.close();
    await commitTemp(target);
  });
}

/** Writes `<run>/undo.jsonl` from the run's chunk ledgers. */
export async function mergeRunLedger(workDir: string, rowChunks: number, archiveChunks: number): Promise<void> {
  const parts: string[] = [];
  const add = (kind: ChunkKind, n: number) => {
    for (let i = 0; i < n; i++) parts.push(chunkPaths(workDir, kind, i).ledger);
  };
  add('rows', rowChunks);
  add('archives', archiveChunks);
  await mergeFiles(join(workDir, LEDGER_FILE), parts);
}

/** Writes a ledger from ordered part files (an undo's batches). */
export function mergeLedgerParts(target: string, parts: readonly string[]): Promise<void> {
  return mergeFiles(target, parts);
}

/** node:readline, loaded when a ledger is read. */
const lineReader = () => import('node:readline');

/** Streams a ledger's lines. */
export async function* readLedger(file: string): AsyncIterable<LedgerLine> {
  const { createInterface } = await lineReader();
  for await (const line of createInterface({ input: createReadStream(file, 'utf8'), crlfDelay: Infinity }))
    if (line !== '') yield JSON.parse(line) as LedgerLine;
}
