/**
 * The report of an undo, in its run directory: rows.csv (one line per ledger line undone), conflicts.csv (one line per
 * field changed since the run: before, sent, now), undo.jsonl (its own ledger: an undo can be undone) and summary.json,
 * last. Streamed from its batches' results, a batch at a time.
 */
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';
import { writingTo } from '../../fs-errors.ts';
import { commitTemp, tempPathFor, writeFileAtomic } from '../report/atomic.ts';
import { csvField } from '../report/neutralize.ts';
import type { UndoConflict } from './undo-plan.ts';
import { LEDGER_FILE, mergeLedgerParts } from './ledger-file.ts';

/** What became of one ledger line. */
export type UndoOutcome = 'restored' | 'conflict' | 'unchanged' | 'failed';

/** One line of an undo's results. */
export interface UndoItem {
  /** The ledger line (1-based). */
  line: number;
  gtin: string | null;
  tradeItemId: string | null;
  action: string;
  outcome: UndoOutcome;
  conflicts: UndoConflict[];
  message?: string;
}

/** summary.json of an undo. */
export interface UndoSummary {
  runId: string;
  kind: 'undo';
  undoes: string;
  ownerCompanyId: string;
  dryRun: boolean;
  startedAt: string;
  finishedAt: string;
  counts: { items: number; restored: number; conflict: number; unchanged: number; failed: number };
  /** Write requests sent by this attempt. */
  writes: number;
  requests: { product: number };
  /** Later runs that touched the same items, undone anyway (--force). */
  forcedOver?: string[];
  exitCode: number;
  aborted?: string;
  abortCode?: string;
}

export const emptyUndoCounts = (): UndoSummary['counts'] => ({
  items: 0,
  restored: 0,
  conflict: 0,
  unchanged: 0,
  failed: 0,
});

/** The files of undo batch `n`. */
export function batchPaths(dir: string, n: number): { journal: string; results: string; ledger: string } {
  const base = join(dir, 'chunks', `undo-${n}`);
  return { journal: `${base}.journal.jsonl`, results: `${base}.results.jsonl`, ledger: `${base}.undo.jsonl` };
}

const value = (v: unknown): string => (v === undefined || v === null ? '' : JSON.stringify(v));

/** Writes rows.csv and conflicts.csv from the batches' results, undo.jsonl from their ledgers, counting outcomes. */
export async function writeUndoReport(
  dir: string,
  batches: number,
  summary: (counts: UndoSummary['counts']) => UndoSummary,
): Promise<UndoSummary> {
  const counts = emptyUndoCounts();
  const rowsFile = join(dir, 'rows.csv');
  const conflictsFile = join(dir, 'conflicts.csv');
  const { createInterface } = await import('node:readline');
  await writingTo('cannot write the undo report', dir, async () => {
    const rows = await open(tempPathFor(rowsFile), 'w');
    const conflicts = await open(tempPathFor(conflictsFile), 'w');
    try {
      await rows.write('\uFEFFline,gtin,tradeItemId,action,outcome,message\n');
      await conflicts.write('\uFEFFline,gtin,tradeItemId,item,field,before,sent,now\n');
      for (let n = 0; n < batches; n++) {
        let out = '';
        let cout = '';
        const input = createReadStream(batchPaths(dir, n).results, 'utf8');
        for await (const text of createInterface({ input, crlfDelay: Infinity })) {
          if (text === '') continue;
          const r = JSON.parse(text) as UndoItem;
          counts.items++;
          counts[r.outcome]++;
          const id = [String(r.line), r.gtin ?? '', r.tradeItemId ?? ''].map(csvField).join(',');
          out += `${id},${[r.action, r.outcome, r.message ?? ''].map(csvField).join(',')}\n`;
          for (const c of r.conflicts)
            cout += `${id},${[c.item, c.field, value(c.before), value(c.sent), value(c.now)].map(csvField).join(',')}\n`;
        }
        await rows.write(out);
        if (cout) await conflicts.write(cout);
      }
    } finally {
      await rows.close();
      await conflicts.close();
    }
    await commitTemp(rowsFile);
    await commitTemp(conflictsFile);
  });
  await mergeLedgerParts(
    join(dir, LEDGER_FILE),
    Array.from({ length: batches }, (_, n) => batchPaths(dir, n).ledger),
  );
  const s = summary(counts);
  const file = join(dir, 'summary.json');
  await writingTo('cannot write the undo summary', file, () =>
    writeFileAtomic(file, `${JSON.stringify(s, null, 2)}\n`),
  );
  return s;
}
