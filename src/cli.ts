import { readFileSync } from 'node:fs';
import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { ProductSyncError } from './errors.ts';
import { EXIT, exitCodeFor } from './exit-codes.ts';
import { startTracing, stopTracing, tracingWanted } from './tracing.ts';
import { commandFileWriteError } from './fs-errors.ts';

const MODES = ['upsert', 'full', 'create-only', 'update-only'];

function int(name: string) {
  return (v: string): number => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError(`${name} must be a non-negative integer`);
    return n;
  };
}
function ratio(v: string): number {
  const n = Number(v);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('must be a number between 0 and 1');
  return n;
}
/** `--preview [rows]`: 1 to 1000 (kept in step with PREVIEW_MAX_ROWS, src/pipeline/run/preview.ts). */
function previewRows(v: string): number {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 1 || n > 1000)
    throw new InvalidArgumentError(`--preview takes a number of rows from 1 to 1000, not "${v}"`);
  return n;
}
const WAIT_REDIS = '--wait-redis <seconds>';
const WAIT_REDIS_HELP = 'wait this long for Redis to answer at start (default: exit 2 at once when it does not)';
function collect(v: string, acc: string[]): string[] {
  return [...acc, v];
}

/**
 * The version in package.json (src/ and dist/ both sit one level below it), read as a file: a require() of it would
 * set up Node's CommonJS file resolution, which nothing else a command starts with needs.
 */
