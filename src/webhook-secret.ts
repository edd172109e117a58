/** A Standard Webhooks secret: `whsec_` then the key in base64 (at least 16 bytes, at most 128). */
const SECRET = /^whsec_([A-Za-z0-9+/]+={0,2})$/;

/** Why `secret` is not a usable webhook secret (never quoting it), or null. */
export function webhookSecretProblem(secret: string): string | null {
  const m = SECRET.exec(secret.trim());
  if (!m) return 'must be whsec_ followed by the key in base64 (e.g. whsec_ and 32 random bytes in base64)';
  const bytes = Buffer.from(m[1]!, 'base64').length;
  if (bytes < 16 || bytes > 128) return `must hold 16 to 128 bytes of key in base64 (it holds ${bytes})`;
  return null;
}

/** The signing key of a secret that {@link webhookSecretProblem} accepts. */
export function webhookKey(secret: string): Buffer {
  return Buffer.from(secret.trim().slice('whsec_'.length), 'base64');
}
