// The s3 source kind against s3rver (an S3-compatible server from npm, started here in a child process on a free port):
// paged listing under a prefix with a pattern, downloads with sha256 and a size limit, the listed version only,
// afterImport move and delete, path-style addressing for an endpoint, credentials refused or missing.
import type { S3Client } from '@aws-sdk/client-s3';
import { DeleteObjectCommand, GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProductSyncError } from '../../src/errors.ts';
import { openS3Source, type S3SourceOptions } from '../../src/sources/s3.ts';
import type { S3SourceConfig, Source } from '../../src/sources/source.ts';
import { freePort } from '../global-setup.ts';
import { ownS3, s3AdminClient, s3rverBin, S3RVER_KEY, type OwnS3 } from '../helpers/s3rver.ts';
import { rejection } from '../helpers/errors.ts';

const missing = s3rverBin() ? null : 's3rver is not installed (a devDependency: npm ci)';
if (missing && process.env.CI) throw new Error(`CI must run the S3 source tests: ${missing}`);
if (missing) console.log(`skipping the S3 source tests: ${missing}`);

const sha = (b: string | Buffer): string => createHash('sha256').update(b).digest('hex');
const md5 = (b: string | Buffer): string => createHash('md5').update(b).digest('hex');

const failure = (p: Promise<unknown>): Promise<ProductSyncError> => rejection(p, ProductSyncError);

