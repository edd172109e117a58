import { mkdirSync, mkdtempSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { fileSha256 } from '../src/queue/catalog.ts';
import { loadFeeds, patternRegExp, pickFeedFile, type Feed } from '../src/queue/feeds.ts';

function jobsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ps-feeds-unit-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const good =
  'schedule: "0 2 * * *"\ntimezone: Europe/Paris\nsource: { dir: /srv/acme, pattern: "acme-*.xlsx" }\nmapping: acme-foods\nmode: full\narchiveGuard: { maxRatio: 0.1 }\n';

describe('feed definitions', () => {
  it('loads a DESIGN §5.4 feed with its defaults, the file name as its id', async () => {
    const feeds = await loadFeeds(jobsDir({ 'acme.yaml': good, 'notes.txt': 'ignored' }));
    expect(feeds).toHaveLength(1);
    expect(feeds[0]).toMatchObject({
      id: 'acme',
      schedule: '0 2 * * *',
      timezone: 'Europe/Paris',
      mapping: 'acme-foods',
      mode: 'full',
      dryRun: false,
      source: { dir: '/srv/acme', pattern: 'acme-*.xlsx', settleSeconds: 30 },
      archiveGuard: { maxRatio: 0.1, allow: false },
    });
  });

  it('names the file and line of every problem, in every file, and loads none of them', async () => {
    const dir = jobsDir({
      'acme.yaml': good,
      'bad.yaml':
        'schedule: "every night"\nsource: { dir: x, pattern: "*.csv" }\nmapping: m\nmode: sometimes\ncolour: blue\n',
      'zone.yml': 'schedule: "0 2 * * *"\ntimezone: Mars/Olympus\nsource: { dir: x }\nmapping: m\n',
    });
    const err = await loadFeeds(dir).catch((e: Error) => e);
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toMatch(/bad\.yaml:1: schedule: .*cron/);
    expect(message).toMatch(/bad\.yaml:4: mode/);
    expect(message).toMatch(/bad\.yaml:5: .*colour/);
    expect(message).toMatch(/zone\.yml:2: timezone: .*IANA/);
    expect(message).toMatch(/zone\.yml:3: source\.pattern/);
    expect(message).not.toMatch(/acme\.yaml/);
  });

  it('refuses YAML that does not parse, with its line', async () => {
    await expect(
      loadFeeds(jobsDir({ 'broken.yaml': 'schedule: "0 2 * * *"\nsource: { dir: x, pattern: "*.csv"\nmapping: m\n' })),
    ).rejects.toThrow(/broken\.yaml:\d+/);
  });

  it('has no feeds when the directory is missing', async () => {
    expect(await loadFeeds(join(tmpdir(), 'ps-no-such-jobs-dir'))).toEqual([]);
  });

  it('matches file names with * and ? only, whole name, case-insensitively', () => {
    const re = patternRegExp('acme-*.csv');
    expect(re.test('acme-2024-01-02.csv')).toBe(true);
    expect(re.test('ACME-1.CSV')).toBe(true);
    expect(re.test('acme-1.csv.bak')).toBe(false);
    expect(re.test('old-acme-1.csv')).toBe(false);
    expect(patternRegExp('a?.csv').test('ab.csv')).toBe(true);
    expect(patternRegExp('a(1).csv').test('a(1).csv')).toBe(true);
  });
});

describe('a feed tick', () => {
  function feedOver(dir: string, settleSeconds = 0): Feed {
    return {
      id: 'acme',
      file: 'acme.yaml',
      schedule: '0 2 * * *',
      timezone: 'UTC',
      source: { dir, pattern: 'acme-*.csv', settleSeconds },
      mapping: 'm',
      mode: 'upsert',
      dryRun: false,
      archiveGuard: { maxRatio: 0.1, allow: false },
    };
  }
  function drop(): { dir: string; put(name: string, text: string, ageSeconds: number): string } {
    const dir = mkdtempSync(join(tmpdir(), 'ps-drop-'));
    return {
      dir,
      put(name, text, ageSeconds) {
        const file = join(dir, name);
        writeFileSync(file, text);
        const t = (Date.now() - ageSeconds * 1000) / 1000;
        utimesSync(file, t, t);
        return file;
      },
    };
  }

  it('picks the newest matching file when it is not imported yet', async () => {
    const d = drop();
    d.put('acme-1.csv', 'one', 300);
    const newest = d.put('acme-2.csv', 'two', 100);
    d.put('other-3.csv', 'other', 10);
    mkdirSync(join(d.dir, 'acme-dir.csv'));
    expect(await pickFeedFile(feedOver(d.dir), async () => false)).toEqual({
      file: newest,
      sha256: await fileSha256(newest),
    });
  });

  it('does nothing when the newest file is imported, even if an older one never was (it would put stale data back)', async () => {
    const d = drop();
    d.put('acme-1.csv', 'one', 300);
    const newest = d.put('acme-2.csv', 'two', 100);
    const imported = new Set([await fileSha256(newest)]);
    const pick = await pickFeedFile(feedOver(d.dir), async (sha) => imported.has(sha));
    expect(pick).toEqual({ file: newest, skip: 'newest file already imported' });
  });

  it('leaves a file that is still being written for the next tick', async () => {
    const d = drop();
    d.put('acme-1.csv', 'one', 300);
    const arriving = d.put('acme-2.csv', 'two', 1);
    const pick = await pickFeedFile(feedOver(d.dir, 30), async () => false);
    expect(pick).toMatchObject({ file: arriving, skip: expect.stringMatching(/too recently/) });
  });

  it('says so when nothing matches or the folder is missing', async () => {
    expect(await pickFeedFile(feedOver(drop().dir), async () => false)).toMatchObject({
      file: null,
      skip: expect.stringMatching(/no file matches/),
    });
    expect(await pickFeedFile(feedOver(join(tmpdir(), 'ps-no-such-drop')), async () => false)).toMatchObject({
      file: null,
    });
  });
});
