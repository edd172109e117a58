import type { FastifyInstance } from 'fastify';
import { buildSandbox, sandboxHandle, type SandboxOptions } from './app.ts';
import type { SandboxHandle } from './handle.ts';

/** A listening sandbox. */
export interface RunningSandbox {
  /** Base URL, e.g. http://127.0.0.1:4010 — both PRODUCT_API_URL and REFERENCE_API_URL. */
  url: string;
  app: FastifyInstance;
  /** Store, request counts, reset and faults, in process. */
  handle: SandboxHandle;
  close(): Promise<void>;
}

/** Builds the sandbox and listens (port 0 → a free port; host default 127.0.0.1). */
export async function startSandbox(
  options: SandboxOptions & { port?: number; host?: string } = {},
): Promise<RunningSandbox> {
  const { port = 0, host = '127.0.0.1', ...rest } = options;
  const app = buildSandbox(rest);
  await app.listen({ port, host });
  const address = app.server.address();
  const actualPort = typeof address === 'object' && address ? address.port : port;
  const urlHost = host === '0.0.0.0' || host === '::' ? '127.0.0.1' : host.includes(':') ? `[${host}]` : host;
  return { url: `http://${urlHost}:${actualPort}`, app, handle: sandboxHandle(app), close: () => app.close() };
}
