// The fence of a run's writes (api/fence.ts) is checked where undici is about to write a request to its socket, not
// only where the request was dispatched: a write queued behind another (one connection) while its holder lost the
// lease is refused, and the server never sees it.
import { createServer, type Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Fence } from '../src/api/fence.ts';
import { DEFAULT_TIMEOUTS, LazyDispatcher, sendRequest } from '../src/api/http.ts';
import { LeaseLostError } from '../src/errors.ts';

let server: Server;
let url: string;
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    seen.push(`${req.method} ${req.url}`);
    req.resume();
    setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), 300);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

/** A fence that holds until `lose()`. */
function switchFence(): Fence & { lose(): void; readies: number } {
  let lost = false;
  const f = {
    readies: 0,
    lose: () => void (lost = true),
    check: () => {
      if (lost) throw new LeaseLostError('taken over in the test');
    },
    ready: async () => {
      f.readies++;
      f.check();
    },
  };
  return f;
}

describe('the write fence', () => {
  it('refuses a request that passed its check at dispatch but waited for a connection while the lease was lost', async () => {
    seen.length = 0;
    const dispatcher = new LazyDispatcher({ connections: 1, pipelining: 1 });
    const fence = switchFence();
    const send = (path: string) =>
      sendRequest(dispatcher, {
        method: 'POST',
        url: `${url}${path}`,
        headers: { 'content-type': 'application/json' },
        body: '{}',
        timeouts: DEFAULT_TIMEOUTS,
        fence,
      });
    const first = send('/first');
    const second = send('/second');
    // Both passed ready() at dispatch; the second waits in the pool for the one connection. The lease is lost once the
    // server has the first (however long connecting took), while the second still waits.
    for (let i = 0; i < 500 && seen.length === 0; i++) await new Promise((r) => setTimeout(r, 10));
    expect(seen).toEqual(['POST /first']);
    expect(fence.readies).toBe(2);
    fence.lose();
    await expect(first).resolves.toMatchObject({ status: 200 });
    await expect(second).rejects.toBeInstanceOf(LeaseLostError);
    expect(seen).toEqual(['POST /first']);
    await dispatcher.close();
  });

  it('sends reads and unfenced requests as before', async () => {
    seen.length = 0;
    const dispatcher = new LazyDispatcher({ connections: 1 });
    await expect(
      sendRequest(dispatcher, { method: 'GET', url: `${url}/read`, headers: {}, timeouts: DEFAULT_TIMEOUTS }),
    ).resolves.toMatchObject({ status: 200 });
    expect(seen).toEqual(['GET /read']);
    await dispatcher.close();
  });
});
