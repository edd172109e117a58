// GET /runs over more runs than a page: newest queued first, `before` leads from page to page, runs BullMQ removed
// leave the list (and its index), runs queued in the same millisecond keep their order, and a queue whose jobs were
// kept before the index existed is listed all the same.
import { readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mkdtempSync } from 'node:fs';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { buildConsole } from '../../src/server/app.ts';

const sample = new URL('../../samples/epicerie-fine.csv', import.meta.url).pathname;
const prefix = `ps-runs-${process.pid}`;
let app: FastifyInstance;
let base: string;
let redis: Redis;
let queue: Queue;

interface Page {
  runs: { id: string; queuedAt: string; status: string; fileName: string }[];
  next: string | null;
}

const list = async (query: string): Promise<Page> => (await (await fetch(`${base}/runs?${query}`)).json()) as Page;

/** Every page of `limit` runs, following `next`: the runs in order and the size of each page. */
async function pages(limit: number): Promise<{ ids: string[]; sizes: number[] }> {
  const ids: string[] = [];
  const sizes: number[] = [];
  let next: string | null = null;
  do {
    const page = await list(`limit=${limit}${next ? `&before=${encodeURIComponent(next)}` : ''}`);
    ids.push(...page.runs.map((r) => r.id));
    sizes.push(page.runs.length);
    next = page.next;
  } while (next !== null);
  return { ids, sizes };
}

/** Newest queued first, then by id (descending) for runs queued in the same millisecond. */
const newestFirst = (runs: Page['runs']) =>
  [...runs].sort((a, b) => (a.queuedAt === b.queuedAt ? (a.id < b.id ? 1 : -1) : a.queuedAt < b.queuedAt ? 1 : -1));

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ps-runs-'));
  // No worker: the runs stay queued, so the list holds exactly the ones queued here.
  const config = loadConfig({
    REDIS_URL: inject('redisUrl'),
    QUEUE_PREFIX: prefix,
    REPORT_DIR: join(dir, 'reports'),
    UPLOAD_DIR: join(dir, 'uploads'),
    LOG_LEVEL: 'warn',
  });
  app = await buildConsole({ config });
  await app.listen({ port: 0, host: '127.0.0.1' });
  base = `http://127.0.0.1:${(app.server.address() as { port: number }).port}`;
  redis = new Redis(inject('redisUrl'));
  queue = new Queue('import', { connection: redis.duplicate(), prefix: `{${prefix}}` });
  const lines = readFileSync(sample).toString('latin1').split(/\r?\n/);
  for (let i = 1; i <= 7; i++) {
    // Another name on one row: another sheet (sha256), another run.
    const copy = [...lines];
    copy[5] = copy[5]!.replace(/;[^;]*;/, `;sheet ${i};`);
    const form = new FormData();
    form.append('mapping', 'epicerie-fine');
    form.append('file', new Blob([Buffer.from(copy.join('\r\n'), 'latin1')]), `sheet-${i}.csv`);
    const res = await fetch(`${base}/uploads`, { method: 'POST', body: form });
    expect(res.status).toBe(202);
  }
});
afterAll(async () => {
  await app?.close();
  await queue?.close();
  if (redis) {
    const keys = await redis.keys(`{${prefix}}*`);
    if (keys.length > 0) await redis.del(...keys);
    redis.disconnect();
  }
});

describe('GET /runs paging', () => {
  it('pages newest first through more runs than a page, following before', async () => {
    const all = await list('limit=500');
    expect(all.next).toBeNull();
    expect(all.runs).toHaveLength(7);
    expect(all.runs.map((r) => r.id)).toEqual(newestFirst(all.runs).map((r) => r.id));
    // The newest upload first: the last sheet sent heads the list.
    expect(all.runs[0]!.fileName).toBe('sheet-7.csv');
    expect(all.runs.every((r) => r.status === 'queued')).toBe(true);
    const paged = await pages(3);
    expect(paged.sizes).toEqual([3, 3, 1]);
    expect(paged.ids).toEqual(all.runs.map((r) => r.id));
    // The default page holds them all, with no next page; a page of exactly what is left has none either.
    expect((await list('')).runs.map((r) => r.id)).toEqual(paged.ids);
    expect((await list('limit=7')).next).toBeNull();
    expect((await list('limit=6')).next).not.toBeNull();
  });

  it('keeps runs queued in the same millisecond in id order across pages', async () => {
    const { runs } = await list('limit=500');
    // Runs 3 and 4 (and their index entries) get run 5's queued time: three runs tie.
    const tied = runs.slice(2, 5).map((r) => r.id);
    const at = await redis.hget(`{${prefix}}:import:${tied[2]}`, 'timestamp');
    for (const id of tied) {
      await redis.hset(`{${prefix}}:import:${id}`, 'timestamp', at!);
      await redis.zadd(`{${prefix}}:import:ps-runs-by-queued`, Number(at), id);
    }
    const all = await list('limit=500');
    expect(all.runs.map((r) => r.id)).toEqual(newestFirst(all.runs).map((r) => r.id));
    expect(all.runs.slice(2, 5).map((r) => r.id)).toEqual([...tied].sort().reverse());
    for (const limit of [1, 2, 3])
      expect((await pages(limit)).ids, `limit ${limit}`).toEqual(all.runs.map((r) => r.id));
  });

  it('leaves out runs BullMQ removed, and drops them from its index', async () => {
    const before = (await list('limit=500')).runs.map((r) => r.id);
    // What removeOnComplete / removeOnFail do to old jobs, without telling the console.
    const gone = [before[1]!, before[4]!];
    for (const id of gone) await queue.remove(id);
    const paged = await pages(2);
    expect(paged.ids).toEqual(before.filter((id) => !gone.includes(id)));
    expect(paged.sizes).toEqual([2, 2, 1]);
    for (const id of gone) expect(await redis.zscore(`{${prefix}}:import:ps-runs-by-queued`, id)).toBeNull();
  });

  it('lists the jobs a queue kept from before the index', async () => {
    const before = (await list('limit=500')).runs.map((r) => r.id);
    await redis.del(`{${prefix}}:import:ps-runs-by-queued`, `{${prefix}}:import:ps-runs-by-queued-built`);
    expect((await pages(4)).ids).toEqual(before);
    expect(await redis.zcard(`{${prefix}}:import:ps-runs-by-queued`)).toBe(before.length);
  });
});
