// A private S3-compatible server for the S3 source's tests: s3rver (npm, a devDependency) in a child process on a free
// port, its objects in a temporary folder. s3rver encrypts ListObjectsV2 continuation tokens with DES, which OpenSSL 3
// only offers through its legacy provider: the child runs with --openssl-legacy-provider.
import { S3Client } from '@aws-sdk/client-s3';
import { spawn, type ChildProcess } from 'node:child_process';
import { createRequire } from 'node:module';
import { createConnection } from 'node:net';
import { freePort } from '../global-setup.ts';

/** s3rver's built-in account (any other key is refused with InvalidAccessKeyId). */
export const S3RVER_KEY = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

export interface OwnS3 {
  endpoint: string;
  stop(): Promise<void>;
}

/** s3rver's command-line script, or null when the package is not installed. */
export function s3rverBin(): string | null {
  try {
    return createRequire(import.meta.url).resolve('s3rver/bin/s3rver.js');
  } catch {
    return null;
  }
}

/** Starts s3rver on a free port with `buckets` created, its data in `dir`. */
export async function ownS3(dir: string, buckets: string[]): Promise<OwnS3> {
  const bin = s3rverBin();
  if (!bin) throw new Error('s3rver is not installed (npm ci installs it: a devDependency)');
  const port = await freePort();
  const args = ['--openssl-legacy-provider', bin, '-d', dir, '-a', '127.0.0.1', '-p', String(port), '--silent'];
  for (const b of buckets) args.push('--configure-bucket', b);
  const child: ChildProcess = spawn(process.execPath, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d.toString()));
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`s3rver exited: ${stderr}`);
    const up = await new Promise<boolean>((resolve) => {
      const s = createConnection(port, '127.0.0.1');
      s.once('connect', () => (s.destroy(), resolve(true)));
      s.once('error', () => resolve(false));
    });
    if (up) break;
    if (i > 200) throw new Error(`s3rver did not listen: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async stop() {
      if (child.exitCode === null) {
        child.kill('SIGTERM');
        await exited;
      }
    },
  };
}

/**
 * Points the AWS SDK's default credential chain of this process (and of the workers it starts) at s3rver's key, as
 * AWS's own variables on a real worker, and returns a client of `s3` for the test's own uploads and reads.
 */
export function s3AdminClient(s3: OwnS3): S3Client {
  process.env.AWS_ACCESS_KEY_ID = S3RVER_KEY.accessKeyId;
  process.env.AWS_SECRET_ACCESS_KEY = S3RVER_KEY.secretAccessKey;
  delete process.env.AWS_PROFILE;
  process.env.AWS_EC2_METADATA_DISABLED = 'true';
  return new S3Client({
    endpoint: s3.endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3RVER_KEY,
    requestChecksumCalculation: 'WHEN_REQUIRED',
  });
}
