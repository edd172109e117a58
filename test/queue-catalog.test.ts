import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { UnrecoverableError } from 'bullmq';
import {
  checkHandlers,
  importJobId,
  importJobSchema,
  JOB_CATALOG,
  jobPayload,
  pushJobSchema,
  type ImportJobData,
} from '../src/queue/catalog.ts';

const OWNER_A = '5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f';
const OWNER_B = '0e8f7d6c-5b4a-4392-8170-6f5e4d3c2b1a';

describe('job catalog', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ps-catalog-'));
  const sheet = join(dir, 'a.csv');
  const copy = join(dir, 'copy-of-a.csv');
  const other = join(dir, 'b.csv');
  writeFileSync(sheet, 'GTIN\n4006381333931\n');
  writeFileSync(copy, 'GTIN\n4006381333931\n');
  writeFileSync(other, 'GTIN\n4006381333948\n');
  const mapping = join(dir, 'm.yaml');
  writeFileSync(mapping, 'name: m\n');
  const mapping2 = join(dir, 'm2.yaml');
  writeFileSync(mapping2, 'name: m2\n');
  const job = (request: Partial<ImportJobData['request']>): ImportJobData => ({
    request: { file: sheet, mapping, ...request },
    origin: 'cli',
  });

  it('gives the same sheet, mapping and owner one job id, whatever the file is called or who enqueued it', async () => {
    const id = await importJobId(job({ owner: OWNER_A }));
    expect(id).toMatch(/^import-[0-9a-f]{20}-[0-9a-f]{12}$/);
    expect(await importJobId(job({ owner: OWNER_A, file: copy }))).toBe(id);
    expect(await importJobId({ ...job({ owner: OWNER_A }), origin: 'upload', fileName: 'x.csv' })).toBe(id);
  });

  it('gives another sheet, mapping, owner, mode or a dry run another job id', async () => {
    const id = await importJobId(job({ owner: OWNER_A }));
    const others = await Promise.all([
      importJobId(job({ owner: OWNER_A, file: other })),
      importJobId(job({ owner: OWNER_A, mapping: mapping2 })),
      importJobId(job({ owner: OWNER_B })),
      importJobId(job({ owner: OWNER_A, mode: 'full' })),
      importJobId(job({ owner: OWNER_A, dryRun: true })),
    ]);
    expect(new Set([id, ...others]).size).toBe(6);
  });

  it('validates payloads: an import needs a file and a mapping, a chunk its run and index', () => {
    expect(importJobSchema.safeParse({ request: { file: '', mapping: 'm' }, origin: 'cli' }).success).toBe(false);
    expect(
      importJobSchema.safeParse({ request: { file: 'a.csv', mapping: 'm', owner: 'not-a-uuid' }, origin: 'cli' })
        .success,
    ).toBe(false);
    expect(importJobSchema.parse({ request: { file: 'a.csv', mapping: 'm' }, origin: 'feed' }).step).toBe('prepare');
    expect(pushJobSchema.safeParse({ runId: 'r', workDir: '/w', kind: 'rows' }).success).toBe(false);
  });

  it('refuses a payload that no retry can make valid as unrecoverable', () => {
    expect(jobPayload('push', { runId: 'r', workDir: '/w', kind: 'rows', index: 2 })).toEqual({
      runId: 'r',
      workDir: '/w',
      kind: 'rows',
      index: 2,
    });
    expect(() => jobPayload('push', { runId: 'r', kind: 'rows', index: 2 })).toThrow(UnrecoverableError);
    expect(() => jobPayload('feeds', {})).toThrow(/invalid feeds job payload: feed/);
  });

  it('needs a handler for every queue of the catalog, and a catalog entry for every handler', () => {
    const all = Object.fromEntries(Object.keys(JOB_CATALOG).map((q) => [q, () => undefined]));
    expect(() => checkHandlers(all)).not.toThrow();
    expect(() => checkHandlers({ ...all, push: undefined })).toThrow(/no handler for push/);
    expect(() => checkHandlers({ ...all, reports: () => undefined })).toThrow(/no catalog entry for reports/);
  });
});
