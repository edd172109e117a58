// OpenLineage run events (issue 40): every run that reads a sheet sends START then exactly one of COMPLETE / ABORT /
// FAIL under one runId to OPENLINEAGE_URL, each event valid against the OpenLineage specification (the receiver
// checks them with ajv against schemas/openlineage-events.json, our own schema after it), its counts those of
// summary.json; a queued run whose worker is killed with SIGKILL and resumed by another still ends once; a lineage
// server that is down never fails a run.
import { appendFileSync, mkdtempSync, readFileSync, readdirSync, existsSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import type { LineageEnd } from '../../src/events/openlineage.ts';
import { startLineageReceiver, useLineageReceiver, type LineageEventBody } from '../helpers/openlineage-receiver.ts';
import { useSandbox } from '../helpers/sandbox.ts';
import { testGtin, writeProductSheet } from '../helpers/sheets.ts';

const owner = DEMO_COMPANY_ID;
const sandbox = useSandbox();
const receiver = useLineageReceiver();

interface Summary {
  runId: string;
  counts: Record<string, number>;
  issues?: { code: string; column: string | null }[];
  events?: { type: string; endpoint: string; state: string }[];
}

const summaryOf = (reportDir: string): Summary => {
  const dirs = readdirSync(reportDir).filter((d) => existsSync(join(reportDir, d, 'summary.json')));
  expect(dirs).toHaveLength(1);
  return JSON.parse(readFileSync(join(reportDir, dirs[0]!, 'summary.json'), 'utf8')) as Summary;
};

/** The one OpenLineage run whose events name `jobName`: START first, then one terminal event, all valid. */
function oneRun(jobName: string): { start: LineageEventBody; end: LineageEventBody } {
  const runs = [...receiver.runs().values()].filter((events) => events[0]!.job.name === jobName);
  expect(runs, jobName).toHaveLength(1);
  const events = runs[0]!;
  expect(receiver.received.filter((r) => r.errors.length > 0).map((r) => r.errors)).toEqual([]);
  expect(events.map((e) => e.eventType)).toHaveLength(2);
  expect(events[0]!.eventType).toBe('START');
  expect(['COMPLETE', 'ABORT', 'FAIL']).toContain(events[1]!.eventType);
  return { start: events[0]!, end: events[1]! };
}

describe('OpenLineage events of inline runs', () => {
  it('an import: START then COMPLETE, the sheet with its columns and metrics, the API with rows written and checks', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-ol-import-'));
    const { file, mapping } = writeProductSheet(dir, 30, { owner, prefix: '040100' });
    // Two more rows: one with no name (a null in its column), one with a bad GTIN (an issue on GTIN).
    appendFileSync(file, `${testGtin(900, '040100')};;120;g\n0000000000001;Bad;100;g\n`);
    const env = inlineEnv(sandbox.url, dir, { OPENLINEAGE_URL: receiver.url, OPENLINEAGE_NAMESPACE: 'acme-imports' });
    const r = await cliInProcess(['import', file, '--mapping', mapping], { env });
    expect(r.code, r.stderr).toBe(1);
    const summary = summaryOf(join(dir, 'reports'));
    const { start, end } = oneRun('products');
    expect(end.eventType).toBe('COMPLETE');
    expect(end.run.runId).toBe(start.run.runId);
    expect(start.job.namespace).toBe('acme-imports');
    expect(end.run.facets?.productSync).toMatchObject({ runId: summary.runId });
    // The sheet: where it is, its columns, its row count and per mapped column nulls and distinct values.
    const input = end.inputs[0]!;
    expect(input).toMatchObject({ namespace: `file://${hostname()}`, name: file });
    expect((input.facets!.schema!.fields as { name: string }[]).map((f) => f.name)).toEqual([
      'GTIN',
      'Désignation',
      'Poids net',
      'Unité',
    ]);
    const metrics = input.inputFacets!.dataQualityMetrics!;
    expect(metrics.rowCount).toBe(summary.counts.rows);
    expect(metrics.columnMetrics).toMatchObject({
      GTIN: { nullCount: 0, distinctCount: 32 },
      Désignation: { nullCount: 1, distinctCount: 31 },
      Unité: { nullCount: 0, distinctCount: 1 },
    });
    // The API: its base URL and the owner; the rows written; every issue code of the report as a failed check.
    const output = end.outputs[0]!;
    expect(output).toMatchObject({ namespace: sandbox.url.replace(/\/+$/, ''), name: owner });
    const c = summary.counts;
    expect(output.outputFacets!.outputStatistics!.rowCount).toBe(c.created! + c.updated! + c.archived! + c.unarchived!);
    expect(output.outputFacets!.outputStatistics!.rowCount).toBeGreaterThan(0);
    const assertions = output.facets!.dataQualityAssertions!.assertions as {
      assertion: string;
      success: boolean;
      column?: string;
    }[];
    for (const i of summary.issues ?? [])
      expect(assertions).toContainEqual({
        assertion: i.code,
        success: false,
        ...(i.column ? { column: i.column } : {}),
      });
    expect(assertions).toContainEqual({ assertion: 'valid', success: true, column: 'Unité' });
    // summary.json lists the deliveries.
    expect(summary.events?.filter((e) => e.endpoint === 'openlineage').map((e) => e.state)).toEqual([
      'delivered',
      'delivered',
    ]);
  });

  it('validate and reconcile: their own jobs, the sheet checked, no output dataset', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-ol-validate-'));
    const { file, mapping } = writeProductSheet(dir, 5, { owner, prefix: '040200' });
    const env = inlineEnv(sandbox.url, dir, { OPENLINEAGE_URL: receiver.url });
    expect((await cliInProcess(['validate', file, '--mapping', mapping], { env })).code).toBe(0);
    const { end } = oneRun('products.validate');
    expect(end.eventType).toBe('COMPLETE');
    expect(end.outputs).toEqual([]);
    expect(end.inputs[0]!.inputFacets!.dataQualityMetrics!.rowCount).toBe(5);
    expect(end.inputs[0]!.facets!.dataQualityAssertions).toBeDefined();
    await cliInProcess(['reconcile', file, '--mapping', mapping], { env });
    expect(oneRun('products.reconcile').end.eventType).toBe('COMPLETE');
  });

  it('a run that fails before its report: START then FAIL with the error', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-ol-fail-'));
    const { file } = writeProductSheet(dir, 2, { owner, prefix: '040300' });
    const bad = join(dir, 'broken.yaml');
    appendFileSync(bad, 'name: broken\ntarget: tradeItem\ncolumns: []\n');
    const env = inlineEnv(sandbox.url, dir, { OPENLINEAGE_URL: receiver.url });
    const r = await cliInProcess(['import', file, '--mapping', bad], { env });
    expect(r.code).toBe(2);
    const { end } = oneRun('broken');
    expect(end.eventType).toBe('FAIL');
    expect(end.run.facets!.errorMessage).toMatchObject({ programmingLanguage: 'JavaScript' });
    expect(String(end.run.facets!.errorMessage!.message)).toMatch(/column/);
  });

  it('a lineage server that is down fails nothing: the run ends as it would, its report says the events failed', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-ol-down-'));
    const { file, mapping } = writeProductSheet(dir, 3, { owner, prefix: '040400' });
    const down = await startLineageReceiver();
    await down.close();
    const env = inlineEnv(sandbox.url, dir, {
      OPENLINEAGE_URL: down.url,
      WEBHOOK_INLINE_SECONDS: '0.2',
      WEBHOOK_RETRY_BASE_MS: '50',
    });
    const r = await cliInProcess(['import', file, '--mapping', mapping], { env });
    expect(r.code, r.stderr).toBe(0);
    const summary = summaryOf(join(dir, 'reports'));
    expect(summary.counts.created).toBe(3);
    expect(summary.events?.map((e) => e.state)).toEqual(['failed', 'failed']);
  });
});

