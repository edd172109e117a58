/**
 * The pages' banner while Redis does not answer: shown by the server when it sends a page during an outage, then kept
 * up to date by the page itself (it asks `/health` every few seconds).
 */

/** The banner as each page holds it, hidden. */
export const REDIS_BANNER = '<p id="redis-banner" role="alert" hidden>';

/** `html` with its banner shown when `down`. */
export function withRedisBanner(html: string, down: boolean): string {
  return down ? html.replace(REDIS_BANNER, '<p id="redis-banner" role="alert">') : html;
}

/** The answer of a route that needs Redis while it does not answer (503, not a request that waits for it). */
export function redisDownAnswer(url: string): { error: string; code: string; redis: 'down' } {
  return {
    error: `Redis at ${url} does not answer: runs cannot be queued or listed until it is back (the console reconnects by itself)`,
    code: 'PS_ERR_REDIS_UNREACHABLE',
    redis: 'down',
  };
}
