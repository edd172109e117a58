import { existsSync } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { loadConfig } from '../config.ts';
import { commandFileWriteError } from '../fs-errors.ts';
import { runImport, type RunResult } from '../pipeline/run/run.ts';
import { DEMO_COMPANY_ID } from '../sandbox/defaults.ts';
import { contextFromConfig, ensureReportDir } from '../runtime.ts';
import { startEmbeddedSandbox } from '../embedded-sandbox.ts';
import { formatSummary } from './summary.ts';

const SHEETS = new Set(['.csv', '.tsv', '.txt', '.xlsx']);

/** The sample sheets and their mappings: `samples/<name>.<ext>` goes with `mappings/<name>.yaml`. */
export async function demoPairs(
  samplesDir = 'samples',
  mappingsDir = 'mappings',
): Promise<{ file: string; mapping: string }[]> {
  const out: { file: string; mapping: string }[] = [];
  for (const f of (await readdir(samplesDir)).sort()) {
    if (!SHEETS.has(extname(f).toLowerCase())) continue;
    const name = basename(f, extname(f));
    const mapping = [
      join(mappingsDir, `${name}.yaml`),
      join(mappingsDir, `${name}.yml`),
      join(mappingsDir, `${name}.json`),
    ].find((m) => existsSync(m));
    if (mapping) out.push({ file: join(samplesDir, f), mapping });
  }
  return out;
}

function table(rows: string[][]): string {
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => r[i]!.length)));
  const line = (r: string[]) => r.map((c, i) => (i < 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(rows[0]!), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.slice(1).map(line)].join('\n');
}

/**
 * `product-sync demo`: a fresh in-process sandbox, every sample imported twice (the second pass must change nothing), a
 * table of outcomes.
 */
export async function demoCommand(flags: { reportDir?: string }): Promise<number> {
  const env = { ...process.env, ...(flags.reportDir ? { REPORT_DIR: flags.reportDir } : {}) };
  const reportDir = resolve(env.REPORT_DIR ?? './reports');
  // Refused at once when it cannot be written (a full disk, read-only, under /proc), as import does.
  await ensureReportDir(reportDir, flags.reportDir ? '--report-dir' : 'REPORT_DIR');
  const sandbox = await startEmbeddedSandbox(reportDir, { persist: false });
  const config = loadConfig({
    ...env,
    PRODUCT_API_URL: sandbox.url,
    REFERENCE_API_URL: sandbox.url,
    API_TOKEN: 'sandbox-token',
    API_TOKEN_URL: '',
    API_CLIENT_ID: '',
    API_CLIENT_SECRET: '',
  });
  const cc = await contextFromConfig(config, { owner: DEMO_COMPANY_ID, closeSandbox: sandbox.close });
  const results: { file: string; pass: number; r: RunResult }[] = [];
  // The demo prints its own summaries and table: the runs' info lines would only be mixed into them (LOG_LEVEL still
  // wins).
  const runLogger = cc.ctx.logger!.child({}, { level: process.env.LOG_LEVEL ?? 'warn' });
  try {
    const pairs = await demoPairs();
    process.stdout.write(
      `product-sync demo: sandbox at ${sandbox.url}, owner ${DEMO_COMPANY_ID}, ${pairs.length} sample sheets\n\n`,
    );
    for (const pass of [1, 2]) {
      for (const { file, mapping } of pairs) {
        const r = await runImport(
          { file, mapping, owner: DEMO_COMPANY_ID, reportDir },
          { ...cc.ctx, logger: runLogger },
        );
        results.push({ file, pass, r });
        if (pass === 1) process.stdout.write(`${formatSummary(r)}\n\n`);
      }
    }
  } catch (err) {
    // A file the system refused once writes were sent: exit 3 (fs-errors.ts).
    throw commandFileWriteError(err, cc.ctx.clients.product.writes) ?? err;
  } finally {
    await cc.close();
  }
  const head = ['sheet', 'pass', 'rows', 'created', 'updated', 'unchanged', 'invalid', 'failed', 'writes', 'report'];
  const body = results.map(({ file, pass, r }) => {
    const c = r.summary.counts;
    return [
      basename(file),
      String(pass),
      String(c.rows),
      String(c.created),
      String(c.updated),
      String(c.unchanged),
      String(c.invalid),
      String(c.failed),
      String(r.writes ?? 0),
      r.reportDir,
    ];
  });
  process.stdout.write(`${table([head, ...body])}\n\n`);
  const second = results.filter((x) => x.pass === 2);
  const quiet = second.every(
    (x) =>
      (x.r.writes ?? 0) === 0 &&
      x.r.summary.counts.created + x.r.summary.counts.updated + x.r.summary.counts.unarchived === 0,
  );
  process.stdout.write(
    quiet
      ? 'Second pass: every valid row unchanged, nothing created or updated (invalid rows stay invalid until the sheet is fixed: see rejected.xlsx).\n'
      : 'Second pass changed something: the import is not idempotent — see the reports.\n',
  );
  process.stdout.write(
    `Reports are in ${reportDir}/<run-id>/ (summary.json, issues.csv, rows.csv, rows.xlsx, rejected.xlsx).\n`,
  );
  return quiet ? 0 : 1;
}
