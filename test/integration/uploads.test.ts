import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import { loadConfig, type Config } from '../../src/config.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { buildConsole } from '../../src/server/app.ts';
import { queueEnv } from '../helpers/env.ts';

// Uploads over HTTP (no browser, no workers: nothing accepted here needs to run). Refused or aborted uploads leave
// nothing in UPLOAD_DIR, not even a hidden `.part` file.
const sample = readFileSync(new URL('../../samples/epicerie-fine.csv', import.meta.url));
const prefix = `ps-uploads-${process.pid}`;
let dir: string;
let config: Config;
let app: FastifyInstance;
let port: number;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ps-uploads-'));
  // No API: nothing accepted here runs.
  config = loadConfig(
    queueEnv('http://127.0.0.1:9', inject('redisUrl'), prefix, dir, { OWNER_COMPANY_ID: DEMO_COMPANY_ID }),
  );
  app = await buildConsole({ config, maxUploadBytes: 64 * 1024 * 1024 });
  await app.listen({ port: 0, host: '127.0.0.1' });
  port = (app.server.address() as { port: number }).port;
});
afterAll(async () => {
  await app?.close();
  const r = new Redis(inject('redisUrl'));
  const keys = await r.keys(`{${prefix}}*`);
  if (keys.length > 0) await r.del(...keys);
  r.disconnect();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  for (const f of readdirSync(config.UPLOAD_DIR)) rmSync(join(config.UPLOAD_DIR, f), { force: true });
});

/** Every entry of UPLOAD_DIR, hidden ones included. */
const stored = (): string[] => readdirSync(config.UPLOAD_DIR).sort();

async function until(check: () => boolean, ms = 5000): Promise<void> {
  const t0 = Date.now();
  while (!check()) {
    if (Date.now() - t0 > ms) return;
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('console uploads', () => {
  it('refuses an upload with two files and keeps neither of them', async () => {
    const form = new FormData();
    form.append('mapping', 'epicerie-fine');
    form.append('file', new Blob([sample]), 'one.csv');
    form.append('file', new Blob([sample]), 'two.csv');
    const res = await fetch(`http://127.0.0.1:${port}/uploads`, { method: 'POST', body: form });
    expect(res.status).toBe(400);
    expect(stored()).toEqual([]);
  });

  it('removes the partial file of an upload whose client goes away mid-body', async () => {
    const boundary = 'ps-boundary-abort';
    const head = Buffer.from(
      `--${boundary}\r\nContent-Disposition: form-data; name="mapping"\r\n\r\nepicerie-fine\r\n` +
        `--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="big.csv"\r\nContent-Type: text/csv\r\n\r\n`,
    );
    const socket = connect(port, '127.0.0.1');
    await new Promise<void>((r) => socket.once('connect', () => r()));
    socket.on('error', () => {});
    // Announces 32 MB, sends the head and 2 MB of the file, then disconnects.
    socket.write(
      `POST /uploads HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: multipart/form-data; boundary=${boundary}\r\nContent-Length: ${32 * 1024 * 1024}\r\n\r\n`,
    );
    socket.write(head);
    socket.write(sample);
    for (let i = 0; i < 32; i++) socket.write(Buffer.alloc(64 * 1024, 'a'));
    // The server has started the file (a `.part` exists) before the client goes away.
    await until(() => stored().some((f) => f.endsWith('.part')));
    expect(stored().some((f) => f.endsWith('.part'))).toBe(true);
    socket.destroy();
    await until(() => stored().length === 0);
    expect(stored()).toEqual([]);
  });

  it('still keeps the one file of a good upload (under a generated name)', async () => {
    const form = new FormData();
    form.append('mapping', 'epicerie-fine');
    form.append('file', new Blob([sample]), 'good.csv');
    const res = await fetch(`http://127.0.0.1:${port}/uploads`, { method: 'POST', body: form });
    expect(res.status).toBe(202);
    expect(stored()).toHaveLength(1);
    expect(stored()[0]).toMatch(/^[0-9a-f-]{36}\.csv$/);
  });
});