function packageVersion(): string {
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

/** `scorecard`: each mapping's or feed's runs with their supplier score and grade (docs/scorecard.md). */
/** `rules` (the rule catalogue) and `scorecard` (suppliers' grades). */
function addQualityCommands(p: Command, done: (code: number) => void): void {
  p.command('rules')
    .description('the rule catalogue: every check with its stable rule id, severity, fields and GS1 rule')
    .addOption(
      new Option('--format <format>', 'text, json, or markdown (docs/rules.md)')
        .choices(['text', 'json', 'markdown'])
        .default('text'),
    )
    .action(async (opts) => done(await (await import('./commands/rules.ts')).rulesCommand(opts)));
  addScorecardCommand(p, done);
}

function addScorecardCommand(p: Command, done: (code: number) => void): void {
  p.command('scorecard')
    .description(
      "each mapping's or feed's runs with their supplier score and grade; --out writes the file for the supplier",
    )
    .option('--report-dir <dir>', 'where run reports are (default REPORT_DIR or ./reports)')
    .option('--mapping <name>', "only this mapping's runs")
    .option('--feed <name>', "only this feed's runs")
    .option('--out <file>', 'write the scorecard file (.xlsx or .csv) for the supplier')
    .option('--language <code>', "language of the file (en, fr, de; default the last run's report language)")
    .action(async (opts) => done(await (await import('./commands/scorecard.ts')).scorecardCommand(opts)));
}

/** Builds the `product-sync` command tree; each action sets the exit code it returns through `done`. */
function program(done: (code: number) => void): Command {
  const p = new Command('product-sync')
    .description('Import and sync supplier product sheets (CSV, XLSX) into the product API')
    .version(packageVersion(), '-V, --version', 'print the version')
    .exitOverride()
    .configureOutput({ writeErr: (s) => process.stderr.write(s) });

  const runOptions = (c: Command) =>
    c
      .requiredOption('-m, --mapping <name|path>', 'mapping name (mappings/<name>.yaml) or path')
      .option('--owner <uuid>', 'owner company id (overrides the mapping and OWNER_COMPANY_ID)')
      .option('--report-dir <dir>', 'where run reports go (default REPORT_DIR or ./reports)')
      .option('--language <code>', 'language of the labels in the sheet (overrides the mapping)')
      .option('--sheet <name>', 'XLSX worksheet (overrides the mapping)')
      .option('--sandbox', 'start the embedded sandbox in-process and point the run at it');

  runOptions(p.command('import').argument('<file>', 'CSV, TSV or XLSX sheet'))
    .description('read, validate, resolve, plan and push a sheet (inline, no Redis needed)')
    .addOption(new Option('--mode <mode>', 'sync mode').choices(MODES).default('upsert'))
    .option('--dry-run', 'plan and report without writing')
    .option('--waive-gate', "apply the run even when it is over its mapping's quality gate (gate:)")
    .option('--allow-archive', 'let a full run archive more than the archive guard allows')
    .option(
      '--max-archive-ratio <ratio>',
      "archive guard: largest share of the scope's active items a full run may archive",
      ratio,
    )
    .option(
      '--archive-despite-invalid-keys',
      'full mode: archive even the items that rows with unreadable keys could stand for (logged; default: withheld)',
    )
    .option(
      '--wait-lock <seconds>',
      'wait this long for another run of the same owner and API to finish (default: exit 2 at once)',
      Number,
    )
    .action(async (file: string, opts) => done(await (await import('./commands/import.ts')).importCommand(file, opts)));

  runOptions(p.command('validate').argument('<file>', 'CSV, TSV or XLSX sheet'))
    .description('read, map, validate and resolve only; writes the issues report, sends no write')
    .option(
      '--preview [rows]',
      'show the first rows (default 10) as they would be sent: fields, cells, mapped values, resolved ids and labels, issues; writes no report',
      previewRows,
    )
    .option('--json', 'with --preview: print the preview as JSON')
    .action(async (file: string, opts) => {
      if (opts.json && !opts.preview)
        throw new ProductSyncError(
          'PS_ERR_CLI_USAGE',
          '--json goes with --preview (validate writes its report files otherwise)',
        );
      if (opts.preview) return done(await (await import('./commands/preview.ts')).previewCommand(file, opts));
      // A large sheet's report thread starts loading its modules now, beside the run's own (report-thread-start.ts).
      (await import('./pipeline/report/report-thread-start.ts')).warmReportThread(file);
      done(await (await import('./commands/import.ts')).validateCommand(file, opts));
    });

  runOptions(p.command('reconcile').argument('<file>', 'CSV, TSV or XLSX sheet'))
    .description('compare a sheet with the API field by field; writes a reconciliation report, sends no write')
    .option(
      '--no-fail-on-diff',
      'exit 0 even when the sheet and the API differ (default: exit 1 on any difference; 4 when invalid rows are the only problem)',
    )
    .action(async (file: string, opts) =>
      done(await (await import('./commands/import.ts')).reconcileCommand(file, opts)),
    );

  p.command('undo')
    .argument('<run>', 'run id (looked up under the report dir) or run directory')
    .description('take a finished run back: restore what it changed unless changed since, archive what it created')
    .option('--dry-run', 'read the items and print the plan; send nothing')
    .option('--force', 'undo even though later runs changed the same items')
    .option('--report-dir <dir>', 'where run reports go (default REPORT_DIR or ./reports)')
    .option('--sandbox', 'start the embedded sandbox in-process and point the undo at it')
    .option(
      '--wait-lock <seconds>',
      'wait this long for another run of the same owner and API to finish (default: exit 2 at once)',
      Number,
    )
    .action(async (run: string, opts) => done(await (await import('./commands/undo.ts')).undoCommand(run, opts)));

  p.command('sandbox')
    .description('serve the sandbox API (both specs, in memory)')
    .option('--port <port>', 'port', int('--port'), 4010)
    .option('--host <host>', 'host', '127.0.0.1')
    .option('--token <value[:companyId[:internal]]>', 'accept this bearer token (repeatable)', collect, [])
    .option('--latency <ms|min-max>', 'injected latency')
    .option('--faults <spec>', 'fault injection, e.g. "503=0.1,429=0.05,retryAfter=1,500after=0.02,reset=0.02,seed=42"')
    .option('--admin', 'enable the test-only /__admin routes')
    .option(
      '--assign-ids',
      'ignore client-chosen ids on create and assign new ones, as many real APIs do (a create sent twice then makes a duplicate)',
    )
    .action(async (opts) => done(await (await import('./commands/sandbox.ts')).sandboxCommand(opts)));

  p.command('demo')
    .description('start the sandbox in-process, import every file in samples/ twice, print the outcomes')
    .option('--report-dir <dir>', 'where run reports go')
    .action(async (opts) => done(await (await import('./commands/demo.ts')).demoCommand(opts)));

  p.command('worker')
    .description('run the BullMQ workers and upsert the feed schedules from jobs/')
    .option('--concurrency <n>', 'import jobs processed at once', int('--concurrency'))
    .option('--jobs-dir <dir>', 'feed definitions', 'jobs')
    .option(WAIT_REDIS, WAIT_REDIS_HELP, int('--wait-redis'))
    .action(async (opts) => done(await (await import('./commands/queue.ts')).workerCommand(opts)));

  p.command('enqueue')
    .argument('<file>', 'CSV, TSV or XLSX sheet')
    .description('queue an import (ad-hoc upload); prints the run id')
    .requiredOption('-m, --mapping <name|path>', 'mapping name or path')
    .option('--owner <uuid>', 'owner company id')
    .addOption(new Option('--mode <mode>', 'sync mode').choices(MODES).default('upsert'))
    .option('--dry-run', 'plan and report without writing')
    .option('--waive-gate', 'apply the run even when it is over its quality gate (gate:)')
    .option('--wait', 'wait for the run and print its summary')
    .option(
      '--wait-lock <seconds>',
      'how long the queued run may wait for another run of the same owner and API (default: as long as it takes), then fail with exit 2',
      Number,
    )
    .option(WAIT_REDIS, WAIT_REDIS_HELP, int('--wait-redis'))
    .action(async (file: string, opts) => done(await (await import('./commands/queue.ts')).enqueueCommand(file, opts)));

  const feeds = p.command('feeds').description('scheduled supplier feeds (jobs/*.yaml)');
  feeds
    .command('list')
    .option('--jobs-dir <dir>', 'feed definitions', 'jobs')
    .option(WAIT_REDIS, WAIT_REDIS_HELP, int('--wait-redis'))
    .description('schedules, next run, last outcome')
    .action(async (opts) => done(await (await import('./commands/queue.ts')).feedsListCommand(opts)));
  feeds
    .command('run')
    .argument('<name>', 'feed id (file name)')
    .option('--jobs-dir <dir>', 'feed definitions', 'jobs')
    .option(WAIT_REDIS, WAIT_REDIS_HELP, int('--wait-redis'))
    .description('trigger a feed now')
    .action(async (name: string, opts) =>
      done(await (await import('./commands/queue.ts')).feedsRunCommand(name, opts)),
    );

  const mapping = p.command('mapping').description('mapping files (mappings/*.yaml)');
  mapping
    .command('init')
    .argument('<sheet>', 'CSV, TSV or XLSX sheet of the supplier')
    .description(
      'write a draft mapping: each header matched to a field by name and aliases, checked against the first rows',
    )
    .addOption(new Option('--target <target>', 'API object the sheet feeds').choices(['tradeItem', 'manufacturedItem']))
    .option('--language <code>', 'language of the sheet (default: guessed from the headers)')
    .option('--name <name>', 'mapping name (default: from the sheet file name)')
    .option('--sheet <name>', 'XLSX worksheet (default: the first visible one)')
    .option('--header-row <n>', 'sheet row holding the headers (default: found)', (v: string) => {
      const n = Number(v);
      if (!Number.isInteger(n) || n < 1 || n > 1000)
        throw new InvalidArgumentError('--header-row must be a row number from 1 to 1000');
      return n;
    })
    .option('--out <file>', 'where to write the draft (default mappings/<name>.yaml; - prints it)')
    .option('--force', 'overwrite an existing mapping file')
    .option('--sandbox', 'check list labels against the embedded sandbox')
    .action(async (sheet: string, opts) =>
      done(await (await import('./commands/mapping.ts')).mappingInitCommand(sheet, opts)),
    );

  p.command('lists')
    .argument('[name]', 'a reference list (e.g. trade-item-status)')
    .description("the reference lists lookups name; with a name, that list's labels, codes and ids")
    .option('--language <code>', 'language of the labels (default LANGUAGE_CODE; then its fallbacks)')
    .option('--json', 'print JSON')
    .option('--sandbox', "read the embedded sandbox's lists")
    .action(async (name: string | undefined, opts) =>
      done(await (await import('./commands/lists.ts')).listsCommand(name, opts)),
    );

  addQualityCommands(p, done);

  p.command('serve')
    .description('HTTP console: uploads, runs, reports, queue dashboard')
    .option('--port <port>', 'port', int('--port'), 8080)
    .option(
      '--host <host>',
      'address to listen on; without CONSOLE_TOKEN or CONSOLE_USER + CONSOLE_PASSWORD, only a loopback one (127.0.0.1, ::1)',
      '127.0.0.1',
    )
    .option(
      '--insecure-no-auth',
      'listen on another address without credentials anyway (prints a warning at every start)',
    )
    .action(async (opts) => done(await (await import('./commands/queue.ts')).serveCommand(opts)));

  return p;
}

/** Runs the CLI with `argv` (without node and script); resolves to the process exit code (docs/commands.md). */
export async function main(argv: string[]): Promise<number> {
  let code: number = EXIT.ok;
  // OTEL_EXPORTER_OTLP_ENDPOINT set: the SDK starts before the command (nothing is loaded otherwise), and what it
  // has not exported yet is flushed when the command ends.
  if (tracingWanted(process.env)) await startTracing(process.env);
  try {
    await program((c) => (code = c)).parseAsync(argv, { from: 'user' });
    return code;
  } catch (thrown) {
    if (thrown instanceof CommanderError) {
      return thrown.exitCode === 0 ? EXIT.ok : EXIT.invalidInvocation;
    }
    // A refusal of the file system no writer worded (or worded in a worker thread) is still one line, not a stack
    // trace.
    const err = commandFileWriteError(thrown) ?? thrown;
    if (err instanceof ProductSyncError) {
      process.stderr.write(`product-sync: ${err.message} [${err.code}]\n`);
      return exitCodeFor(err);
    }
    process.stderr.write(`product-sync: unexpected failure: ${(err as Error)?.stack ?? String(err)}\n`);
    return EXIT.aborted;
  } finally {
    await stopTracing();
  }
}
