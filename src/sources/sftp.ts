/**
 * The `sftp` source kind: a folder on an SFTP server (ssh2-sftp-client over ssh2). The server's host key is pinned by
 * its SHA256 fingerprint: any other key refuses the connection before logging in. The key or password comes from a
 * named environment variable. Every path stays inside the configured folder: names from the listing or the tick
 * never hold `/` or `..`, symlinks are neither listed nor read nor moved into.
 */
import { createHash } from 'node:crypto';
import { posix } from 'node:path';
import SftpClient from 'ssh2-sftp-client';
import { ProductSyncError } from '../errors.ts';
import { addSecret, redact } from '../redact.ts';
import { isPlainName, patternRegExp } from './pattern.ts';
import type { AfterImport, Fetched, FetchOptions, Source, SourceFile, SftpSourceConfig } from './source.ts';
import { tooLarge, writeHashed } from './hash-file.ts';

/** ssh2-sftp-client has lstat (the attributes of a symlink itself); its type definitions lack it. */
type WithLstat = SftpClient & { lstat(path: string): Promise<SftpClient.FileStats> };

/** How long the TCP connect plus the SSH handshake and login may take. */
const READY_TIMEOUT_MS = 15_000;

/** The fingerprint of a host key blob as `ssh-keygen -l` prints it: `SHA256:` and unpadded base64. */
export function sshFingerprint(key: Buffer): string {
  return `SHA256:${createHash('sha256').update(key).digest('base64').replace(/=+$/, '')}`;
}

/** The key type named at the start of an SSH public key blob (`ssh-ed25519`, `ssh-rsa`, …). */
function keyType(key: Buffer): string {
  if (key.length < 4) return 'unknown';
  const n = key.readUInt32BE(0);
  return n > 0 && n < 64 && key.length >= 4 + n ? key.subarray(4, 4 + n).toString('latin1') : 'unknown';
}

/** The reason of a library error, without the `getConnection:` / `list:` prefixes, and without credentials. */
function reasonOf(err: unknown): string {
  const message = err instanceof Error ? err.message : String(err);
  return redact(message.replace(/^(?:[A-Za-z_]+(?:->|: ))+/, '').trim() || 'unknown error');
}

/** Errors about one path (a status of the SFTP server) rather than about the connection. */
function isFileError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'number' || ['ENOENT', 'EACCES', 'ENOTDIR', 'ERR_BAD_PATH'].includes(String(code));
}

