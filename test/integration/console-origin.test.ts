// The console answers only its own pages (issue 34): it refuses a change from another site (Origin / Sec-Fetch-Site)
// with 403 and does nothing, even when the browser carries its credentials; it refuses any request whose Host does
// not name it (DNS rebinding), GET included; a page of its own and a script still pass. Also `serve --host
// <name>.localhost`, an unresolvable --host, and a JSON body with a `__proto__` key. The routes are tested on consoles
// built in this process as `serve` builds them (settings from the environment, over loopback); `serve` itself (a
// process) where what it listens on and how it exits are tested.
import { readdirSync, readFileSync } from 'node:fs';
import { createServer, request } from 'node:http';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { consoleAccess } from '../../src/server/console-access.ts';
import { buildConsole } from '../../src/server/app.ts';
import { type CliOptions } from '../helpers/cli.ts';
import { apiEnv } from '../helpers/env.ts';
import { hasChromium, startConsoleStack, withChromium, type ConsoleStack } from '../helpers/console.ts';
import { servePort, useProcesses, type TestProcess } from '../helpers/processes.ts';

const sample = new URL('../../samples/epicerie-fine.csv', import.meta.url).pathname;
const USER = 'steward';
const PASSWORD = 'a-long-console-password';
const BASIC = `Basic ${Buffer.from(`${USER}:${PASSWORD}`).toString('base64')}`;
const EVIL = { origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' };

let stack: ConsoleStack;
/** The `serve` processes: each killed with the test (or the file) that started it. */
const procs = useProcesses();
/** The port of a console without credentials, shared by the tests that need no setting of their own. */
let plainPort: number;
/** The `serve` processes of the tests below, started together (a start is most of a test's time); each its own. */
let started: Record<'badHosts' | 'localhost' | 'unresolvable', TestProcess>;
const consoles: FastifyInstance[] = [];

beforeAll(async () => {
  // The sandbox and the workers (in this process) run what the consoles queue.
  stack = await startConsoleStack('origin');
  started = {
    badHosts: serve([], { CONSOLE_HOSTS: 'https://console.example.test:8080/' }),
    localhost: serve(['--host', 'console.localhost']),
    unresolvable: serve(['--host', 'no-such-host.invalid'], { CONSOLE_TOKEN: 'a-long-console-token' }),
  };
  plainPort = await consoleOn({});
  // Each one listening or exited before the tests (the hook's timeout, not a test's, bounds the starts).
  await Promise.all(Object.values(started).map((p) => servePort(p, 60_000)));
});
afterAll(async () => {
  for (const app of consoles) await app.close();
  await stack?.close();
});

/**
 * A console built as `serve --port 0` builds it from the environment `serveEnv(extra)` gives (its settings, its
 * credentials, the default --host 127.0.0.1), listening on loopback in this process: its port.
 */
async function consoleOn(extra: Record<string, string>): Promise<number> {
  const config = loadConfig(serveEnv(extra).env!);
  const access = consoleAccess(config, '127.0.0.1');
  const app = await buildConsole({
    config,
    host: '127.0.0.1',
    ...(access.token ? { token: access.token } : {}),
    ...(access.basic ? { basic: access.basic } : {}),
  });
  consoles.push(app);
  await app.listen({ port: 0, host: '127.0.0.1' });
  return (app.server.address() as { port: number }).port;
}

/** The environment of `serve` on the stack's Redis, API and directories; no credentials unless `extra` sets them. */
function serveEnv(extra: Record<string, string>): CliOptions {
  const { config } = stack;
  return {
    env: {
      ...apiEnv(stack.sandbox.url),
      OWNER_COMPANY_ID: DEMO_COMPANY_ID,
      REDIS_URL: config.REDIS_URL,
      QUEUE_PREFIX: config.QUEUE_PREFIX,
      REPORT_DIR: config.REPORT_DIR,
      UPLOAD_DIR: config.UPLOAD_DIR,
      LOG_LEVEL: 'warn',
      ...extra,
    },
    unset: ['CONSOLE_TOKEN', 'CONSOLE_USER', 'CONSOLE_PASSWORD', 'CONSOLE_HOSTS', 'PUBLIC_URL'].filter(
      (k) => !(k in extra),
    ),
  };
}

/** `product-sync serve` as a process (a real server over loopback). */
const serve = (args: string[], extra: Record<string, string> = {}): TestProcess =>
  procs.spawn(['serve', '--port', '0', ...args], serveEnv(extra));

interface Answer {
  status: number;
  body: string;
}

/** One request to 127.0.0.1:port with exactly these headers (fetch would not send another Host). */
function raw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string | undefined> = {},
  body?: string | Buffer,
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const all: Record<string, string> = { host: `127.0.0.1:${port}` };
    if (body !== undefined) all['content-length'] = String(Buffer.byteLength(body));
    for (const [k, v] of Object.entries(headers)) if (v !== undefined) all[k] = v;
    const req = request({ host: '127.0.0.1', port, method, path, headers: all, agent: false });
    req.on('error', reject);
    req.on('response', (res) => {
      let text = '';
      res.on('data', (d) => (text += String(d)));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
    });
    req.end(body);
  });
}