describe.skipIf(missing !== null)('s3 source (s3rver)', () => {
  let dir: string;
  let s3: OwnS3;
  let admin: S3Client;
  const saved = { ...process.env };
  const opened: Source[] = [];
  let n = 0;

  const open = (over: Partial<S3SourceConfig> = {}, options: S3SourceOptions = {}): Source => {
    const s = openS3Source(
      { bucket: 'drops', prefix: '', endpoint: s3.endpoint, pattern: '*', order: 'name', ...over },
      options,
    );
    opened.push(s);
    return s;
  };
  const put = (key: string, body: string | Buffer) =>
    admin.send(new PutObjectCommand({ Bucket: 'drops', Key: key, Body: body }));
  const exists = (key: string) =>
    admin.send(new GetObjectCommand({ Bucket: 'drops', Key: key })).then(
      async (r) => (await r.Body!.transformToString()) as string | false,
      () => false as const,
    );
  /** A prefix of the test's own. */
  const prefix = (): string => `acme-${++n}/`;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ps-s3-'));
    s3 = await ownS3(dir, ['drops']);
    admin = s3AdminClient(s3);
  });
  afterAll(async () => {
    for (const s of opened) await s.close();
    admin?.destroy();
    await s3?.stop();
    process.env = saved;
    rmSync(dir, { recursive: true, force: true });
  });

  it('lists one level under the prefix, filtered by the pattern, across pages; fetches with the sha256', async () => {
    const p = prefix();
    const bodies: Record<string, string> = {};
    for (let i = 1; i <= 5; i++) {
      bodies[`delta-${i}.csv`] = `gtin;name\n${i};${'n'.repeat(i * 10)}\n`;
      await put(`${p}delta-${i}.csv`, bodies[`delta-${i}.csv`]!);
    }
    await put(`${p}readme.txt`, 'not matching');
    await put(`${p}done/delta-0.csv`, 'a moved file: a level below');
    await put(`other/delta-9.csv`, 'another prefix');
    await put(`${p.slice(0, -1)}x/delta-8.csv`, 'a longer prefix');

    const src = open({ prefix: p, pattern: 'DELTA-*.csv' }, { pageSize: 2 });
    expect(src.label).toBe(`s3://drops/${p}`);
    const listed = (await src.list()).sort((a, b) => a.name.localeCompare(b.name));
    expect(listed.map((f) => f.name)).toEqual([
      'delta-1.csv',
      'delta-2.csv',
      'delta-3.csv',
      'delta-4.csv',
      'delta-5.csv',
    ]);
    for (const f of listed) {
      expect(f.size).toBe(bodies[f.name]!.length);
      expect(f.etag).toBe(md5(bodies[f.name]!));
      expect(Math.abs(f.mtimeMs! - Date.now())).toBeLessThan(10 * 60_000);
    }

    const dest = join(dir, 'fetched.csv');
    expect(await src.fetch(listed[3]!, dest, { maxBytes: 1000 })).toEqual({
      sha256: sha(bodies['delta-4.csv']!),
      size: bodies['delta-4.csv']!.length,
    });
    expect(readFileSync(dest, 'utf8')).toBe(bodies['delta-4.csv']);
  });

  it('refuses an object over maxBytes, and one changed since it was listed; leaves no file', async () => {
    const p = prefix();
    await put(`${p}big.csv`, 'z'.repeat(5000));
    await put(`${p}moving.csv`, 'first version');
    const src = open({ prefix: p });
    const files = (await src.list()).sort((a, b) => a.name.localeCompare(b.name));
    const dest = join(dir, 'refused.csv');
    const big = await failure(src.fetch(files[0]!, dest, { maxBytes: 1000 }));
    expect(big.code).toBe('PS_ERR_SOURCE_TOO_LARGE');
    expect(big.message).toContain('big.csv');
    expect(existsSync(dest)).toBe(false);

    await put(`${p}moving.csv`, 'second version, longer');
    const changed = await failure(src.fetch(files[1]!, dest, { maxBytes: 1000 }));
    expect(changed.code).toBe('PS_ERR_SOURCE_FILE');
    expect(changed.message).toContain('moving.csv');
    expect(existsSync(dest)).toBe(false);
    // Listed again, it is the new version that is read.
    const again = (await src.list()).find((f) => f.name === 'moving.csv')!;
    expect((await src.fetch(again, dest, { maxBytes: 1000 })).sha256).toBe(sha('second version, longer'));
  });

  it('afterImport moves under <prefix><move> (copy, then delete) or deletes', async () => {
    const p = prefix();
    await put(`${p}a.csv`, 'A');
    await put(`${p}b.csv`, 'B');
    await put(`${p}c.csv`, 'C');
    const src = open({ prefix: p, pattern: '*.csv' });
    const files = (await src.list()).sort((a, b) => a.name.localeCompare(b.name));
    await src.afterImport!(files[0]!, { move: 'done' });
    expect(await exists(`${p}done/a.csv`)).toBe('A');
    expect(await exists(`${p}a.csv`)).toBe(false);
    await src.afterImport!(files[1]!, { delete: true });
    expect(await exists(`${p}b.csv`)).toBe(false);
    expect((await src.list()).map((f) => f.name)).toEqual(['c.csv']);
    for (const move of ['../elsewhere/', '/root/', 'done/../../x/', '.']) {
      expect((await failure(src.afterImport!(files[2]!, { move }))).code, move).toBe('PS_ERR_SOURCE_PATH');
    }
    for (const name of ['../c.csv', 'done/a.csv', '..', '']) {
      const err = await failure(src.fetch({ name, size: 1, mtimeMs: 0 }, join(dir, 'x'), { maxBytes: 10 }));
      expect(err.code, name).toBe('PS_ERR_SOURCE_PATH');
    }
    expect(await exists(`${p}c.csv`)).toBe('C');
  });

  it('addresses an endpoint path-style by default (virtual-host style would name the bucket in the host)', async () => {
    const p = prefix();
    await put(`${p}a.csv`, 'A');
    // A host name (the SDK addresses an IP address path-style whatever it is told).
    const endpoint = s3.endpoint.replace('127.0.0.1', 'localhost');
    expect((await open({ prefix: p, endpoint }).list()).map((f) => f.name)).toEqual(['a.csv']);
    expect((await open({ prefix: p, endpoint, forcePathStyle: true }).list()).map((f) => f.name)).toEqual(['a.csv']);
    // Host-style asks drops.localhost: no such host.
    const err = await failure(open({ prefix: p, endpoint, forcePathStyle: false }).list());
    expect(err.code).toBe('PS_ERR_SOURCE_UNAVAILABLE');
    expect(err.message).toContain('drops.localhost');
  });

  it('says what is wrong without saying a secret: refused or missing credentials, no bucket, no server', async () => {
    const secret = 'wJalrXUtnFEMI-K7MDENG-not-a-real-one';
    process.env.AWS_ACCESS_KEY_ID = 'AKIAWRONGKEY';
    process.env.AWS_SECRET_ACCESS_KEY = secret;
    try {
      const refused = await failure(open().list());
      expect(refused.code).toBe('PS_ERR_SOURCE_CREDENTIALS');
      expect(refused.message).toContain('InvalidAccessKeyId');
      expect(refused.message).not.toContain(secret);

      delete process.env.AWS_ACCESS_KEY_ID;
      delete process.env.AWS_SECRET_ACCESS_KEY;
      process.env.AWS_SHARED_CREDENTIALS_FILE = join(dir, 'no-credentials');
      process.env.AWS_CONFIG_FILE = join(dir, 'no-config');
      const none = await failure(open().list());
      expect(none.code).toBe('PS_ERR_SOURCE_CREDENTIALS');
      expect(none.message).toMatch(/no AWS credentials/);
    } finally {
      process.env.AWS_ACCESS_KEY_ID = S3RVER_KEY.accessKeyId;
      process.env.AWS_SECRET_ACCESS_KEY = S3RVER_KEY.secretAccessKey;
    }
    const noBucket = await failure(open({ bucket: 'no-such-bucket' }).list());
    expect(noBucket.code).toBe('PS_ERR_SOURCE_FILE');
    expect(noBucket.message).toContain('NoSuchBucket');

    const port = await freePort();
    const down = await failure(open({ endpoint: `http://127.0.0.1:${port}` }).list());
    expect(down.code).toBe('PS_ERR_SOURCE_UNAVAILABLE');
    expect(down.message).toContain(`127.0.0.1:${port}`);
    expect(down.retryable).toBe(true);

    // Nothing of the bucket was touched by the failures.
    await put('still-there.csv', 'x');
    expect(await exists('still-there.csv')).toBe('x');
    await admin.send(new DeleteObjectCommand({ Bucket: 'drops', Key: 'still-there.csv' }));
  });
});
