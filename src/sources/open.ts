/**
 * A feed's `source:` opened as a Source of its kind. The kinds built in so far are `dir` and `https`; `sftp` and `s3`
 * answer "not built in" until their modules are wired here (one case each in the switch below).
 */
import * as z from 'zod';
import { ProductSyncError } from '../errors.ts';
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
    // Wired at merge: openSftpSource(source.sftp, options.env) from ./sftp.ts, openS3Source(source.s3) from ./s3.ts.
    case 'sftp':
    case 's3':
      throw new ProductSyncError(
        'PS_ERR_SOURCE_UNAVAILABLE',
        `source kind ${sourceKind(source)} is not built in yet (${sourceLabel(source)})`,
      );
  }
}
