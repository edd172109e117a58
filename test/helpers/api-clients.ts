// API clients of a test file over its sandbox: each test's clients are closed after it.
import { afterEach } from 'vitest';
import { createApiClients, type ApiClientOptions, type ApiClients } from '../../src/api/clients.ts';
import type { RunningSandbox } from '../../src/sandbox/server.ts';
import { SANDBOX_TOKEN } from './env.ts';

/**
 * Call at the top of a file: the function it returns makes both clients over the sandbox's URL with its token (options
 * `defaults`, then `extra`); every client made during a test is closed after it.
 */
export function useApiClients(
  sandbox: RunningSandbox,
  defaults: Partial<ApiClientOptions> = {},
): (extra?: Partial<ApiClientOptions>) => ApiClients {
  const open: ApiClients[] = [];
  afterEach(async () => {
    while (open.length) await open.pop()!.close();
  });
  return (extra = {}) => {
    const c = createApiClients({
      productApiUrl: sandbox.url,
      referenceApiUrl: sandbox.url,
      credentials: { token: SANDBOX_TOKEN },
      ...defaults,
      ...extra,
    });
    open.push(c);
    return c;
  };
}
