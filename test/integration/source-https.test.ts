import { readFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blockedReason, checkHostAddress, parseAllowHosts } from '../../src/sources/address-guard.ts';
import { openHttpsSource } from '../../src/sources/https.ts';
import { startTestHttps, type TestHttps } from '../helpers/https-server.ts';

const BODY = 'GTIN;Désignation\n3500000000001;Biscuits\n';
let server: TestHttps;
const dir = mkdtempSync(join(tmpdir(), 'ps-source-https-'));

beforeAll(async () => {
  server = await startTestHttps((req, res, port) => {
    const path = req.url ?? '';
    if (path === '/feed.csv') {
      if (req.headers['if-none-match'] === '"v1"') return res.writeHead(304).end();
      return res.writeHead(200, { etag: '"v1"', 'content-type': 'text/csv' }).end(BODY);
    }
    if (path === '/dated.csv') {
      const lm = 'Wed, 01 Jan 2025 00:00:00 GMT';
      if (req.headers['if-modified-since'] === lm) return res.writeHead(304).end();
      return res.writeHead(200, { 'last-modified': lm }).end(BODY);
    }
    if (path === '/big.csv') {
      // No content-length: the limit must hold while the bytes arrive.
      res.writeHead(200);
      const chunk = Buffer.alloc(64 * 1024, 'x');
      let sent = 0;
      const more = () => {
        while (sent < 40 && res.write(chunk)) sent++;
        if (sent >= 40) return res.end();
        res.once('drain', more);
      };
      return more();
    }
    if (path === '/to-ip') return res.writeHead(302, { location: `https://127.0.0.1:${port}/feed.csv` }).end();
    if (path === '/to-http') return res.writeHead(302, { location: `http://localhost:${port}/feed.csv` }).end();
    if (path === '/loop') return res.writeHead(302, { location: '/loop' }).end();
    res.writeHead(404).end();
  });
});
afterAll(async () => {
  await server?.close();
});

const open = (path: string, opts: { allow?: string[]; ca?: boolean; headers?: Record<string, string> } = {}) =>
  openHttpsSource(
    {
      url: `${server.url}${path}`,
      ...(opts.ca === false ? {} : { ca: server.caFile }),
      ...(opts.headers ? { headers: opts.headers } : {}),
    },
    { allowHosts: opts.allow ?? ['localhost'], maxBytes: 1024 * 1024, env: { ACME_AUTH: 'Bearer s3cret' } },
  );

async function code(p: Promise<unknown>): Promise<string | undefined> {
  return (
    (await p.then(
      () => null,
      (e: unknown) => e,
    )) as { code?: string } | null
  )?.code;
}

