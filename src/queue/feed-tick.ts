/**
 * A feed tick (issue 26): lists the feed's source and runs every new file once, oldest first. One import of a feed
 * runs at a time: a tick queues the oldest new file only, and the end of its run queues the next tick
 * (`finishFeedImport`), so four workers taking import jobs still apply a feed's files in order. A tick lock keeps two
 * ticks of one feed from running at once; the ledger (feed-ledger.ts) keeps each file from running twice. A file is
 * taken once it settled (unchanged for the feed's settle time since its last change) and its last row is whole; each
 * listing, download and the whole tick have a deadline (the feed's `deadlines:`), and the worker stopping cuts them.
 */
import { createHash, randomUUID } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { join, resolve as resolvePath } from 'node:path';
import type { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { ProductSyncError } from '../errors.ts';
import { logger } from '../logger.ts';
import { abortable, deadlineSignal, pastDeadline, withDeadline } from '../sources/deadline.ts';
import { isPartialName } from '../sources/hash-file.ts';
import { openSource, sourceKind, sourceLabel, sourceOrderOf, sourceSettleMs } from '../sources/open.ts';
import type { Source, SourceFile } from '../sources/source.ts';
import { sha256File } from '../pipeline/run/run-state.ts';
import { rulesFileOf } from '../pipeline/map/rule-set.ts';
import type { ImportJobData } from './catalog.ts';
import { enqueueImport, type ImportJobResult } from './enqueue.ts';
import { feedKeys } from '../redis-keys.ts';
import { gateFeedPick } from './feed-gate.ts';
import { cutLastRow } from './feed-cut-row.ts';
import {
  FeedLedger,
  fileIdentity,
  listingShape,
  type InFlight,
  type LedgerEntry,
  type ListedBefore,
} from './feed-ledger.ts';
import type { Feed } from './feeds.ts';

/** The tick lock's lifetime: renewed while the tick runs, so it only lapses when its worker died. */
const TICK_LOCK_MS = 60_000;

export interface FeedTickDeps {
  redis: Redis;
  prefix: string;
  importQueue: Queue;
  /** Where remote files are downloaded for their run (a folder every worker can read: under UPLOAD_DIR). */
  copyRoot: string;
  /** SOURCE_ALLOW_HOSTS, parsed. */
  allowHosts: readonly string[];
  /** The size limit of a downloaded file when the feed sets none. */
  maxBytes: number;
  env?: NodeJS.ProcessEnv;
  /** The tick lock's lifetime (tests shorten it); renewed at a third of it while the tick runs. */
  tickLockMs?: number;
  /**
   * Queues one more tick of the feed (after a run ended, or when a tick was asked for while this one ran); with
   * `later`, in `delayMs` (a file settles then), once per `key`.
   */
  requeue(feed: string, later?: { delayMs: number; key: string }): Promise<void>;
  /** Fires when the worker stops: the tick in hand stops listing or downloading at once, and queues nothing. */
  signal?: AbortSignal;
  /** The clock files settle by (ms since the epoch); tests inject one. */
  now?: () => number;
  /** A tick of the feed's schedule: when it was due (ISO 8601), the nominalTime of the run it queues. */
  nominalTime?: string;
}

export interface FeedTickResult {
  enqueued: string | null;
  /** The file the tick queued, refused or waits for (none when nothing matched or nothing was new). */
  file?: string;
  skipped?: string;
  /** The source could not be listed or read: one line, also in the feed's `lastTickError`. */
  error?: string;
  /** The worker stopped during the tick: nothing was queued, the next tick lists again. */
  stopped?: boolean;
  seen?: number;
  done?: number;
  waiting?: number;
}

interface Listed {
  file: SourceFile;
  entry: LedgerEntry | null;
  /** Why it waits for the next tick (still arriving), or null. */
  waits: string | null;
  /** When it will have settled (ms), if it waits for that. */
  settlesAt?: number;
}

/** How long a source's `close` may take after a tick (a connection stuck in a dead server is dropped). */
const CLOSE_MS = 2000;

/** What taking a file came to: queued, refused by the input gate, or the same bytes imported before. */
type Outcome =
  { jobId: string; display: string } | { refused: string } | { same: true } | { held: string; sha256: string };

/** Whether a handled file's bytes may differ from those its entry names: another sha256, or its change marker moved. */
function mayDiffer(file: SourceFile, entry: LedgerEntry): boolean {
  if (file.sha256 !== undefined) return file.sha256 !== entry.sha256;
  return file.change !== undefined && file.change !== entry.change;
}

/** The ledger's note of a file mode full skipped for a newer one. */
const skipNote = (newest: string) => `older than ${newest}: mode full imports the newest file only`;

const handled = (l: Listed) => l.entry !== null && l.entry.state !== 'queued';

function ordered(files: SourceFile[], order: 'name' | 'mtime'): SourceFile[] {
  const byName = (a: SourceFile, b: SourceFile) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  return [...files].sort((a, b) =>
    order === 'mtime' ? (a.mtimeMs ?? 0) - (b.mtimeMs ?? 0) || byName(a, b) : byName(a, b),
  );
}

/**
 * One tick of `feed`: see the file's comment. Never throws for a source that cannot be reached: it says so. A tick of
 * the feed's schedule gives its due time (`nominalTime`): the run it queues carries it.
 */
export async function runFeedTick(
  feed: Feed,
  tickDeps: FeedTickDeps,
  tick: { nominalTime?: string | undefined } = {},
): Promise<FeedTickResult> {
  const deps = tick.nominalTime ? { ...tickDeps, nominalTime: tick.nominalTime } : tickDeps;
  const ledger = new FeedLedger(deps.redis, deps.prefix, feed.id);
  const lastKey = feedKeys(deps.prefix, feed.id).last;
  const token = randomUUID();
  const lockMs = deps.tickLockMs ?? TICK_LOCK_MS;
  if (!(await ledger.lockTick(token, lockMs))) {
    const skipped = 'another tick of this feed is running (it ticks again when it ends)';
    await deps.redis.hset(lastKey, { tickAt: new Date().toISOString(), tick: skipped });
    return { enqueued: null, skipped };
  }
  // A tick may take longer than the lock lives (a large download): the lock is renewed while it runs, so no other
  // tick lists and queues the same file meanwhile. A lock that could not be renewed stops the tick before it queues.
  let held = true;
  const keeper = setInterval(() => {
    ledger.renewTick(token, lockMs).then(
      (ok) => (held &&= ok),
      () => (held = false),
    );
  }, lockMs / 3);
  keeper.unref();
  // The whole tick's deadline; the worker stopping fires it too.
  const tickMs = feed.deadlines.tickSeconds * 1000;
  const tickDeadline = deadlineSignal(
    tickMs,
    () => pastDeadline(`the tick of feed ${feed.id}`, tickMs, 'deadlines.tickSeconds'),
    deps.signal,
  );
  try {
    return await tickLocked(feed, deps, ledger, lastKey, () => held, tickDeadline.signal);
  } finally {
    tickDeadline.clear();
    clearInterval(keeper);
    if (await ledger.unlockTick(token)) await deps.requeue(feed.id).catch(() => undefined);
  }
}

async function tickLocked(
  feed: Feed,
  deps: FeedTickDeps,
  ledger: FeedLedger,
  lastKey: string,
  stillLocked: () => boolean,
  signal: AbortSignal,
): Promise<FeedTickResult> {
  const label = sourceLabel(feed.source);
  const record = async (fields: Record<string, string | number>) =>
    deps.redis.hset(lastKey, { tickAt: new Date().toISOString(), source: label, ...fields });

  // The feed's import in flight: while it runs, the next file waits for it (order); once it ended, it is settled here
  // too (its own end settles it first, unless its worker died in between).
  const inflight = await ledger.inFlight();
  if (inflight) {
    const state = await deps.importQueue.getJobState(inflight.jobId);
    if (!['completed', 'failed', 'unknown'].includes(state)) {
      const skipped = `import ${inflight.jobId} of ${inflight.file.name} is ${state}: the next file waits for it`;
      await record({ tick: skipped });
      return { enqueued: null, skipped };
    }
    const job = state === 'completed' ? await deps.importQueue.getJob(inflight.jobId) : undefined;
    const result = job?.returnvalue as ImportJobResult | undefined;
    await settle(feed, ledger, inflight, result ? { runId: result.runId, exitCode: result.exitCode } : null, deps);
  }

  let source: Source | undefined;
  try {
    source = openSource(feed.source, {
      allowHosts: deps.allowHosts,
      maxBytes: deps.maxBytes,
      known: await ledger.known(),
      ...(deps.env ? { env: deps.env } : {}),
    });
    const opened = source;
    // An HTTPS listing downloads the file: it has the download's deadline.
    const [listMs, setting] =
      sourceKind(feed.source) === 'https'
        ? [feed.deadlines.downloadSeconds * 1000, 'deadlines.downloadSeconds']
        : [feed.deadlines.listSeconds * 1000, 'deadlines.listSeconds'];
    const files = await withDeadline(`listing ${label}`, listMs, setting, signal, (s) => opened.list(s));
    return await decide(feed, deps, ledger, source, files, record, stillLocked, signal);
  } catch (err) {
    if (deps.signal?.aborted) {
      // The worker stops: nothing was queued (the copy of a download, if any, is gone); the next tick lists again.
      const skipped = 'the worker stopped during the tick: nothing queued, the next tick lists again';
      logger.info({ feed: feed.id, source: label }, `feed ${feed.id}: ${skipped}`);
      await record({ tick: skipped }).catch(() => undefined);
      return { enqueued: null, skipped, stopped: true };
    }
    if (!(err instanceof ProductSyncError)) throw err;
    // An expected failure (unreachable, refused, too large): one line, no stack; the worker goes on. The run events
    // (run.failed / feed.missed) hook in here.
    const error = `${err.message} [${err.code}]`;
    logger.warn({ feed: feed.id, source: label, code: err.code }, `feed ${feed.id}: ${err.message}`);
    await record({ tick: `source failed: ${error}`, lastTickError: error, lastTickErrorAt: new Date().toISOString() });
    return { enqueued: null, error };
  } finally {
    if (source) await abortable(AbortSignal.timeout(CLOSE_MS), source.close()).catch(() => undefined);
  }
}

async function decide(
  feed: Feed,
  deps: FeedTickDeps,
  ledger: FeedLedger,
  source: Source,
  files: SourceFile[],
  record: (fields: Record<string, string | number>) => Promise<unknown>,
  stillLocked: () => boolean,
  signal: AbortSignal,
): Promise<FeedTickResult> {
  const listedAt = new Date();
  const now = deps.now?.() ?? listedAt.getTime();
  const previous = await ledger.previousListing();
  const entries = await ledger.entries(files);
  const entryOf = new Map(files.map((f, i) => [f.name, entries[i] ?? null]));
  const settleMs = sourceSettleMs(feed.source);
  // A folder (local or SFTP) shows a file while it is written; an HTTPS answer or an S3 object arrives whole.
  const growthVisible = ['dir', 'sftp'].includes(sourceKind(feed.source));
  const listing = new Map<string, ListedBefore>();
  const listed: Listed[] = ordered(files, sourceOrderOf(feed.source)).map((file) => {
    const entry = entryOf.get(file.name) ?? null;
    const shape = listingShape(file);
    const before = previous.get(file.name);
    const changed = before !== undefined && before.shape !== shape;
    // When a listing first saw it as it is now, having seen it otherwise before: a change its mtime may not show.
    const changedAt = changed ? now : before?.changedAt;
    listing.set(file.name, changedAt === undefined ? { shape } : { shape, changedAt });
    // Its last change: its modification time, or later when a listing saw it change since.
    const lastChange = Math.max(file.mtimeMs ?? -Infinity, changedAt ?? -Infinity);
    let waits: string | null = null;
    let settlesAt: number | undefined;
    if (isPartialName(file.name)) waits = 'has a .part/.tmp name (still arriving)';
    else if (!growthVisible) waits = null;
    else if (changed) {
      waits = 'changed since the previous listing (still being written?)';
      settlesAt = now + settleMs;
    } else if (Number.isFinite(lastChange) && now - lastChange < settleMs) {
      // Unchanged for less than the settle time since its last change (however many listings saw it so).
      settlesAt = lastChange + settleMs;
      waits = `modified too recently (still arriving?): it settles at ${new Date(settlesAt).toISOString()}`;
    }
    return { file, entry, waits, ...(settlesAt !== undefined ? { settlesAt } : {}) };
  });
  await ledger.saveListing(listing);
  // A file handled before but whose bytes may have changed since under the same name, size and time: compared by its
  // sha256 once it settled; other bytes are a new file.
  for (const l of listed) {
    if (!l.entry?.sha256 || l.entry.state === 'queued' || !mayDiffer(l.file, l.entry)) continue;
    if (l.waits) {
      l.entry = null;
      continue;
    }
    const local = source.localPath?.(l.file);
    const sha256 =
      l.file.sha256 ??
      (local
        ? await withDeadline(
            `reading ${local}`,
            feed.deadlines.downloadSeconds * 1000,
            'deadlines.downloadSeconds',
            signal,
            () => sha256File(local),
          ).catch(() => null)
        : null);
    if (sha256 === null || sha256 === l.entry.sha256) {
      // The same bytes (or none to compare): still handled; its marker is kept so it is not read again.
      const { at: _at, ...kept } = l.entry;
      await ledger.record(l.file, kept);
    } else {
      logger.info({ feed: feed.id, file: l.file.name }, 'feed file replaced in place with other bytes: a new file');
      l.entry = null;
    }
  }
  const notes: string[] = [];
  /** What the queued run's summary.json says beyond its rows. */
  const runNotes: string[] = [];
  const stats = () => {
    const done = listed.filter(handled).length;
    return { seen: listed.length, done, waiting: listed.length - done };
  };
  const finish = async (result: FeedTickResult, tick: string) => {
    const s = stats();
    await record({ tick, lastListingAt: listedAt.toISOString(), ...s });
    await deps.redis.hdel(feedKeys(deps.prefix, feed.id).last, 'lastTickError', 'lastTickErrorAt');
    return { ...result, ...s };
  };
  const withNotes = (tick: string) => (notes.length > 0 ? `${tick}; ${notes.join('; ')}` : tick);

  let candidates = listed;
  if (feed.mode === 'full') {
    // Mode full: the newest file alone (it holds the whole catalogue); the older new ones are skipped, and said so.
    const live = listed.filter((l) => !isPartialName(l.file.name));
    const newest = live.at(-1);
    if (!newest)
      return finish({ enqueued: null, skipped: 'no file matches' }, `no file matches (${sourceLabel(feed.source)})`);
    const older = live.slice(0, -1).filter((l) => !handled(l) && l.entry?.state !== 'queued');
    for (const l of older) {
      const note = skipNote(newest.file.name);
      await ledger.record(l.file, { state: 'skipped', note });
      l.entry = { state: 'skipped', at: new Date().toISOString(), note };
    }
    if (older.length > 0) {
      notes.push(
        `skipped ${older.length} older file(s) (mode full imports the newest file only): ${older.map((l) => l.file.name).join(', ')}`,
      );
      logger.info({ feed: feed.id, skipped: older.map((l) => l.file.name) }, notes.at(-1)!);
    }
    candidates = [newest];
    // The run of the newest file says which older ones were skipped for it (in this tick or an earlier one that found
    // it still arriving): summary.json `notes`.
    const skippedFor = live.filter((l) => l.entry?.state === 'skipped' && l.entry.note === skipNote(newest.file.name));
    if (skippedFor.length > 0)
      runNotes.push(
        `skipped ${skippedFor.length} older file(s) of feed ${feed.id} (mode full imports the newest file only): ` +
          skippedFor.map((l) => l.file.name).join(', '),
      );
  }

  for (const c of candidates) {
    if (handled(c)) continue;
    if (c.waits) {
      // A tick comes back when it settles (the schedule may be a day away).
      if (c.settlesAt !== undefined)
        await deps.requeue(feed.id, {
          delayMs: Math.max(250, c.settlesAt - now + 250),
          key: `settle:${c.file.name}:${c.settlesAt}`,
        });
      const skipped = `${c.file.name} ${c.waits}: it and the files after it wait for the next tick`;
      return finish({ enqueued: null, file: c.file.name, skipped }, withNotes(skipped));
    }
    signal.throwIfAborted();
    const outcome = await take(feed, deps, ledger, source, c, runNotes, stillLocked, signal);
    if ('wait' in outcome) {
      const skipped = `${c.file.name} ${outcome.wait}: it and the files after it wait for the next tick`;
      await deps.requeue(feed.id, {
        delayMs: Math.max(1000, settleMs),
        key: `changed:${c.file.name}:${now}`,
      });
      return finish({ enqueued: null, skipped }, withNotes(skipped));
    }
    if ('held' in outcome) {
      const skipped = `${c.file.name} held, not imported: ${outcome.held}; it and the files after it wait until it is complete`;
      // Told once per content (log line); the tick's line, the console and feed.no_new_file say it at every tick.
      if (await ledger.hold(outcome.sha256, outcome.held)) {
        logger.warn({ feed: feed.id, file: c.file.name, sha256: outcome.sha256 }, `feed ${feed.id}: ${skipped}`);
        // Checked again once more after the settle time (a writer that stalled and goes on), then by the schedule.
        await deps.requeue(feed.id, { delayMs: Math.max(1000, settleMs), key: `held:${outcome.sha256}` });
      }
      return finish({ enqueued: null, skipped }, withNotes(skipped));
    }
    if ('jobId' in outcome) {
      const tick = `queued ${outcome.jobId}: ${outcome.display}`;
      logger.info({ feed: feed.id, jobId: outcome.jobId, file: c.file.name }, 'feed file queued');
      return finish({ enqueued: outcome.jobId, file: outcome.display }, withNotes(tick));
    }
    // The file it is about is named (feed.no_new_file's `file`), as for a file queued.
    if ('refused' in outcome)
      return finish({ enqueued: null, file: c.file.name, skipped: outcome.refused }, withNotes(outcome.refused));
    notes.push(`${c.file.name}: same content already imported`);
  }
  const nothing = listed.length === 0 ? `no file matches (${sourceLabel(feed.source)})` : 'nothing new';
  return finish({ enqueued: null, skipped: nothing }, withNotes(nothing));
}

/** Fetches one file, checks it, and queues its import (or says why not). */
async function take(
  feed: Feed,
  deps: FeedTickDeps,
  ledger: FeedLedger,
  source: Source,
  c: Listed,
  runNotes: string[],
  stillLocked: () => boolean,
  signal: AbortSignal,
): Promise<Outcome | { wait: string }> {
  const local = source.localPath?.(c.file);
  const downloadMs = feed.deadlines.downloadSeconds * 1000;
  let path: string;
  let sha256: string;
  let copyDir: string | null = null;
  if (local) {
    path = local;
    // Removed (or made unreadable) since the listing: the tick says so in one line, the next one lists again.
    sha256 = await withDeadline(`reading ${local}`, downloadMs, 'deadlines.downloadSeconds', signal, () =>
      sha256File(local),
    ).catch((err: NodeJS.ErrnoException) => {
      if (err instanceof ProductSyncError) throw err;
      throw new ProductSyncError('PS_ERR_SOURCE_UNAVAILABLE', `${local} cannot be read (${err.code ?? err.message})`);
    });
    // Written to while it was read: the bytes hashed may not be the file's; it waits to settle again.
    const again = (await abortable(signal, source.list(signal))).find((f) => f.name === c.file.name);
    if (!again || listingShape(again) !== listingShape(c.file)) return { wait: 'changed while it was read' };
  } else {
    // One folder per listed version: the run reads this copy; it is removed when the run ends.
    copyDir = join(
      deps.copyRoot,
      feed.id,
      createHash('sha256').update(fileIdentity(c.file)).digest('hex').slice(0, 16),
    );
    path = join(copyDir, c.file.name);
    const dir = copyDir;
    const dest = path;
    sha256 = (
      await withDeadline(
        `downloading ${c.file.name} from ${sourceLabel(feed.source)}`,
        downloadMs,
        'deadlines.downloadSeconds',
        signal,
        (s) => source.fetch(c.file, dest, { maxBytes: deps.maxBytes, signal: s }),
      ).catch(async (err: unknown) => {
        // Too large, lost, replaced since the listing, past its deadline: nothing of it stays (its folder included).
        await rm(dir, { recursive: true, force: true }).catch(() => undefined);
        throw err;
      })
    ).sha256;
  }
  const display = local ?? `${sourceLabel(feed.source)} ${c.file.name}`;
  try {
    signal.throwIfAborted();
    // Where the sheet came from (a remote source's URL, without credentials): the run's OpenLineage input dataset.
    const sourceLocation = local ? undefined : remoteLocation(source.label, c.file.name);
    return await queue(
      feed,
      deps,
      ledger,
      c,
      { path, sha256, copyDir, display, runNotes, sourceLocation },
      stillLocked,
    );
  } catch (err) {
    // Not queued (Redis failed, the gate threw): the copy goes now, no run will remove it.
    if (copyDir) await rm(copyDir, { recursive: true, force: true }).catch(() => undefined);
    throw err;
  }
}

/** The fetched file checked (same bytes imported before? the input gate) and queued; the copy removed when not. */
/** A remote file's location: the source's label (its URL, no secret) and the file's name unless the label names it. */
function remoteLocation(label: string, name: string): string {
  return label.endsWith(`/${name}`) || label.endsWith(name) ? label : `${label.replace(/\/+$/, '')}/${name}`;
}

async function queue(
  feed: Feed,
  deps: FeedTickDeps,
  ledger: FeedLedger,
  c: Listed,
  got: {
    path: string;
    sha256: string;
    copyDir: string | null;
    display: string;
    runNotes: string[];
    sourceLocation?: string | undefined;
  },
  stillLocked: () => boolean,
): Promise<Outcome> {
  const { path, sha256, copyDir, display, runNotes } = got;
  const removeCopy = async () => {
    if (copyDir) await rm(copyDir, { recursive: true, force: true });
  };
  const keys = feedKeys(deps.prefix, feed.id);
  if ((await deps.redis.sismember(keys.imported, sha256)) === 1) {
    await ledger.record(c.file, { state: 'done', sha256, note: 'same content already imported' });
    c.entry = { state: 'done', at: new Date().toISOString(), sha256 };
    await removeCopy();
    return { same: true };
  }
  // The input gate: a file `import` would refuse is not queued. It holds the feed's later files back (they would
  // otherwise run before it), until it or the mapping changes.
  const gated = await gateFeedPick({ file: path, sha256 }, feed, deps.redis, keys.refused);
  if ('skip' in gated) {
    await removeCopy();
    return { refused: `${gated.skip}: ${display}` };
  }
  // A text sheet the gate takes but cut while it was written (no final line end, a short last row) is held: not
  // imported, checked again at the next ticks.
  const cut = await cutLastRow(path).catch(() => null);
  if (cut) {
    await removeCopy();
    return { held: cut, sha256 };
  }
  // The lock lapsed (Redis unreachable for a while): another tick may hold it and queue this file; this one stops,
  // leaving the copy to it (same folder).
  if (!stillLocked()) return { refused: `the tick lock lapsed before ${display} was queued: the next tick takes it` };
  const data: ImportJobData = {
    request: {
      file: path,
      mapping: feed.mapping,
      mode: feed.mode,
      dryRun: feed.dryRun,
      maxArchiveRatio: feed.archiveGuard.maxRatio,
      allowArchive: feed.archiveGuard.allow,
      ...(feed.scope !== undefined ? { scope: feed.scope } : {}),
      ...(feed.gate !== undefined ? { gate: feed.gate } : {}),
      // The feed's rules are read (and checked) when the run opens: from the rules file it names, or from itself.
      ...(feed.rules !== undefined
        ? { rules: typeof feed.rules === 'string' ? rulesFileOf(feed.file, feed.rules) : resolvePath(feed.file) }
        : {}),
      ...(feed.owner ? { owner: feed.owner } : {}),
      ...(runNotes.length > 0 ? { notes: runNotes } : {}),
    },
    origin: 'feed',
    feed: feed.id,
    ...(copyDir ? { fileName: c.file.name } : {}),
    ...(got.sourceLocation ? { sourceLocation: got.sourceLocation } : {}),
    sha256,
    ...(deps.nominalTime ? { nominalTime: deps.nominalTime } : {}),
    step: 'prepare',
    ...(feed.waitLock !== undefined ? { waitLockSeconds: feed.waitLock } : {}),
  };
  const { jobId, existed } = await enqueueImport(deps.importQueue, data);
  // The same bytes already queued by another feed (same mapping and owner: one job): that job reads its own feed's
  // copy, and this one is removed now rather than when this feed's next tick settles the import.
  let keptCopy = copyDir;
  if (existed && copyDir) {
    const job = await deps.importQueue.getJob(jobId);
    const reads = (job?.data as ImportJobData | undefined)?.request.file;
    if (reads !== undefined && reads !== path) {
      await removeCopy().catch(() => undefined);
      keptCopy = null;
    }
  }
  await ledger.setInFlight({ jobId, file: c.file, sha256, copyDir: keptCopy, at: new Date().toISOString() });
  await ledger.record(c.file, { state: 'queued', sha256, jobId });
  c.entry = { state: 'queued', at: new Date().toISOString(), sha256, jobId };
  return { jobId, display };
}

/**
 * The end of a feed's import (called where the import job records its outcome): the ledger marks the file done
 * (unless the run was aborted: exit 3 — the next tick tries it again), `afterImport` moves or deletes it, the local
 * copy is removed. True when the next file may go: the caller queues the next tick.
 */
export async function finishFeedImport(
  feed: Feed | undefined,
  jobId: string,
  result: { runId: string; exitCode: number },
  deps: Pick<FeedTickDeps, 'redis' | 'prefix' | 'allowHosts' | 'maxBytes' | 'env'>,
): Promise<boolean> {
  if (!feed) return false;
  const ledger = new FeedLedger(deps.redis, deps.prefix, feed.id);
  const inflight = await ledger.inFlight();
  if (!inflight || inflight.jobId !== jobId) return false;
  await settle(feed, ledger, inflight, result, deps);
  return result.exitCode !== 3;
}

async function settle(
  feed: Feed,
  ledger: FeedLedger,
  inflight: InFlight,
  result: { runId: string; exitCode: number } | null,
  deps: Pick<FeedTickDeps, 'allowHosts' | 'maxBytes' | 'env'>,
): Promise<void> {
  if (result && result.exitCode !== 3) {
    await ledger.record(inflight.file, {
      state: 'done',
      sha256: inflight.sha256,
      jobId: inflight.jobId,
      runId: result.runId,
    });
    await ledger.setKnown(inflight.file);
    // After a success (rows that failed or were invalid are in the report; the file itself was imported).
    if (feed.afterImport && result.exitCode <= 1) await afterImport(feed, inflight.file, deps);
  }
  await ledger.clearInFlight();
  if (inflight.copyDir) await rm(inflight.copyDir, { recursive: true, force: true }).catch(() => undefined);
}

async function afterImport(
  feed: Feed,
  file: SourceFile,
  deps: Pick<FeedTickDeps, 'allowHosts' | 'maxBytes' | 'env'>,
): Promise<void> {
  let source: Source | undefined;
  try {
    source = openSource(feed.source, {
      allowHosts: deps.allowHosts,
      maxBytes: deps.maxBytes,
      ...(deps.env ? { env: deps.env } : {}),
    });
    if (!source.afterImport) {
      logger.warn({ feed: feed.id, kind: sourceKind(feed.source) }, 'afterImport: this source kind does not offer it');
      return;
    }
    const opened = source;
    const ms = feed.deadlines.listSeconds * 1000;
    await withDeadline(`afterImport of ${file.name}`, ms, 'deadlines.listSeconds', undefined, () =>
      opened.afterImport!(file, feed.afterImport!),
    );
  } catch (err) {
    logger.warn({ feed: feed.id, file: file.name, err: (err as Error).message }, 'afterImport failed: the file stays');
  } finally {
    if (source) await abortable(AbortSignal.timeout(CLOSE_MS), source.close()).catch(() => undefined);
  }
}
