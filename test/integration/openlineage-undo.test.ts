// OpenLineage events of undo runs (issue 40): `product-sync undo` and the console's Undo each send START then exactly
// one terminal event under one runId, as a run of the job of the import they take back, with that import's sheet as
// input and the API as output (outputStatistics: the items put back); an undo that fails sends START then FAIL. Every
// event is checked by the receiver against schemas/openlineage-events.json.
import { existsSync, mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import type { RunStatus } from '../../src/queue/enqueue.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { registerUndo } from '../../src/server/undo-routes.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { jobTypeOf, useLineageReceiver, type LineageEventBody } from '../helpers/openlineage-receiver.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { writeProductSheet } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

const owner = DEMO_COMPANY_ID;
const sandbox = useSandbox();
const receiver = useLineageReceiver();

/** The OpenLineage runs of `kind` whose productSync facet names `field` = `value`. */
const runsWith = (kind: string, field: string, value: string) =>
  [...receiver.runs().values()].filter((events) =>
    events.some((e) => jobTypeOf(e) === kind && e.run.facets?.productSync?.[field] === value),
  );

/** An inline import of a few rows in a fresh directory: its env, its run id and its (one) OpenLineage run. */
async function importRun(prefix: string, extra: string[] = []) {
  const dir = mkdtempSync(join(tmpdir(), 'ps-ol-undo-'));
  const { file, mapping } = writeProductSheet(dir, 4, { owner, prefix });
  const env = inlineEnv(sandbox.url, dir, { OPENLINEAGE_URL: receiver.url, LOG_LEVEL: 'silent' });
  const r = await cliInProcess(['import', file, '--mapping', mapping, ...extra], { env });
  expect(r.code, r.stderr).toBe(0);
  const reports = join(dir, 'reports');
  const runId = readdirSync(reports).find((d) => existsSync(join(reports, d, 'summary.json')))!;
  const [imported] = runsWith('IMPORT', 'runId', runId);
  expect(imported).toHaveLength(2);
  return { env, reports, runId, imported: imported![1]! };
}

/** The one undo run of `undone`: START, then one terminal event, all valid. */
function undoRun(undone: string): LineageEventBody[] {
  const runs = runsWith('UNDO', 'undoes', undone);
  expect(runs).toHaveLength(1);
  expect(receiver.received.filter((r) => r.errors.length > 0).map((r) => r.errors)).toEqual([]);
  const events = runs[0]!;
  expect(events.map((e) => e.eventType)[0]).toBe('START');
  expect(events).toHaveLength(2);
  expect(new Set(events.map((e) => e.run.runId)).size).toBe(1);
  return events;
}

/** The undo's events name the import's job and datasets; its output counts the items it put back. */
function expectSameJobAndDatasets(end: LineageEventBody, imported: LineageEventBody, restored: number): void {
  expect(end.job).toMatchObject({ namespace: imported.job.namespace, name: imported.job.name });
  expect(end.inputs.map((d) => [d.namespace, d.name])).toEqual(imported.inputs.map((d) => [d.namespace, d.name]));
  expect(end.outputs.map((d) => [d.namespace, d.name])).toEqual(imported.outputs.map((d) => [d.namespace, d.name]));
  expect(end.outputs[0]!.outputFacets!.outputStatistics!.rowCount).toBe(restored);
}

describe('OpenLineage events of undo runs', () => {
  it('`product-sync undo`: START then COMPLETE, the job and datasets of the import, the items put back', async () => {
    const { env, reports, runId, imported } = await importRun('043100');
    const r = await cliInProcess(['undo', runId], { env });
    expect(r.code, r.stderr).toBe(0);
    const summary = JSON.parse(readFileSync(join(reports, `undo-${runId}`, 'summary.json'), 'utf8')) as {
      runId: string;
      counts: { restored: number };
    };
    expect(summary.counts.restored).toBe(4);
    const [start, end] = undoRun(runId);
    expect(end!.eventType).toBe('COMPLETE');
    expect(start!.job.name).toBe('products');
    expectSameJobAndDatasets(end!, imported, 4);
    expect(end!.run.facets!.productSync).toMatchObject({ runId: summary.runId, undoes: runId });
    // The import's own run is another run: its runId is not the undo's.
    expect(end!.run.runId).not.toBe(imported.run.runId);
  });

  it('an undo that fails: START then FAIL with its error', async () => {
    const { env, runId } = await importRun('043200', ['--dry-run']);
    const r = await cliInProcess(['undo', runId], { env });
    expect(r.code).toBe(2);
    const [, end] = undoRun(runId);
    expect(end!.eventType).toBe('FAIL');
    expect(String(end!.run.facets!.errorMessage!.message)).toMatch(/dry run/);
  });

  it('the console’s Undo: START then COMPLETE, as the CLI’s', async () => {
    const { env, reports, runId, imported } = await importRun('043300');
    const app = Fastify();
    const status = async () => ({ result: { runId } }) as unknown as RunStatus;
    registerUndo(app, { config: loadConfig(env), reportDir: reports, status });
    try {
      const res = await app.inject({ method: 'POST', url: '/runs/job-1/undo' });
      expect(res.statusCode, res.body).toBe(202);
      await until('the undo’s terminal event', () => runsWith('UNDO', 'undoes', runId)[0]?.length === 2, 20_000);
      const [, end] = undoRun(runId);
      expect(end!.eventType).toBe('COMPLETE');
      expectSameJobAndDatasets(end!, imported, 4);
    } finally {
      await app.close();
    }
  });
});
