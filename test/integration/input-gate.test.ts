// One gate for input (issue 22, item 4): `enqueue`, a console upload and a feed tick refuse what `import` refuses
// before it sends anything — with the import's own message — and queue nothing. Real files, the real CLI, the console
// over HTTP, real workers on the test Redis under prefixes of their own.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { Queue } from 'bullmq';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.ts';
import { QUEUES } from '../../src/queue/catalog.ts';
import { openFeedsQueue } from '../../src/queue/queues.ts';
import { startWorkers, type WorkerSet } from '../../src/queue/workers.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { buildConsole } from '../../src/server/app.ts';
import { handZip, RELS_XML, WORKBOOK_XML } from '../fixtures/sheets.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { apiEnv } from '../helpers/env.ts';
import { writeProductSheet } from '../helpers/sheets.ts';

const redisUrl = inject('redisUrl');
const run = `${process.pid}-${Date.now().toString(36)}`;

let dir: string;
let mappingsDir: string;
let sandbox: RunningSandbox;

/**
 * An input the gate must refuse: a sheet and a mapping (a name in `mappingsDir`), and the code `import` refuses it
 * with.
 */
interface Case {
  what: string;
  file: string;
  mapping: string;
  code: string;
}
let cases: Case[];
let good: { file: string; mapping: string };

function envFor(prefix: string): Record<string, string> {
  return apiEnv(sandbox.url, {
    OWNER_COMPANY_ID: DEMO_COMPANY_ID,
    REDIS_URL: redisUrl,
    QUEUE_PREFIX: prefix,
    REPORT_DIR: join(dir, `reports-${prefix}`),
    UPLOAD_DIR: join(dir, `uploads-${prefix}`),
    LOG_LEVEL: 'warn',
  });
}

/** The CLI (in-process), run in `dir` (so a mapping name is looked for in dir/mappings). */
const cli = (args: string[], env: Record<string, string>) => cliInProcess(args, { cwd: dir, env });

/**
 * What `import` prints refusing `file` with `mapping`, after checking it exits 2 having sent nothing: one line, or for
 * a mapping a first line and one indented line per problem (docs/errors.md), the code last.
 */
async function importRefusal(file: string, mapping: string, env: Record<string, string>): Promise<string> {
  const before = sandbox.handle.store.dump().tradeItems.length;
  const r = await cli(['import', file, '--mapping', mapping], env);
  expect(r.code, r.stderr).toBe(2);
  expect(sandbox.handle.store.dump().tradeItems.length).toBe(before);
  expect(r.stderr, r.stderr).toMatch(/^product-sync: [^\n]+(\n {2}[^\n]+)* \[PS_ERR_[A-Z_]+\]\n$/);
  return r.stderr.trim();
}

/** The message and code of a CLI refusal `product-sync: <message> [PS_ERR_…]`. */
function parts(line: string): { message: string; code: string } {
  const m = /^product-sync: (.*) \[(PS_ERR_[A-Z_]+)\]$/s.exec(line);
  expect(m, line).not.toBeNull();
  return { message: m![1]!, code: m![2]! };
}

/** Every job of the import queue under `prefix`, whatever its state. */
async function importJobs(prefix: string): Promise<number> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue(QUEUES.import, { connection, prefix: `{${prefix}}` });
  try {
    const counts = await queue.getJobCounts();
    return Object.values(counts).reduce((n, c) => n + c, 0);
  } finally {
    await queue.close();
    connection.disconnect();
  }
}

