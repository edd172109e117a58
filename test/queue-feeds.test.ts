import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadFeeds, patternRegExp } from '../src/queue/feeds.ts';

function jobsDir(files: Record<string, string>): string {
  const dir = mkdtempSync(join(tmpdir(), 'ps-feeds-unit-'));
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  return dir;
}

const good =
  'schedule: "0 2 * * *"\ntimezone: Europe/Paris\nsource: { dir: /srv/acme, pattern: "acme-*.xlsx" }\nmapping: acme-foods\nmode: full\narchiveGuard: { maxRatio: 0.1 }\n';

describe('feed definitions', () => {
  it('loads a feed as docs/queue.md shows it, with its defaults, the file name as its id', async () => {
    const feeds = await loadFeeds(jobsDir({ 'acme.yaml': good, 'notes.txt': 'ignored' }));
    expect(feeds).toHaveLength(1);
    expect(feeds[0]).toMatchObject({
      id: 'acme',
      schedule: '0 2 * * *',
      timezone: 'Europe/Paris',
      mapping: 'acme-foods',
      mode: 'full',
      dryRun: false,
      source: { dir: '/srv/acme', pattern: 'acme-*.xlsx', order: 'name', settleSeconds: 30 },
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

describe('feed sources in a feed file', () => {
  const base = 'schedule: "0 2 * * *"\nmapping: m\n';

  it('keeps the old dir shape (order by name by default), and reads the https, sftp and s3 shapes', async () => {
    const feeds = await loadFeeds(
      jobsDir({
        'a-dir.yaml': `${base}source: { dir: drops/acme, pattern: "delta-*.csv", order: mtime }\nafterImport: { move: done/ }\n`,
        'b-https.yaml': `${base}source:\n  https: { url: "https://supplier.example/feed.csv", headers: { Authorization: ACME_AUTH } }\n`,
        'c-sftp.yaml': `${base}source:\n  sftp: { host: sftp.acme.example, user: acme, passwordEnv: ACME_PW, hostKeyFingerprint: "SHA256:${'A'.repeat(43)}", dir: /outgoing }\n`,
        'd-s3.yaml': `${base}source:\n  s3: { bucket: drops, prefix: acme/ }\nafterImport: { delete: true }\n`,
        'e-old.yaml': good,
      }),
    );
    expect(feeds.map((f) => f.source)).toEqual([
      { dir: 'drops/acme', pattern: 'delta-*.csv', order: 'mtime', settleSeconds: 30 },
      {
        https: { url: 'https://supplier.example/feed.csv', headers: { Authorization: 'ACME_AUTH' } },
      },
      {
        sftp: expect.objectContaining({ host: 'sftp.acme.example', port: 22, pattern: '*', order: 'name' }),
      },
      { s3: expect.objectContaining({ bucket: 'drops', prefix: 'acme/', pattern: '*' }) },
      { dir: '/srv/acme', pattern: 'acme-*.xlsx', order: 'name', settleSeconds: 30 },
    ]);
    expect(feeds[0]!.afterImport).toEqual({ move: 'done/' });
    expect(feeds[3]!.afterImport).toEqual({ delete: true });
  });

  it('names a problem at its own key: an http URL, a literal secret as a header, an sftp source without a key', async () => {
    const err = (await loadFeeds(
      jobsDir({
        'h.yaml': `${base}source:\n  https: { url: "http://supplier.example/f.csv", headers: { Authorization: "Bearer abc" } }\n`,
        's.yaml': `${base}source:\n  sftp: { host: h, user: u, hostKeyFingerprint: "SHA256:${'A'.repeat(43)}", dir: /o }\n`,
      }),
    ).catch((e: Error) => e)) as Error;
    expect(err.message).toMatch(/h\.yaml:\d+: source\.https\.url/);
    expect(err.message).toMatch(
      /h\.yaml:\d+: source\.https\.headers\.Authorization: must name an environment variable/,
    );
    expect(err.message).toMatch(/s\.yaml:\d+: source\.sftp: needs privateKeyEnv or passwordEnv/);
  });
});
