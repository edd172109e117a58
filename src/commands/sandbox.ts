import { parseFaultSpec, parseLatency, parseTokenArg, parseTokenList, startSandbox } from '../sandbox/index.ts';
import { logger } from '../logger.ts';

/** Flags of `product-sync sandbox`. */
export interface SandboxFlags {
  port: number;
  host: string;
  token: string[];
  latency?: string;
  faults?: string;
  admin?: boolean;
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
  });
  process.stdout.write(`sandbox listening on ${sb.url} (product API ${sb.url}/api, reference API ${sb.url}/v2, OAuth2 ${sb.url}/oauth2/token)\n`);
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