async function dropKeys(prefix: string): Promise<void> {
  const r = new Redis(redisUrl);
  const keys = await r.keys(`{${prefix}}*`);
  if (keys.length > 0) await r.del(...keys);
  r.disconnect();
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'ps-input-gate-'));
  mappingsDir = join(dir, 'mappings');
  mkdirSync(mappingsDir);
  const sheets = join(dir, 'sheets');
  mkdirSync(sheets);
  const products = writeProductSheet(sheets, 3, { owner: DEMO_COMPANY_ID, file: 'good.csv' });
  writeFileSync(join(mappingsDir, 'products.yaml'), readFileSync(products.mapping));
  writeFileSync(
    join(mappingsDir, 'broken.yaml'),
    'name: broken\ntarget: tradeItem\nkey: gtin\ncolumns:\n  - { column: GTIN, field: gtinn, type: gtin }\n',
  );
  good = { file: products.file, mapping: 'products' };
  const put = (name: string, data: string | Buffer) => {
    const f = join(sheets, name);
    writeFileSync(f, data);
    return f;
  };
  const zeros = Buffer.alloc(60 * 1024 * 1024);
  const parts = [
    { name: 'xl/workbook.xml', data: WORKBOOK_XML },
    { name: 'xl/_rels/workbook.xml.rels', data: RELS_XML },
  ];
  const wide = Array.from(
    { length: 5000 },
    (_, i) => ['GTIN', 'Désignation', 'Poids net', 'Unité'][i] ?? `Colonne ${i + 1}`,
  );
  cases = [
    { what: 'an empty file', file: put('empty.csv', ''), mapping: 'products', code: 'PS_ERR_FILE_UNREADABLE' },
    {
      what: 'a binary file',
      file: put('binary.csv', Buffer.from(Array.from({ length: 4096 }, (_, i) => (i * 37) % 256))),
      mapping: 'products',
      code: 'PS_ERR_FILE_TYPE',
    },
    {
      what: 'a zip bomb (its sizes declared)',
      file: put('bomb.xlsx', handZip([...parts, { name: 'xl/worksheets/sheet1.xml', data: zeros }])),
      mapping: 'products',
      code: 'PS_ERR_FILE_TOO_LARGE',
    },
    {
      what: 'a zip bomb (its sizes hidden)',
      file: put(
        'lying.xlsx',
        handZip([...parts, { name: 'xl/worksheets/sheet1.xml', data: zeros, declaredSize: 1000 }]),
      ),
      mapping: 'products',
      code: 'PS_ERR_FILE_TOO_LARGE',
    },
    {
      what: 'a 5 000-column sheet',
      file: put('wide.csv', `${wide.join(';')}\n${wide.map((_, i) => (i === 0 ? '03500000000019' : 'x')).join(';')}\n`),
      mapping: 'products',
      code: 'PS_ERR_FILE_TOO_LARGE',
    },
    { what: 'a missing mapping', file: good.file, mapping: 'nope', code: 'PS_ERR_MAPPING_INVALID' },
    { what: 'an invalid mapping', file: good.file, mapping: 'broken', code: 'PS_ERR_MAPPING_INVALID' },
    {
      what: 'a mapped column missing from the header',
      file: put('no-unit.csv', 'GTIN;Désignation;Poids net\n03500000000019;Biscuit;100\n'),
      mapping: 'products',
      code: 'PS_ERR_FILE_HEADER',
    },
  ];
});

