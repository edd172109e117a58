// Deadlines on source operations (src/sources/deadline.ts), on a fake clock: an operation that never settles is
// stopped at its deadline with an error naming it and its setting; a parent's abort stops it at once; a settled
// operation leaves no timer behind.
import { describe, expect, it } from 'vitest';
import { withDeadline } from '../src/sources/deadline.ts';
import { FakeClock } from './helpers/clock.ts';

const never = () => new Promise<string>(() => undefined);

describe('withDeadline', () => {
  it('stops an operation that never settles at its deadline, naming it and the setting, and aborts its signal', async () => {
    const clock = new FakeClock();
    let seen: AbortSignal | undefined;
    const run = withDeadline(
      'listing feed x',
      5_000,
      'deadlines.listSeconds',
      undefined,
      (s) => ((seen = s), never()),
      clock,
    );
    const outcome = run.then(
      () => 'settled',
      (err: Error) => err,
    );
    await clock.advance(4_999);
    expect(seen!.aborted).toBe(false);
    await clock.advance(1);
    expect(await outcome).toMatchObject({
      code: 'PS_ERR_SOURCE_TIMEOUT',
      message: expect.stringMatching(/listing feed x took longer than its deadline of 5 s \(deadlines\.listSeconds\)/),
    });
    expect(seen!.aborted).toBe(true);
  });

  it("stops at once when the parent's signal fires, with the parent's reason", async () => {
    const clock = new FakeClock();
    const parent = new AbortController();
    const run = withDeadline('download', 60_000, 'deadlines.downloadSeconds', parent.signal, () => never(), clock);
    parent.abort(new Error('worker stopping'));
    await expect(run).rejects.toThrow('worker stopping');
    expect(clock.pending).toBe(0);
  });

  it('returns what the operation returns in time, and leaves no timer', async () => {
    const clock = new FakeClock();
    await expect(withDeadline('read', 1_000, 's', undefined, async () => 'ok', clock)).resolves.toBe('ok');
    expect(clock.pending).toBe(0);
  });
});
