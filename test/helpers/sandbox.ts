import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect } from 'vitest';
import { createApiClients, type ApiClients } from '../../src/api/clients.ts';
import { contextFromConfig, type CommandContext } from '../../src/runtime.ts';
import { loadConfig } from '../../src/config.ts';
import { runImport } from '../../src/pipeline/run/run.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { apiEnv } from './env.ts';
import { readThrough, useStarted } from './use-started.ts';

/**
 * The sandbox of a test file: started before its tests (beforeAll), closed after them (afterAll). The returned object
 * reads through to the running sandbox (its `url` and `handle` are there once the tests run).
 */
export function useSandbox(options: Parameters<typeof startSandbox>[0] = {}): RunningSandbox {
  return useStarted(() => startSandbox({ port: 0, ...options }), 'the sandbox');
}

/** The GTINs of the sandbox's archived items, sorted. */
export function archivedGtins(sandbox: RunningSandbox): string[] {
  return sandbox.handle.store
    .dump()
    .tradeItems.filter((t) => t.archived)
    .map((t) => String(t.gtin))
    .sort();
}

/**
 * A sandbox and the API clients of its token, shared by the tests of a file or a describe: set up in beforeAll, closed
 * in afterAll. Both returned objects read through to what runs once the tests do.
 */
export function useSandboxClients(options: Parameters<typeof startSandbox>[0] = {}): {
  sandbox: RunningSandbox;
  clients: ApiClients;
} {
  const sandbox = useSandbox(options);
  let running: ApiClients | undefined;
  beforeAll(() => {
    running = createApiClients({
      productApiUrl: sandbox.url,
      referenceApiUrl: sandbox.url,
      credentials: { token: 'sandbox-token' },
    });
  });
  afterAll(async () => {
    await running?.close();
  });
  const clients = readThrough(() => running, 'the clients are made in beforeAll: read them inside a test or a hook');
  return { sandbox, clients };
}

/**
 * A sandbox, a temporary directory (`<tmp>/<prefix>…`) and one inline run context against both (reports in
 * `<dir>/reports`, nothing logged), shared by the tests of a file: set up in beforeAll, closed in afterAll. `extra`
 * adds or overrides keys of the environment.
 */
export function useSandboxContext(
  prefix: string,
  extra: Record<string, string> = {},
): { sandbox: RunningSandbox; readonly dir: string; readonly cc: CommandContext } {
  const sandbox = useSandbox();
  let dir = '';
  let cc: CommandContext | undefined;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), prefix));
    cc = await commandContext(apiEnv(sandbox.url, { REPORT_DIR: join(dir, 'reports'), LOG_LEVEL: 'silent', ...extra }));
  });
  afterAll(async () => {
    await cc?.close();
  });
  return {
    sandbox,
    get dir() {
      return dir;
    },
    get cc() {
      if (!cc) throw new Error('the run context is built in beforeAll: read it inside a test or a hook');
      return cc;
    },
  };
}

/** The run context of an inline command over the environment `e` (env.ts): API clients, throttle; close it after. */
export function commandContext(e: Record<string, string>): Promise<CommandContext> {
  return contextFromConfig(loadConfig(e), {});
}

/** Runs `fn` with the run context of an inline command over `e`, and closes the context after. */
export async function withContext<T>(e: Record<string, string>, fn: (cc: CommandContext) => Promise<T>): Promise<T> {
  const cc = await commandContext(e);
  try {
    return await fn(cc);
  } finally {
    await cc.close();
  }
}

/** Asserts the owner has exactly `rows` trade items in the sandbox, one per GTIN (no duplicate was created). */
export function expectOneItemPerGtin(sandbox: RunningSandbox, owner: string, rows: number): void {
  const items = sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === owner);
  // On failure, the message names the GTINs held more than once and their items (id, name), to tell what wrote them.
  const byGtin = new Map<string, string[]>();
  for (const t of items)
    byGtin.set(String(t.gtin), [...(byGtin.get(String(t.gtin)) ?? []), `${t.tradeItemId} ${t.tradeItemName}`]);
  const twice = [...byGtin].filter(([, ids]) => ids.length > 1);
  expect(items, `held more than once: ${JSON.stringify(twice.slice(0, 5))}`).toHaveLength(rows);
  expect(byGtin.size).toBe(rows);
}

/** The lines of a run's rows.csv below its header, split at commas (row, key, outcome, item id, …). */
export function reportRows(reportDir: string): string[][] {
  return readFileSync(join(reportDir, 'rows.csv'), 'utf8')
    .replace(/^\uFEFF/, '')
    .trim()
    .split(/\r?\n/)
    .slice(1)
    .map((line) => line.split(','));
}

/** Every line of the report names the item the API holds for its key. */
export function reportIdsMatchApi(sandbox: RunningSandbox, owner: string, reportDir: string, rows: number): void {
  const csv = reportRows(reportDir);
  expect(csv).toHaveLength(rows);
  const ids = new Map(
    sandbox.handle.store
      .dump()
      .tradeItems.filter((t) => t.ownerCompanyId === owner)
      .map((t) => [t.gtin, t.tradeItemId]),
  );
  for (const [, key, , tradeItemId] of csv) {
    expect(tradeItemId).toBe(ids.get(key));
  }
}

/** A second import of the same sheet (inline, same API) finds everything in place: no write, every row unchanged. */
export async function expectRerunCreatesNothing(
  sandbox: RunningSandbox,
  e: Record<string, string>,
  file: string,
  mapping: string,
  rows: number,
): Promise<void> {
  await withContext(e, async (cc) => {
    const writes = sandbox.handle.counts().writes;
    const rerun = await runImport({ file, mapping }, cc.ctx);
    expect(rerun.summary.counts).toMatchObject({ rows, unchanged: rows, created: 0, updated: 0, failed: 0 });
    expect(sandbox.handle.counts().writes).toBe(writes);
  });
}
