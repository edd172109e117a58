/**
 * A feed's `source:` opened as a Source of its kind: a folder, an HTTPS URL, an SFTP folder or an S3 bucket. Every
 * remote host (the URL's and each redirect's, the SFTP server, an S3 endpoint) goes through the address guard.
 */
import * as z from 'zod';
import { checkHostAllowed } from './address-guard.ts';
import { openDirSource } from './dir.ts';
import { httpsLabel, openHttpsSource } from './https.ts';
import {
  dirSourceSchema,
  httpsSourceSchema,
  s3SourceSchema,
  sftpSourceSchema,
  type Source,
  type SourceFile,
} from './source.ts';

export type FeedSource =
  | z.output<typeof dirSourceSchema>
  | z.output<typeof httpsSourceSchema>
  | z.output<typeof sftpSourceSchema>
  | z.output<typeof s3SourceSchema>;

/**
 * `source:` in a feed file: one of the four kinds, told apart by its key (`https:`, `sftp:`, `s3:`, else the `dir`
 * shape feed files always had), then checked against that kind's shape alone, so a problem is named at its own key
 * (a plain union would only say "invalid input").
 */
export const feedSourceSchema = z.unknown().transform((value, ctx): FeedSource => {
  const has = (k: string) => typeof value === 'object' && value !== null && k in value;
  const schema = has('https')
    ? httpsSourceSchema
    : has('sftp')
      ? sftpSourceSchema
      : has('s3')
        ? s3SourceSchema
        : dirSourceSchema;
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  for (const issue of parsed.error.issues) ctx.addIssue({ ...issue } as never);
  return z.NEVER;
});
export type SourceKind = 'dir' | 'https' | 'sftp' | 's3';

export function sourceKind(source: FeedSource): SourceKind {
  if ('https' in source) return 'https';
  if ('sftp' in source) return 'sftp';
  if ('s3' in source) return 's3';
  return 'dir';
}

/** The source for logs, `feeds list` and the console: where, never a secret (no header value, no key, no query). */
export function sourceLabel(source: FeedSource): string {
  if ('https' in source) return httpsLabel(source.https.url);
  if ('sftp' in source) {
    const s = source.sftp;
    return `sftp://${s.user}@${s.host}:${s.port}${s.dir.startsWith('/') ? '' : '/'}${s.dir}/${s.pattern}`;
  }
  if ('s3' in source) {
    const s = source.s3;
    const where = s.endpoint ? ` at ${new URL(s.endpoint).host}` : '';
    return `s3://${s.bucket}/${s.prefix}${s.pattern}${where}`;
  }
  return `dir:${source.dir}/${source.pattern}`;
}

/**
 * How long after its last change a file first listed may still be arriving (ms): a folder's and an SFTP folder's
 * `settleSeconds`; 0 for kinds whose files arrive whole (HTTPS, S3).
 */
export function sourceSettleMs(source: FeedSource): number {
  if ('sftp' in source) return source.sftp.settleSeconds * 1000;
  if ('https' in source || 's3' in source) return 0;
  return source.settleSeconds * 1000;
}

/** How the tick orders the listed files: by name (default) or by modification time. */
export function sourceOrderOf(source: FeedSource): 'name' | 'mtime' {
  if ('https' in source) return 'name';
  if ('sftp' in source) return source.sftp.order;
  if ('s3' in source) return source.s3.order;
  return source.order;
}

export interface OpenSourceOptions {
  /** SOURCE_ALLOW_HOSTS, parsed. */
  allowHosts: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** The size limit of a downloaded file when the feed sets none. */
  maxBytes: number;
  /** The version last imported (https: sent as a conditional GET). */
  known?: SourceFile | null;
}

export function openSource(source: FeedSource, options: OpenSourceOptions): Source {
  switch (sourceKind(source)) {
    case 'dir':
      return openDirSource(source as z.output<typeof dirSourceSchema>);
    case 'https':
      return openHttpsSource((source as z.output<typeof httpsSourceSchema>).https, options);
    // The SFTP and S3 clients are loaded when a feed uses them: they weigh on every command's start otherwise.
    case 'sftp': {
      const cfg = (source as z.output<typeof sftpSourceSchema>).sftp;
      const label = sourceLabel(source);
      // The SFTP client connects to the address the guard checked, never resolving the host again.
      return remote(
        label,
        async (address) => (await import('./sftp.ts')).openSftpSource(cfg, options.env, address ?? undefined),
        cfg.host,
        options,
      );
    }
    case 's3': {
      const cfg = (source as z.output<typeof s3SourceSchema>).s3;
      const host = cfg.endpoint ? new URL(cfg.endpoint).hostname : null;
      return remote(sourceLabel(source), async () => (await import('./s3.ts')).openS3Source(cfg), host, options);
    }
  }
}

/**
 * A remote source opened on first use, behind the address guard: its host (when it names one) is resolved and refused
 * when it is loopback, private, link-local or cloud metadata and not in SOURCE_ALLOW_HOSTS, before the first listing
 * or download. The SFTP client connects to the address checked (and holds the server to its pinned host key).
 */
function remote(
  label: string,
  load: (address: string | null) => Promise<Source>,
  host: string | null,
  options: OpenSourceOptions,
): Source {
  let opened: Promise<Source> | null = null;
  const open = () =>
    (opened ??= (async () => {
      const address = host === null ? null : await checkHostAllowed(host.replace(/^\[|\]$/g, ''), options.allowHosts);
      return load(address);
    })());
  return {
    label,
    list: async (signal) => (await open()).list(signal),
    fetch: async (file, dest, opts) => (await open()).fetch(file, dest, opts),
    afterImport: async (file, action) => {
      const source = await open();
      if (!source.afterImport) throw new Error(`${label} cannot move or delete its files`);
      await source.afterImport(file, action);
    },
    close: async () => {
      if (opened) await (await opened.catch(() => null))?.close();
    },
  };
}