/** `connectTo`: the address the address guard checked for `cfg.host` (open.ts); absent, the host is resolved here. */
export function openSftpSource(
  cfg: SftpSourceConfig,
  env: NodeJS.ProcessEnv = process.env,
  connectTo?: string,
): Source {
  const where = `${cfg.host.includes(':') ? `[${cfg.host}]` : cfg.host}:${cfg.port}`;
  const root = posix.normalize(cfg.dir).replace(/(.)\/+$/, '$1');
  const label = `sftp://${cfg.user}@${where}${root.startsWith('/') ? root : `/~/${root}`}`;
  // Errors name the folder without the URL form: redact() takes `scheme://user@` for credentials.
  const folder = `SFTP folder ${root} on ${cfg.user}@${where}`;
  const pinned = cfg.hostKeyFingerprint.replace(/=+$/, '');
  const re = patternRegExp(cfg.pattern);
  let conn: Promise<SftpClient> | null = null;

  const current = new Set<SftpClient>();
  const forget = (client: SftpClient): void => {
    if (current.has(client)) {
      current.delete(client);
      conn = null;
    }
  };

  const session = async (): Promise<SftpClient> => {
    if (!conn) {
      const p = connectSftp(cfg, env, { where, folder, pinned, connectTo }, forget).then((c) => (current.add(c), c));
      conn = p;
      p.catch(() => {
        if (conn === p) conn = null;
      });
    }
    return conn;
  };

  /** Runs `op` on the connection, mapping its failure: a path's status → SOURCE_FILE, anything else → UNREACHABLE. */
  const run = async <T>(what: string, op: (c: SftpClient) => Promise<T>, signal?: AbortSignal): Promise<T> => {
    const client = await session();
    // The library takes no signal: a deadline or the worker stopping ends the connection, which ends the call.
    const cut = () => {
      forget(client);
      void client.end().catch(() => undefined);
    };
    signal?.addEventListener('abort', cut, { once: true });
    try {
      signal?.throwIfAborted();
      return await op(client);
    } catch (err) {
      if (signal?.aborted) throw signal.reason as Error;
      if (err instanceof ProductSyncError || (err as Error | null)?.name === 'AbortError') throw err;
      if (isFileError(err)) {
        throw new ProductSyncError('PS_ERR_SOURCE_FILE', `${folder}: ${what}: ${reasonOf(err)}`, { cause: err });
      }
      forget(client);
      await client.end().catch(() => undefined);
      throw new ProductSyncError(
        'PS_ERR_SOURCE_UNAVAILABLE',
        `SFTP server ${where} lost while ${what}: ${reasonOf(err)}`,
        { cause: err },
      );
    } finally {
      signal?.removeEventListener('abort', cut);
    }
  };

  return {
    label,

    async list(signal?: AbortSignal): Promise<SourceFile[]> {
      signal?.throwIfAborted();
      const entries = await run('listing', (c) => c.list(root), signal);
      return entries
        .filter((e) => e.type === '-' && isPlainName(e.name) && re.test(e.name))
        .map((e) => ({ name: e.name, size: e.size, mtimeMs: e.modifyTime }));
    },

    async fetch(file: SourceFile, dest: string, options: FetchOptions): Promise<Fetched> {
      const path = inside(root, file.name, folder);
      options.signal?.throwIfAborted();
      const what = `${file.name} in ${folder}`;
      return run(
        `reading ${file.name}`,
        async (c) => {
          const st = await (c as WithLstat).lstat(path);
          if (!st.isFile) {
            throw new ProductSyncError(
              'PS_ERR_SOURCE_PATH',
              `${folder}: ${file.name} is ${st.isSymbolicLink ? 'a symlink' : 'not a regular file'}: not read`,
            );
          }
          if (st.size > options.maxBytes) throw tooLarge(what, options.maxBytes);
          return writeHashed(c.createReadStream(path), dest, { ...options, what });
        },
        options.signal,
      );
    },

    async afterImport(file: SourceFile, action: AfterImport): Promise<void> {
      const path = inside(root, file.name, folder);
      if ('delete' in action) {
        await run(`deleting ${file.name}`, (c) => c.delete(path));
        return;
      }
      await run(`moving ${file.name} to ${action.move}`, async (c) => {
        const to = posix.join(await ensureFolder(c, root, action.move, folder), file.name);
        // The atomic rename replaces a file of that name already moved there; servers without it get a plain rename.
        await c.posixRename(path, to).catch(() => c.rename(path, to));
      });
    },

    async close(): Promise<void> {
      const p = conn;
      conn = null;
      current.clear();
      if (p) await (await p.catch(() => null))?.end().catch(() => undefined);
    },
  };
}

/** The full remote path of `name` inside the folder `root`, or PS_ERR_SOURCE_PATH. */
function inside(root: string, name: string, folder: string): string {
  const full = posix.join(root, name);
  if (!isPlainName(name) || posix.relative(root, full) !== name) {
    throw new ProductSyncError(
      'PS_ERR_SOURCE_PATH',
      `${folder}: refused the name ${JSON.stringify(name)}: it would leave the folder`,
    );
  }
  return full;
}

/** The private key and / or password from the environment variables the feed names (each one a secret to redact). */
function credentials(
  cfg: SftpSourceConfig,
  env: NodeJS.ProcessEnv,
  folder: string,
): { privateKey?: string; password?: string } {
  const out: { privateKey?: string; password?: string } = {};
  for (const [field, name] of [
    ['privateKey', cfg.privateKeyEnv],
    ['password', cfg.passwordEnv],
  ] as const) {
    if (!name) continue;
    const value = env[name];
    if (!value) {
      throw new ProductSyncError(
        'PS_ERR_SOURCE_CREDENTIALS',
        `${folder}: the environment variable ${name} (${field === 'privateKey' ? 'privateKeyEnv' : 'passwordEnv'}) ` +
          'is not set or empty: it must hold the ' +
          (field === 'privateKey' ? 'private key text (not a path)' : 'password'),
      );
    }
    addSecret(value);
    out[field] = value;
  }
  return out;
}

