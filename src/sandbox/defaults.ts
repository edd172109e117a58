/** The sandbox's documented defaults (docs/api-contract.md): demo company, tokens and OAuth2 client. */

/** The company the default tokens act for ("current company"), and the demo's owner. */
export const DEMO_COMPANY_ID = '5b0c6a8e-3f1d-4c2a-9e47-1d2b3c4d5e6f';

/** A second company, for tests of ownership boundaries. */
export const OTHER_COMPANY_ID = '9a7e4c21-8b3d-4f6a-b1c2-7e8f9a0b1c2d';

/** A supplier company used by the samples (manufactured items name it). */
export const DEMO_SUPPLIER_ID = 'c3d4e5f6-a7b8-4c9d-8e0f-1a2b3c4d5e6f';

/** A credential the sandbox accepts. */
export interface SandboxToken {
  token: string;
  companyId: string;
  internal: boolean;
}

/** Tokens the sandbox accepts out of the box. */
export const DEFAULT_TOKENS: readonly SandboxToken[] = [
  { token: 'sandbox-token', companyId: DEMO_COMPANY_ID, internal: false },
  { token: 'sandbox-internal-token', companyId: DEMO_COMPANY_ID, internal: true },
  { token: 'sandbox-other-token', companyId: OTHER_COMPANY_ID, internal: false },
];

/** The OAuth2 client the sandbox's token endpoint (POST /oauth2/token) accepts out of the box. */
export const DEFAULT_OAUTH_CLIENT = {
  clientId: 'sandbox-client',
  clientSecret: 'sandbox-secret',
  companyId: DEMO_COMPANY_ID,
  internal: false,
  /** Lifetime of issued access tokens, seconds. */
  expiresIn: 3600,
} as const;
