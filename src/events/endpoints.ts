import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import * as z from 'zod';
import type { Config } from '../config.ts';
import { ProductSyncError } from '../errors.ts';
import { addSecret } from '../redact.ts';
import { webhookSecretProblem } from '../webhook-secret.ts';
import { parseYamlDocument } from '../yaml-document.ts';
import { EVENT_TYPE_NAMES, type EventType } from './catalog.ts';

/** A webhook endpoint: where events go, signed with its secret, filtered by type. */
export interface Endpoint {
  /** Names the endpoint in queued jobs and in summary.json (never its secret): its `name`, else from its URL. */
  id: string;
  url: string;
  secret: string;
  /** Patterns of the event types it takes (`run.*`, `feed.missed`); empty: every type. */
  events: string[];
  /**
   * `openlineage`: OPENLINEAGE_URL, which takes a run's OpenLineage events (START with run.started, its end with
   * run.finished, run.aborted or run.failed) as their own JSON body, unsigned, with `Authorization: Bearer <apiKey>`.
   */
  kind?: 'openlineage';
  apiKey?: string;
}

/** The OpenLineage endpoint's id (in delivery jobs and summary.json `events`). */
export const OPENLINEAGE_ENDPOINT = 'openlineage';
/** The run events an OpenLineage event goes with. */
export const LINEAGE_EVENT_TYPES: EventType[] = ['run.started', 'run.finished', 'run.aborted', 'run.failed'];

const secretSchema = z.string().superRefine((s, ctx) => {
  const problem = webhookSecretProblem(s);
  if (problem) ctx.addIssue({ code: 'custom', message: problem });
});
const eventPattern = z
  .string()
  .refine(
    (p) => EVENT_TYPE_NAMES.some((t) => typeMatches(p, t)),
    `must name event types: ${EVENT_TYPE_NAMES.join(', ')} (or a prefix with *, e.g. run.*)`,
  );

/** The `webhooks:` list of WEBHOOKS_FILE (docs/operations.md). */
export const webhooksFileSchema = z.strictObject({
  webhooks: z.array(
    z
      .strictObject({
        name: z
          .string()
          .regex(/^[A-Za-z0-9_.-]{1,60}$/, 'letters, digits, ".", "_" and "-" only')
          .optional(),
        url: z.url({ protocol: /^https?$/ }),
        /** The secret itself, `whsec_<base64>`; better kept out of the file with secretEnv. */
        secret: secretSchema.optional(),
        /** The environment variable holding the secret. */
        secretEnv: z
          .string()
          .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be an environment variable name')
          .optional(),
        events: z.array(eventPattern).default([]),
      })
      .refine((w) => Boolean(w.secret) !== Boolean(w.secretEnv), 'give secret or secretEnv (one of them)'),
  ),
});

/** True when the endpoint pattern `p` (`run.finished`, `run.*`, `*`) takes events of `type`. */
export function typeMatches(p: string, type: string): boolean {
  return p === '*' || p === type || (p.endsWith('.*') && type.startsWith(p.slice(0, -1)));
}

/**
 * True when `endpoint` takes events of `type`; an OpenLineage endpoint only those that carry an OpenLineage event
 * (`lineage`).
 */
export function wants(endpoint: Endpoint, type: EventType, lineage?: unknown): boolean {
  if (endpoint.kind === 'openlineage' && !lineage) return false;
  return endpoint.events.length === 0 || endpoint.events.some((p) => typeMatches(p, type));
}

/** The URL as logs and the console show it: no userinfo, no query (either may carry a credential). */
export function shownUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.protocol}//${u.host}${u.pathname}`;
  } catch {
    return '[invalid url]';
  }
}

function idOfUrl(url: string): string {
  return `ep-${createHash('sha256').update(url).digest('hex').slice(0, 10)}`;
}

/**
 * The endpoints of this configuration: WEBHOOK_URL (+ WEBHOOK_SECRET), then WEBHOOKS_FILE's `webhooks:` list. A file
 * that is missing or invalid, or a secretEnv that is unset or invalid, is PS_ERR_CONFIG_INVALID naming every problem.
 * Every secret is registered with redact() so no error message quotes it.
 */
export async function loadEndpoints(
  config: Config,
  env: Record<string, string | undefined> = process.env,
): Promise<Endpoint[]> {
  const out: Endpoint[] = [];
  if (config.WEBHOOK_URL && config.WEBHOOK_SECRET)
    out.push({ id: idOfUrl(config.WEBHOOK_URL), url: config.WEBHOOK_URL, secret: config.WEBHOOK_SECRET, events: [] });
  if (config.WEBHOOKS_FILE) {
    const file = resolve(config.WEBHOOKS_FILE);
    if (!existsSync(file))
      throw new ProductSyncError('PS_ERR_CONFIG_INVALID', `invalid configuration:\n  WEBHOOKS_FILE: ${file} not found`);
    const parsed = parseYamlDocument(await readFile(file, 'utf8'), webhooksFileSchema, () => '');
    const problems: string[] = [];
    if (!parsed.ok) {
      for (const p of parsed.problems)
        problems.push(`  ${file}${p.line === null ? '' : `:${p.line}`}: ${p.path ? `${p.path}: ` : ''}${p.message}`);
    } else {
      parsed.data.webhooks.forEach((w, i) => {
        const secret = w.secret ?? env[w.secretEnv!]?.trim() ?? '';
        const problem = secret ? webhookSecretProblem(secret) : `${w.secretEnv} is not set`;
        if (problem) return void problems.push(`  ${file}: webhooks[${i}].secretEnv: ${problem}`);
        out.push({ id: w.name ?? idOfUrl(w.url), url: w.url, secret, events: w.events });
      });
    }
    const ids = out.map((e) => e.id);
    for (const id of new Set(ids.filter((id, i) => ids.indexOf(id) !== i)))
      problems.push(`  ${file}: two webhooks are named ${id} (give each a distinct name, or distinct URLs)`);
    if (problems.length > 0)
      throw new ProductSyncError('PS_ERR_CONFIG_INVALID', `invalid webhooks file:\n${problems.join('\n')}`);
  }
  if (config.OPENLINEAGE_URL) {
    const keyEnv = config.OPENLINEAGE_API_KEY_ENV;
    const apiKey = keyEnv ? env[keyEnv]?.trim() : undefined;
    if (keyEnv && !apiKey)
      throw new ProductSyncError(
        'PS_ERR_CONFIG_INVALID',
        `invalid configuration:\n  OPENLINEAGE_API_KEY_ENV: ${keyEnv} is not set`,
      );
    out.push({
      id: OPENLINEAGE_ENDPOINT,
      url: config.OPENLINEAGE_URL,
      secret: '',
      events: LINEAGE_EVENT_TYPES,
      kind: 'openlineage',
      ...(apiKey ? { apiKey } : {}),
    });
  }
  for (const e of out) addSecret(e.secret || e.apiKey);
  return out;
}
