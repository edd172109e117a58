import { randomBytes, timingSafeEqual } from 'node:crypto';
import { parse as parseQuery } from 'node:querystring';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DEFAULT_OAUTH_CLIENT, DEMO_COMPANY_ID, type SandboxToken } from './defaults.ts';

/** An OAuth2 client the token endpoint accepts. */
export interface OAuthClient {
  clientId: string;
  clientSecret: string;
  companyId: string;
  internal: boolean;
  /** Lifetime of the access tokens issued to it, seconds (fractions allowed, for tests). */
  expiresIn: number;
}

/** Who a request acts for. */
export interface Credential {
  companyId: string;
  internal: boolean;
}

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** `value[:companyId[:internal]]` → a token (company defaults to DEMO_COMPANY_ID); throws on a bad company or flag. */
export function parseTokenArg(arg: string): SandboxToken {
  const [token, companyId, flag, ...rest] = arg.split(':');
  if (!token || rest.length > 0) throw new Error(`token "${arg}": expected <value>[:<companyId>[:internal]]`);
  if (companyId !== undefined && companyId !== '' && !UUID_RE.test(companyId))
    throw new Error(`token "${token}": company "${companyId}" is not a uuid`);
  if (flag !== undefined && flag !== 'internal' && flag !== '')
    throw new Error(`token "${token}": third part must be "internal", got "${flag}"`);
  return { token, companyId: (companyId || DEMO_COMPANY_ID).toLowerCase(), internal: flag === 'internal' };
}

/** Comma-separated token args (env SANDBOX_TOKENS) → tokens. */
export function parseTokenList(text: string | undefined): SandboxToken[] {
  return (text ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map(parseTokenArg);
}

/** Static tokens plus OAuth-issued ones (which expire). */
export class TokenRegistry {
  private readonly fixed = new Map<string, Credential>();
  private readonly issued = new Map<string, Credential & { expiresAt: number }>();

  constructor(
    tokens: readonly SandboxToken[],
    readonly clients: readonly OAuthClient[],
    private readonly now: () => number = Date.now,
  ) {
    for (const t of tokens) this.fixed.set(t.token, { companyId: t.companyId.toLowerCase(), internal: t.internal });
  }

  /** The credential of an `Authorization` header value, or undefined when missing, unknown or expired. */
  resolve(header: string | undefined): Credential | undefined {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '');
    if (!m) return undefined;
    const token = m[1]!;
    const fixed = this.fixed.get(token);
    if (fixed) return fixed;
    const issued = this.issued.get(token);
    if (!issued) return undefined;
    if (issued.expiresAt <= this.now()) {
      this.issued.delete(token);
      return undefined;
    }
    return { companyId: issued.companyId, internal: issued.internal };
  }

  /** Issues an access token for a client whose id and secret match, or undefined. */
  issue(clientId: string, clientSecret: string): { token: string; expiresIn: number } | undefined {
    const client = this.clients.find((c) => c.clientId === clientId);
    if (!client || !sameSecret(client.clientSecret, clientSecret)) return undefined;
    const token = `sbx_${randomBytes(24).toString('base64url')}`;
    this.issued.set(token, {
      companyId: client.companyId.toLowerCase(),
      internal: client.internal,
      expiresAt: this.now() + client.expiresIn * 1000,
    });
    return { token, expiresIn: client.expiresIn };
  }
}

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The default OAuth client with an optional override of its token lifetime. */
export function defaultOAuthClients(tokenTtlSeconds?: number): OAuthClient[] {
  return [{ ...DEFAULT_OAUTH_CLIENT, expiresIn: tokenTtlSeconds ?? DEFAULT_OAUTH_CLIENT.expiresIn }];
}

function basicAuth(req: FastifyRequest): { id: string; secret: string } | undefined {
  const m = /^Basic\s+(\S+)$/i.exec(req.headers.authorization ?? '');
  if (!m) return undefined;
  const decoded = Buffer.from(m[1]!, 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) return undefined;
  // RFC 6749 §2.3.1: client id and secret are form-urlencoded before Basic encoding.
  return { id: decodeURIComponent(decoded.slice(0, colon)), secret: decodeURIComponent(decoded.slice(colon + 1)) };
}

function str(v: unknown): string | undefined {
  return typeof v === 'string' ? v : Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined;
}

/** POST /oauth2/token: RFC 6749 client credentials grant; errors are RFC 6749 §5.2 bodies, not problem details. */
export function registerOAuthRoute(app: FastifyInstance, tokens: TokenRegistry): void {
  app.register(async (scope) => {
    scope.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
      done(null, parseQuery(body as string));
    });
    scope.post('/oauth2/token', async (req, reply) => {
      reply.header('cache-control', 'no-store').header('pragma', 'no-cache');
      const body = (req.body && typeof req.body === 'object' ? req.body : {}) as Record<string, unknown>;
      const grant = str(body.grant_type);
      if (!grant)
        return reply.code(400).send({ error: 'invalid_request', error_description: 'grant_type is required' });
      if (grant !== 'client_credentials') {
        return reply.code(400).send({
          error: 'unsupported_grant_type',
          error_description: `grant_type "${grant}" is not supported; use client_credentials`,
        });
      }
      const basic = basicAuth(req);
      const id = basic?.id ?? str(body.client_id);
      const secret = basic?.secret ?? str(body.client_secret);
      if (!id || secret === undefined) {
        return reply
          .code(401)
          .header('www-authenticate', 'Basic realm="sandbox"')
          .send({ error: 'invalid_client', error_description: 'client authentication failed' });
      }
      const issued = tokens.issue(id, secret);
      if (!issued) {
        return reply
          .code(401)
          .header('www-authenticate', 'Basic realm="sandbox"')
          .send({ error: 'invalid_client', error_description: 'client authentication failed' });
      }
      const scopeParam = str(body.scope);
      return {
        access_token: issued.token,
        token_type: 'Bearer',
        expires_in: issued.expiresIn,
        ...(scopeParam ? { scope: scopeParam } : {}),
      };
    });
  });
}
