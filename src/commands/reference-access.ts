/**
 * The reference API of a command that only reads reference lists (`mapping init`, `lists`): configured, or the embedded
 * sandbox.
 */
import { apiClientsFromConfig } from '../api/clients.ts';
import type { ReferenceClient } from '../api/reference-client.ts';
import { loadConfig } from '../config.ts';
import { referenceLabels, type ReferenceLabels } from '../pipeline/resolve/list-labels.ts';
import { DEMO_COMPANY_ID } from '../sandbox/defaults.ts';

/** An open reference API and how to close it. */
export interface ReferenceAccess {
  reference: ReferenceClient;
  labels: ReferenceLabels;
  /** Where the labels come from, for messages (`the embedded sandbox`, the API's URL). */
  where: string;
  /** The configured default language of labels (LANGUAGE_CODE). */
  language: string;
  close(): Promise<void>;
}

// A command waiting on a reference API that is down should say so in seconds, not after a run's patient retries.
const RETRY = { retries: 1, baseMs: 200, maxMs: 1000 };
const TIMEOUTS = { connectMs: 5_000, headersMs: 15_000, bodyMs: 15_000 };

/**
 * The reference API of a command: the embedded sandbox with `--sandbox` (started in-process, nothing kept), else the
 * configured one (REFERENCE_API_URL with API_TOKEN or the OAuth2 client); `{unavailable}` saying why when none is
 * configured. An invalid configuration throws PS_ERR_CONFIG_INVALID as every command does.
 */
export async function openReference(
  flags: { sandbox?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): Promise<ReferenceAccess | { unavailable: string }> {
  let config = loadConfig(env);
  let sandbox: { url: string; close(): Promise<void> } | undefined;
  if (flags.sandbox) {
    const { startEmbeddedSandbox } = await import('../embedded-sandbox.ts');
    sandbox = await startEmbeddedSandbox('.', { persist: false });
    config = {
      ...config,
      PRODUCT_API_URL: sandbox.url,
      REFERENCE_API_URL: sandbox.url,
      API_TOKEN: 'sandbox-token',
      API_TOKEN_URL: undefined,
      OWNER_COMPANY_ID: config.OWNER_COMPANY_ID ?? DEMO_COMPANY_ID,
    };
  }
  if (!config.REFERENCE_API_URL)
    return { unavailable: 'no reference API configured (set REFERENCE_API_URL and API_TOKEN, or use --sandbox)' };
  if (!config.API_TOKEN && !config.API_TOKEN_URL) {
    return {
      unavailable:
        'no API credential configured (set API_TOKEN or API_TOKEN_URL + API_CLIENT_ID + API_CLIENT_SECRET, or use --sandbox)',
    };
  }
  // The product API is not used: its URL only completes the configuration the clients are built from.
  const clients = apiClientsFromConfig(
    { ...config, PRODUCT_API_URL: config.PRODUCT_API_URL ?? config.REFERENCE_API_URL },
    { retry: RETRY, timeouts: TIMEOUTS },
  );
  return {
    reference: clients.reference,
    labels: referenceLabels(clients.reference, config.OWNER_COMPANY_ID ? { companyId: config.OWNER_COMPANY_ID } : {}),
    where: sandbox ? 'the embedded sandbox' : config.REFERENCE_API_URL,
    language: config.LANGUAGE_CODE,
    async close() {
      await clients.close();
      await sandbox?.close();
    },
  };
}
