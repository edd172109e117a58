// Mappings and feeds that used to escape the error contract (issue 9): YAML alias bombs, crons BullMQ refuses,
// non-regular files in jobs/ and in drop folders.
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProductSyncError } from '../src/errors.ts';
import { parseMapping } from '../src/pipeline/map/mapping.ts';
import { cronProblem, loadFeeds } from '../src/queue/feeds.ts';
import { openDirSource } from '../src/sources/dir.ts';

const tmp = (prefix: string) => mkdtempSync(join(tmpdir(), prefix));

/** A "billion laughs" document: nine levels of lists of nine aliases of the level below (9^9 values once expanded). */
function aliasBomb(tail: string): string {
  const lines = ['a: &a ["lol","lol","lol","lol","lol","lol","lol","lol","lol"]'];
  const names = 'abcdefghi';
  for (let i = 1; i < names.length; i++)
    lines.push(
      `${names[i]}: &${names[i]} [${Array(9)
        .fill(`*${names[i - 1]}`)
        .join(',')}]`,
    );
  return `${lines.join('\n')}\n${tail}`;
}

describe('YAML alias bombs', () => {
  it('a mapping is refused as an invalid mapping, quickly, naming the file', () => {
    const started = Date.now();
    const err = (() => {
      try {
        parseMapping(aliasBomb('target: tradeItem\ncolumns:\n  - { column: GTIN, field: gtin }\n'), 'bomb.yaml');
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(ProductSyncError);
    expect((err as ProductSyncError).code).toBe('PS_ERR_MAPPING_INVALID');
    expect((err as Error).message).toContain('bomb.yaml');
    expect((err as Error).message).toMatch(/too many YAML aliases/);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it('a feed definition is refused as an invalid feed', async () => {
    const dir = tmp('ps-feeds-bomb-');
    writeFileSync(
      join(dir, 'bomb.yaml'),
      aliasBomb('schedule: "0 2 * * *"\nsource: { dir: /x, pattern: "*.csv" }\nmapping: m\n'),
    );
    const err = await loadFeeds(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProductSyncError);
    expect((err as ProductSyncError).code).toBe('PS_ERR_FEED_INVALID');
    expect((err as Error).message).toMatch(/bomb\.yaml: too many YAML aliases/);
  });
});

describe('feed schedules', () => {
  it('refuses, when the feeds load, a cron BullMQ would refuse when the worker starts', async () => {
    expect(cronProblem('0 2 * * *')).toBeNull();
    expect(cronProblem('*/5 * * * * *')).toBeNull();
    expect(cronProblem('61 2 * * *')).toMatch(/61/);
    const dir = tmp('ps-feeds-cron-');
    const feed = (schedule: string) => `schedule: "${schedule}"\nsource: { dir: /x, pattern: "*.csv" }\nmapping: m\n`;
    writeFileSync(join(dir, 'ok.yaml'), feed('0 2 * * *'));
    writeFileSync(join(dir, 'minute.yaml'), feed('61 2 * * *'));
    writeFileSync(join(dir, 'hour.yaml'), feed('0 25 * * *'));
    writeFileSync(join(dir, 'february.yaml'), feed('0 0 31 2 *'));
    writeFileSync(join(dir, 'words.yaml'), feed('at two every night'));
    const err = await loadFeeds(dir).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProductSyncError);
    expect((err as ProductSyncError).code).toBe('PS_ERR_FEED_INVALID');
    const message = (err as Error).message;
    for (const f of ['minute', 'hour', 'february', 'words'])
      expect(message).toMatch(new RegExp(`${f}\\.yaml:1: schedule: .*cron`));
    expect(message).not.toMatch(/ok\.yaml/);
  });

  it('refuses a feed definition that is not a regular file (a FIFO would hang the load)', async () => {
    const dir = tmp('ps-feeds-fifo-');
    execFileSync('mkfifo', [join(dir, 'pipe.yaml')]);
    mkdirSync(join(dir, 'folder.yaml'));
    const err = await loadFeeds(dir).catch((e: unknown) => e);
    expect((err as ProductSyncError).code).toBe('PS_ERR_FEED_INVALID');
    expect((err as Error).message).toMatch(/pipe\.yaml: not a regular file/);
    expect((err as Error).message).toMatch(/folder\.yaml: not a regular file/);
  });
});

describe('feed drop folders', () => {
  it('skips FIFOs, devices, directories and dangling symlinks: only the regular file is listed', async () => {
    const drop = tmp('ps-drop-');
    const old = new Date(Date.now() - 3600_000);
    writeFileSync(join(drop, 'acme-1.csv'), 'GTIN\n1\n');
    utimesSync(join(drop, 'acme-1.csv'), old, old);
    execFileSync('mkfifo', [join(drop, 'acme-2.csv')]);
    symlinkSync('/dev/zero', join(drop, 'acme-3.csv'));
    symlinkSync(join(drop, 'gone.csv'), join(drop, 'acme-4.csv'));
    mkdirSync(join(drop, 'acme-5.csv'));
    const source = openDirSource({ dir: drop, pattern: 'acme-*.csv' });
    expect((await source.list()).map((f) => f.name)).toEqual(['acme-1.csv']);
    expect(source.localPath!({ name: 'acme-1.csv', size: 8, mtimeMs: 0 })).toBe(join(drop, 'acme-1.csv'));
  });
});
