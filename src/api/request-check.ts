import type * as z from 'zod';
import { HttpError, type ProblemEntry } from '../errors.ts';
import type { BodyOperation, QueryParamRule } from './fields.ts';
import { bodySchema, querySchema } from './schemas.ts';

function entries(issues: readonly z.core.$ZodIssue[], what: string): ProblemEntry[] {
  const out: ProblemEntry[] = [];
  for (const i of issues) {
    if (i.code === 'unrecognized_keys') {
      for (const key of i.keys)
        out.push({
          code: 'INVALID_REQUEST',
          property: [...i.path, key].join('.'),
          message: `not accepted by ${what}`,
          detail: null,
        });
    } else {
      out.push({ code: 'INVALID_REQUEST', property: i.path.join('.') || '(body)', message: i.message, detail: null });
    }
  }
  return out;
}

/**
 * An HttpError (PS_ERR_HTTP_REQUEST_INVALID, nothing sent) whose body names each offending property, problem-details
 * style.
 */
export function requestInvalid(method: string, url: string, errors: ProblemEntry[]): HttpError {
  return new HttpError('PS_ERR_HTTP_REQUEST_INVALID', {
    method,
    url,
    status: null,
    outcomeUnknown: false,
    body: { type: 'about:blank', title: 'Request not sent', status: 0, errors },
  });
}

/**
 * Throws PS_ERR_HTTP_REQUEST_INVALID unless `body` passes the operation's strict schema (unknown or forbidden fields,
 * required, formats).
 */
export function assertBody(operation: BodyOperation, body: unknown, method: string, url: string): void {
  const r = bodySchema(operation).safeParse(body);
  if (!r.success) throw requestInvalid(method, url, entries(r.error.issues, operation));
}

const queryCache = new WeakMap<readonly QueryParamRule[], z.ZodObject>();

/**
 * Throws PS_ERR_HTTP_REQUEST_INVALID unless `query` names only the endpoint's parameters, with valid values (uuid,
 * Skip/Take).
 */
export function assertQuery(
  params: readonly QueryParamRule[],
  query: Readonly<Record<string, unknown>>,
  method: string,
  url: string,
): void {
  let schema = queryCache.get(params);
  if (!schema) {
    schema = querySchema(params).strict();
    queryCache.set(params, schema);
  }
  const defined = Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined && v !== null));
  const r = schema.safeParse(defined);
  if (!r.success) throw requestInvalid(method, url, entries(r.error.issues, `${method} ${new URL(url).pathname}`));
}
