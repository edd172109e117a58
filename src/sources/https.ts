/**
 * The `https` source: one file at a URL. Each listing is a conditional GET (If-None-Match / If-Modified-Since with
 * the validators of the version last imported): an unchanged file answers 304 and runs nothing. A changed one is
 * downloaded once, while listing, into a spool file (size limit checked while it streams), and `fetch` hands that copy
 * over. Redirects are followed here, a few at most, each checked like the URL itself (address-guard.ts); the connection
 * goes to the address checked, and TLS is verified (against the system's CAs, or the feed's `ca` file).
 */
import { copyFile, mkdir, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { Agent, request, type Dispatcher } from 'undici';
import { ProductSyncError } from '../errors.ts';
import { addSecret } from '../redact.ts';
import { checkHostAddress } from './address-guard.ts';
import { writeHashed } from './hash-file.ts';
import type { Fetched, HttpsSourceConfig, Source, SourceFile } from './source.ts';

const MAX_REDIRECTS = 5;

export interface HttpsSourceOptions {
  /** SOURCE_ALLOW_HOSTS, parsed (address-guard.ts). */
  allowHosts: readonly string[];
  /** Where the header values are read (the names in `headers`). */
  env?: NodeJS.ProcessEnv;
  /** The size limit when the feed sets none. */
  maxBytes: number;
  /** The version last imported (its `etag` carries the validators): sent as a conditional GET. */
  known?: SourceFile | null;
}

/** The URL without credentials, query or fragment (which may hold tokens): what logs and the console show. */
export function httpsLabel(url: string): string {
  const u = new URL(url);
  return `${u.protocol}//${u.host}${u.pathname}`;
}

/**
 * The version tag of an answer: its ETag, else `lm:<Last-Modified>`, else `sha256:<hex>` of its bytes (a server that
 * gives no validator is compared by content).
 */
function versionTag(headers: Dispatcher.ResponseData['headers'], sha256: string): string {
  const etag = one(headers.etag);
  if (etag) return etag;
  const lm = one(headers['last-modified']);
  return lm ? `lm:${lm}` : `sha256:${sha256}`;
}

function one(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}

/** The conditional headers of a known version. */
function conditional(known: SourceFile | null | undefined): Record<string, string> {
  const tag = known?.etag;
  if (!tag || tag.startsWith('sha256:')) return {};
  return tag.startsWith('lm:') ? { 'if-modified-since': tag.slice(3) } : { 'if-none-match': tag };
}

export function openHttpsSource(cfg: HttpsSourceConfig, options: HttpsSourceOptions): Source {
  const env = options.env ?? process.env;
  const maxBytes = cfg.maxBytes ?? options.maxBytes;
  const label = httpsLabel(cfg.url);
  const name = decodeURIComponent(basename(new URL(cfg.url).pathname)) || 'download';
  let agent: Agent | undefined;
  let spool: { dir: string; file: SourceFile; fetched: Fetched } | undefined;

  const dispatcher = async (): Promise<Agent> => {
    if (agent) return agent;
    const ca = cfg.ca ? await readFile(cfg.ca).catch(() => null) : undefined;
    if (ca === null) throw new ProductSyncError('PS_ERR_SOURCE_UNAVAILABLE', `the ca file ${cfg.ca} cannot be read`);
    agent = new Agent({
      headersTimeout: 30_000,
      bodyTimeout: 60_000,
      connect: {
        ...(ca ? { ca } : {}),
        rejectUnauthorized: true,
        // Every connection (the URL's, each redirect's) resolves its host here, once, and connects to the address
        // that passed the check: no second lookup an attacker's DNS could answer differently.
        lookup: (hostname, opts, callback) => {
          checkHostAddress(hostname, options.allowHosts).then(
            (a) =>
              (opts as { all?: boolean }).all
                ? (callback as (e: null, addrs: { address: string; family: number }[]) => void)(null, [a])
                : callback(null, a.address, a.family),
            (err: Error) => callback(err as NodeJS.ErrnoException, '', 0),
          );
        },
      },
    });
    return agent;
  };

  const headerValues = (): Record<string, string> => {
    const out: Record<string, string> = {};
    for (const [header, variable] of Object.entries(cfg.headers ?? {})) {
      const value = env[variable];
      if (value === undefined || value === '')
        throw new ProductSyncError(
          'PS_ERR_CONFIG_INVALID',
          `${label}: header ${header} names the environment variable ${variable}, which is not set`,
        );
      // Kept out of any message or log line that might quote it (redact.ts), as the SFTP credentials are.
      addSecret(value);
      out[header] = value;
    }
    return out;
  };

  /** GET with redirects followed by hand, each hop's host checked; the answer of the last hop. */
  const get = async (extra: Record<string, string>, signal?: AbortSignal): Promise<Dispatcher.ResponseData> => {
    const secret = headerValues();
    let url = new URL(cfg.url);
    for (let hop = 0; ; hop++) {
      // An IP literal is connected to without any lookup: it is checked here (a name is checked by the lookup too).
      await checkHostAddress(url.hostname, options.allowHosts);
      // The configured headers (credentials) go to the feed's own origin only, never to where it redirects elsewhere.
      const sameOrigin = url.origin === new URL(cfg.url).origin;
      let res: Dispatcher.ResponseData;
      try {
        res = await request(url, {
          method: 'GET',
          dispatcher: await dispatcher(),
          headers: { ...(sameOrigin ? secret : {}), ...extra },
          ...(signal ? { signal } : {}),
        });
      } catch (err) {
        throw unreachable(err);
      }
      if (![301, 302, 303, 307, 308].includes(res.statusCode)) return res;
      await res.body.dump();
      const location = one(res.headers.location);
      if (!location)
        throw new ProductSyncError('PS_ERR_SOURCE_UNAVAILABLE', `${label} redirects (${res.statusCode}) nowhere`);
      if (hop + 1 > MAX_REDIRECTS)
        throw new ProductSyncError('PS_ERR_SOURCE_REFUSED', `${label} redirects more than ${MAX_REDIRECTS} times`);
      const next = new URL(location, url);
      if (next.protocol !== 'https:')
        throw new ProductSyncError('PS_ERR_SOURCE_REFUSED', `${label} redirects to a non-HTTPS URL: refused`);
      url = next;
    }
  };

  const unreachable = (err: unknown): ProductSyncError => {
    if (err instanceof ProductSyncError) return err;
    // The lookup's refusal comes back wrapped by the socket.
    const cause = (err as { cause?: unknown }).cause;
    if (cause instanceof ProductSyncError) return cause;
    const e = err as NodeJS.ErrnoException;
    return new ProductSyncError('PS_ERR_SOURCE_UNAVAILABLE', `${label} cannot be reached (${e.code ?? e.message})`);
  };

  const download = async (res: Dispatcher.ResponseData, signal?: AbortSignal) => {
    const length = Number(one(res.headers['content-length']) ?? NaN);
    if (length > maxBytes) {
      res.body.destroy();
      throw new ProductSyncError(
        'PS_ERR_SOURCE_TOO_LARGE',
        `${label} is ${length} bytes, more than its limit of ${maxBytes}: not downloaded`,
      );
    }
    const dir = await mkdtemp(join(tmpdir(), 'ps-https-'));
    try {
      const fetched = await writeHashed(res.body, join(dir, name), {
        maxBytes,
        what: label,
        ...(signal ? { signal } : {}),
      });
      const lm = Date.parse(one(res.headers['last-modified']) ?? '');
      const file: SourceFile = {
        name,
        size: fetched.size,
        mtimeMs: Number.isNaN(lm) ? null : lm,
        etag: versionTag(res.headers, fetched.sha256),
        sha256: fetched.sha256,
      };
      return { dir, file, fetched };
    } catch (err) {
      await rm(dir, { recursive: true, force: true });
      if (err instanceof ProductSyncError) throw err;
      throw unreachable(err);
    }
  };

  const dropSpool = async () => {
    if (spool) await rm(spool.dir, { recursive: true, force: true });
    spool = undefined;
  };

  return {
    label,
    async list(signal) {
      await dropSpool();
      const res = await get(conditional(options.known), signal);
      if (res.statusCode === 304 && options.known) {
        await res.body.dump();
        return [options.known];
      }
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new ProductSyncError('PS_ERR_SOURCE_UNAVAILABLE', `${label} answered ${res.statusCode}`);
      }
      spool = await download(res, signal);
      return [spool.file];
    },
    async fetch(file, dest, fetchOptions) {
      if (spool && spool.file.etag === file.etag) {
        if (spool.fetched.size > fetchOptions.maxBytes)
          throw new ProductSyncError(
            'PS_ERR_SOURCE_TOO_LARGE',
            `${label} is ${spool.fetched.size} bytes, more than its limit of ${fetchOptions.maxBytes}`,
          );
        await mkdir(dirname(dest), { recursive: true });
        await copyFile(join(spool.dir, name), dest);
        return spool.fetched;
      }
      // Not the version listed last (a fetch without a listing): downloaded again, whatever it is now.
      const res = await get({}, fetchOptions.signal);
      if (res.statusCode !== 200) {
        await res.body.dump();
        throw new ProductSyncError('PS_ERR_SOURCE_UNAVAILABLE', `${label} answered ${res.statusCode}`);
      }
      const got = await download(res, fetchOptions.signal);
      try {
        await mkdir(dirname(dest), { recursive: true });
        await copyFile(join(got.dir, name), dest);
        return got.fetched;
      } finally {
        await rm(got.dir, { recursive: true, force: true });
      }
    },
    async close() {
      await dropSpool();
      // Destroyed, not closed: a close waits for a request a deadline cut on a server that never ends its answer.
      await agent?.destroy().catch(() => undefined);
      agent = undefined;
    },
  };
}
