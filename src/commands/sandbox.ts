import { parseFaultSpec, parseLatency, parseTokenArg, parseTokenList, startSandbox } from '../sandbox/index.ts';
import { DEFAULT_OAUTH_CLIENT, DEFAULT_TOKENS, DEMO_COMPANY_ID, type SandboxToken } from '../sandbox/defaults.ts';
import { logger } from '../logger.ts';

/** Flags of `product-sync sandbox`. */
export interface SandboxFlags {
  port: number;
  host: string;
  token: string[];
  latency?: string;
  faults?: string;
  admin?: boolean;
  assignIds?: boolean;
}

/**
 * What `product-sync sandbox` prints once listening: where the APIs are, and the settings that point product-sync at
 * them — the token to use first (`sandbox-token`, acting for the demo company), then the others and the OAuth2 client.
 */
export function sandboxBanner(url: string, extraTokens: readonly SandboxToken[] = []): string {
  const who = (t: SandboxToken) =>
    `${t.companyId === DEMO_COMPANY_ID ? 'demo company' : `company ${t.companyId}`}${t.internal ? ', internal' : ''}`;
  const others = [...DEFAULT_TOKENS.slice(1), ...extraTokens].map((t) => `${t.token} (${who(t)})`).join(', ');
  return [
    `sandbox listening on ${url} (product API ${url}/api, reference API ${url}/v2, OAuth2 ${url}/oauth2/token)`,
    'point product-sync at it with:',
    `  PRODUCT_API_URL=${url} REFERENCE_API_URL=${url} API_TOKEN=${DEFAULT_TOKENS[0]!.token} OWNER_COMPANY_ID=${DEMO_COMPANY_ID}`,
    `other tokens: ${others}`,
    `or OAuth2: API_TOKEN_URL=${url}/oauth2/token API_CLIENT_ID=${DEFAULT_OAUTH_CLIENT.clientId} API_CLIENT_SECRET=${DEFAULT_OAUTH_CLIENT.clientSecret}`,
    '',
  ].join('\n');
}

/** `product-sync sandbox`: serves both APIs until SIGINT / SIGTERM. */
export async function sandboxCommand(flags: SandboxFlags): Promise<number> {
  const tokens = [...parseTokenList(process.env.SANDBOX_TOKENS), ...flags.token.map(parseTokenArg)];
  const sb = await startSandbox({
    port: flags.port,
    host: flags.host,
    tokens,
    ...(flags.latency ? { latencyMs: parseLatency(flags.latency) } : {}),
    ...(flags.faults ? { faults: parseFaultSpec(flags.faults) } : {}),
    admin: Boolean(flags.admin),
    assignIds: Boolean(flags.assignIds),
  });
  process.stdout.write(sandboxBanner(sb.url, tokens));
  await new Promise<void>((resolve) => {
    const stop = (signal: string) => {
      logger.info({ signal }, 'sandbox stopping');
      resolve();
    };
    process.once('SIGINT', stop);
    process.once('SIGTERM', stop);
  });
  await sb.close();
  return 0;
}
