/**
 * Which network addresses a feed's source may reach: a host that resolves to a loopback, private, link-local, CGNAT,
 * cloud-metadata or otherwise non-public address (IPv4 and IPv6, v4-mapped, v4-translated, NAT64 and 6to4 forms
 * included) is refused unless
 * it is listed in SOURCE_ALLOW_HOSTS. The caller connects to the address checked here (never resolves the name again),
 * so a DNS answer that changes between the check and the connection (rebinding) cannot slip through.
 */
import { lookup } from 'node:dns/promises';
import { isIP } from 'node:net';
import { ProductSyncError } from '../errors.ts';

/** IPv4 ranges no source may reach unless allowed: [first address, prefix length, what it is]. */
const V4_BLOCKED: readonly [string, number, string][] = [
  ['0.0.0.0', 8, 'this network'],
  ['10.0.0.0', 8, 'private'],
  ['100.64.0.0', 10, 'carrier-grade NAT (CGNAT)'],
  ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local (cloud metadata)'],
  ['172.16.0.0', 12, 'private'],
  ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.168.0.0', 16, 'private'],
  ['198.18.0.0', 15, 'benchmarking'],
  ['224.0.0.0', 4, 'multicast'],
  ['240.0.0.0', 4, 'reserved'],
];

function v4Number(address: string): number {
  return address.split('.').reduce((n, part) => n * 256 + Number(part), 0);
}

function v4Blocked(address: string): string | null {
  const n = v4Number(address);
  for (const [first, bits, what] of V4_BLOCKED) {
    const size = 2 ** (32 - bits);
    const start = v4Number(first);
    if (n >= start && n < start + size) return what;
  }
  return null;
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted IPv4 part included). */
function v6Groups(address: string): number[] {
  let text = address.replace(/^\[|\]$/g, '').replace(/%.*$/, '');
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (dotted) {
    const n = v4Number(dotted[1]!);
    text = text.slice(0, -dotted[1]!.length) + `${(n >>> 16).toString(16)}:${(n & 0xffff).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const parse = (s: string | undefined) => (s ? s.split(':').map((g) => parseInt(g, 16)) : []);
  const h = parse(head);
  const t = parse(tail);
  return tail === undefined ? h : [...h, ...new Array<number>(8 - h.length - t.length).fill(0), ...t];
}

/** Why `address` (an IPv4 or IPv6 literal) may not be reached, or null when it is a public address. */
export function blockedReason(address: string): string | null {
  const kind = isIP(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  if (kind === 4) return v4Blocked(address);
  if (kind !== 6) return 'not an IP address';
  const g = v6Groups(address);
  const embeddedV4 = () => `${g[6]! >> 8}.${g[6]! & 255}.${g[7]! >> 8}.${g[7]! & 255}`;
  if (g.every((x) => x === 0)) return 'unspecified';
  if (g.slice(0, 7).every((x) => x === 0) && g[7] === 1) return 'loopback';
  // ::ffff:a.b.c.d (v4-mapped), ::a.b.c.d (v4-compatible), 64:ff9b::a.b.c.d (NAT64): judged as the IPv4 inside.
  if (g.slice(0, 5).every((x) => x === 0) && (g[5] === 0xffff || g[5] === 0)) {
    const inner = v4Blocked(embeddedV4());
    return inner ? `${inner} (IPv4 inside IPv6)` : null;
  }
  // ::ffff:0:a.b.c.d (IPv4-translated, SIIT): judged as the IPv4 inside.
  if (g.slice(0, 4).every((x) => x === 0) && g[4] === 0xffff && g[5] === 0) {
    const inner = v4Blocked(embeddedV4());
    return inner ? `${inner} (IPv4 inside IPv6)` : null;
  }
  // 64:ff9b::/96 (well-known NAT64) and 64:ff9b:1::/48 (local-use NAT64, which a network may route to its own IPv4).
  if (g[0] === 0x64 && g[1] === 0xff9b && (g.slice(2, 6).every((x) => x === 0) || g[2] === 1)) {
    const inner = v4Blocked(embeddedV4());
    if (inner) return `${inner} (NAT64)`;
    return g[2] === 1 ? 'local-use NAT64' : null;
  }
  // 2002:a.b.c.d::/48 (6to4): the IPv4 it carries.
  if (g[0] === 0x2002) {
    const inner = v4Blocked(`${g[1]! >> 8}.${g[1]! & 255}.${g[2]! >> 8}.${g[2]! & 255}`);
    if (inner) return `${inner} (6to4)`;
  }
  if ((g[0]! & 0xfe00) === 0xfc00) return 'unique local (private; cloud metadata fd00:ec2::254)';
  if ((g[0]! & 0xffc0) === 0xfe80) return 'link-local';
  if ((g[0]! & 0xffc0) === 0xfec0) return 'site-local';
  if ((g[0]! & 0xff00) === 0xff00) return 'multicast';
  if (g[0] === 0x2001 && g[1] === 0x0db8) return 'documentation';
  return null;
}

/** SOURCE_ALLOW_HOSTS as a list: comma-separated host names or addresses, trimmed, lower-case. */
export function parseAllowHosts(value: string | undefined): string[] {
  return (value ?? '')
    .split(',')
    .map((h) =>
      h
        .trim()
        .toLowerCase()
        .replace(/^\[|\]$/g, ''),
    )
    .filter(Boolean);
}

/** One address to connect to, and its family. */
export interface CheckedAddress {
  address: string;
  family: 4 | 6;
}

/**
 * Resolves `host` once and returns the address to connect to. Refuses (PS_ERR_SOURCE_REFUSED) when any address it
 * resolves to is not public and neither the host nor that address is in `allow`; a name that does not resolve is
 * PS_ERR_SOURCE_UNAVAILABLE. Connect to the returned address (keeping `host` for TLS's server name), never to `host`.
 */
export async function checkHostAddress(host: string, allow: readonly string[]): Promise<CheckedAddress> {
  const bare = host.replace(/^\[|\]$/g, '').toLowerCase();
  const literal = isIP(bare);
  let addresses: CheckedAddress[];
  if (literal) addresses = [{ address: bare, family: literal as 4 | 6 }];
  else {
    try {
      addresses = (await lookup(bare, { all: true, verbatim: true })).map((a) => ({
        address: a.address,
        family: a.family as 4 | 6,
      }));
    } catch (err) {
      throw new ProductSyncError(
        'PS_ERR_SOURCE_UNAVAILABLE',
        `${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
  }
  if (addresses.length === 0) throw new ProductSyncError('PS_ERR_SOURCE_UNAVAILABLE', `${host} has no address`);
  const hostAllowed = allow.includes(bare);
  for (const a of addresses) {
    const reason = blockedReason(a.address);
    if (reason && !hostAllowed && !allow.includes(a.address.toLowerCase()))
      throw new ProductSyncError(
        'PS_ERR_SOURCE_REFUSED',
        `${host} resolves to ${a.address}, a ${reason} address: refused (list the host in SOURCE_ALLOW_HOSTS to allow it)`,
      );
  }
  return addresses[0]!;
}

/** `checkHostAddress` for callers that only need the address string (the SFTP source). */
export async function checkHostAllowed(host: string, allow: readonly string[]): Promise<string> {
  return (await checkHostAddress(host, allow)).address;
}
