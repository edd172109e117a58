/**
 * The console answers only its own pages (docs/operations.md, "The console answers only its own pages"):
 * - every request's `Host` must name the console — an IP address, `localhost` or a `*.localhost` name, the address it
 *   listens on, PUBLIC_URL's host, or a name in CONSOLE_HOSTS — else 403 (DNS rebinding: a page whose name was made to
 *   resolve to the console reaches it under that name);
 * - a request that changes anything (any method but GET, HEAD and OPTIONS) must come from the console's own pages:
 *   `Sec-Fetch-Site: same-origin` when the browser sends it, else an `Origin` whose host and port are the request's
 *   `Host` (or PUBLIC_URL's origin), else 403. A request with neither header is not a browser's (every browser sends
 *   `Origin` on a POST): scripts and curl pass, and carry the console's credentials when it has some.
 */
import { isIP } from 'node:net';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';

/** What the checks compare with. */
export interface ConsoleOrigin {
  /** The address the console listens on (`--host`). */
  bindHost?: string;
  /** PUBLIC_URL: its host is the console's, its origin the one its pages run under behind a proxy. */
  publicUrl?: string;
  /** CONSOLE_HOSTS: names (comma-separated); one starting with a dot names a domain and every name under it. */
  consoleHosts?: string;
}

const SAFE_METHODS = new Set(['GET', 'HEAD', 'OPTIONS']);
const HOST_HEADER = /^(\[[0-9a-f:.]+\]|[a-z0-9_.-]+)(?::(\d{1,5}))?$/i;

/** A Host header's name (lower case, brackets and a final dot removed) and port; null when it is not one. */
export function parseHost(value: string | undefined): { name: string; port: string } | null {
  const m = HOST_HEADER.exec((value ?? '').trim());
  if (!m) return null;
  const name = m[1]!
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1')
    .replace(/\.$/, '');
  return name ? { name, port: m[2] ?? '' } : null;
}

/** The names CONSOLE_HOSTS lists (lower case, without a final dot). */
export function listedHosts(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((h) => h.trim().toLowerCase().replace(/\.$/, ''))
    .filter(Boolean);
}

/** Whether a Host name is the console's. */
export function hostAllowed(name: string, origin: ConsoleOrigin): boolean {
  // An address cannot be rebound: a page reaching the console by address has the console's own origin.
  if (isIP(name) !== 0) return true;
  if (name === 'localhost' || name.endsWith('.localhost')) return true;
  const own = [origin.bindHost, origin.publicUrl ? new URL(origin.publicUrl).hostname : undefined]
    .filter((h): h is string => Boolean(h))
    .map((h) => h.toLowerCase().replace(/^\[(.*)\]$/, '$1'));
  if (own.includes(name)) return true;
  return listedHosts(origin.consoleHosts).some((h) =>
    h.startsWith('.') ? name.endsWith(h) || name === h.slice(1) : name === h,
  );
}

/** `host:port` of an origin (the port its scheme implies when it names none); null when it is not an origin. */
function originAuthority(value: string): string | null {
  try {
    const u = new URL(value);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') return null;
    return `${u.hostname}:${u.port || (u.protocol === 'https:' ? '443' : '80')}`;
  } catch {
    return null;
  }
}

/** `host:port` of a Host header (port 80 when it names none: the console speaks plain HTTP). */
function hostAuthority(value: string | undefined): string | null {
  const h = parseHost(value);
  if (!h) return null;
  return `${isIP(h.name) === 6 ? `[${h.name}]` : h.name}:${h.port || '80'}`;
}

/** Why a state-changing request is refused; null when it comes from the console's own pages (or from no browser). */
export function crossSiteReason(req: FastifyRequest, origin: ConsoleOrigin): string | null {
  const site = req.headers['sec-fetch-site'];
  const given = req.headers.origin;
  if (typeof site === 'string' && site !== '') {
    if (site === 'same-origin') return null;
    return `the request comes from another site (Sec-Fetch-Site: ${site})`;
  }
  if (typeof given !== 'string' || given === '') return null;
  const from = originAuthority(given);
  if (from !== null) {
    if (from === hostAuthority(req.headers.host)) return null;
    if (origin.publicUrl && from === originAuthority(origin.publicUrl)) return null;
  }
  return `the request comes from another origin (Origin: ${given.slice(0, 200)})`;
}

/** Registers both checks first of every request (before the credentials are asked for). */
export function registerSameOrigin(app: FastifyInstance, origin: ConsoleOrigin): void {
  app.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
    const host = parseHost(req.headers.host);
    if (!host || !hostAllowed(host.name, origin)) {
      const named = host ? `"${host.name}"` : 'no valid Host header';
      return reply.code(403).send({
        error: `this console does not answer for ${named}: the Host header must name it (an IP address, localhost, the address it listens on, PUBLIC_URL's host, or a name listed in CONSOLE_HOSTS)`,
      });
    }
    if (SAFE_METHODS.has(req.method)) return;
    const why = crossSiteReason(req, origin);
    if (why)
      return reply.code(403).send({
        error: `refused: ${why}; the console accepts changes only from its own pages (behind a proxy, set PUBLIC_URL to the address people open)`,
      });
  });
}
