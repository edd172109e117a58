/**
 * Reconcile: compares the sheet with the API field by field and writes reconcile.json / .csv; sends no write. Streams
 * like a run: the key pass, the owner's catalogue index, then the sheet in chunks compared with their records.
 */
import { join, resolve as resolvePath } from 'node:path';
import { EXIT } from '../../exit-codes.ts';
import { writingTo } from '../../fs-errors.ts';
import { makeDir } from '../../make-dir.ts';
import { loadMapping } from '../map/mapping.ts';
import { checkSheetFile } from '../read/read-sheet.ts';
import { IssueBreakdown } from '../report/issue-breakdown.ts';
import { createReportWriter, type ReportWriter, type RowOutcome, type RunSummary } from '../report/report.ts';
import { notAttemptedIssue } from './chunks.ts';
import { emptyCounts } from './assemble.ts';
import { runApiState, runOwner } from './open-run.ts';
import type { RunContext } from './run-context.ts';
import type { RunResult } from './run.ts';
import { abortOf, interruption, runIdFor, sha256File, type ImportRequest } from './run-state.ts';
import { draftReader, draftResolverFor, openMappedSheet, readSheetKeys } from './sheet-pass.ts';
import { describeScope, scopeIssue, scopeMissingError } from '../scope.ts';
import { runScope } from './scope-of-run.ts';
import { sameCanonical } from '../sync/canonical.ts';
import type { Draft } from '../types.ts';

const show = (v: unknown) => (v === undefined || v === null ? '' : typeof v === 'string' ? v : JSON.stringify(v));

