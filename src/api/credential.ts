// Apart from auth.ts: the transport (http.ts) sends with a credential, and the OAuth credential fetches through it.
/** A bearer credential: the token to send now, and whether a rejected token can be replaced by a fresh one. */
export interface Credential {
  /** The access token to send (may fetch or refresh it first). */
  token(): Promise<string>;
  /** Forgets `token` after the API rejected it; true when the next token() may give a different one. */
  invalidate(token: string): boolean;
}
