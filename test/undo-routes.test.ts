import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../src/config.ts';
import type { RunStatus } from '../src/queue/enqueue.ts';
import { registerUndo } from '../src/server/undo-routes.ts';

describe('console undo routes', () => {
  it('after a restart, tells an unfinished undo from its directory, and a finished one with its files', async () => {
    const reportDir = mkdtempSync(join(tmpdir(), 'ps-undo-routes-'));
    const runId = '0d0f02cda8ee-27cb102a';
    const app = Fastify();
    registerUndo(app, {
      config: loadConfig({ REDIS_URL: '', REPORT_DIR: reportDir }),
      reportDir,
      status: async (id) => (id === 'job-1' ? ({ result: { runId } } as unknown as RunStatus) : null),
    });
    await app.ready();
    try {
      const get = async (path: string) => app.inject({ method: 'GET', url: path });
      expect((await get('/runs/job-1/undo')).statusCode).toBe(404);

      // A console killed mid-undo: run.json, no summary.
      const dir = join(reportDir, `undo-${runId}`);
      mkdirSync(dir);
      writeFileSync(join(dir, 'run.json'), JSON.stringify({ runId: `undo-${runId}`, kind: 'undo', undoes: runId }));
      const unfinished = (await get('/runs/job-1/undo')).json();
      expect(unfinished).toMatchObject({ status: 'unfinished', runId: `undo-${runId}` });
      expect(unfinished.error).toContain('press Undo again');

      // Finished (here by another console): its summary and files.
      writeFileSync(join(dir, 'summary.json'), JSON.stringify({ exitCode: 0, counts: { restored: 2 } }));
      writeFileSync(join(dir, 'rows.csv'), 'line,gtin\n');
      expect((await get('/runs/job-1/undo')).json()).toMatchObject({
        status: 'done',
        runId: `undo-${runId}`,
        exitCode: 0,
        summary: { counts: { restored: 2 } },
      });
      const rows = await get('/runs/job-1/undo/files/rows.csv');
      expect(rows.statusCode).toBe(200);
      expect(rows.body).toBe('line,gtin\n');
    } finally {
      await app.close();
    }
  });
});
