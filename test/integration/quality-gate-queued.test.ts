// Quality gates on queued runs (issue 38 item 3), against the sandbox with real workers and Redis: `enqueue` over the
// mapping's gate pushes no chunk (exit 3, every row reported, summary.json `held`) and `--waive-gate` applies it; a
// feed's own gate replaces the mapping's; the console shows the held run and its Apply anyway queues it again with the
// gate waived (same-origin only), in a browser too.
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { openFeedsQueue } from '../../src/queue/queues.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { hasChromium, startConsoleStack, withChromium, type ConsoleStack } from '../helpers/console.ts';
import { queueEnv } from '../helpers/env.ts';
import { testGtin } from '../helpers/sheets.ts';
import { until } from '../helpers/wait.ts';

let stack: ConsoleStack;
let dir: string;
let drop: string;

/** The test's mapping (JSON is YAML), with `gate` as its quality gate. */
const mappingText = (gate: Record<string, unknown>) =>
  JSON.stringify({
    name: 'gate-queued',
    target: 'tradeItem',
    ownerCompanyId: DEMO_COMPANY_ID,
    language: 'fr-FR',
    columns: [
      { column: 'GTIN', field: 'gtin', type: 'gtin' },
      { column: 'Désignation', field: 'tradeItemName' },
    ],
    gate,
  });

/** A sheet of `rows` rows from GTIN `offset`, the first `invalid` with a wrong check digit. */
function sheet(at: string, name: string, rows: number, invalid: number, offset: number): string {
  const lines = ['GTIN;Désignation'];
  for (let i = 0; i < rows; i++) {
    const g = testGtin(offset + i);
    lines.push(`${i < invalid ? g.slice(0, -1) + String((Number(g.at(-1)) + 1) % 10) : g};Sablés ${i}`);
  }
  const file = join(at, name);
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ps-gate-queued-'));
  drop = join(dir, 'drop');
  const jobs = join(dir, 'jobs');
  mkdirSync(drop);
  mkdirSync(jobs);
  // The mapping's gate lets a third of the rows be invalid; the feed's own gate (which replaces it) a tenth.
  writeFileSync(join(dir, 'lenient.yaml'), mappingText({ maxInvalidShare: 0.5 }));
  writeFileSync(
    join(jobs, 'strict.yaml'),
    `schedule: "0 2 * * *"\nsource: { dir: ${drop}, pattern: "strict-*.csv", settleSeconds: 0 }\nmapping: ${join(dir, 'lenient.yaml')}\ngate: { maxInvalidShare: 0.1 }\n`,
  );
  // A feed with rules of its own, in a rules file it names (relative to the feed file), and a gate on one of them.
  mkdirSync(join(jobs, 'rules'));
  writeFileSync(
    join(jobs, 'rules', 'feed-rules.yaml'),
    '- id: FEED-001\n  assert: "$length(tradeItemName) <= 9"\n  severity: warning\n  message: short names\n',
  );
  writeFileSync(
    join(jobs, 'ruled.yaml'),
    `schedule: "0 2 * * *"\nsource: { dir: ${drop}, pattern: "ruled-*.csv", settleSeconds: 0 }\nmapping: ${join(dir, 'lenient.yaml')}\nrules: ./rules/feed-rules.yaml\ngate: { rules: [FEED-001] }\n`,
  );
  stack = await startConsoleStack('gate-queued', {}, { jobsDir: jobs });
});
afterAll(async () => {
  await stack?.close();
});

const env = () => queueEnv(stack.sandbox.url, inject('redisUrl'), stack.config.QUEUE_PREFIX, dir);
const writes = () => stack.sandbox.handle.counts().writes;
const stored = (gtin: string) =>
  [...stack.sandbox.handle.store.tradeItems.values()].some((t) => t.fields.gtin === gtin);

interface ApiRun {
  id: string;
  status: string;
  origin: string;
  counts: Record<string, number> | null;
  reportDir: string | null;
  held: {
    invalidShare: number;
    invalidRows: number;
    rows: number;
    gate: Record<string, unknown>;
    ruleRows: Record<string, number>;
  } | null;
  apply: string | null;
}

async function run(id: string): Promise<ApiRun> {
  return (await (await fetch(`${stack.url}/runs/${id}`)).json()) as ApiRun;
}
async function ended(id: string): Promise<ApiRun> {
  let r: ApiRun | undefined;
  await until(
    `run ${id} ended`,
    async () => {
      const res = await fetch(`${stack.url}/runs/${id}`);
      if (res.status !== 200) return false;
      r = (await res.json()) as ApiRun;
      return r.status !== 'queued' && r.status !== 'running';
    },
    60_000,
  );
  return r!;
}

