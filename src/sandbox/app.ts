import Fastify, { type FastifyInstance, type FastifyServerOptions } from 'fastify';
import { logger as rootLogger } from '../logger.ts';
import { registerAdminRoutes } from './admin-routes.ts';
import { defaultOAuthClients, registerOAuthRoute, TokenRegistry, type OAuthClient } from './auth.ts';
import { faultOf, sendProblem, setRequestState, type SandboxContext } from './context.ts';
import { DEFAULT_TOKENS, type SandboxToken } from './defaults.ts';
import { FaultInjector, parseFaultSpec, type FaultSpec } from './faults.ts';
import type { SandboxHandle } from './handle.ts';
import { problem } from './problem.ts';
import { registerProductRoutes } from './product-routes.ts';
import { registerReferenceRoutes } from './reference-routes.ts';
import { loadReferenceSeed, type ReferenceSeed } from './seed/index.ts';
import { SandboxStore } from './store.ts';

/** Options of buildSandbox / startSandbox (docs/api-contract.md §Running the sandbox). */
export interface SandboxOptions {
  /** Tokens accepted besides DEFAULT_TOKENS. */
  tokens?: readonly SandboxToken[];
  /** OAuth2 clients accepted besides the default one. */
  oauthClients?: readonly OAuthClient[];
  /** Lifetime of tokens issued to the default OAuth client, seconds (default 3600; tests use 1–2). */
  tokenTtlSeconds?: number;
  /** Fixed latency or a [min, max] range, ms (a latency in `faults` wins). */
  latencyMs?: number | [number, number];
  /** Fault settings, as an object or in the CLI syntax of parseFaultSpec. */
  faults?: FaultSpec | string;
  /** Default PRNG seed of the fault draws (a seed in `faults` wins); default 1. */
  seed?: number;
  /** Serve the test-only /__admin routes (default false). */
  admin?: boolean;
  /** Log requests through the project logger (default false). */
  logger?: boolean;
  /** Reference data to serve instead of loadReferenceSeed() (tests). */
  referenceSeed?: ReferenceSeed;
  /** Ignore client-chosen tradeItemId / manufacturedItemId on create and assign new ids (default false). */
  assignIds?: boolean;
}

