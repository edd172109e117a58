/**
 * A feed's source: where a supplier drops its files (a local folder, an HTTPS URL, an SFTP folder, an S3 bucket).
 * Every kind lists the files that match the feed's pattern and downloads one to a local temporary file; the feed tick
 * (src/queue/) decides which listed files are new, in which order, and runs them (issue 26).
 */
import * as z from 'zod';

/** One file as a source lists it. */
export interface SourceFile {
  /** The file's name relative to the source's folder, bucket prefix or URL (what the ledger and reports name). */
  name: string;
  /** Size in bytes when the listing gives it (HTTPS may not), else null. */
  size: number | null;
  /** Modification time (ms since the epoch) when the listing gives it, else null. */
  mtimeMs: number | null;
  /** The server's version tag when it gives one (HTTP ETag or Last-Modified, S3 ETag). */
  etag?: string;
  /**
   * What moves whenever the file's bytes may have changed, though its size and time did not (`cp -p`, `touch -r`): a
   * local file's inode and change time. Absent where the listing cannot tell (SFTP, S3's ETag already does).
   */
  change?: string;
  /** The sha256 of its bytes when the listing already has them (an HTTPS download). */
  sha256?: string;
}

/** What `fetch` wrote. */
export interface Fetched {
  /** Hex sha256 of the bytes written. */
  sha256: string;
  size: number;
}

export interface FetchOptions {
  /** Refuse (PS_ERR_SOURCE_TOO_LARGE) as soon as more bytes than this arrive. */
  maxBytes: number;
  signal?: AbortSignal;
}

/** What to do with a file after its run succeeded (`afterImport` in the feed file). */
export type AfterImport = { move: string } | { delete: true };

export interface Source {
  /** The source for logs and the console, without any secret, e.g. `sftp://acme@sftp.acme.example:22/outgoing`. */
  readonly label: string;
  /** The files matching the pattern, in no particular order (the tick orders them). */
  list(signal?: AbortSignal): Promise<SourceFile[]>;
  /**
   * Downloads `file` to the local path `dest` (created or replaced), hashing while it streams. `list` and `fetch` stop
   * when their signal fires (the tick's deadlines, the worker stopping).
   */
  fetch(file: SourceFile, dest: string, options: FetchOptions): Promise<Fetched>;
  /**
   * A source whose files are local already (`dir`) gives the file's path: the run reads it in place, without a copy.
   * Absent: `fetch` downloads it.
   */
  localPath?(file: SourceFile): string;
  /** After a success: move it into a folder (relative to the source's folder) or delete it; absent: not offered. */
  afterImport?(file: SourceFile, action: AfterImport): Promise<void>;
  /** Closes connections (SFTP); idempotent. */
  close(): Promise<void>;
}

/** `order`: which listed file is older — by name (default) or by modification time. */
export const sourceOrder = z.enum(['name', 'mtime']).default('name');

/** `afterImport:` in a feed file. */
export const afterImportSchema = z.union([
  z.strictObject({ move: z.string().min(1) }),
  z.strictObject({ delete: z.literal(true) }),
]);

/** The name of an environment variable (feed files name secrets, never hold them). */
export const envName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must name an environment variable, e.g. ACME_KEY');

export const dirSourceSchema = z.strictObject({
  dir: z.string().min(1),
  pattern: z.string().min(1),
  order: sourceOrder,
  /** A file modified less than this long ago may still be arriving: the tick leaves it for the next one. */
  settleSeconds: z.number().int().min(0).default(30),
});

export const httpsSourceSchema = z.strictObject({
  https: z.strictObject({
    url: z.url({ protocol: /^https$/ }),
    /** A PEM file of CA certificates to trust for this URL (instead of the system's). */
    ca: z.string().min(1).optional(),
    /** Header name → name of the environment variable holding its value. */
    headers: z.record(z.string().min(1), envName).optional(),
    maxBytes: z.number().int().positive().optional(),
  }),
});

export const sftpSourceSchema = z.strictObject({
  sftp: z
    .strictObject({
      host: z.string().min(1),
      port: z.number().int().min(1).max(65535).default(22),
      user: z.string().min(1),
      privateKeyEnv: envName.optional(),
      passwordEnv: envName.optional(),
      /** As `ssh-keygen -l` prints it: `SHA256:<base64 without padding>`. Required. */
      hostKeyFingerprint: z
        .string()
        .regex(/^SHA256:[A-Za-z0-9+/]{43}=?$/, 'must be "SHA256:…" as ssh-keygen -l prints it'),
      dir: z.string().min(1),
      pattern: z.string().min(1).default('*'),
      order: sourceOrder,
      /** As in a folder: a file first listed less than this long after its last change may still be arriving. */
      settleSeconds: z.number().int().min(0).default(30),
    })
    .refine((s) => s.privateKeyEnv || s.passwordEnv, 'needs privateKeyEnv or passwordEnv'),
});

export const s3SourceSchema = z.strictObject({
  s3: z.strictObject({
    bucket: z.string().min(1),
    prefix: z.string().default(''),
    endpoint: z.url().optional(),
    region: z.string().min(1).optional(),
    /** Path-style addressing (most S3-compatible stores need it); default: true when `endpoint` is set. */
    forcePathStyle: z.boolean().optional(),
    pattern: z.string().min(1).default('*'),
    order: sourceOrder,
  }),
});

export type DirSourceConfig = z.output<typeof dirSourceSchema>;
export type HttpsSourceConfig = z.output<typeof httpsSourceSchema>['https'];
export type SftpSourceConfig = z.output<typeof sftpSourceSchema>['sftp'];
export type S3SourceConfig = z.output<typeof s3SourceSchema>['s3'];
