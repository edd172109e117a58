// The error a call ends with, for tests that check its code, status or message.
import { expect } from 'vitest';

/** The error `p` rejects with, checked to be a `type` (fails the test when `p` resolves or rejects with another). */
export async function rejection<E>(p: Promise<unknown>, type: abstract new (...args: never[]) => E): Promise<E> {
  const err = await p.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(type);
  return err as E;
}

/** The body of the product and reference APIs' 404 (a problem details object with no errors). */
export const NOT_FOUND_BODY = {
  type: 'https://tools.ietf.org/html/rfc7231#section-6.5.4',
  title: 'Not Found',
  status: 404,
  errors: [],
};