/** A multipart body uploading `file` under `name` with the mapping epicerie-fine. */
function multipart(file: Buffer, name: string): { body: Buffer; type: string } {
  const b = 'psboundary7d9';
  const body = Buffer.concat([
    Buffer.from(
      `--${b}\r\ncontent-disposition: form-data; name="mapping"\r\n\r\nepicerie-fine\r\n` +
        `--${b}\r\ncontent-disposition: form-data; name="file"; filename="${name}"\r\ncontent-type: text/csv\r\n\r\n`,
    ),
    file,
    Buffer.from(`\r\n--${b}--\r\n`),
  ]);
  return { body, type: `multipart/form-data; boundary=${b}` };
}

const items = () =>
  stack.sandbox.handle.store.dump().tradeItems.filter((t) => t.ownerCompanyId === DEMO_COMPANY_ID && !t.archived)
    .length;

describe('the console with basic auth: cross-site changes', () => {
  let port: number;
  let runId: string;

  beforeAll(async () => {
    port = await consoleOn({ CONSOLE_USER: USER, CONSOLE_PASSWORD: PASSWORD });
    // A run through the console, as a script sends it (no Origin, no Sec-Fetch-Site, the credentials).
    const up = multipart(readFileSync(sample), 'nuit-1.csv');
    const res = await raw(port, 'POST', '/uploads', { authorization: BASIC, 'content-type': up.type }, up.body);
    expect(res.status, res.body).toBe(202);
    runId = (JSON.parse(res.body) as { id: string }).id;
    for (;;) {
      const s = JSON.parse((await raw(port, 'GET', `/runs/${runId}`, { authorization: BASIC })).body) as {
        status: string;
      };
      if (s.status !== 'queued' && s.status !== 'running') {
        expect(s.status).toBe('done');
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  });

  it("refuses a cross-site text/plain POST carrying the browser's credentials: 403, and the run is not undone", async () => {
    const active = items();
    expect(active).toBeGreaterThan(0);
    const writes = stack.sandbox.handle.counts().writes;
    const res = await raw(
      port,
      'POST',
      `/runs/${runId}/undo`,
      { ...EVIL, authorization: BASIC, 'content-type': 'text/plain' },
      'x=1',
    );
    expect(res.status).toBe(403);
    expect(JSON.parse(res.body)).toEqual({
      error:
        'refused: the request comes from another site (Sec-Fetch-Site: cross-site); the console accepts changes only from its own pages (behind a proxy, set PUBLIC_URL to the address people open)',
    });
    // Nothing started: no undo of the run, no write to the API, every item still active.
    expect((await raw(port, 'GET', `/runs/${runId}/undo`, { authorization: BASIC })).status).toBe(404);
    expect(stack.sandbox.handle.counts().writes).toBe(writes);
    expect(items()).toBe(active);
  });

  it('refuses an Origin of another site without Sec-Fetch-Site (an older browser), and Sec-Fetch-Site alone', async () => {
    for (const headers of [
      { origin: 'https://evil.example' },
      { origin: `http://127.0.0.1:${port + 1}` },
      { origin: 'null' },
      { 'sec-fetch-site': 'same-site' },
      { 'sec-fetch-site': 'cross-site', origin: `http://127.0.0.1:${port}` },
    ]) {
      const res = await raw(port, 'POST', `/runs/${runId}/undo`, { ...headers, authorization: BASIC });
      expect(res.status, JSON.stringify(headers)).toBe(403);
      expect(res.body).toMatch(/"error":"refused: the request comes from another (site|origin)/);
    }
    expect((await raw(port, 'GET', `/runs/${runId}/undo`, { authorization: BASIC })).status).toBe(404);
  });

  it('refuses a cross-site upload: 403, nothing queued, nothing kept', async () => {
    const runs = (await raw(port, 'GET', '/runs', { authorization: BASIC })).body;
    const kept = readdirSync(stack.config.UPLOAD_DIR).sort();
    // A sheet not run yet (another name on its first row): accepted, it would be queued.
    const lines = readFileSync(sample).toString('latin1').split(/\r?\n/);
    const cells = lines[1]!.split(';');
    cells[1] = 'Posted by another site';
    lines[1] = cells.join(';');
    const up = multipart(Buffer.from(lines.join('\r\n'), 'latin1'), 'evil.csv');
    const res = await raw(
      port,
      'POST',
      '/uploads',
      { ...EVIL, authorization: BASIC, 'content-type': up.type },
      up.body,
    );
    expect(res.status).toBe(403);
    expect((await raw(port, 'GET', '/runs', { authorization: BASIC })).body).toBe(runs);
    expect(readdirSync(stack.config.UPLOAD_DIR).sort()).toEqual(kept);
  });

  it('refuses a cross-site request on every state-changing route, before it asks for credentials', async () => {
    const routes: [string, string][] = [
      ['POST', '/uploads'],
      ['POST', `/runs/${runId}/rerun`],
      ['POST', `/runs/${runId}/undo`],
      ['POST', '/events/dead/some-job/redeliver'],
      ['POST', '/mapper/sheets'],
      ['POST', '/mapper/preview'],
      ['POST', '/mapper/mappings'],
      ['PUT', '/admin/queues/api/queues/import/retry/failed'],
      ['PUT', '/admin/queues/api/queues/import/pause'],
      ['DELETE', '/runs/x'],
      ['PATCH', '/runs/x'],
    ];
    for (const [method, path] of routes) {
      for (const auth of [{ authorization: BASIC }, {}]) {
        const res = await raw(port, method, path, { ...EVIL, ...auth, 'content-type': 'text/plain' }, '{}');
        expect(res.status, `${method} ${path}`).toBe(403);
      }
    }
  });

  it("accepts the console's own pages (Sec-Fetch-Site same-origin, or an Origin naming its Host) and scripts (neither)", async () => {
    const own = [
      { 'sec-fetch-site': 'same-origin', origin: `http://127.0.0.1:${port}` },
      { origin: `http://127.0.0.1:${port}` },
      { origin: `http://localhost:${port}`, host: `localhost:${port}` },
      {},
    ];
    for (const headers of own) {
      // A run not there: the route itself answers (404), the check let it through.
      const res = await raw(port, 'POST', '/runs/no-such-run/rerun', { ...headers, authorization: BASIC });
      expect(res.status, JSON.stringify(headers)).toBe(404);
    }
    // Still behind the credentials.
    expect((await raw(port, 'POST', '/runs/no-such-run/rerun', { 'sec-fetch-site': 'same-origin' })).status).toBe(401);
  });

  it('refuses a rebound Host on every route, GET included, before the credentials', async () => {
    for (const path of ['/runs', '/', '/health', '/mapper', '/admin/queues/api/queues', '/metrics']) {
      for (const auth of [{ authorization: BASIC }, {}]) {
        const res = await raw(port, 'GET', path, { host: `rebind.attacker.example:${port}`, ...auth });
        expect(res.status, path).toBe(403);
        expect(JSON.parse(res.body)).toEqual({
          error:
            'this console does not answer for "rebind.attacker.example": the Host header must name it (an IP address, localhost, the address it listens on, PUBLIC_URL\'s host, or a name listed in CONSOLE_HOSTS)',
        });
      }
    }
    for (const host of [`127.0.0.1:${port}`, `localhost:${port}`, `app.localhost:${port}`, '127.0.0.1']) {
      expect((await raw(port, 'GET', '/runs', { host, authorization: BASIC })).status, host).toBe(200);
    }
  });
});

describe('the console without credentials (the loopback default)', () => {
  it('refuses a rebound Host for the run list, and answers the names in CONSOLE_HOSTS and PUBLIC_URL', async () => {
    const port = await consoleOn({
      CONSOLE_HOSTS: 'console.example.test, .corp.example.test',
      PUBLIC_URL: 'https://ps.example.test/',
    });
    expect((await raw(port, 'GET', '/runs', { host: 'rebind.attacker.example' })).status).toBe(403);
    expect((await raw(port, 'GET', '/runs', { host: 'console.example.test.evil.example' })).status).toBe(403);
    for (const host of [
      'console.example.test',
      'CONSOLE.example.test:8443',
      'a.corp.example.test',
      'ps.example.test',
    ]) {
      expect((await raw(port, 'GET', '/runs', { host })).status, host).toBe(200);
    }
    // Behind a proxy: a page of PUBLIC_URL's origin passes, one of another listed name does not.
    const ok = await raw(port, 'POST', '/runs/no-such-run/rerun', {
      host: '127.0.0.1:8080',
      origin: 'https://ps.example.test',
    });
    expect(ok.status).toBe(404);
    const no = await raw(port, 'POST', '/runs/no-such-run/rerun', {
      host: 'console.example.test',
      origin: 'https://a.corp.example.test',
    });
    expect(no.status).toBe(403);
    // Any page may post uploads no more.
    const up = multipart(readFileSync(sample), 'drive-by.csv');
    const res = await raw(port, 'POST', '/uploads', { ...EVIL, 'content-type': up.type }, up.body);
    expect(res.status).toBe(403);
  });

  it('refuses a CONSOLE_HOSTS that is not a list of names, exit 2', async () => {
    const p = await started.badHosts.exit;
    expect(p.code).toBe(2);
    expect(p.stderr).toContain('CONSOLE_HOSTS: must be host names separated by commas');
  });

  it('a JSON body with a "__proto__" key is refused as such, not as invalid JSON; invalid JSON is said so', async () => {
    const port = plainPort;
    const json = { 'content-type': 'application/json' };
    const proto = await raw(port, 'POST', '/mapper/preview', json, '{"sheet":"a.csv","draft":{"__proto__":{"x":1}}}');
    expect(proto.status).toBe(400);
    expect(JSON.parse(proto.body)).toEqual({
      error:
        'the request body has a "__proto__" key (or a "constructor" key holding a "prototype"): refused, as copying it would change the prototype of other objects; rename the key',
    });
    const bad = await raw(port, 'POST', '/mapper/preview', json, '{"sheet":');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).error).toMatch(/^the request body is not valid JSON: /);
    // A good body still reaches the route (which refuses the sheet it names).
    const good = await raw(port, 'POST', '/mapper/preview', json, '{"sheet":"../x.csv","draft":{}}');
    expect(good.status).toBe(400);
    expect(good.body).not.toContain('JSON');
  });
});

describe.skipIf(!hasChromium)('the console and a real browser (Chromium)', () => {
  it("refuses an upload posted by another site's page, and takes one from the console's own page", async () => {
    const port = plainPort;
    const csv = (tag: string) => {
      const lines = readFileSync(sample).toString('latin1').split(/\r?\n/);
      const cells = lines[1]!.split(';');
      cells[1] = tag;
      lines[1] = cells.join(';');
      return lines.join('\r\n');
    };
    // Another site's page (another port of this machine: another origin, the same site): it posts a sheet to the
    // console as a form would, without reading the answer (no-cors), as any page may.
    const evil = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<p>hello</p>'));
    await new Promise<void>((r) => evil.listen(0, '127.0.0.1', r));
    const evilPort = (evil.address() as { port: number }).port;
    const post = (url: string, text: string, name: string, mode: 'no-cors' | 'same-origin') =>
      `(async () => { const f = new FormData(); f.append('mapping', 'epicerie-fine');
        f.append('file', new Blob([${JSON.stringify(text)}]), ${JSON.stringify(name)});
        const r = await fetch(${JSON.stringify(url)}, { method: 'POST', body: f, mode: ${JSON.stringify(mode)} });
        return r.type === 'opaque' ? 'opaque' : r.status; })()`;
    const runs = async () =>
      (JSON.parse((await raw(port, 'GET', '/runs')).body) as { runs: { fileName: string }[] }).runs.map(
        (r) => r.fileName,
      );
    try {
      await withChromium({}, async (browser) => {
        const page = await browser.newPage();
        await page.goto(`http://127.0.0.1:${evilPort}/`);
        const sent = await page.evaluate(
          post(`http://127.0.0.1:${port}/uploads`, csv('From another site'), 'drive-by.csv', 'no-cors'),
        );
        expect(sent).toBe('opaque');
        // The console's own page, the same browser: accepted.
        await page.goto(`http://127.0.0.1:${port}/`);
        const status = await page.evaluate(
          post('/uploads', csv('From the console page'), 'own-page.csv', 'same-origin'),
        );
        expect(status).toBe(202);
      });
    } finally {
      evil.close();
    }
    const names = await runs();
    expect(names).toContain('own-page.csv');
    expect(names).not.toContain('drive-by.csv');
  }, 90_000);
});

describe('serve --host', () => {
  it('listens on loopback for a *.localhost name, as browsers resolve it, and answers that name', async () => {
    const p = started.localhost;
    const port = await servePort(p);
    expect(port, p.out.stderr).not.toBeNull();
    expect(p.out.stdout).toContain(`console on http://console.localhost:${port}/`);
    expect((await raw(port!, 'GET', '/runs', { host: `console.localhost:${port}` })).status).toBe(200);
  });

  it('ends an unresolvable name with a configuration error naming it (exit 2), not an unexpected failure', async () => {
    const p = await started.unresolvable.exit;
    expect(p.code).toBe(2);
    expect(p.stderr).toMatch(
      /^product-sync: cannot start the console on --host no-such-host\.invalid: the name no-such-host\.invalid does not resolve to an address of this machine \((ENOTFOUND|EAI_AGAIN)\): .* \[PS_ERR_CONFIG_INVALID\]\n$/,
    );
  });
});