describe('the https source', () => {
  it('downloads a new file (headers from the environment), then a conditional GET of it answers 304: nothing new', async () => {
    const first = open('/feed.csv', { headers: { Authorization: 'ACME_AUTH' } });
    const [file] = await first.list();
    expect(file).toMatchObject({ name: 'feed.csv', size: Buffer.byteLength(BODY), etag: '"v1"' });
    const dest = join(dir, 'copy', 'feed.csv');
    const got = await first.fetch(file!, dest, { maxBytes: 1024 });
    expect(got.sha256).toBe(createHash('sha256').update(BODY).digest('hex'));
    expect(readFileSync(dest, 'utf8')).toBe(BODY);
    await first.close();
    expect(server.seen.at(-1)!.headers.authorization).toBe('Bearer s3cret');
    // The next listing knows that version: the server answers 304 and the source lists the known file again.
    const again = openHttpsSource(
      { url: `${server.url}/feed.csv`, ca: server.caFile },
      { allowHosts: ['localhost'], maxBytes: 1024, known: file! },
    );
    expect(await again.list()).toEqual([file]);
    expect(server.seen.at(-1)!.headers['if-none-match']).toBe('"v1"');
    await again.close();
  });

  it("connects to the address the guard checked: the connection's own lookup goes through the guard too", async () => {
    // An allow list that counts how often the guard consults it for localhost: once before the request, once when
    // the socket resolves the name (the lookup the connection uses, no other).
    const checks: string[] = [];
    const list = ['localhost'];
    const allow = new Proxy(list, {
      get: (target, key) =>
        key === 'includes'
          ? (h: string) => {
              checks.push(h);
              return target.includes(h);
            }
          : Reflect.get(target, key),
    });
    const s = openHttpsSource(
      { url: `${server.url}/feed.csv`, ca: server.caFile },
      { allowHosts: allow, maxBytes: 1024 },
    );
    await s.list();
    await s.close();
    expect(checks.filter((h) => h === 'localhost')).toHaveLength(2);
  });

  it('refuses at the connection when the name is refused there, though it passed before the request', async () => {
    // The first check (before the request) allows localhost, the connection's own lookup does not: as if the name's
    // answer had changed in between. The connection is refused, not made.
    let calls = 0;
    const allow = new Proxy(['localhost'], {
      get: (target, key) =>
        key === 'includes' ? (h: string) => ++calls === 1 && target.includes(h) : Reflect.get(target, key),
    });
    const before = server.seen.length;
    const s = openHttpsSource(
      { url: `${server.url}/feed.csv`, ca: server.caFile },
      { allowHosts: allow, maxBytes: 1024 },
    );
    const err = (await s.list().catch((e: unknown) => e)) as Error & { code: string };
    await s.close();
    expect(err.code).toBe('PS_ERR_SOURCE_REFUSED');
    expect(server.seen.length).toBe(before);
  });

  it('uses Last-Modified when the server gives no ETag', async () => {
    const s = open('/dated.csv');
    const [file] = await s.list();
    expect(file!.etag).toBe('lm:Wed, 01 Jan 2025 00:00:00 GMT');
    await s.close();
    const again = openHttpsSource(
      { url: `${server.url}/dated.csv`, ca: server.caFile },
      { allowHosts: ['localhost'], maxBytes: 1024, known: file! },
    );
    expect(await again.list()).toEqual([file]);
    expect(server.seen.at(-1)!.headers['if-modified-since']).toBe('Wed, 01 Jan 2025 00:00:00 GMT');
    await again.close();
  });

  it('stops a download past its size limit', async () => {
    const s = openHttpsSource(
      { url: `${server.url}/big.csv`, ca: server.caFile, maxBytes: 100_000 },
      { allowHosts: ['localhost'], maxBytes: 1024 ** 3 },
    );
    expect(await code(s.list())).toBe('PS_ERR_SOURCE_TOO_LARGE');
    await s.close();
  });

  it('refuses a host that resolves to a loopback address unless SOURCE_ALLOW_HOSTS lists it', async () => {
    const s = open('/feed.csv', { allow: [] });
    const err = (await s.list().catch((e: unknown) => e)) as Error & { code: string };
    expect(err.code).toBe('PS_ERR_SOURCE_REFUSED');
    expect(err.message).toMatch(/localhost resolves to .*loopback.*SOURCE_ALLOW_HOSTS/);
    await s.close();
  });

  it('checks every redirect: one to a private address is refused, unless allowed; and the headers stay home', async () => {
    const refused = open('/to-ip', { headers: { Authorization: 'ACME_AUTH' } });
    expect(await code(refused.list())).toBe('PS_ERR_SOURCE_REFUSED');
    await refused.close();
    const allowed = open('/to-ip', { allow: ['localhost', '127.0.0.1'], headers: { Authorization: 'ACME_AUTH' } });
    const [file] = await allowed.list();
    expect(file!.etag).toBe('"v1"');
    const last = server.seen.at(-1)!;
    expect(last.headers.host).toBe(`127.0.0.1:${server.port}`);
    // Another origin than the feed's: the credential is not sent there.
    expect(last.headers.authorization).toBeUndefined();
    await allowed.close();
    for (const [path, pattern] of [
      ['/to-http', /non-HTTPS/],
      ['/loop', /more than 5 times/],
    ] as const) {
      const s = open(path);
      await expect(s.list()).rejects.toThrow(pattern);
      await s.close();
    }
  });

  it('verifies TLS: without the feed`s CA, the server is not trusted', async () => {
    const s = open('/feed.csv', { ca: false });
    const err = (await s.list().catch((e: unknown) => e)) as Error & { code: string };
    expect(err.code).toBe('PS_ERR_SOURCE_UNAVAILABLE');
    expect(err.message).toMatch(/cannot be reached/);
    await s.close();
  });
});

describe('the address guard', () => {
  it('knows the addresses no source may reach, in every form', () => {
    const blocked = [
      '127.0.0.1',
      '10.1.2.3',
      '172.16.0.1',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '100.100.100.200',
      '0.0.0.0',
      '::1',
      '::',
      '::ffff:127.0.0.1',
      '::ffff:7f00:1',
      '::ffff:a9fe:a9fe',
      '64:ff9b::a9fe:a9fe',
      '64:ff9b:1::a9fe:a9fe',
      '64:ff9b:1::8.8.8.8',
      '::ffff:0:127.0.0.1',
      '2002:7f00:1::1',
      '2002:a9fe:a9fe::',
      'fd00:ec2::254',
      'fe80::1',
      '[::1]',
    ];
    for (const a of blocked) expect(blockedReason(a), a).not.toBeNull();
    for (const a of [
      '93.184.216.34',
      '8.8.8.8',
      '2606:4700:4700::1111',
      '::ffff:8.8.8.8',
      '64:ff9b::8.8.8.8',
      '2002:808:808::1',
    ])
      expect(blockedReason(a), a).toBeNull();
  });

  it('returns the address to connect to; allows by host name or by address', async () => {
    expect(parseAllowHosts(' Localhost, [::1] ,,10.0.0.5')).toEqual(['localhost', '::1', '10.0.0.5']);
    expect((await checkHostAddress('127.0.0.1', ['127.0.0.1'])).address).toBe('127.0.0.1');
    expect(await code(checkHostAddress('10.0.0.5', []))).toBe('PS_ERR_SOURCE_REFUSED');
    expect((await checkHostAddress('10.0.0.5', ['10.0.0.5'])).address).toBe('10.0.0.5');
    expect(await code(checkHostAddress('no-such-host.invalid', []))).toBe('PS_ERR_SOURCE_UNAVAILABLE');
  });
});
