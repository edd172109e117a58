import { existsSync } from 'node:fs';
import { readdir, readFile, stat } from 'node:fs/promises';
import { basename, extname, join, resolve } from 'node:path';
import { getNextMillis } from 'bullmq';
import * as z from 'zod';
import { ProductSyncError } from '../errors.ts';
import { fileSha256 } from './catalog.ts';
import { MODES } from '../pipeline/sync/plan.ts';
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

/** A feed definition, `jobs/<name>.yaml` (DESIGN §5.4). */
export const feedSchema = z.strictObject({
  schedule: cron,
  /** When a run of the feed is expected to have succeeded (its timezone applies): feed.missed otherwise. */
  expect: cron.optional(),
  timezone: timezone.default('UTC'),
  source: z.strictObject({
    dir: z.string().min(1),
    pattern: z.string().min(1),
    /** A file modified less than this long ago may still be arriving: the tick leaves it for the next one. */
    settleSeconds: z.number().int().min(0).default(30),
  }),
  mapping: z.string().min(1),
  owner: z.uuid().optional(),
  mode: z.enum(MODES as unknown as [string, ...string[]]).default('upsert'),
  dryRun: z.boolean().default(false),
  archiveGuard: z
    .strictObject({ maxRatio: z.number().min(0).max(1).default(0.1), allow: z.boolean().default(false) })
    .default({ maxRatio: 0.1, allow: false }),
  /** How long a tick's run may wait for another run of the same owner (seconds); unset: as long as it takes. */
  waitLock: z.number().min(0).optional(),
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
        ? 'keys are schedule, expect, timezone, source (dir, pattern, settleSeconds), mapping, owner, mode, dryRun, archiveGuard, waitLock'
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
export function patternRegExp(pattern: string): RegExp {
  const body = pattern
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${body}$`, 'i');
}

/** The files of a feed's drop folder that match its pattern, newest first (by modification time). */
export async function feedCandidates(feed: Feed): Promise<{ file: string; mtimeMs: number }[]> {
  const dir = resolve(feed.source.dir);
  if (!existsSync(dir)) return [];
  const re = patternRegExp(feed.source.pattern);
  const out: { file: string; mtimeMs: number }[] = [];
  for (const name of await readdir(dir)) {
    if (!re.test(name)) continue;
    const file = join(dir, name);
    // Only regular files (or symlinks to them): a FIFO or a device would hang the hash and the read; a dangling
    // symlink, or a file removed since readdir, is not a candidate either.
    const st = await stat(file).catch(() => null);
    if (st?.isFile()) out.push({ file, mtimeMs: st.mtimeMs });
  }
  return out.sort((a, b) => b.mtimeMs - a.mtimeMs);
}

/** What a feed tick should do: import the drop folder's newest file, or nothing (and why). */
export type FeedPick = { file: string; sha256: string } | { file: string | null; skip: string };

/**
 * The newest matching file of the feed's drop folder when it has settled and its sha256 is not yet imported. Older
 * files are never picked: once a newer sheet exists, importing an older one would put stale data back (and, in full
 * mode, archive what the newer sheet added).
 */
export async function pickFeedFile(
  feed: Feed,
  isImported: (sha256: string) => Promise<boolean>,
  now = Date.now(),
): Promise<FeedPick> {
  const newest = (await feedCandidates(feed))[0];
  if (!newest) return { file: null, skip: `no file matches ${feed.source.pattern} in ${feed.source.dir}` };
  if (now - newest.mtimeMs < feed.source.settleSeconds * 1000)
    return { file: newest.file, skip: 'newest file modified too recently (still arriving?)' };
  const sha256 = await fileSha256(newest.file);
  if (await isImported(sha256)) return { file: newest.file, skip: 'newest file already imported' };
  return { file: newest.file, sha256 };
}