const summaryOf = (runDir: string) =>
  JSON.parse(readFileSync(join(stack.config.REPORT_DIR, runDir, 'summary.json'), 'utf8')) as {
    counts: Record<string, number>;
    held?: { invalidShare: number };
    abortCode?: string;
  };

/** Ticks `feed` and waits for the run it queues to end. */
async function feedRun(feed: string): Promise<ApiRun> {
  const feeds = openFeedsQueue(stack.config);
  try {
    await feeds.tick(feed);
  } finally {
    await feeds.close();
  }
  let id: string | undefined;
  await until(
    `the run of feed ${feed} is listed`,
    async () => {
      const { runs } = (await (await fetch(`${stack.url}/runs?feed=${feed}`)).json()) as { runs: ApiRun[] };
      id = runs[0]?.id;
      return id !== undefined;
    },
    30_000,
  );
  return ended(id!);
}

describe('a quality gate on queued runs', () => {
  it('holds an enqueued run over the gate before any chunk is pushed; --waive-gate applies it', async () => {
    const mapping = join(dir, 'strict-mapping.yaml');
    writeFileSync(mapping, mappingText({ maxInvalidShare: 0.1 }));
    const file = sheet(dir, 'cli.csv', 10, 3, 1100);
    const before = writes();
    const r = await cliInProcess(['enqueue', file, '--mapping', mapping, '--wait'], { env: env() });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stdout).toContain(
      'HELD: held by the quality gate: 30 % of the rows are invalid (3 of 10), over maxInvalidShare 10 %',
    );
    expect(writes()).toBe(before);
    expect(stored(`0${testGtin(1105)}`)).toBe(false);
    const jobId = r.stdout.split('\n')[0]!.trim();
    const held = await run(jobId);
    expect(held).toMatchObject({ status: 'held', apply: `/runs/${jobId}/apply` });
    const s = summaryOf(held.reportDir!);
    expect(s.abortCode).toBe('PS_ERR_QUALITY_GATE');
    expect(s.held).toMatchObject({ invalidShare: 0.3 });
    // Every row planned and reported: the valid ones not attempted.
    expect(s.counts).toMatchObject({ rows: 10, invalid: 3, notAttempted: 7, created: 0 });

    const again = await cliInProcess(['enqueue', file, '--mapping', mapping, '--waive-gate', '--wait'], {
      env: env(),
    });
    expect(again.code, again.stderr).toBe(1);
    expect(again.stdout).not.toContain('HELD');
    expect(stored(`0${testGtin(1105)}`)).toBe(true);
  }, 60_000);

  it("holds a feed's run by the feed's own gate, which replaces the mapping's; the console applies it anyway", async () => {
    sheet(drop, 'strict-1.csv', 10, 3, 1200);
    const held = await feedRun('strict');
    const id = held.id;
    // The mapping's gate (0.5) would have let it through: the feed's (0.1) held it.
    expect(held).toMatchObject({ status: 'held', held: { invalidShare: 0.3, gate: { maxInvalidShare: 0.1 } } });
    expect(held.counts).toMatchObject({ invalid: 3, notAttempted: 7, created: 0 });
    expect(stored(`0${testGtin(1205)}`)).toBe(false);

    // Apply anyway is a change: refused from another site, as every state-changing route of the console.
    const cross = await fetch(`${stack.url}${held.apply}`, {
      method: 'POST',
      headers: { origin: 'http://evil.example', 'sec-fetch-site': 'cross-site' },
    });
    expect(cross.status).toBe(403);
    // Only a held run can be applied anyway.
    expect((await fetch(`${stack.url}/runs/no-such-run/apply`, { method: 'POST' })).status).toBe(404);

    const applyIn = async (): Promise<string> => {
      if (!hasChromium) {
        const res = await fetch(`${stack.url}${held.apply}`, { method: 'POST' });
        expect(res.status).toBe(202);
        return ((await res.json()) as { id: string }).id;
      }
      return withChromium({}, async (browser) => {
        const page = await browser.newPage();
        await page.goto(`${stack.url}/#run=${encodeURIComponent(id)}`);
        const box = page.locator('#run-detail #held');
        await box.waitFor({ timeout: 15_000 });
        expect(await box.locator('.held-share').textContent()).toContain('30 % of the rows invalid (3 of 10)');
        expect(await box.locator('.held-gate').textContent()).toContain('maxInvalidShare 10 %');
        await box.locator('#apply-anyway').click();
        await page.locator('#message.ok', { hasText: 'applied anyway' }).waitFor();
        const text = (await page.locator('#message').textContent()) ?? '';
        return text.replace(/^.* queued as /, '');
      });
    };
    const appliedId = await applyIn();
    expect(appliedId).not.toBe(id);
    const applied = await ended(appliedId);
    expect(applied).toMatchObject({ status: 'done', origin: 'feed', held: null, apply: null });
    expect(applied.counts).toMatchObject({ invalid: 3, created: 7 });
    expect(stored(`0${testGtin(1205)}`)).toBe(true);
    // The held run stays as it was.
    expect((await run(id)).status).toBe('held');
  }, 120_000);

  it("applies a feed's own rules, from the rules file it names, and holds its run on the gate's rule", async () => {
    // Sablés 0 … Sablés 9: "Sablés 10" would be longer; one row with a long name fails FEED-001.
    const file = sheet(drop, 'ruled-1.csv', 4, 0, 1300);
    writeFileSync(file, `${readFileSync(file, 'utf8').trimEnd()}\n${testGtin(1304)};Sablés au beurre\n`);
    const held = await feedRun('ruled');
    expect(held).toMatchObject({
      status: 'held',
      held: { ruleRows: { 'FEED-001': 1 }, gate: { rules: ['FEED-001'] } },
    });
    expect(held.counts).toMatchObject({ rows: 5, notAttempted: 5, created: 0 });
    expect(stored(`0${testGtin(1300)}`)).toBe(false);
  }, 60_000);

  // docs/mapping.md "What a held run writes before its verdict": brands are created after the prepare step's verdict.
  it('creates the brands a run names only once its gate passes: held, none; under the gate, once, before the chunks', async () => {
    const brandMapping = (name: string, gate: Record<string, unknown>) => {
      const m = JSON.parse(mappingText(gate)) as { columns: unknown[] };
      m.columns.push({ column: 'Marque', field: 'brandId', lookup: { brand: { create: true } } });
      const file = join(dir, `${name}.yaml`);
      writeFileSync(file, JSON.stringify({ ...m, name }));
      return file;
    };
    const withBrand = (file: string, brand: string) => {
      const [head, ...rows] = readFileSync(file, 'utf8').trimEnd().split('\n');
      writeFileSync(file, `${[`${head};Marque`, ...rows.map((r) => `${r};${brand}`)].join('\n')}\n`);
      return file;
    };
    const brands = (name: string) =>
      [...stack.sandbox.handle.store.brands.values()].filter((b) => b.companyId === DEMO_COMPANY_ID && b.name === name);

    const strict = brandMapping('gate-brands-strict', { maxInvalidShare: 0.1 });
    const heldFile = withBrand(sheet(dir, 'brand-held.csv', 10, 3, 1400), 'Biscuiterie Queued Held');
    const before = writes();
    const held = await cliInProcess(['enqueue', heldFile, '--mapping', strict, '--wait'], { env: env() });
    expect(held.code, held.stderr).toBe(3);
    expect(writes()).toBe(before);
    expect(brands('Biscuiterie Queued Held')).toEqual([]);
    expect(stored(`0${testGtin(1405)}`)).toBe(false);

    // Under the gate: the brand is created once, after the verdict and before the chunk jobs, every item linked to it.
    const lenient = brandMapping('gate-brands-lenient', { maxInvalidShare: 0.5 });
    const passFile = withBrand(sheet(dir, 'brand-pass.csv', 10, 3, 1500), 'Biscuiterie Queued Passe');
    const passed = await cliInProcess(['enqueue', passFile, '--mapping', lenient, '--wait'], { env: env() });
    expect(passed.code, passed.stderr).toBe(1);
    const [brand] = brands('Biscuiterie Queued Passe');
    expect(brands('Biscuiterie Queued Passe')).toHaveLength(1);
    const items = [...stack.sandbox.handle.store.tradeItems.values()].filter((t) =>
      Array.from({ length: 7 }, (_, i) => `0${testGtin(1503 + i)}`).includes(t.fields.gtin as string),
    );
    expect(items).toHaveLength(7);
    for (const t of items) expect(t.fields.brandId).toBe(brand!.brandId);
  }, 60_000);
});
