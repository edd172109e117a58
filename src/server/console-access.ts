/**
 * Who may use the console. It uploads sheets that are pushed to the product API with this process's credential, so it
 * is closed by default: without CONSOLE_TOKEN or CONSOLE_USER + CONSOLE_PASSWORD it listens on the loopback interface
 * only, and refuses any other address unless told `--insecure-no-auth` (then says so at every start).
 */
import { timingSafeEqual } from 'node:crypto';
import { isIP } from 'node:net';
import type { Config } from '../config.ts';
import { ProductSyncError } from '../errors.ts';

/** The console's credentials, and the warning to print at start (open on a non-loopback address). */
export interface ConsoleAccess {
  token?: string;
  basic?: { user: string; password: string };
  warning?: string;
}

const HOW =
  'set CONSOLE_TOKEN (a bearer token, for scripts) or CONSOLE_USER and CONSOLE_PASSWORD (basic auth, for people in a browser)';

/** True for an address only this machine can reach: 127.0.0.0/8, ::1 (also IPv4-mapped), localhost. */
export function isLoopback(host: string): boolean {
  const h = host
    .trim()
    .toLowerCase()
    .replace(/^\[(.*)\]$/, '$1');
  if (h === 'localhost' || h.endsWith('.localhost')) return true;
  if (isIP(h) === 4) return h.startsWith('127.');
  if (isIP(h) === 6) {
    // The URL parser writes an IPv6 address in its one short form (an IPv4-mapped 127.x.y.z as ::ffff:7fxx:…).
    const n = new URL(`http://[${h}]/`).hostname;
    return n === '[::1]' || /^\[::ffff:7f[0-9a-f]{2}:/.test(n);
  }
  return false;
}

/** The console's access for listening on `host`; PS_ERR_CONFIG_INVALID (exit 2) when it would be open to others. */
export function consoleAccess(config: Config, host: string, opts: { insecureNoAuth?: boolean } = {}): ConsoleAccess {
  if (Boolean(config.CONSOLE_USER) !== Boolean(config.CONSOLE_PASSWORD)) {
    const [set, unset] = config.CONSOLE_USER
      ? ['CONSOLE_USER', 'CONSOLE_PASSWORD']
      : ['CONSOLE_PASSWORD', 'CONSOLE_USER'];
    throw new ProductSyncError(
      'PS_ERR_CONFIG_INVALID',
      `${set} is set but ${unset} is not: basic auth of the console needs both`,
    );
  }
  const access: ConsoleAccess = {
    ...(config.CONSOLE_TOKEN ? { token: config.CONSOLE_TOKEN } : {}),
    ...(config.CONSOLE_USER && config.CONSOLE_PASSWORD
      ? { basic: { user: config.CONSOLE_USER, password: config.CONSOLE_PASSWORD } }
      : {}),
  };
  if (access.token || access.basic || isLoopback(host)) return access;
  if (!opts.insecureNoAuth) {
    throw new ProductSyncError(
      'PS_ERR_CONFIG_INVALID',
      `the console would listen on ${host} without authentication, open to anyone who reaches it: ${HOW}; or listen on 127.0.0.1 (the default --host); or give --insecure-no-auth to run it open anyway`,
    );
  }
  return {
    warning: `WARNING: the console listens on ${host} without authentication (--insecure-no-auth): anyone who reaches it can upload sheets and run imports with this process's API credential; ${HOW}`,
  };
}

function same(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** True when an Authorization header carries the bearer token or the basic credentials of `access` (or it has none). */
export function authorizationMatches(header: string | undefined, access: ConsoleAccess): boolean {
  if (!access.token && !access.basic) return true;
  const auth = header ?? '';
  if (access.token !== undefined && auth.startsWith('Bearer ') && same(auth.slice(7), access.token)) return true;
  if (access.basic && auth.startsWith('Basic ')) {
    const [user, ...rest] = Buffer.from(auth.slice(6), 'base64').toString('utf8').split(':');
    return same(user ?? '', access.basic.user) && same(rest.join(':'), access.basic.password);
  }
  return false;
}

/**
 * Who may read the worker's `/metrics` (METRICS_PORT): the console's credentials when set; without them, only on a
 * loopback METRICS_HOST (PS_ERR_CONFIG_INVALID, exit 2, otherwise).
 */
export function metricsAccess(config: Config, host: string): ConsoleAccess {
  const access = consoleAccess(config, '127.0.0.1');
  if (access.token || access.basic || isLoopback(host)) return access;
  throw new ProductSyncError(
    'PS_ERR_CONFIG_INVALID',
    `the worker's /metrics would listen on METRICS_HOST=${host} without authentication: ${HOW} (Prometheus sends either), or leave METRICS_HOST unset (127.0.0.1)`,
  );
}
