import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import { getNextMillis } from 'bullmq';
import * as z from 'zod';
import { ProductSyncError } from '../errors.ts';
import { feedSourceSchema } from '../sources/open.ts';
import { afterImportSchema } from '../sources/source.ts';
import { MODES } from '../pipeline/sync/plan.ts';
import { scopeSchema } from '../pipeline/scope.ts';
import { gateSchema } from '../pipeline/map/mapping.ts';
import { rulesSchema } from '../pipeline/map/rule-set.ts';
import { parseYamlDocument } from '../yaml-document.ts';

const timezone = z.string().refine((tz) => {
  try {
    new Intl.DateTimeFormat('en', { timeZone: tz });
    return true;
  } catch {
    return false;
  }
}, 'must be an IANA time zone such as Europe/Paris');

/**
 * Why BullMQ would refuse a cron pattern (it parses it with cron-parser when the worker upserts the schedule, and a
 * refusal there kills the worker at start), or null when it takes it. A pattern that parses but never fires (no next
 * run) is refused too.
 */
export function cronProblem(pattern: string): string | null {
  try {
    return getNextMillis(Date.now(), { pattern }) === undefined ? 'the schedule never fires' : null;
  } catch (err) {
    return (err as Error)?.message ?? String(err);
  }
}

const cron = z
  .string()
  .trim()
  .superRefine((s, ctx) => {
    if (!/^(\S+\s+){4,5}\S+$/.test(s)) {
      ctx.addIssue({ code: 'custom', message: 'must be a cron expression with 5 or 6 fields, e.g. "0 2 * * *"' });
      return;
    }
    const problem = cronProblem(s);
    if (problem)
      ctx.addIssue({ code: 'custom', message: `is not a valid cron expression (${problem}), e.g. "0 2 * * *"` });
  });

/** The deadlines of a feed file that sets none (`deadlines:`; docs/queue.md). */
export const DEFAULT_DEADLINES = { listSeconds: 120, downloadSeconds: 1800, tickSeconds: 3600 } as const;

/** A feed definition, `jobs/<name>.yaml` (docs/queue.md "Feeds"). */
export const feedSchema = z.strictObject({
  schedule: cron,
  /** When a run of the feed is expected to have succeeded (its timezone applies): feed.missed otherwise. */
  expect: cron.optional(),
  timezone: timezone.default('UTC'),
  /** Where the files come from: `{dir, pattern, order, settleSeconds}`, or `{https: …}`, `{sftp: …}`, `{s3: …}`. */
  source: feedSourceSchema,
  /** After a successful run, move the file into a folder of the source or delete it (sources that allow it). */
  afterImport: afterImportSchema.optional(),
  mapping: z.string().min(1),
  owner: z.uuid().optional(),
  mode: z.enum(MODES as unknown as [string, ...string[]]).default('upsert'),
  /** The part of the owner's catalogue this feed's sheets cover; overrides the mapping's (docs/scopes.md). */
  scope: scopeSchema.optional(),
  /** The feed's quality gate: replaces the mapping's (docs/mapping.md "Quality gates"). */
  gate: gateSchema.optional(),
  /** The feed's own rules, added to the mapping's: a list, or a rules file (relative to this file). */
  rules: rulesSchema.optional(),
  dryRun: z.boolean().default(false),
  archiveGuard: z
    .strictObject({ maxRatio: z.number().min(0).max(1).default(0.1), allow: z.boolean().default(false) })
    .default({ maxRatio: 0.1, allow: false }),
  /** How long a tick's run may wait for another run of the same owner (seconds); unset: as long as it takes. */
  waitLock: z.number().min(0).optional(),
  /**
   * Overall deadlines of the tick's source operations (seconds), however the source trickles: a listing, one file's
   * download (an HTTPS listing downloads, so it has this one), the whole tick. Past one, the tick fails
   * (PS_ERR_SOURCE_TIMEOUT) and the next tries again.
   */
  deadlines: z
    .strictObject({
      listSeconds: z.number().positive().default(DEFAULT_DEADLINES.listSeconds),
      downloadSeconds: z.number().positive().default(DEFAULT_DEADLINES.downloadSeconds),
      tickSeconds: z.number().positive().default(DEFAULT_DEADLINES.tickSeconds),
    })
    .default(DEFAULT_DEADLINES),
});

/** A validated feed; `id` is the file name without extension. */
export type Feed = z.output<typeof feedSchema> & { id: string; file: string };

/**
 * Loads and validates every `*.yaml|yml|json` in `dir`; any invalid file makes the whole load fail, naming file and
 * line.
 */
export async function loadFeeds(dir: string): Promise<Feed[]> {
  if (!existsSync(dir)) return [];
  const feeds: Feed[] = [];
  const problems: string[] = [];
  for (const name of (await readdir(dir)).sort()) {
    if (!/\.(ya?ml|json)$/i.test(name)) continue;
    const file = join(dir, name);
    // A FIFO or a device named like a feed would hang the load: only regular files are read (symlinks to them are
    // fine).
    const st = await stat(file).catch((err: NodeJS.ErrnoException) => err);
    if (st instanceof Error || !st.isFile()) {
      problems.push(
        `  ${file}: ${st instanceof Error ? `cannot be read (${st.code ?? st.message})` : 'not a regular file'}`,
      );
      continue;
    }
    const parsed = parseYamlDocument(await readFile(file, 'utf8'), feedSchema, (p) =>
      p.length === 0
        ? 'keys are schedule, expect, timezone, source (dir, pattern, order, settleSeconds; or https, sftp, s3), afterImport, mapping, owner, mode, scope, gate, rules, dryRun, archiveGuard, waitLock, deadlines (listSeconds, downloadSeconds, tickSeconds)'
        : '',
    );
    if (!parsed.ok) {
      for (const p of parsed.problems)
        problems.push(`  ${file}${p.line === null ? '' : `:${p.line}`}: ${p.path ? `${p.path}: ` : ''}${p.message}`);
      continue;
    }
    const id = basename(name, extname(name));
    if (!/^[A-Za-z0-9_.-]+$/.test(id)) {
      problems.push(`  ${file}: the file name is the feed id and may only hold letters, digits, ".", "_" and "-"`);
      continue;
    }
    feeds.push({ ...parsed.data, id, file });
  }
  if (problems.length > 0)
    throw new ProductSyncError(
      'PS_ERR_FEED_INVALID',
      `invalid feed definition${problems.length > 1 ? 's' : ''}:\n${problems.join('\n')}`,
    );
  return feeds;
}

/** A glob of the feed's pattern (`*` and `?` only) as a regular expression over file names. */
export { patternRegExp } from '../sources/pattern.ts';

/** What a feed tick does with one file: queue its import (its local path and sha256), or nothing (and why). */
export type FeedPick = { file: string; sha256: string } | { file: string | null; skip: string };
