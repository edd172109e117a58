// The SFTP source connects to the address the address guard checked, never resolving the host name again (a DNS
// answer that changes between the check and the connection cannot take it elsewhere). The guard's lookup is replaced
// here: it alone knows the name `sftp.rebind.test`; the system's resolver does not.
import type * as DnsPromises from 'node:dns/promises';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openSource } from '../../src/sources/open.ts';
import { ownSshd, sshdMissing, type OwnSshd } from '../helpers/sshd.ts';

vi.mock('node:dns/promises', async (real) => {
  const dns = await real<typeof DnsPromises>();
  return {
    ...dns,
    lookup: (async (host: string, options: unknown) =>
      host === 'sftp.rebind.test'
        ? [{ address: '127.0.0.1', family: 4 }]
        : dns.lookup(host, options as never)) as typeof dns.lookup,
  };
});

const missing = sshdMissing();
if (missing && process.env.CI) throw new Error(`CI must run the SFTP source tests: ${missing}`);

describe.skipIf(missing !== null)('sftp source behind the address guard', () => {
  let dir: string;
  let sshd: OwnSshd;
  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'ps-sftp-addr-'));
    sshd = await ownSshd(dir);
  });
  afterAll(async () => {
    await sshd?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('connects to the address it checked, not to a second lookup of the name', async () => {
    mkdirSync(join(dir, 'drop'));
    writeFileSync(join(dir, 'drop', 'a.csv'), 'x\n');
    const source = openSource(
      {
        sftp: {
          host: 'sftp.rebind.test',
          port: sshd.port,
          user: sshd.user,
          privateKeyEnv: 'K',
          hostKeyFingerprint: sshd.hostFingerprint,
          dir: join(dir, 'drop'),
          pattern: '*.csv',
          order: 'name',
          settleSeconds: 0,
        },
      },
      { allowHosts: ['127.0.0.1'], maxBytes: 1000, env: { K: sshd.userKey } },
    );
    try {
      expect((await source.list()).map((f) => f.name)).toEqual(['a.csv']);
    } finally {
      await source.close();
    }
  }, 30_000);
});
