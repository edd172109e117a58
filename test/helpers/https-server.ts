// An HTTPS server of a test's own, its certificate signed by a throwaway CA made with the machine's openssl: the
// source under test trusts it only through the feed's `ca` file.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export interface TestHttps {
  /** `https://localhost:<port>` */
  url: string;
  port: number;
  /** The CA's PEM file (what a feed's `ca:` names). */
  caFile: string;
  /** Every request seen: path and headers. */
  seen: { path: string; headers: IncomingMessage['headers'] }[];
  close(): Promise<void>;
}

/** A throwaway CA and a server certificate for localhost and 127.0.0.1, in a new folder. */
function makeCerts(): { dir: string; caFile: string; key: Buffer; cert: Buffer } {
  const dir = mkdtempSync(join(tmpdir(), 'ps-test-ca-'));
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: 'ignore' });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes'];
  ssl('req', '-x509', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '2', '-subj', '/CN=product-sync test CA');
  ssl('req', ...ec, '-keyout', 'server.key', '-out', 'server.csr', '-subj', '/CN=localhost');
  writeFileSync(join(dir, 'san.ext'), 'subjectAltName=DNS:localhost,IP:127.0.0.1\n');
  ssl(
    'x509',
    '-req',
    '-in',
    'server.csr',
    '-CA',
    'ca.pem',
    '-CAkey',
    'ca.key',
    '-CAcreateserial',
    '-out',
    'server.pem',
    '-days',
    '2',
    '-extfile',
    'san.ext',
  );
  return {
    dir,
    caFile: join(dir, 'ca.pem'),
    key: readFileSync(join(dir, 'server.key')),
    cert: readFileSync(join(dir, 'server.pem')),
  };
}

export async function startTestHttps(
  handler: (req: IncomingMessage, res: ServerResponse, port: number) => void,
): Promise<TestHttps> {
  const certs = makeCerts();
  const seen: TestHttps['seen'] = [];
  let port = 0;
  const server: Server = createServer({ key: certs.key, cert: certs.cert }, (req, res) => {
    seen.push({ path: req.url ?? '', headers: req.headers });
    handler(req, res, port);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
  return {
    url: `https://localhost:${port}`,
    port,
    caFile: certs.caFile,
    seen,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
