import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { ERROR_CODES, HttpError, isRetryable, ProductSyncError } from '../src/errors.ts';

describe('error codes', () => {
  const doc = readFileSync(new URL('../docs/errors.md', import.meta.url), 'utf8');
  const rows = new Map(
    [...doc.matchAll(/^\| `(PS_ERR_[A-Z_]+)` \| (yes|no) \|/gm)].map((m) => [m[1]!, m[2] === 'yes']),
  );

  it('documents every code, with the retryable flag the code has', () => {
    for (const [code, [, retryable]] of Object.entries(ERROR_CODES)) {
      expect(rows.has(code), `${code} missing from docs/errors.md`).toBe(true);
      expect(rows.get(code), `${code} retryable flag`).toBe(retryable);
    }
    expect([...rows.keys()].filter((c) => !(c in ERROR_CODES))).toEqual([]);
  });

  it('carries the call and the API words in HTTP errors', () => {
    const e = new HttpError('PS_ERR_HTTP_STATUS', {
      method: 'PATCH',
      url: 'http://x/api/tradeItems/1',
      status: 400,
      body: {
        type: 't',
        title: 'Bad Request',
        status: 400,
        errors: [{ code: 'INVALID_REQUEST', property: 'harmonizedCode', message: 'not accepted', detail: null }],
      },
    });
    expect(e.message).toContain('PATCH http://x/api/tradeItems/1');
    expect(e.apiMessage).toBe('harmonizedCode: not accepted');
    expect(isRetryable(e)).toBe(false);
    expect(isRetryable(new ProductSyncError('PS_ERR_HTTP_UNAVAILABLE'))).toBe(true);
  });
});
