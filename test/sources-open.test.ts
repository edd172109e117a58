import { describe, expect, it } from 'vitest';
import { feedSourceSchema, openSource } from '../src/sources/open.ts';

const options = { allowHosts: [] as string[], maxBytes: 1 << 20, env: {} };
const code = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (e: { code?: string }) => e.code,
  );

describe('openSource: remote kinds behind the address guard', () => {
  const sftp = feedSourceSchema.parse({
    sftp: {
      host: '127.0.0.1',
      port: 1,
      user: 'acme',
      privateKeyEnv: 'ACME_KEY',
      hostKeyFingerprint: `SHA256:${'A'.repeat(43)}`,
      dir: '/outgoing',
    },
  });
  const s3 = feedSourceSchema.parse({ s3: { bucket: 'drops', endpoint: 'http://127.0.0.1:1' } });

  it('refuses an SFTP host or an S3 endpoint on loopback before connecting', async () => {
    expect(await code(openSource(sftp, options).list())).toBe('PS_ERR_SOURCE_REFUSED');
    expect(await code(openSource(s3, options).list())).toBe('PS_ERR_SOURCE_REFUSED');
  });

  it('lets a listed host through to the client (here: a port nobody answers on)', async () => {
    const allowed = { ...options, allowHosts: ['127.0.0.1'], env: { ACME_KEY: 'not a key' } };
    expect(await code(openSource(sftp, allowed).list())).toMatch(/^PS_ERR_SOURCE_(CREDENTIALS|UNAVAILABLE)$/);
  });

  it('labels a remote source without its secrets', () => {
    expect(openSource(sftp, options).label).toBe('sftp://acme@127.0.0.1:1/outgoing/*');
  });
});
