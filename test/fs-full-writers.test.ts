// Every writer on a full disk (a real one: a small tmpfs, test/helpers/tmpfs.ts; root needed, skipped elsewhere): the
// same typed error naming the file or directory — from the report thread too —, no temp file left holding space, and
// a journal whose writes the disk took only in part replays every record once there is space again.
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startEmbeddedSandbox } from '../src/embedded-sandbox.ts';
import { ProductSyncError } from '../src/errors.ts';
import { createReportWriter, type ReportWriter } from '../src/pipeline/report/report.ts';
import { openReportThread } from '../src/pipeline/report/report-thread.ts';
import { writeChunk, writeResults } from '../src/pipeline/run/chunks.ts';
import { writeRunState, type RunState } from '../src/pipeline/run/run-state.ts';
import { openJournal } from '../src/pipeline/sync/journal.ts';
import { fillUp, mountTmpfs, mountUnavailable } from './helpers/tmpfs.ts';
import { runSummary } from './helpers/summary.ts';

const mounts: { unmount(): void }[] = [];
afterAll(() => {
  for (const m of mounts.splice(0)) m.unmount();
});
/** A full disk of `size` with an empty directory `name` on it; remove the returned filler to free the space. */
function fullDisk(size = '256k', name = 'd'): { dir: string; filler: string } {
  const m = mountTmpfs(size);
  mounts.push(m);
  const dir = join(m.dir, name);
  mkdirSync(dir);
  return { dir, filler: fillUp(m.dir) };
}

const summary = (rows: number) => runSummary({ rows, created: rows }, { requests: { reference: 0, product: rows } });

/** Writes `rows` lines and finishes; resolves to the error it failed with. */
async function failureOf(w: ReportWriter, rows: number): Promise<unknown> {
  try {
    for (let i = 0; i < rows; i++)
      await w.addRow({
        row: i + 2,
        key: `0350000${String(i).padStart(7, '0')}`,
        outcome: 'created',
        tradeItemId: `3f0c1d2e-0000-4000-8000-${String(i).padStart(12, '0')}`,
        changedFields: ['gtin', 'tradeItemName'],
        issues: [],
      });
    await w.addRejected(99_999, ['x', 'y'], []);
    await w.finish(summary(rows));
  } catch (err) {
    await w.abort();
    return err;
  }
  return null;
}

const hidden = (dir: string) => readdirSync(dir).filter((f) => f.endsWith('.tmp'));

