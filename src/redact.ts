/**
 * The one place that takes credentials out of text before it is written where people read it: row issues
 * (`rows.*`, `rejected.*`), journals, error messages. An API may echo what it was sent (an Authorization header, the
 * request URL), and PRODUCT_API_URL may carry `user:password@`.
 */

export const REDACTED = '[redacted]';

/** Secret values known to this process (API_TOKEN, the OAuth2 client secret, access tokens fetched), longest first. */
const secrets = new Set<string>();
let ordered: string[] = [];

/**
 * Registers a secret value: {@link redact} replaces it wherever it appears (also percent-encoded). Short values are
 * ignored.
 */
export function addSecret(value: string | undefined | null): void {
  if (!value || value.length < 6 || secrets.has(value)) return;
  secrets.add(value);
  const encoded = encodeURIComponent(value);
  if (encoded !== value) secrets.add(encoded);
  ordered = [...secrets].sort((a, b) => b.length - a.length);
  remembered.clear();
}

// `Bearer <token>` (an Authorization header echoed), whatever the case.
const BEARER = /\b(Bearer)(\s+|%20|\+)[A-Za-z0-9\-._~+/]+=*/gi;
// The whole value of an Authorization header or member (`Basic …` included): `authorization: …`, `"Authorization":"…"`.
const AUTHORIZATION =
  /(["']?authorization["']?\s*[:=]\s*["']?)(?!\[redacted\]|Bearer\s+\[redacted\])[^\s"',;}][^"'\r\n,;}]*/gi;
// URL userinfo: `scheme://user:password@` or `scheme://user@` (percent-encoded too).
const USERINFO = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@"'<>]+@/gi;
// `access_token` / `client_secret` / `password` as a JSON member or a form or query parameter.
const SECRET_FIELD =
  /(["']?(?:access_token|refresh_token|id_token|client_secret|password)["']?\s*[:=]\s*["']?)(?!\[redacted\])[^"'&\s,;}]+/gi;

// What each pattern above needs to match: a text without any of these is returned as it is.
const MAY_HOLD_CREDENTIALS = /(?:bearer|authorization|token|secret|password)|:\/\//i;

/**
 * `text` with credentials replaced by `[redacted]`: `Bearer …` tokens, Authorization header values, URL userinfo,
 * `access_token=…`-like members, and every value given to {@link addSecret}. Idempotent; other words are left alone.
 */
export function redact(text: string): string {
  let out = text;
  for (const s of ordered) if (out.includes(s)) out = out.split(s).join(REDACTED);
  // Most texts (row issues: one or more a row) hold none of the words the patterns below start from: one test instead
  // of four replaces.
  if (!MAY_HOLD_CREDENTIALS.test(out)) return out;
  return out
    .replace(BEARER, (_m, scheme: string, space: string) => `${scheme}${space}${REDACTED}`)
    .replace(AUTHORIZATION, (_m, head: string) => `${head}${REDACTED}`)
    .replace(USERINFO, (_m, scheme: string) => `${scheme}${REDACTED}@`)
    .replace(SECRET_FIELD, (_m, head: string) => `${head}${REDACTED}`);
}

// redactPart's answers (cleared when a secret is added: a text kept from before would not have it taken out).
const remembered = new Map<string, string>();
const REMEMBERED_MAX = 4096;

/**
 * {@link redact} of a short text that comes back again and again (a row issue's message, column or cell value: the
 * same few dozen over a sheet), remembered so each is scanned once.
 */
export function redactPart(text: string): string {
  let out = remembered.get(text);
  if (out === undefined) {
    if (remembered.size >= REMEMBERED_MAX) remembered.clear();
    out = redact(text);
    remembered.set(text, out);
  }
  return out;
}
