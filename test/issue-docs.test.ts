import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { RESOLVE_ISSUE_CODES } from '../src/pipeline/resolve/reference-resolver.ts';
import { READ_ISSUE_CODES } from '../src/pipeline/read-issue-codes.ts';

describe('issue codes of readers and resolution', () => {
  it('are all documented in docs/reports.md with their severity', () => {
    const doc = readFileSync(new URL('../docs/reports.md', import.meta.url), 'utf8');
    for (const [code, [severity]] of Object.entries({ ...READ_ISSUE_CODES, ...RESOLVE_ISSUE_CODES })) {
      expect(doc, code).toContain(`| \`${code}\` | ${severity} |`);
    }
  });
});