describe.skipIf(mountUnavailable !== null)(
  `writers on a full disk${mountUnavailable ? ` (skipped: ${mountUnavailable})` : ''}`,
  () => {
    it('the report: PS_ERR_FILE_WRITE naming its directory, the same from the report thread; no temp file left', async () => {
      const inline = fullDisk();
      const threaded = fullDisk();
      const a = await failureOf(await createReportWriter(inline.dir, { sourceHeaders: ['GTIN', 'Nom'] }), 5000);
      const b = await failureOf(openReportThread(threaded.dir, { sourceHeaders: ['GTIN', 'Nom'] }), 5000);
      for (const [err, dir] of [
        [a, inline.dir],
        [b, threaded.dir],
      ] as const) {
        expect(err).toBeInstanceOf(ProductSyncError);
        expect(err).toMatchObject({
          code: 'PS_ERR_FILE_WRITE',
          message: `cannot write the report to ${dir}: no space left on device`,
          retryable: true,
        });
        expect(readdirSync(dir)).toEqual([]);
      }
    });

    it('run.json, a chunk file and its results: named, the previous file kept, no temp file left', async () => {
      const { dir, filler } = fullDisk('512k');
      // Written while there was room: the versions a failed write must leave as they were.
      rmSync(filler);
      const state = { runId: 'r', rows: 3 } as unknown as RunState;
      await writeRunState(dir, state);
      mkdirSync(join(dir, 'chunks'));
      const rows = Array.from({ length: 3000 }, (_, i) => ({
        row: i + 2,
        key: `k${i}`,
        outcome: 'created' as const,
        tradeItemId: `t-${i}`,
        manufacturedItemId: null,
        changedFields: ['gtin'],
        issues: [],
      }));
      await writeResults(dir, 'rows', 0, rows.slice(0, 1));
      fillUp(join(dir, '..'));

      await expect(
        writeRunState(dir, {
          ...state,
          rows: 3000,
          headers: Array.from({ length: 3000 }, (_, i) => `column ${i}`),
        } as RunState),
      ).rejects.toMatchObject({
        code: 'PS_ERR_FILE_WRITE',
        message: `cannot write the run state ${join(dir, 'run.json')}: no space left on device`,
      });
      await expect(writeChunk(dir, 'rows', 1, { index: 1, settled: rows, plans: [] })).rejects.toMatchObject({
        code: 'PS_ERR_FILE_WRITE',
        message: `cannot write the chunk file ${join(dir, 'chunks', 'rows-1.json')}: no space left on device`,
      });
      await expect(writeResults(dir, 'rows', 0, rows)).rejects.toMatchObject({
        code: 'PS_ERR_FILE_WRITE',
        message: `cannot write the results of the chunk ${join(dir, 'chunks', 'rows-0.results.jsonl')}: no space left on device`,
      });
      expect(JSON.parse(readFileSync(join(dir, 'run.json'), 'utf8'))).toEqual(state);
      expect(
        readFileSync(join(dir, 'chunks', 'rows-0.results.jsonl'), 'utf8')
          .trim()
          .split('\n'),
      ).toHaveLength(1);
      expect([...hidden(dir), ...hidden(join(dir, 'chunks'))]).toEqual([]);
      expect(existsSync(join(dir, 'chunks', 'rows-1.json'))).toBe(false);
    });

    it('the journal: a write the disk took in part is completed once there is room; every record replays', async () => {
      const m = mountTmpfs('16k');
      mounts.push(m);
      const file = join(m.dir, 'journal.jsonl');
      // Leaves a few hundred bytes: the disk takes part of a record, then refuses.
      writeFileSync(join(m.dir, 'filler'), Buffer.alloc(16 * 1024 - 4096));
      const j = await openJournal(file);
      const recorded: string[] = [];
      let failure: unknown;
      for (let i = 0; i < 200 && !failure; i++) {
        const op = `0350000${String(i).padStart(7, '0')}:0:tradeItem.create`;
        try {
          recorded.push(op);
          await j.record(op, 'sent', { note: 'x'.repeat(40) }, true);
        } catch (err) {
          failure = err;
        }
      }
      expect(failure).toMatchObject({
        code: 'PS_ERR_FILE_WRITE',
        message: `cannot write the run journal ${file}: no space left on device`,
      });
      // The disk took part of the last write: the file does not end with a whole line.
      expect(readFileSync(file, 'utf8').endsWith('\n')).toBe(false);
      rmSync(join(m.dir, 'filler'));
      j.record('after', 'confirmed', { tradeItemId: 't' }, true);
      await j.close();
      const again = await openJournal(file);
      expect([...again.entries()].map(([op]) => op)).toEqual([...recorded, 'after']);
      await again.close();
    });

    it('the sandbox store of --sandbox: named, as the run would name it', async () => {
      const { dir } = fullDisk();
      const sb = await startEmbeddedSandbox(dir);
      sb.store.brands.set('b', { brandId: 'b', companyId: 'c', name: 'x'.repeat(300_000), archived: false });
      await expect(sb.close()).rejects.toMatchObject({
        code: 'PS_ERR_FILE_WRITE',
        message: `cannot write the sandbox store ${join(dir, '.sandbox', 'store.json')}: no space left on device`,
      });
      expect(readdirSync(join(dir, '.sandbox'))).toEqual([]);
    });
  },
);
