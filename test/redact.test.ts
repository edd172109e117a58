import { describe, expect, it } from 'vitest';
import { addSecret, redact, redactPart } from '../src/redact.ts';

describe('redact', () => {
  it('takes out each kind of credential, whatever the case', () => {
    expect(redact('echo: Authorization: bearer abc.def-ghi')).toBe('echo: Authorization: bearer [redacted]');
    expect(redact('echo: authorization: Basic dXNlcjpwYXNz')).toBe('echo: authorization: [redacted]');
    expect(redact('sent BEARER abcdef123 to it')).toBe('sent BEARER [redacted] to it');
    expect(redact('GET https://user:pa55@api.example.com/x failed')).toBe(
      'GET https://[redacted]@api.example.com/x failed',
    );
    expect(redact('{"client_secret":"s3cr3t","Password":"x"}')).toBe(
      '{"client_secret":"[redacted]","Password":"[redacted]"}',
    );
    expect(redact('token url ?access_token=abc&x=1')).toBe('token url ?access_token=[redacted]&x=1');
  });

  it('takes out a registered secret anywhere, and leaves plain text as it is', () => {
    addSecret('zq9-secret-value');
    expect(redact('the API said zq9-secret-value back')).toBe('the API said [redacted] back');
    const plain =
      'WARNING BRAND_WOULD_CREATE [Marque] "Marque 7": brand "Marque 7" does not exist and would be created';
    expect(redact(plain)).toBe(plain);
  });

  it('remembers the parts it redacted, and forgets them when a secret is added', () => {
    const text = 'the API answered with k7-late-secret-9';
    expect(redactPart(text)).toBe(text);
    expect(redactPart('https://u:p@h/')).toBe('https://[redacted]@h/');
    addSecret('k7-late-secret-9');
    expect(redactPart(text)).toBe('the API answered with [redacted]');
  });
});
