import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { MODES } from '../pipeline/plan.ts';
import { mappingFile } from '../pipeline/mapping.ts';

/** The queues (DESIGN §8), all under one prefix. */
export const QUEUES = { import: 'import', push: 'push', feeds: 'feeds' } as const;

/** Payload of an import (parent) job. */
export const importJobSchema = z.object({
  request: z.object({
    file: z.string().min(1),
    mapping: z.string().min(1),
    owner: z.uuid().optional(),
    mode: z.enum(MODES as unknown as [string, ...string[]]).optional(),
    dryRun: z.boolean().optional(),
    language: z.string().optional(),
    sheet: z.string().optional(),
    allowArchive: z.boolean().optional(),
    maxArchiveRatio: z.number().min(0).max(1).optional(),
  }),
  origin: z.enum(['cli', 'upload', 'feed']),
  feed: z.string().optional(),
  /** Original file name of an upload, for display only. */
  fileName: z.string().optional(),
  sha256: z.string().optional(),
  step: z.enum(['prepare', 'wait', 'finalize']).default('prepare'),
  runId: z.string().optional(),
  workDir: z.string().optional(),
  chunks: z.number().int().optional(),
});

/** Payload of a push (child) job: one chunk of row plans, or of archives. */
export const pushJobSchema = z.object({
  runId: z.string(),
  workDir: z.string(),
  kind: z.enum(['rows', 'archives']),
  index: z.number().int(),
});

/** Redis hash of a run's finished chunks (`rows-3` → `sent:failed`), summed into the parent's progress. */
export function runChunksKey(prefix: string, runId: string): string {
  return `${prefix}:run:${runId}:chunks`;
}

/** Payload of a feed tick. */
export const feedJobSchema = z.object({ feed: z.string() });

export type ImportJobData = z.input<typeof importJobSchema>;
export type PushJobData = z.output<typeof pushJobSchema>;

/** Retry options per queue: a chunk is retried with backoff (not the file); an import's own failures are final. */
export const JOB_OPTIONS = {
  import: { attempts: 1, removeOnComplete: { age: 30 * 24 * 3600, count: 10_000 }, removeOnFail: { age: 30 * 24 * 3600 } },
  push: { attempts: 6, backoff: { type: 'exponential', delay: 2000 }, removeOnComplete: { age: 7 * 24 * 3600 }, removeOnFail: { age: 30 * 24 * 3600 } },
  feeds: { attempts: 1, removeOnComplete: { count: 1000 }, removeOnFail: { count: 1000 } },
} as const;

/** sha256 of a file. */
export async function fileSha256(file: string): Promise<string> {
  const h = createHash('sha256');
  for await (const c of createReadStream(file)) h.update(c as Buffer);
  return h.digest('hex');
}

/** Deterministic id of an import job: the same sheet, mapping, owner, mode and dry-run are one job however often enqueued. */
export async function importJobId(data: ImportJobData): Promise<string> {
  const sheet = data.sha256 ?? (await fileSha256(data.request.file));
  const mappingText = await readFile(mappingFile(data.request.mapping), 'utf8').catch(() => data.request.mapping);
  const r = data.request;
  const h = createHash('sha256').update(JSON.stringify([mappingText, r.owner ?? '', r.mode ?? 'upsert', Boolean(r.dryRun), r.sheet ?? '', r.language ?? ''])).digest('hex');
  return `import-${sheet.slice(0, 20)}-${h.slice(0, 12)}`;
}
