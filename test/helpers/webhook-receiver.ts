// A webhook receiver over loopback (node:http) that checks every delivery with the `standardwebhooks` package, an
// implementation independent of ours: what it records was signed right, or is marked not verified.
import { createServer, type IncomingMessage } from 'node:http';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

/** One delivery as received. */
export interface Received {
  id: string;
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
  verified: boolean;
  status: number;
}

/** A running receiver: `url`, its `secret`, what it got, and how it answers. */
export interface Receiver {
  url: string;
  secret: string;
  received: Received[];
  /** Answers 500 to the first `n` deliveries of each event id (then 204). */
  failFirst(n: number): void;
  /** Answers `status` to every delivery (null: back to normal). */
  failAll(status: number | null): void;
  /** The verified deliveries accepted (2xx), one per event id. */
  accepted(): Map<string, Received>;
  waitFor(check: (r: Receiver) => boolean, ms?: number): Promise<void>;
  close(): Promise<void>;
}

/** A new whsec_ secret. */
export function newSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/** The whole body of a request, as text. */
export function bodyOf(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

export async function startReceiver(secret = newSecret()): Promise<Receiver> {
  const wh = new Webhook(secret);
  const received: Received[] = [];
  const seen = new Map<string, number>();
  let failFirst = 0;
  let failAll: number | null = null;
  const server = createServer(async (req, res) => {
    const body = await bodyOf(req);
    const headers = Object.fromEntries(
      Object.entries(req.headers).map(([k, v]) => [k, Array.isArray(v) ? v.join(',') : (v ?? '')]),
    );
    let verified = false;
    let payload: { type?: string; timestamp?: string; data?: Record<string, unknown> } = {};
    try {
      payload = wh.verify(body, headers) as typeof payload;
      verified = true;
    } catch {
      payload = JSON.parse(body || '{}') as typeof payload;
    }
    const id = headers['webhook-id'] ?? '';
    const n = (seen.get(id) ?? 0) + 1;
    seen.set(id, n);
    const status = !verified ? 401 : failAll !== null ? failAll : n <= failFirst ? 500 : 204;
    received.push({
      id,
      type: payload.type ?? '',
      timestamp: payload.timestamp ?? '',
      data: payload.data ?? {},
      verified,
      status,
    });
    res.writeHead(status).end();
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const r: Receiver = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    secret,
    received,
    failFirst: (n) => void (failFirst = n),
    failAll: (s) => void (failAll = s),
    accepted() {
      const m = new Map<string, Received>();
      for (const x of received) if (x.verified && x.status < 300) m.set(x.id, x);
      return m;
    },
    async waitFor(check, ms = 20_000) {
      const until = Date.now() + ms;
      while (!check(r)) {
        if (Date.now() > until) throw new Error(`receiver: condition not met within ${ms} ms (${received.length} got)`);
        await new Promise((res) => setTimeout(res, 25));
      }
    },
    close: () => new Promise<void>((res) => server.close(() => res())),
  };
  return r;
}
