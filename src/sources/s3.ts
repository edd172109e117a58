/**
 * The `s3` source kind: the objects of a bucket under a prefix (@aws-sdk/client-s3), on AWS or an S3-compatible store
 * (`endpoint`, path-style addressing by default there). Credentials come from the SDK's usual chain (AWS_* variables,
 * AWS_PROFILE and the shared files, instance roles): never from the feed file. One level only: a key holding a `/`
 * after the prefix is a "folder" (where `afterImport: {move}` puts files) and is not listed.
 */
import {
  CopyObjectCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
  type ListObjectsV2CommandOutput,
} from '@aws-sdk/client-s3';
import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import { ProductSyncError } from '../errors.ts';
import { redact } from '../redact.ts';
import { isPlainName, patternRegExp } from './pattern.ts';
import type { AfterImport, Fetched, FetchOptions, S3SourceConfig, Source, SourceFile } from './source.ts';
import { tooLarge, writeHashed } from './hash-file.ts';

export interface S3SourceOptions {
  /** Keys asked for per ListObjectsV2 page (the store's default, 1000, when absent). */
  pageSize?: number;
}

const CONNECT_TIMEOUT_MS = 15_000;
/** A download or listing whose connection stays silent this long is cut. */
const IDLE_TIMEOUT_MS = 60_000;

/** A key's path segments percent-encoded, its `/` kept (CopySource wants it so). */
const encodeKey = (key: string): string => key.split('/').map(encodeURIComponent).join('/');

