import type * as z from 'zod';
import type { ProblemDetails } from '../errors.ts';
import { valueAt } from '../value-at.ts';

/** One entry of a problem-details body's `errors` array. */
export interface ProblemEntry {
  code: string;
  property: string;
  message: string;
  detail: string | null;
}

/** A problem-details body as the reference spec's Errors section fixes it (docs/api-contract.md §Errors). */
export type ProblemBody = ProblemDetails;

/** type URL and title of every status the sandbox answers with a problem body. */
export const PROBLEM_STATUSES: Readonly<Record<number, { type: string; title: string }>> = {
  400: { type: 'https://tools.ietf.org/html/rfc7231#section-6.5.1', title: 'Bad Request' },
  401: { type: 'https://tools.ietf.org/html/rfc7235#section-3.1', title: 'Unauthorized' },
  404: { type: 'https://tools.ietf.org/html/rfc7231#section-6.5.4', title: 'Not Found' },
  409: { type: 'https://tools.ietf.org/html/rfc7231#section-6.5.8', title: 'Conflict' },
  413: { type: 'https://tools.ietf.org/html/rfc7231#section-6.5.11', title: 'Payload Too Large' },
  415: { type: 'https://tools.ietf.org/html/rfc7231#section-6.5.13', title: 'Unsupported Media Type' },
  429: { type: 'https://tools.ietf.org/html/rfc6585#section-4', title: 'Too Many Requests' },
  500: { type: 'https://tools.ietf.org/html/rfc7231#section-6.6.1', title: 'Internal Server Error' },
  503: { type: 'https://tools.ietf.org/html/rfc7231#section-6.6.4', title: 'Service Unavailable' },
};

/** A problem-details body for `status` with the given entries (and optional extra members). */
export function problem(status: number, errors: ProblemEntry[] = [], extra: Partial<ProblemBody> = {}): ProblemBody {
  const s = PROBLEM_STATUSES[status] ?? { type: 'about:blank', title: 'Error' };
  return { type: s.type, title: s.title, status, errors, ...extra };
}

/** A 400 INVALID_REQUEST entry naming one property. */
export function invalid(property: string, message: string): ProblemEntry {
  return { code: 'INVALID_REQUEST', property, message, detail: null };
}

/** A 400 body with one INVALID_REQUEST entry per property (messages of one property joined with "; "). */
export function badRequest(entries: ProblemEntry[]): ProblemBody {
  const byProperty = new Map<string, ProblemEntry>();
  for (const e of entries) {
    const seen = byProperty.get(e.property);
    if (!seen) byProperty.set(e.property, { ...e });
    else if (!seen.message.split('; ').includes(e.message)) seen.message += `; ${e.message}`;
  }
  return problem(400, [...byProperty.values()]);
}

/** The 404 body of the list item lookup: empty errors plus detail, instance and extensions, as the spec shows. */
export function listItemNotFound(): ProblemBody {
  return problem(404, [], { detail: null, instance: null, extensions: {} });
}

/** `comments[0].id` from a zod path. */
export function propertyPath(path: readonly PropertyKey[]): string {
  let out = '';
  for (const p of path) {
    if (typeof p === 'number') out += `[${p}]`;
    else out += out ? `.${String(p)}` : String(p);
  }
  return out;
}

/**
 * One INVALID_REQUEST entry per offending property from zod issues: unknown / forbidden keys become one entry
 * each (`notAccepted` phrases the message), a missing required value says "is required".
 */
export function entriesFromZod(
  error: z.ZodError,
  input: unknown,
  notAccepted: (property: string) => string,
): ProblemEntry[] {
  const out: ProblemEntry[] = [];
  for (const issue of error.issues) {
    if (issue.code === 'unrecognized_keys') {
      for (const key of issue.keys) {
        const property = propertyPath([...issue.path, key]);
        out.push(invalid(property, notAccepted(property)));
      }
      continue;
    }
    const property = propertyPath(issue.path) || 'body';
    const missing = issue.code === 'invalid_type' && valueAt(input, issue.path) === undefined;
    out.push(invalid(property, missing ? `${property} is required` : `${property}: ${issue.message}`));
  }
  return out;
}