afterAll(async () => {
  await sandbox?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe('enqueue (CLI)', () => {
  const prefix = `ps-gate-cli-${run}`;
  afterAll(() => dropKeys(prefix));

  it("refuses what import refuses — exit 2, the import's message — and queues nothing; a good sheet is queued (control)", async () => {
    const env = envFor(prefix);
    for (const c of cases) {
      const expected = await importRefusal(c.file, c.mapping, env);
      expect(parts(expected).code, c.what).toBe(c.code);
      const r = await cli(['enqueue', c.file, '--mapping', c.mapping], env);
      expect(r.code, `${c.what}: ${r.stderr}`).toBe(2);
      expect(r.stderr.trim(), c.what).toBe(expected);
      expect(r.stdout, c.what).toBe('');
    }
    expect(await importJobs(prefix)).toBe(0);

    const ok = await cli(['enqueue', good.file, '--mapping', good.mapping], env);
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/^import-[0-9a-f]{20}-[0-9a-f]{12}\n$/);
    expect(await importJobs(prefix)).toBe(1);
  }, 120_000);
});

describe('console upload', () => {
  const prefix = `ps-gate-upload-${run}`;
  let app: FastifyInstance;
  let config: Config;
  let url: string;
  beforeAll(async () => {
    config = loadConfig(envFor(prefix));
    app = await buildConsole({ config, mappingsDir, maxUploadBytes: 64 * 1024 * 1024 });
    await app.listen({ port: 0, host: '127.0.0.1' });
    url = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  });
  afterAll(async () => {
    await app?.close();
    await dropKeys(prefix);
  });

  async function upload(file: string, mapping: string): Promise<Response> {
    const form = new FormData();
    form.append('mapping', mapping);
    form.append('file', new Blob([readFileSync(file)]), basename(file));
    return fetch(`${url}/uploads`, { method: 'POST', body: form });
  }
  /** Every entry of UPLOAD_DIR, hidden ones (a `.part` being written) included. */
  const stored = (): string[] => readdirSync(config.UPLOAD_DIR).sort();

  it("answers 400 with the import's message and code, keeps no file and queues nothing; a good sheet is queued (control)", async () => {
    const env = envFor(prefix);
    for (const c of cases) {
      const { message, code } = parts(await importRefusal(c.file, c.mapping, env));
      const res = await upload(c.file, c.mapping);
      expect(res.status, c.what).toBe(400);
      // The stored file is named by the client's file name, as the mapper's answers do.
      expect(await res.json(), c.what).toEqual({ error: message.split(c.file).join(basename(c.file)), code });
      expect(stored(), c.what).toEqual([]);
    }
    expect(await importJobs(prefix)).toBe(0);

    const ok = await upload(good.file, good.mapping);
    expect(ok.status).toBe(202);
    expect(stored()).toHaveLength(1);
    expect(await importJobs(prefix)).toBe(1);
  }, 120_000);
});

describe('feed tick', () => {
  const prefix = `ps-gate-feed-${run}`;
  let workers: WorkerSet;
  let config: Config;
  let redis: Redis;
  let jobs: string;
  /**
   * The feeds: one per case (its mapping given by path, as feeds name it), a good one, and one whose mapping gets
   * fixed.
   */
  const feedCase = (i: number) => `case-${i}`;

  const writeFeed = (id: string, mapping: string) => {
    mkdirSync(join(dir, 'drops', id), { recursive: true });
    writeFileSync(
      join(jobs, `${id}.yaml`),
      `schedule: "0 2 * * *"\nsource: { dir: ${join(dir, 'drops', id)}, pattern: "*", settleSeconds: 0 }\nmapping: ${mapping}\n`,
    );
  };
  const dropFile = (id: string, file: string) =>
    writeFileSync(join(dir, 'drops', id, basename(file)), readFileSync(file));

  beforeAll(async () => {
    jobs = join(dir, 'jobs');
    mkdirSync(jobs);
    cases.forEach((c, i) => {
      writeFeed(feedCase(i), join(mappingsDir, `${c.mapping}.yaml`));
      dropFile(feedCase(i), c.file);
    });
    writeFeed('good', join(mappingsDir, 'products.yaml'));
    dropFile('good', good.file);
    writeFileSync(join(mappingsDir, 'fixable.yaml'), readFileSync(join(mappingsDir, 'broken.yaml')));
    writeFeed('fixable', join(mappingsDir, 'fixable.yaml'));
    dropFile('fixable', good.file);
    config = loadConfig(envFor(prefix));
    workers = await startWorkers(config, { jobsDir: jobs });
    redis = new Redis(redisUrl);
  });
  afterAll(async () => {
    await workers?.close();
    redis?.disconnect();
    await dropKeys(prefix);
  });

  /** Runs one tick of `feed` and returns what it recorded (`last.tick`), once the worker has recorded it. */
  async function tick(feed: string): Promise<string> {
    const key = `{${prefix}}:feed:${feed}:last`;
    const before = await redis.hget(key, 'tickAt');
    const q = openFeedsQueue(config);
    try {
      await q.tick(feed);
    } finally {
      await q.close();
    }
    for (let i = 0; i < 300; i++) {
      const last = await redis.hgetall(key);
      if (last.tickAt && last.tickAt !== before) return last.tick ?? '';
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`feed ${feed}: no tick recorded`);
  }

  it('records why it refuses a file, queues nothing, and does not read it again at the next tick; a good file is queued (control)', async () => {
    const env = envFor(prefix);
    const reasons: string[] = [];
    for (const [i, c] of cases.entries()) {
      const feed = feedCase(i);
      const file = join(dir, 'drops', feed, basename(c.file));
      const { message, code } = parts(await importRefusal(file, join(mappingsDir, `${c.mapping}.yaml`), env));
      expect(code, c.what).toBe(c.code);
      const reason = `${message} [${code}]`;
      expect(await tick(feed), c.what).toBe(`file refused, not queued: ${reason}: ${file}`);
      expect(await tick(feed), c.what).toBe(
        `file refused earlier, not queued until it or the mapping changes: ${reason}: ${file}`,
      );
      expect(await redis.hlen(`{${prefix}}:feed:${feed}:refused`), c.what).toBe(1);
      reasons.push(reason);
    }
    expect(await importJobs(prefix)).toBe(0);

    // `feeds list` shows each feed's last tick, and so why its file was refused.
    const listed = await cli(['feeds', 'list', '--jobs-dir', jobs], env);
    expect(listed.code, listed.stderr).toBe(0);
    for (const reason of reasons)
      expect(listed.stdout).toContain(`refused earlier, not queued until it or the mapping changes: ${reason}`);

    expect(await tick('good')).toMatch(/^queued import-\S+: .*good\.csv$/);
    expect(await importJobs(prefix)).toBe(1);
  }, 120_000);

  it('checks a refused file again once its mapping is changed', async () => {
    expect(await tick('fixable')).toMatch(/^file refused, not queued: .*fixable\.yaml.* \[PS_ERR_MAPPING_INVALID\]: /s);
    expect(await tick('fixable')).toMatch(/^file refused earlier/);
    writeFileSync(join(mappingsDir, 'fixable.yaml'), readFileSync(join(mappingsDir, 'products.yaml')));
    expect(await tick('fixable')).toMatch(/^queued import-\S+: .*good\.csv$/);
  }, 60_000);
});