/** Reconcile: sheet vs API, field by field; writes reconcile.json / .csv and the row report; sends no write. */
export async function runReconcile(req: ImportRequest, ctx: RunContext): Promise<RunResult> {
  const mapping = await loadMapping(req.mapping);
  const owner = runOwner(req, mapping, ctx);
  // "Missing from the sheet" means the scope's items: without one, nothing is read (docs/scopes.md).
  if ((req.scope ?? mapping.scope) === undefined) throw scopeMissingError('reconcile', mapping.file);
  const reportDir = resolvePath(req.reportDir ?? ctx.config.REPORT_DIR);
  await checkSheetFile(req.file);
  const sha = await sha256File(req.file);
  const runId = await runIdFor(reportDir, sha, mapping, owner, req, 'reconcile');
  const workDir = join(reportDir, runId);
  await writingTo('cannot create the run directory', workDir, () => makeDir(workDir));
  const startedAt = new Date().toISOString();
  const refBefore = ctx.clients.stats.reference;
  const productBefore = ctx.clients.stats.product;
  const keys = await readSheetKeys(await openMappedSheet(req, mapping), mapping, ctx);
  const scope = (await runScope(req, mapping, owner, ctx))!;

  const api = await runApiState(ctx, mapping, owner, workDir, keys.distinct, true, scope);
  const resolver = draftResolverFor(ctx, req, mapping, owner, true);
  const sheet = await openMappedSheet(req, mapping);
  const draftOf = draftReader(sheet, mapping, keys);
  const report = await createReportWriter(workDir, { sourceHeaders: sheet.headers, reconcile: true });
  // Each row's issues tallied as its line is written (summary.json `issues`, issues.csv), as a run's assembler does.
  const breakdown = new IssueBreakdown();
  const writer = {
    ...report,
    addRow: (o: RowOutcome) => {
      breakdown.add(o.row, o.issues);
      return report.addRow(o);
    },
  };
  const counts = emptyCounts(keys.rows);
  const rec = { inSync: 0, differs: 0, missingInApi: 0, missingInSheet: 0 };

  const compare = async (drafts: Draft[]) => {
    if (ctx.signal?.aborted) {
      // Interrupted: the rest of the sheet is reported, not compared.
      counts.notAttempted += drafts.length;
      return reportNotAttempted(writer, drafts, interruption(ctx.signal).message);
    }
    for (const d of drafts) {
      const outside = d.issues.some((i) => i.severity === 'error') ? undefined : scopeIssue(d, scope);
      if (outside) d.issues.push(outside);
    }
    await resolver.resolveChunk(drafts);
    const valid = drafts.filter((d) => !d.issues.some((i) => i.severity === 'error'));
    const state = await api.forKeys(valid.map((d) => d.key!));
    for (const d of drafts) {
      if (d.issues.some((i) => i.severity === 'error')) {
        counts.invalid++;
        await writer.addRow({
          row: d.row,
          key: d.key,
          outcome: 'invalid',
          tradeItemId: null,
          manufacturedItemId: null,
          changedFields: [],
          issues: d.issues,
        });
        await writer.addRejected(d.row, d.source, d.issues);
        continue;
      }
      const record = state.tradeItems.get(d.key!);
      if (!record) {
        await writer.addReconcile({ key: d.key!, status: 'missing_in_api', field: '', sheetValue: '', apiValue: '' });
        rec.missingInApi++;
        counts.skipped++;
        await writer.addRow({
          row: d.row,
          key: d.key,
          outcome: 'skipped',
          tradeItemId: null,
          manufacturedItemId: null,
          changedFields: [],
          issues: d.issues,
        });
        continue;
      }
      const differing: string[] = [];
      for (const [field, value] of Object.entries(d.fields)) {
        if (!sameCanonical(value, record[field])) {
          differing.push(field);
          await writer.addReconcile({
            key: d.key!,
            status: 'differs',
            field,
            sheetValue: show(value),
            apiValue: show(record[field]),
          });
        }
      }
      if (differing.length === 0) {
        await writer.addReconcile({ key: d.key!, status: 'in_sync', field: '', sheetValue: '', apiValue: '' });
        counts.unchanged++;
        rec.inSync++;
      } else {
        counts.skipped++;
        rec.differs++;
      }
      await writer.addRow({
        row: d.row,
        key: d.key,
        outcome: differing.length === 0 ? 'unchanged' : 'skipped',
        tradeItemId: record.tradeItemId,
        manufacturedItemId: null,
        changedFields: differing,
        issues: d.issues,
      });
    }
  };

  try {
    let drafts: Draft[] = [];
    for await (const row of sheet.rows) {
      drafts.push(draftOf(row));
      if (drafts.length >= (ctx.chunkSize ?? ctx.config.CHUNK_SIZE)) {
        await compare(drafts);
        drafts = [];
      }
    }
    if (drafts.length > 0) await compare(drafts);
    for await (const item of ctx.signal?.aborted ? [] : api.missingFrom((k) => keys.has(k))) {
      await writer.addReconcile({
        key: item.key ?? '',
        status: 'missing_in_sheet',
        field: '',
        sheetValue: '',
        apiValue: item.tradeItemId,
      });
      rec.missingInSheet++;
    }
  } catch (err) {
    await writer.abort();
    throw err;
  } finally {
    await api.close();
  }
  // Like `diff`: 1 when the sheet and the API differ, unless the caller only wants the report (--no-fail-on-diff).
  // Invalid rows alone are 4, not 1: they are the sheet's problem, not a drift of the API, and a drift check must not
  // take them for one (differences win when both: the report lists the invalid rows either way).
  const differences = rec.differs + rec.missingInApi + rec.missingInSheet;
  const stopped = ctx.signal?.aborted ? abortOf(interruption(ctx.signal)) : undefined;
  const exitCode = stopped
    ? stopped.exitCode
    : differences > 0 && req.failOnDiff !== false
      ? EXIT.rowsFailed
      : counts.invalid > 0
        ? EXIT.reconcileInvalidOnly
        : EXIT.ok;
  const spec = scope.spec;
  const summary: RunSummary = {
    reconcile: rec,
    scope: {
      spec,
      text: describeScope(spec),
      items: api.catalog.scope?.items ?? api.catalog.total,
      active: api.catalog.active,
    },
    runId,
    source: { file: req.file, sha256: sha, rows: keys.rows },
    mapping: mapping.name,
    mode: req.mode ?? 'upsert',
    dryRun: true,
    startedAt,
    finishedAt: new Date().toISOString(),
    counts,
    requests: {
      reference: ctx.clients.stats.reference - refBefore,
      product: ctx.clients.stats.product - productBefore,
    },
    exitCode,
    ...(stopped ? { aborted: stopped.message, ...(stopped.code ? { abortCode: stopped.code } : {}) } : {}),
  };
  breakdown.fill(summary);
  const { files } = await writer.finish(summary);
  return { runId, exitCode, summary, reportDir: workDir, files, kind: 'reconcile' };
}

/** Rows the reconcile did not compare (interrupted): not attempted, with their source cells in rejected.*. */
async function reportNotAttempted(
  writer: Pick<ReportWriter, 'addRow' | 'addRejected'>,
  drafts: Draft[],
  why: string,
): Promise<void> {
  for (const d of drafts) {
    const issues = [...d.issues, notAttemptedIssue(d.row, why)];
    await writer.addRow({
      row: d.row,
      key: d.key,
      outcome: 'not_attempted',
      tradeItemId: null,
      manufacturedItemId: null,
      changedFields: [],
      issues,
    });
    await writer.addRejected(d.row, d.source, issues);
  }
}
