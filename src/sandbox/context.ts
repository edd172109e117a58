import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Credential, TokenRegistry } from './auth.ts';
import type { FaultInjector, FaultKind } from './faults.ts';
import { problem, type ProblemBody } from './problem.ts';
import type { ReferenceSeed } from './seed/index.ts';
import type { SandboxStore } from './store.ts';

/** What every sandbox route shares: the store, the credentials, the current fault injector and the seed. */
export interface SandboxContext {
  store: SandboxStore;
  tokens: TokenRegistry;
  faults: FaultInjector;
  referenceSeed: () => ReferenceSeed;
  /**
   * Creates ignore client-chosen ids and assign their own, as many real APIs do (a retried create then makes a
   * duplicate).
   */
  assignIds: boolean;
}

interface RequestState {
  credential?: Credential;
  fault: FaultKind;
}

const states = new WeakMap<FastifyRequest, RequestState>();

/** Remembers what the API scope's hooks decided for a request. */
export function setRequestState(req: FastifyRequest, state: RequestState): void {
  states.set(req, state);
}

/** The credential the request authenticated with (routes of the API scope only ever run authenticated). */
export function credentialOf(req: FastifyRequest): Credential {
  const c = states.get(req)?.credential;
  if (!c) throw new Error('credential missing: route registered outside the API scope');
  return c;
}

/** The fault drawn for the request. */
export function faultOf(req: FastifyRequest): FaultKind {
  return states.get(req)?.fault ?? 'ok';
}

const LANGUAGE_AWARE_PATH = /^\/v2\/(allergens|countries|country-divisions|fishing-zones|harmonized-codes)\//i;
const OFFERED = ['text/plain', 'application/json', 'text/json'] as const;

/**
 * The media type of a language-aware lookup's answer (docs/api-contract.md): absent Accept or one containing
 * `*∕*` → text/plain (as the real API's formatter order does); else the highest-q range that matches one of
 * text/plain, application/json, text/json; nothing matching → text/plain. Undefined for every other route.
 */
export function negotiatedType(req: FastifyRequest): string | undefined {
  if (!LANGUAGE_AWARE_PATH.test(req.url)) return undefined;
  const accept = req.headers.accept;
  if (!accept) return 'text/plain';
  const ranges = accept
    .split(',')
    .map((part, order) => {
      const [type = '', ...params] = part.split(';').map((s) => s.trim().toLowerCase());
      const qp = params.find((p) => p.startsWith('q='));
      return { type, q: qp ? Number(qp.slice(2)) : 1, order };
    })
    .filter((r) => r.type && !(r.q <= 0));
  if (ranges.some((r) => r.type === '*/*')) return 'text/plain';
  ranges.sort((a, b) => b.q - a.q || a.order - b.order);
  for (const r of ranges) {
    const hit = OFFERED.find((o) => o === r.type || (r.type.endsWith('/*') && o.startsWith(r.type.slice(0, -1))));
    if (hit) return hit;
  }
  return 'text/plain';
}

/** Sends a JSON body, in the negotiated media type on the language-aware lookups. */
export function sendJson(req: FastifyRequest, reply: FastifyReply, status: number, body: unknown): FastifyReply {
  const type = negotiatedType(req) ?? 'application/json';
  return reply.code(status).type(`${type}; charset=utf-8`).send(JSON.stringify(body));
}

/** Sends a problem-details body with its status (and the negotiated media type where it applies). */
export function sendProblem(req: FastifyRequest, reply: FastifyReply, body: ProblemBody): FastifyReply {
  return sendJson(req, reply, body.status, body);
}

/**
 * Answers a committed write: normally 200 with `body` (no body when undefined); with an injected `500after`
 * fault a 500 problem body, with `reset` the connection is destroyed — in both cases the write stays committed.
 */
export function respondWrite(req: FastifyRequest, reply: FastifyReply, body?: unknown): FastifyReply {
  const fault = faultOf(req);
  if (fault === '500after') {
    return sendProblem(
      req,
      reply,
      problem(500, [], { detail: 'injected fault: answered 500 after the write was committed' }),
    );
  }
  if (fault === 'reset') {
    reply.hijack();
    req.raw.socket?.destroy();
    return reply;
  }
  if (body === undefined) return reply.code(200).send();
  return reply.code(200).send(body);
}

/**
 * Query parameters with their names matched case-insensitively to `names` (ASP.NET binds them so), the first
 * value of a repeated one, empty values dropped; parameters not in `names` are ignored.
 */
export function normalizeQuery(raw: unknown, names: readonly string[]): Record<string, string> {
  const canonical = new Map(names.map((n) => [n.toLowerCase(), n]));
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries((raw ?? {}) as Record<string, unknown>)) {
    const name = canonical.get(key.toLowerCase());
    const v = Array.isArray(value) ? value[0] : value;
    if (name && typeof v === 'string' && v !== '' && out[name] === undefined) out[name] = v;
  }
  return out;
}

/** RFC 4122 textual uuid (any version), case-insensitive. */
export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
