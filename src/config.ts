import { homedir } from 'node:os';
import { join, resolve } from 'node:path';
import * as z from 'zod';
import { ProductSyncError } from './errors.ts';
import { webhookSecretProblem } from './webhook-secret.ts';

const optionalString = z.string().trim().min(1).optional();
const url = z.url({ protocol: /^https?$/ });

/** The one configuration schema (README, "Configuration"), over the environment. Flags: pass a merged object. */
export const configSchema = z
  .object({
    PRODUCT_API_URL: url.optional(),
    REFERENCE_API_URL: url.optional(),
    API_TOKEN: optionalString,
    API_TOKEN_URL: url.optional(),
    API_CLIENT_ID: optionalString,
    API_CLIENT_SECRET: optionalString,
    API_SCOPE: optionalString,
    OWNER_COMPANY_ID: z.uuid().optional(),
    /**
     * The credential is an internal service's: only then may a mapping feed `createdBy` (the API refuses it otherwise,
     * and nothing in a token says so).
     */
    API_CREDENTIAL_INTERNAL: z.stringbool().default(false),
    LANGUAGE_CODE: z
      .string()
      .regex(/^[a-zA-Z]{2,3}(-[a-zA-Z0-9]{2,8})*$/, 'must be a BCP 47 language tag')
      .default('en-US'),
    REDIS_URL: z
      .string()
      .regex(/^rediss?:\/\//, 'must start with redis:// or rediss://')
      .default('redis://127.0.0.1:6379'),
    QUEUE_PREFIX: z.string().min(1).default('product-sync'),
    REPORT_DIR: z.string().min(1).default('./reports'),
    UPLOAD_DIR: z.string().min(1).default('./uploads'),
    /**
     * Machine-wide state (the owner leases of runs without Redis); default $XDG_STATE_HOME/product-sync or
     * ~/.local/state/product-sync.
     */
    STATE_DIR: z.string().min(1).optional(),
    /** How long an owner lease lives without renewal (renewed every third of it while held); docs/concurrency.md. */
    LEASE_TTL_SECONDS: z.coerce.number().min(1).max(3600).default(60),
    API_CONCURRENCY: z.coerce.number().int().min(1).max(1024).default(32),
    API_MAX_RPS: z.coerce.number().positive().optional(),
    /** The lowest pace the API's refusals lower a run to, requests a second (src/api/rate-pace.ts). */
    API_MIN_RPS: z.coerce.number().positive().default(0.5),
    /** The longest pause before a create is sent again after a look-up found nothing (src/api/create-once.ts), ms. */
    CREATE_RETRY_MAX_MS: z.coerce.number().int().min(0).max(60_000).default(2000),
    /** Import jobs at once per worker: two, so a large sheet's prepare step never holds a small run (docs/queue.md). */
    WORKER_CONCURRENCY: z.coerce.number().int().min(1).max(64).default(2),
    CHUNK_SIZE: z.coerce.number().int().min(1).max(5000).default(500),
    WORKER_LOCK_MS: z.coerce.number().int().min(1000).default(30_000),
    /** How often a worker looks for jobs whose lock ran out (a killed worker's), ms; unset: half the job lock. */
    WORKER_STALLED_CHECK_MS: z.coerce.number().int().min(100).optional(),
    /** Chunks of one owner in progress at once across the fleet (docs/queue.md, "Fairness"); unset: no cap. */
    OWNER_MAX_CHUNKS: z.coerce.number().int().min(1).max(100_000).optional(),
    /** The console's address as its users reach it: run events link to the reports under it (docs/operations.md). */
    PUBLIC_URL: url.optional(),
    /** One webhook endpoint for every event (with WEBHOOK_SECRET, `whsec_<base64>`); more in WEBHOOKS_FILE. */
    WEBHOOK_URL: url.optional(),
    WEBHOOK_SECRET: optionalString,
    /** A YAML or JSON file with a `webhooks:` list (url, secret or secretEnv, events): docs/operations.md. */
    WEBHOOKS_FILE: optionalString,
    /** How long one delivery attempt may take. */
    WEBHOOK_TIMEOUT_MS: z.coerce.number().int().min(100).max(120_000).default(10_000),
    /** The first retry's delay (each next one doubles, with jitter). */
    WEBHOOK_RETRY_BASE_MS: z.coerce.number().int().min(10).max(60_000).default(5000),
    /** How long a queued event is retried before it is kept as dead (default 24 h). */
    WEBHOOK_RETRY_WINDOW_SECONDS: z.coerce
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 3600)
      .default(24 * 3600),
    /** How long an inline run (no worker) retries its events at its end. */
    WEBHOOK_INLINE_SECONDS: z.coerce.number().min(0).max(600).default(30),
    /**
     * An OpenLineage endpoint (Marquez: `http://marquez:5000/api/v1/lineage`): every run that reads a sheet sends its
     * START and its COMPLETE / FAIL / ABORT there, like a webhook (docs/operations.md "OpenLineage"). Unset: none.
     */
    OPENLINEAGE_URL: url.optional(),
    /** The environment variable holding the OpenLineage endpoint's API key (sent as `Authorization: Bearer`). */
    OPENLINEAGE_API_KEY_ENV: z
      .string()
      .trim()
      .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
      .optional(),
    /** The OpenLineage job namespace of product-sync's runs. */
    OPENLINEAGE_NAMESPACE: z.string().trim().min(1).default('product-sync'),
    /**
     * Where traces go (an OpenTelemetry collector's OTLP/HTTP address, e.g. `http://collector:4318`); read by the
     * OpenTelemetry SDK when the process starts (src/tracing.ts), checked here. Unset: no tracing at all.
     */
    OTEL_EXPORTER_OTLP_ENDPOINT: url.optional(),
    /**
     * Hosts (names or addresses, comma-separated) a feed's source may reach although they resolve to a loopback,
     * private, link-local, CGNAT or cloud-metadata address (src/sources/address-guard.ts).
     */
    SOURCE_ALLOW_HOSTS: optionalString,
    /**
     * The worker (and a long inline `import`) serves `/metrics` on this port when set (0: any free one, printed);
     * docs/operations.md.
     */
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    /** Where that `/metrics` listens; a non-loopback address needs the console's credentials (console-access.ts). */
    METRICS_HOST: z.string().trim().min(1).default('127.0.0.1'),
    /**
     * More names (comma-separated; `.example.com` for a domain and every name under it) the console answers for besides
     * IP addresses, localhost, its --host and PUBLIC_URL's host: the Host check (src/server/same-origin.ts).
     */
    CONSOLE_HOSTS: z
      .string()
      .trim()
      .regex(
        /^\.?[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*\.?(\s*,\s*\.?[a-zA-Z0-9_-]+(\.[a-zA-Z0-9_-]+)*\.?)*$/,
        'must be host names separated by commas (no scheme, port or path); .example.com for a domain and the names under it',
      )
      .optional(),
    CONSOLE_TOKEN: optionalString,
    CONSOLE_USER: optionalString,
    CONSOLE_PASSWORD: optionalString,
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    // Read by src/logger.ts when the process starts (the logger exists before any config is loaded); checked here.
    LOG_FORMAT: z
      .string()
      .trim()
      .toLowerCase()
      .pipe(
        z.enum(['json', 'pretty'], {
          error: 'must be json or pretty (unset: readable lines on a terminal, JSON otherwise)',
        }),
      )
      .optional(),
  })
  .superRefine((c, ctx) => {
    const oauth = [c.API_TOKEN_URL, c.API_CLIENT_ID, c.API_CLIENT_SECRET];
    if (oauth.some(Boolean) && !oauth.every(Boolean)) {
      ctx.addIssue({
        code: 'custom',
        path: ['API_TOKEN_URL'],
        message: 'API_TOKEN_URL, API_CLIENT_ID and API_CLIENT_SECRET go together',
      });
    }
    if (Boolean(c.WEBHOOK_URL) !== Boolean(c.WEBHOOK_SECRET)) {
      ctx.addIssue({ code: 'custom', path: ['WEBHOOK_URL'], message: 'WEBHOOK_URL and WEBHOOK_SECRET go together' });
    }
    const secretProblem = c.WEBHOOK_SECRET === undefined ? null : webhookSecretProblem(c.WEBHOOK_SECRET);
    if (secretProblem) ctx.addIssue({ code: 'custom', path: ['WEBHOOK_SECRET'], message: secretProblem });
    if (c.API_TOKEN && c.API_TOKEN_URL) {
      ctx.addIssue({
        code: 'custom',
        path: ['API_TOKEN'],
        message: 'set API_TOKEN or the OAuth2 client credentials, not both',
      });
    }
  });

/** Parsed, frozen configuration. */
export type Config = Readonly<z.output<typeof configSchema> & { STATE_DIR: string }>;

/** The default STATE_DIR: `$XDG_STATE_HOME/product-sync`, else `~/.local/state/product-sync`. */
export function defaultStateDir(env: Record<string, string | undefined> = process.env): string {
  const xdg = env.XDG_STATE_HOME?.trim();
  return join(xdg ? resolve(xdg) : join(env.HOME?.trim() || homedir(), '.local', 'state'), 'product-sync');
}

/** Parses the environment once; throws PS_ERR_CONFIG_INVALID listing every problem. Empty strings count as unset. */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const input: Record<string, string> = {};
  for (const key of Object.keys(configSchema.shape)) {
    const v = env[key];
    if (v !== undefined && v.trim() !== '') input[key] = v;
  }
  // jitless: parsed once; compiling a parser for it would cost more than the parse.
  const parsed = configSchema.safeParse(input, { jitless: true });
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `  ${i.path.join('.') || '(config)'}: ${i.message}`);
    throw new ProductSyncError('PS_ERR_CONFIG_INVALID', `invalid configuration:\n${lines.join('\n')}`);
  }
  return Object.freeze({ ...parsed.data, STATE_DIR: resolve(parsed.data.STATE_DIR ?? defaultStateDir(env)) });
}