/** Where a connection goes, and how its errors name it. */
interface SftpTarget {
  /** `host:port` for messages. */
  where: string;
  folder: string;
  /** The pinned host key fingerprint (without padding). */
  pinned: string;
  connectTo?: string | undefined;
}

/**
 * A logged-in connection, its host key checked against the pin before logging in; `onGone` hears of it closing. Its
 * failure is a typed error: the wrong host key, unusable or refused credentials, or a server that cannot be reached.
 */
async function connectSftp(
  cfg: SftpSourceConfig,
  env: NodeJS.ProcessEnv,
  t: SftpTarget,
  onGone: (client: SftpClient) => void,
): Promise<SftpClient> {
  const auth = credentials(cfg, env, t.folder);
  let seen: { type: string; fingerprint: string } | null = null;
  const client = new SftpClient('product-sync', {
    // A connection lost between two calls: the next call connects again.
    close: () => void onGone(client),
    end: () => void onGone(client),
    error: () => void onGone(client),
  });
  try {
    await client.connect({
      host: t.connectTo ?? cfg.host,
      port: cfg.port,
      username: cfg.user,
      ...auth,
      readyTimeout: READY_TIMEOUT_MS,
      hostVerifier: (key: Buffer) => {
        seen = { type: keyType(key), fingerprint: sshFingerprint(key) };
        return seen.fingerprint === t.pinned;
      },
    });
  } catch (err) {
    await client.end().catch(() => undefined);
    throw connectError(cfg, t, err, seen as { type: string; fingerprint: string } | null);
  }
  return client;
}

/** What a failed connection means, `presented` being the host key the server showed (if it got that far). */
function connectError(
  cfg: SftpSourceConfig,
  { where, folder, pinned }: SftpTarget,
  err: unknown,
  presented: { type: string; fingerprint: string } | null,
): ProductSyncError {
  if (presented && presented.fingerprint !== pinned) {
    return new ProductSyncError(
      'PS_ERR_SOURCE_HOST_KEY',
      `SFTP server ${where} presented the ${presented.type} host key ${presented.fingerprint}, but the feed pins ` +
        `${pinned}: connection refused before logging in (if the supplier changed its key, check the new ` +
        'fingerprint with them and update hostKeyFingerprint; docs/sources.md)',
    );
  }
  const reason = reasonOf(err);
  if (/cannot parse privatekey|unsupported key format|encrypted/i.test(reason)) {
    return new ProductSyncError(
      'PS_ERR_SOURCE_CREDENTIALS',
      `${folder}: the private key in ${cfg.privateKeyEnv ?? 'privateKeyEnv'} cannot be used: ${reason} ` +
        '(it must be the text of an unencrypted OpenSSH or PEM private key)',
    );
  }
  if (/authentication methods failed/i.test(reason)) {
    const via = [
      cfg.privateKeyEnv && `the key in ${cfg.privateKeyEnv}`,
      cfg.passwordEnv && `the password in ${cfg.passwordEnv}`,
    ]
      .filter(Boolean)
      .join(' and ');
    return new ProductSyncError(
      'PS_ERR_SOURCE_CREDENTIALS',
      `SFTP server ${where} refused the login of ${cfg.user} with ${via}: ${reason}`,
    );
  }
  return new ProductSyncError('PS_ERR_SOURCE_UNAVAILABLE', `SFTP server ${where} cannot be reached: ${reason}`, {
    cause: err,
  });
}

/** `rel` (the `move:` folder) as a folder inside `root`, created when missing; never through a symlink. */
async function ensureFolder(client: SftpClient, root: string, rel: string, folder: string): Promise<string> {
  const target = posix.join(root, rel);
  const relative = posix.relative(root, target);
  if (posix.isAbsolute(rel) || relative === '' || relative.split('/').includes('..')) {
    throw new ProductSyncError(
      'PS_ERR_SOURCE_PATH',
      `${folder}: afterImport move ${JSON.stringify(rel)} must name a folder inside it`,
    );
  }
  let path = root;
  for (const segment of relative.split('/')) {
    path = posix.join(path, segment);
    const kind = await client.exists(path);
    if (kind === false) await client.mkdir(path);
    else if (kind !== 'd') {
      throw new ProductSyncError(
        'PS_ERR_SOURCE_PATH',
        `${folder}: afterImport move folder ${path} is ${kind === 'l' ? 'a symlink' : 'not a folder'}: refused`,
      );
    }
  }
  return target;
}
