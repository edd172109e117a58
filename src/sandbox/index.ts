/** The sandbox room's public surface: build / start the app, and parse the CLI's token and fault arguments. */
export { buildSandbox, sandboxHandle, type SandboxOptions } from './app.ts';
export { startSandbox, type RunningSandbox } from './server.ts';
export { parseTokenArg, parseTokenList, type OAuthClient } from './auth.ts';
export { parseFaultSpec, parseLatency, type FaultSpec, type FaultKind } from './faults.ts';
export type { SandboxHandle } from './handle.ts';
export {
  DEFAULT_TOKENS,
  DEFAULT_OAUTH_CLIENT,
  DEMO_COMPANY_ID,
  OTHER_COMPANY_ID,
  DEMO_SUPPLIER_ID,
  type SandboxToken,
} from './defaults.ts';