const JSON_TYPES = ['application/json', 'application/json-patch+json'];
// application/*+json: any structured-syntax JSON suffix (RFC 6839).
const JSON_SUFFIX = /^application\/[a-z0-9!#$&^_.+-]+\+json\s*(;|$)/i;

const handles = new WeakMap<FastifyInstance, SandboxHandle>();

/** The in-process handle of an app built by buildSandbox (store, counts, reset, faults). */
export function sandboxHandle(app: FastifyInstance): SandboxHandle {
  const h = handles.get(app);
  if (!h) throw new Error('not a sandbox app');
  return h;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Builds the sandbox app (both APIs, OAuth token endpoint, optional admin routes) without listening. */
export function buildSandbox(options: SandboxOptions = {}): FastifyInstance {
  const startSpec: FaultSpec = {
    ...(options.latencyMs !== undefined ? { latencyMs: options.latencyMs } : {}),
    ...(typeof options.faults === 'string' ? parseFaultSpec(options.faults) : (options.faults ?? {})),
  };
  const defaultSeed = options.seed ?? 1;
  const store = new SandboxStore();
  const tokens = new TokenRegistry(
    [...DEFAULT_TOKENS, ...(options.tokens ?? [])],
    [...defaultOAuthClients(options.tokenTtlSeconds), ...(options.oauthClients ?? [])],
  );
  let seed: ReferenceSeed | undefined = options.referenceSeed;
  const ctx: SandboxContext = {
    store,
    tokens,
    faults: new FaultInjector(startSpec, defaultSeed),
    referenceSeed: () => (seed ??= loadReferenceSeed()),
    assignIds: Boolean(options.assignIds),
  };
  const handle: SandboxHandle = {
    store,
    tokens,
    get faults() {
      return ctx.faults;
    },
    counts: () => structuredClone(store.counts),
    reset() {
      store.reset();
      ctx.faults = new FaultInjector(startSpec, defaultSeed);
    },
    setFaults(spec) {
      ctx.faults = new FaultInjector(spec, defaultSeed);
    },
    setAssignIds(on) {
      ctx.assignIds = on;
    },
  };

  const serverOptions: FastifyServerOptions = {
    routerOptions: { caseSensitive: false, ignoreTrailingSlash: true },
    ...(options.logger ? { loggerInstance: rootLogger.child({ component: 'sandbox' }) } : { logger: false }),
  };
  const app = Fastify(serverOptions) as unknown as FastifyInstance;
  handles.set(app, handle);

  app.removeAllContentTypeParsers();
  const parseJson = (_req: unknown, body: string | Buffer, done: (err: Error | null, body?: unknown) => void) => {
    const text = body.toString();
    if (text.trim() === '') return done(null, undefined);
    try {
      done(null, JSON.parse(text));
    } catch (e) {
      done(
        Object.assign(new Error(`request body is not valid JSON: ${(e as Error).message}`), {
          statusCode: 400,
          code: 'SANDBOX_BAD_JSON',
        }),
      );
    }
  };
  app.addContentTypeParser(JSON_TYPES, { parseAs: 'string' }, parseJson);
  app.addContentTypeParser(JSON_SUFFIX, { parseAs: 'string' }, parseJson);

  app.setErrorHandler((err: Error & { statusCode?: number; code?: string }, req, reply) => {
    if (err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      const detail = `content type "${req.headers['content-type'] ?? ''}" is not accepted; use application/json, application/json-patch+json or application/*+json`;
      return sendProblem(req, reply, problem(415, [], { detail }));
    }
    const status = err.statusCode && err.statusCode >= 400 && err.statusCode < 500 ? err.statusCode : 500;
    if (status === 400)
      return sendProblem(
        req,
        reply,
        problem(400, [{ code: 'INVALID_REQUEST', property: 'body', message: err.message, detail: null }]),
      );
    if (status === 500) req.log.error({ err }, 'sandbox handler failed');
    return sendProblem(req, reply, problem(status, [], { detail: err.message }));
  });
  app.setNotFoundHandler((req, reply) =>
    sendProblem(req, reply, problem(404, [], { detail: `no route ${req.method} ${req.url.split('?')[0]}` })),
  );

  registerOAuthRoute(app, tokens);
  if (options.admin) registerAdminRoutes(app, handle);

  app.register(async (api) => {
    api.addHook('onRequest', async (req, reply) => {
      const isWrite = req.method !== 'GET' && req.method !== 'HEAD';
      const counts = store.counts;
      const key = `${req.method} ${req.routeOptions.url ?? req.url}`;
      counts.total++;
      if (isWrite) counts.writes++;
      counts.byRoute[key] = (counts.byRoute[key] ?? 0) + 1;
      // The product API's limits (limits.ts): refused before any work, or held in the queue.
      const limits = ctx.faults.limits;
      if (limits && req.url.toLowerCase().startsWith('/api/')) {
        const admitted = await limits.admit();
        if (!admitted.ok) {
          counts.faults['429'] = (counts.faults['429'] ?? 0) + 1;
          reply.header('retry-after', String(admitted.retryAfterSeconds));
          return sendProblem(req, reply, problem(429, [], { detail: 'the API is at its limit' }));
        }
        reply.raw.once('close', admitted.release);
      }
      const decision = ctx.faults.next(isWrite, key);
      if (decision.fault !== 'ok') counts.faults[decision.fault] = (counts.faults[decision.fault] ?? 0) + 1;
      if (decision.latencyMs > 0) await sleep(decision.latencyMs);
      const credential = tokens.resolve(req.headers.authorization);
      setRequestState(req, { credential, fault: decision.fault });
      if (!credential) {
        reply.header('www-authenticate', 'Bearer');
        return sendProblem(req, reply, problem(401));
      }
    });
    api.addHook('preHandler', async (req, reply) => {
      const fault = faultOf(req);
      if (fault === '429' || fault === '503') {
        reply.header('retry-after', String(ctx.faults.retryAfterSeconds));
        return sendProblem(req, reply, problem(Number(fault), [], { detail: `injected fault: ${fault}` }));
      }
    });
    registerProductRoutes(api, ctx);
    registerReferenceRoutes(api, ctx);
  });
  return app;
}
