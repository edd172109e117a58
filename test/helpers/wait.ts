// Waiting in tests: for a condition, polled at a short interval, never for a fixed time where a condition can be
// named.

/** Resolves after `ms` milliseconds: for a test that must let real time pass (a TTL, a schedule), not to await work. */
export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** How often {@link until} asks its condition. */
const POLL_MS = 10;

/**
 * Resolves as soon as `cond` holds (it may be async), asking every 10 ms; throws `timed out waiting for <what>` after
 * `ms` (default 30 s). `until(cond, ms)` or `until('what is awaited', cond, ms)`.
 */
export async function until(cond: () => boolean | Promise<boolean>, ms?: number): Promise<void>;
export async function until(what: string, cond: () => boolean | Promise<boolean>, ms?: number): Promise<void>;
export async function until(
  a: string | (() => boolean | Promise<boolean>),
  b?: number | (() => boolean | Promise<boolean>),
  c?: number,
): Promise<void> {
  const [what, cond, ms] =
    typeof a === 'string'
      ? [a, b as () => boolean | Promise<boolean>, c ?? 30_000]
      : ['a condition', a, (b as number | undefined) ?? 30_000];
  const t0 = Date.now();
  while (!(await cond())) {
    if (Date.now() - t0 > ms) throw new Error(`timed out waiting for ${what} (${ms} ms)`);
    await sleep(POLL_MS);
  }
}
