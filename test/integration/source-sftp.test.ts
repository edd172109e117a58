// The sftp source kind against Debian's OpenSSH server (started here on a free port with throwaway keys): listing,
// downloading with sha256 and a size limit, the pinned host key, credentials from the environment and never in an
// error, paths that stay inside the folder, afterImport move and delete.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProductSyncError } from '../../src/errors.ts';
import type { SftpSourceConfig, Source } from '../../src/sources/source.ts';
import { openSftpSource, sshFingerprint } from '../../src/sources/sftp.ts';
import { freePort } from '../global-setup.ts';
import { ownSshd, sshdMissing, type OwnSshd } from '../helpers/sshd.ts';
import { rejection } from '../helpers/errors.ts';

const missing = sshdMissing();
if (missing && process.env.CI) throw new Error(`CI must run the SFTP source tests: ${missing}`);
if (missing) console.log(`skipping the SFTP source tests: ${missing}`);

const sha = (b: string | Buffer): string => createHash('sha256').update(b).digest('hex');

const failure = (p: Promise<unknown>): Promise<ProductSyncError> => rejection(p, ProductSyncError);

describe.skipIf(missing !== null)('sftp source (OpenSSH)', () => {
  let dir: string;
  let sshd: OwnSshd;
  const opened: Source[] = [];
  let n = 0;

  /** A fresh drop folder on the server (the test's temp dir is the server's file system too). */
  const dropFolder = (): string => {
    const d = join(dir, `drop-${++n}`);
    mkdirSync(d);
    return d;
  };
  const open = (over: Partial<SftpSourceConfig>, env: NodeJS.ProcessEnv = { ACME_SFTP_KEY: sshd.userKey }): Source => {
    const s = openSftpSource(
      {
        host: '127.0.0.1',
        port: sshd.port,
        user: sshd.user,
        privateKeyEnv: 'ACME_SFTP_KEY',
        hostKeyFingerprint: sshd.hostFingerprint,
        dir: '/nonexistent',
        pattern: 'delta-*.csv',
        order: 'name',
        settleSeconds: 0,
        ...over,
      },
      env,
    );
    opened.push(s);
    return s;
  };

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ps-sftp-'));
    sshd = await ownSshd(dir);
  });
  afterAll(async () => {
    for (const s of opened) await s.close();
    await sshd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists the matching regular files with size and mtime, and downloads one with its sha256', async () => {
    const drop = dropFolder();
    const bodies = {
      'delta-1.csv': 'gtin;name\n1;a\n',
      'delta-2.csv': 'gtin;name\n2;bb\n',
      'delta-3.csv': 'x'.repeat(5000),
    };
    let t = 1_700_000_000;
    for (const [name, body] of Object.entries(bodies)) {
      writeFileSync(join(drop, name), body);
      utimesSync(join(drop, name), t, t);
      t += 60;
    }
    writeFileSync(join(drop, 'other.csv'), 'not matching');
    mkdirSync(join(drop, 'delta-dir.csv')); // a folder whose name matches
    writeFileSync(join(dir, 'outside.csv'), 'secret outside the folder');
    symlinkSync(join(dir, 'outside.csv'), join(drop, 'delta-link.csv')); // a symlink whose name matches

    const src = open({ dir: drop });
    expect(src.label).toBe(`sftp://${sshd.user}@127.0.0.1:${sshd.port}${drop}`);
    const listed = (await src.list()).sort((a, b) => a.name.localeCompare(b.name));
    expect(listed).toEqual([
      { name: 'delta-1.csv', size: bodies['delta-1.csv'].length, mtimeMs: 1_700_000_000_000 },
      { name: 'delta-2.csv', size: bodies['delta-2.csv'].length, mtimeMs: 1_700_000_060_000 },
      { name: 'delta-3.csv', size: 5000, mtimeMs: 1_700_000_120_000 },
    ]);

    const dest = join(dir, 'fetched-3.csv');
    const got = await src.fetch(listed[2]!, dest, { maxBytes: 10_000 });
    expect(got).toEqual({ sha256: sha(bodies['delta-3.csv']), size: 5000 });
    expect(readFileSync(dest, 'utf8')).toBe(bodies['delta-3.csv']);
    // A second fetch on the same connection replaces the file.
    await src.fetch(listed[0]!, dest, { maxBytes: 10_000 });
    expect(readFileSync(dest, 'utf8')).toBe(bodies['delta-1.csv']);
  });

  it('refuses a file over maxBytes and leaves no partial file', async () => {
    const drop = dropFolder();
    writeFileSync(join(drop, 'delta-big.csv'), 'y'.repeat(4096));
    const src = open({ dir: drop });
    const [file] = await src.list();
    const dest = join(dir, 'fetched-big.csv');
    const err = await failure(src.fetch(file!, dest, { maxBytes: 1000 }));
    expect(err.code).toBe('PS_ERR_SOURCE_TOO_LARGE');
    expect(err.message).toContain('delta-big.csv');
    expect(existsSync(dest)).toBe(false);
    // A listing that under-states the size changes nothing: the server's own size is checked before reading.
    const err2 = await failure(src.fetch({ ...file!, size: 10 }, dest, { maxBytes: 1000 }));
    expect(err2.code).toBe('PS_ERR_SOURCE_TOO_LARGE');
    expect(existsSync(dest)).toBe(false);
  });

  it('refuses a server whose host key is not the pinned one, naming both fingerprints; nothing is read', async () => {
    const drop = dropFolder();
    writeFileSync(join(drop, 'delta-1.csv'), 'a');
    const src = open({ dir: drop, hostKeyFingerprint: sshd.otherFingerprint });
    const err = await failure(src.list());
    expect(err.code).toBe('PS_ERR_SOURCE_HOST_KEY');
    expect(err.message).toContain(`127.0.0.1:${sshd.port}`);
    expect(err.message).toContain(sshd.hostFingerprint);
    expect(err.message).toContain(sshd.otherFingerprint);
    expect(err.message).toContain('ssh-ed25519');
    const dest = join(dir, 'never.csv');
    expect((await failure(src.fetch({ name: 'delta-1.csv', size: 1, mtimeMs: 0 }, dest, { maxBytes: 10 }))).code).toBe(
      'PS_ERR_SOURCE_HOST_KEY',
    );
    expect(existsSync(dest)).toBe(false);
    // The fingerprint as ssh-keygen prints it is what the source computes from the key the server presents.
    const pub = readFileSync(join(dir, 'host_ed25519.pub'), 'utf8').split(' ')[1]!;
    expect(sshFingerprint(Buffer.from(pub, 'base64'))).toBe(sshd.hostFingerprint);
  });

  it('names a missing credential variable, never a value; a refused key or password stays out of the message', async () => {
    const drop = dropFolder();
    const noKey = await failure(open({ dir: drop }, {}).list());
    expect(noKey.code).toBe('PS_ERR_SOURCE_CREDENTIALS');
    expect(noKey.message).toContain('ACME_SFTP_KEY');
    const noPassword = await failure(
      open({ dir: drop, privateKeyEnv: undefined, passwordEnv: 'ACME_SFTP_PASSWORD' }, { ACME_SFTP_KEY: 'x' }).list(),
    );
    expect(noPassword.code).toBe('PS_ERR_SOURCE_CREDENTIALS');
    expect(noPassword.message).toContain('ACME_SFTP_PASSWORD');

    // Another key, then a password (the server takes keys only): refused, and neither appears in what is said.
    const otherKey = readFileSync(join(dir, 'other_ed25519'), 'utf8');
    const wrongKey = await failure(open({ dir: drop }, { ACME_SFTP_KEY: otherKey }).list());
    expect(wrongKey.code).toBe('PS_ERR_SOURCE_CREDENTIALS');
    expect(wrongKey.message).toContain('ACME_SFTP_KEY');
    const password = 'pw-Zq8!never-shown';
    const wrongPassword = await failure(
      open(
        { dir: drop, privateKeyEnv: undefined, passwordEnv: 'ACME_SFTP_PASSWORD' },
        { ACME_SFTP_PASSWORD: password },
      ).list(),
    );
    expect(wrongPassword.code).toBe('PS_ERR_SOURCE_CREDENTIALS');
    const garbledKey = await failure(open({ dir: drop }, { ACME_SFTP_KEY: 'not-a-key-but-a-secret-text' }).list());
    expect(garbledKey.code).toBe('PS_ERR_SOURCE_CREDENTIALS');
    for (const e of [noKey, noPassword, wrongKey, wrongPassword, garbledKey]) {
      const said = `${e.message} ${String((e.cause as Error | undefined)?.message ?? '')}`;
      expect(said).not.toContain(password);
      expect(said).not.toContain('not-a-key-but-a-secret-text');
      expect(said).not.toContain(otherKey.split('\n')[1]!);
      expect(said).not.toContain(sshd.userKey.split('\n')[1]!);
    }
  });

  it('cannot reach a closed port: PS_ERR_SOURCE_UNAVAILABLE naming the host, retryable', async () => {
    const port = await freePort();
    const err = await failure(open({ port, dir: '/x' }).list());
    expect(err.code).toBe('PS_ERR_SOURCE_UNAVAILABLE');
    expect(err.message).toContain(`127.0.0.1:${port}`);
    expect(err.message).toMatch(/ECONNREFUSED|refused/);
    expect(err.retryable).toBe(true);
    expect(err.message).not.toContain(sshd.userKey.split('\n')[1]!);
  });

  it('keeps every path inside the folder: names with / or .., symlinks, move folders outside', async () => {
    const drop = dropFolder();
    writeFileSync(join(drop, 'delta-1.csv'), 'inside');
    writeFileSync(join(dir, 'escape.csv'), 'outside');
    symlinkSync(join(dir, 'escape.csv'), join(drop, 'delta-link.csv'));
    mkdirSync(join(dir, 'elsewhere'));
    symlinkSync(join(dir, 'elsewhere'), join(drop, 'linked-done'));
    const src = open({ dir: drop });
    const dest = join(dir, 'escaped.csv');
    for (const name of ['../escape.csv', `../${n}/../escape.csv`, '..', '.', 'sub/x.csv', '', 'a\\b']) {
      const err = await failure(src.fetch({ name, size: 1, mtimeMs: 0 }, dest, { maxBytes: 100 }));
      expect(err.code, name).toBe('PS_ERR_SOURCE_PATH');
    }
    const link = await failure(src.fetch({ name: 'delta-link.csv', size: 7, mtimeMs: 0 }, dest, { maxBytes: 100 }));
    expect(link.code).toBe('PS_ERR_SOURCE_PATH');
    expect(link.message).toContain('symlink');
    expect(existsSync(dest)).toBe(false);

    const file = { name: 'delta-1.csv', size: 6, mtimeMs: 0 };
    for (const move of ['../out', '/tmp', 'done/../../out', '.', 'linked-done', 'linked-done/sub']) {
      const err = await failure(src.afterImport!(file, { move }));
      expect(err.code, move).toBe('PS_ERR_SOURCE_PATH');
    }
    expect((await failure(src.afterImport!({ ...file, name: '../escape.csv' }, { delete: true }))).code).toBe(
      'PS_ERR_SOURCE_PATH',
    );
    expect(existsSync(join(drop, 'delta-1.csv'))).toBe(true);
    expect(existsSync(join(dir, 'escape.csv'))).toBe(true);
    expect(existsSync(join(dir, 'out'))).toBe(false);
  });

  it('afterImport moves into a folder it creates (replacing a file of that name there), or deletes', async () => {
    const drop = dropFolder();
    for (const name of ['delta-1.csv', 'delta-2.csv', 'delta-3.csv']) writeFileSync(join(drop, name), name);
    const src = open({ dir: drop });
    const files = (await src.list()).sort((a, b) => a.name.localeCompare(b.name));
    await src.afterImport!(files[0]!, { move: 'done/2024' });
    expect(readFileSync(join(drop, 'done', '2024', 'delta-1.csv'), 'utf8')).toBe('delta-1.csv');
    writeFileSync(join(drop, 'delta-1.csv'), 'again');
    await src.afterImport!(files[0]!, { move: 'done/2024/' });
    expect(readFileSync(join(drop, 'done', '2024', 'delta-1.csv'), 'utf8')).toBe('again');
    await src.afterImport!(files[1]!, { delete: true });
    expect((await src.list()).map((f) => f.name)).toEqual(['delta-3.csv']);
    const gone = await failure(src.afterImport!(files[1]!, { delete: true }));
    expect(gone.code).toBe('PS_ERR_SOURCE_FILE');
    expect(gone.message).toContain('delta-2.csv');
    expect(existsSync(join(drop, 'delta-2.csv'))).toBe(false);
  });

  it('a missing folder is a file error; close is idempotent and the next call connects again', async () => {
    const src = open({ dir: join(dir, 'no-such-folder') });
    const err = await failure(src.list());
    expect(err.code).toBe('PS_ERR_SOURCE_FILE');
    expect(err.message).toContain('no-such-folder');
    const drop = dropFolder();
    writeFileSync(join(drop, 'delta-9.csv'), '9');
    const again = open({ dir: drop });
    expect((await again.list()).map((f) => f.name)).toEqual(['delta-9.csv']);
    await again.close();
    await again.close();
    expect((await again.list()).map((f) => f.name)).toEqual(['delta-9.csv']);
  });
});