export function openS3Source(cfg: S3SourceConfig, options: S3SourceOptions = {}): Source {
  const prefix = cfg.prefix;
  const label = `s3://${cfg.bucket}/${prefix}`;
  const re = patternRegExp(cfg.pattern);
  const where = cfg.endpoint ? `${label} at ${new URL(cfg.endpoint).host}` : label;
  // An S3-compatible store seldom cares about the region: any will sign; AWS itself needs the bucket's (the SDK's
  // chain finds it, and followRegionRedirects mends a wrong one).
  const region =
    cfg.region ??
    (cfg.endpoint ? (process.env.AWS_REGION ?? process.env.AWS_DEFAULT_REGION ?? 'us-east-1') : undefined);
  const client = new S3Client({
    ...(region ? { region } : {}),
    ...(cfg.endpoint ? { endpoint: cfg.endpoint } : {}),
    forcePathStyle: cfg.forcePathStyle ?? cfg.endpoint !== undefined,
    followRegionRedirects: true,
    // Checksums only where S3 requires them: many S3-compatible stores refuse or ignore the newer flexible ones.
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
    requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, socketTimeout: IDLE_TIMEOUT_MS },
  });

  const keyOf = (name: string): string => {
    if (!isPlainName(name)) {
      throw new ProductSyncError(
        'PS_ERR_SOURCE_PATH',
        `${label}: refused the name ${JSON.stringify(name)}: it would leave the prefix's level`,
      );
    }
    return prefix + name;
  };

  /** The SDK's failure as a ProductSyncError naming the bucket and what was done, never a credential. */
  const mapError = (what: string, err: unknown): ProductSyncError => {
    if (err instanceof ProductSyncError) return err;
    const e = err as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    const reason = redact(e.message || e.name || String(err));
    if (e.name === 'CredentialsProviderError') {
      return new ProductSyncError(
        'PS_ERR_SOURCE_CREDENTIALS',
        `${where}: no AWS credentials found (AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, AWS_PROFILE, or a role): ` +
          reason,
        { cause: err },
      );
    }
    if (/region is missing/i.test(reason)) {
      return new ProductSyncError(
        'PS_ERR_SOURCE_CREDENTIALS',
        `${where}: no AWS region: set region: in the feed's s3 source, or AWS_REGION`,
        { cause: err },
      );
    }
    if (err instanceof S3ServiceException) {
      const status = e.$metadata?.httpStatusCode ?? 0;
      const detail = `${what}: ${e.name} (HTTP ${status})${reason && reason !== e.name ? `: ${reason}` : ''}`;
      if (['InvalidAccessKeyId', 'SignatureDoesNotMatch', 'AccessDenied', 'ExpiredToken'].includes(e.name ?? '')) {
        return new ProductSyncError('PS_ERR_SOURCE_CREDENTIALS', `${where}: credentials refused ${detail}`, {
          cause: err,
        });
      }
      if (status >= 500) {
        return new ProductSyncError('PS_ERR_SOURCE_UNAVAILABLE', `${where}: ${detail}`, { cause: err });
      }
      return new ProductSyncError('PS_ERR_SOURCE_FILE', `${where}: ${detail}`, { cause: err });
    }
    return new ProductSyncError('PS_ERR_SOURCE_UNAVAILABLE', `${where} cannot be reached: ${what}: ${reason}`, {
      cause: err,
    });
  };

  const send = async <T>(what: string, call: () => Promise<T>): Promise<T> => {
    try {
      return await call();
    } catch (err) {
      if ((err as Error | null)?.name === 'AbortError') throw err;
      throw mapError(what, err);
    }
  };

  return {
    label,

    async list(signal?: AbortSignal): Promise<SourceFile[]> {
      const out: SourceFile[] = [];
      let token: string | undefined;
      do {
        const page: ListObjectsV2CommandOutput = await send('listing', () =>
          client.send(
            new ListObjectsV2Command({
              Bucket: cfg.bucket,
              Prefix: prefix,
              Delimiter: '/',
              ContinuationToken: token,
              ...(options.pageSize ? { MaxKeys: options.pageSize } : {}),
            }),
            signal ? { abortSignal: signal } : {},
          ),
        );
        for (const o of page.Contents ?? []) {
          const name = o.Key?.slice(prefix.length) ?? '';
          if (!o.Key?.startsWith(prefix) || !isPlainName(name) || !re.test(name)) continue;
          const etag = o.ETag?.replace(/^"|"$/g, '');
          out.push({
            name,
            size: o.Size ?? null,
            mtimeMs: o.LastModified ? o.LastModified.getTime() : null,
            ...(etag ? { etag } : {}),
          });
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
      return out;
    },

    async fetch(file: SourceFile, dest: string, fetchOptions: FetchOptions): Promise<Fetched> {
      const key = keyOf(file.name);
      const what = `${label}${file.name}`;
      const res = await send(`reading ${key}`, () =>
        client.send(
          // The version listed, or an error (412): the ledger names what was listed, so nothing else is read for it.
          new GetObjectCommand({ Bucket: cfg.bucket, Key: key, ...(file.etag ? { IfMatch: `"${file.etag}"` } : {}) }),
          fetchOptions.signal ? { abortSignal: fetchOptions.signal } : {},
        ),
      );
      const body = res.Body as Readable | undefined;
      if (!body) throw new ProductSyncError('PS_ERR_SOURCE_FILE', `${what}: the store sent no body`);
      // Stores that ignore If-Match (some S3-compatible ones do) are checked here.
      const etag = res.ETag?.replace(/^"|"$/g, '');
      if (file.etag && etag && etag !== file.etag) {
        body.destroy();
        throw new ProductSyncError(
          'PS_ERR_SOURCE_FILE',
          `${what} changed since it was listed (ETag ${etag}, listed ${file.etag}): not read; the next listing has it`,
        );
      }
      if ((res.ContentLength ?? 0) > fetchOptions.maxBytes) {
        body.destroy();
        throw tooLarge(what, fetchOptions.maxBytes);
      }
      try {
        return await writeHashed(body, dest, { ...fetchOptions, what });
      } catch (err) {
        if (err instanceof ProductSyncError || (err as Error | null)?.name === 'AbortError') throw err;
        throw mapError(`reading ${key}`, err);
      }
    },

    async afterImport(file: SourceFile, action: AfterImport): Promise<void> {
      const key = keyOf(file.name);
      if ('move' in action) {
        const folder = posix.normalize(action.move);
        if (folder === '.' || folder === './' || posix.isAbsolute(folder) || folder.split('/').includes('..')) {
          throw new ProductSyncError(
            'PS_ERR_SOURCE_PATH',
            `${label}: afterImport move ${JSON.stringify(action.move)} must name a folder under the prefix`,
          );
        }
        const target = `${prefix}${folder.endsWith('/') ? folder : `${folder}/`}${file.name}`;
        await send(`copying ${key} to ${target}`, () =>
          client.send(
            new CopyObjectCommand({
              Bucket: cfg.bucket,
              Key: target,
              CopySource: `${cfg.bucket}/${encodeKey(key)}`,
              ...(file.etag ? { CopySourceIfMatch: `"${file.etag}"` } : {}),
            }),
          ),
        );
      }
      await send(`deleting ${key}`, () => client.send(new DeleteObjectCommand({ Bucket: cfg.bucket, Key: key })));
    },

    async close(): Promise<void> {
      client.destroy();
    },
  };
}