describe('the receiver’s check', () => {
  it('refuses events the specification refuses: a runId that is no UUID, a facet without its required fields', async () => {
    const { lineageValidator } = await import('../helpers/openlineage-receiver.ts');
    const check = lineageValidator();
    const good = {
      eventType: 'START',
      eventTime: new Date().toISOString(),
      producer: 'urn:product-sync',
      schemaURL: 'https://openlineage.io/spec/2-0-2/OpenLineage.json#/$defs/RunEvent',
      run: { runId: '6f0d5a4e-3b2c-5d1e-9f8a-7b6c5d4e3f2a' },
      job: { namespace: 'ns', name: 'job' },
    };
    expect(check(good)).toEqual([]);
    expect(check({ ...good, run: { runId: 'run-1' } }).join()).toMatch(/uuid/);
    const facet = { _producer: 'urn:product-sync', _schemaURL: 'urn:x' };
    const bad = {
      ...good,
      inputs: [
        { namespace: 'file://h', name: '/a.csv', inputFacets: { dataQualityMetrics: { ...facet, rowCount: 1 } } },
      ],
    };
    expect(check(bad).join()).toMatch(/columnMetrics/);
  });

  it('refuses each broken part of the events product-sync sends: every required field, type and format', async () => {
    const { lineageValidator } = await import('../helpers/openlineage-receiver.ts');
    const { lineageEnd, lineageFail, lineageRunId } = await import('../../src/events/openlineage.ts');
    const check = lineageValidator();
    const at = new Date().toISOString();
    const run = {
      runId: lineageRunId('check'),
      namespace: 'product-sync',
      job: 'feed',
      kind: 'import' as const,
      input: { namespace: 'file://h', name: '/a.csv' },
      output: { namespace: 'http://127.0.0.1:1/v1', name: owner },
      nominalTime: at,
      facts: { runId: 'r1', jobId: '7', origin: 'feed', reportDir: '/reports/r1' },
    };
    const issue = { code: 'GTIN_INVALID', severity: 'error' as const, column: 'GTIN', field: 'gtin', rows: 1 };
    const end: LineageEnd = {
      summary: {
        counts: {
          rows: 3,
          created: 1,
          updated: 0,
          unchanged: 0,
          archived: 0,
          unarchived: 0,
          valid: 0,
          invalid: 1,
          failed: 0,
          skipped: 0,
          notAttempted: 0,
        },
        issues: [{ ...issue, rule: null, firstRows: [2], values: [] }],
        finishedAt: at,
        exitCode: 1,
      },
      stats: {
        headers: ['GTIN', 'Name'],
        rows: 3,
        columns: { GTIN: { nullCount: 0, distinctCount: 3, approximate: false } },
      },
      aborted: false,
    };
    const complete = lineageEnd(run, end);
    const fail = lineageFail(run, new Error('no such file'), at);
    expect(check(complete)).toEqual([]);
    expect(check(fail)).toEqual([]);
    // Each case: the event it starts from, what it breaks (path → value, undefined deletes), what the errors name.
    const input = 'inputs.0.facets';
    const cases: [Record<string, unknown>, string, unknown, RegExp][] = [
      [complete, 'schemaURL', undefined, /schemaURL/],
      [complete, 'schemaURL', 'not a uri', /schemaURL.*uri/],
      [complete, 'producer', 'not a uri', /producer.*uri/],
      [complete, 'eventTime', '2026-11-28 13:00', /eventTime.*date-time/],
      [complete, 'eventType', 'DONE', /eventType.*allowed/],
      [complete, 'run.runId', 'run-1', /runId.*uuid/],
      [complete, 'job.namespace', undefined, /namespace/],
      [complete, 'inputs.0.name', undefined, /inputs\/0.*name/],
      [complete, 'outputs.0.namespace', undefined, /outputs\/0.*namespace/],
      [complete, 'job.facets.jobType._producer', undefined, /jobType.*_producer/],
      [complete, 'job.facets.jobType.integration', undefined, /jobType.*integration/],
      [complete, `${input}.schema._schemaURL`, 'not a uri', /schema\/_schemaURL/],
      [complete, `${input}.schema.fields.0.name`, undefined, /fields\/0.*name/],
      [complete, `${input}.schema.fields.0.type`, 3, /fields\/0\/type.*string/],
      [complete, 'inputs.0.inputFacets.dataQualityMetrics.columnMetrics', undefined, /columnMetrics/],
      [complete, 'inputs.0.inputFacets.dataQualityMetrics.rowCount', 2.5, /rowCount.*integer/],
      [complete, 'inputs.0.inputFacets.dataQualityMetrics.columnMetrics.GTIN.nullCount', '0', /nullCount.*integer/],
      [complete, 'inputs.0.inputFacets.dataQualityMetrics.columnMetrics.GTIN.distinctCount', -1, /distinctCount/],
      [complete, 'outputs.0.outputFacets.outputStatistics.rowCount', undefined, /outputStatistics.*rowCount/],
      [complete, 'outputs.0.outputFacets.outputStatistics._schemaURL', 'urn:other', /outputStatistics\/_schemaURL/],
      [complete, 'outputs.0.facets.dataQualityAssertions.assertions', undefined, /assertions/],
      [complete, 'outputs.0.facets.dataQualityAssertions.assertions.0.success', 'no', /success.*boolean/],
      [complete, 'outputs.0.facets.dataQualityAssertions.assertions.0.assertion', undefined, /assertion/],
      [complete, 'run.facets.nominalTime.nominalStartTime', 'tomorrow', /nominalStartTime.*date-time/],
      [complete, 'run.facets.productSync._schemaURL', undefined, /productSync.*_schemaURL/],
      [complete, 'run.facets.productSync.extra', 'x', /productSync.*unevaluated/],
      [fail, 'run.facets.errorMessage.programmingLanguage', undefined, /errorMessage.*programmingLanguage/],
      [fail, 'run.facets.errorMessage.message', 42, /errorMessage\/message.*string/],
      [fail, 'run.facets.errorMessage', undefined, /errorMessage/],
    ];
    for (const [from, path, value, errors] of cases) {
      const event = structuredClone(from);
      const keys = path.split('.');
      const last = keys.pop()!;
      const parent = keys.reduce((o, k) => (o as Record<string, unknown>)[k], event as unknown) as Record<
        string,
        unknown
      >;
      if (value === undefined) delete parent[last];
      else parent[last] = value;
      expect(check(event).join('\n'), path).toMatch(errors);
    }
  });
});
