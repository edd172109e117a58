import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { issue, ISSUE_CODES, severityOf, type IssueCode } from '../src/issue-codes.ts';

// The code tables of the docs: docs/mapping.md lists the codes of reading the cells (transforms, map-row, validation),
// docs/reports.md those of the readers, reference resolution and the run. Together they are ISSUE_CODES, row for row.
const DOCS = ['mapping.md', 'reports.md'] as const;

function documentedRows(): Map<string, { doc: string; severity: string; meaning: string }[]> {
  const rows = new Map<string, { doc: string; severity: string; meaning: string }[]>();
  for (const doc of DOCS) {
    const text = readFileSync(new URL(`../docs/${doc}`, import.meta.url), 'utf8');
    for (const m of text.matchAll(/^\| `([A-Z][A-Z0-9_]+)` \| (error|warning) \| (.*) \|$/gm)) {
      const list = rows.get(m[1]!) ?? [];
      list.push({ doc, severity: m[2]!, meaning: m[3]! });
      rows.set(m[1]!, list);
    }
  }
  return rows;
}

describe('the issue code table (src/issue-codes.ts)', () => {
  it('is documented code for code in docs/mapping.md and docs/reports.md, once, with its severity and meaning', () => {
    const rows = documentedRows();
    for (const [code, [severity, meaning]] of Object.entries(ISSUE_CODES)) {
      expect(rows.get(code), code).toEqual([{ doc: expect.any(String), severity, meaning }]);
    }
  });

  it('has every code the docs list', () => {
    expect([...documentedRows().keys()].filter((code) => !(code in ISSUE_CODES))).toEqual([]);
  });

  it('gives issue() its severity; only a code marked varies takes another', () => {
    expect(issue('GTIN_CHECK_DIGIT', { row: 3, column: 'EAN', value: '1', message: 'm' })).toEqual({
      row: 3,
      column: 'EAN',
      field: null,
      value: '1',
      code: 'GTIN_CHECK_DIGIT',
      severity: 'error',
      message: 'm',
    });
    expect(issue('ROW_SKIPPED', { row: 4, message: 'skipped' }).severity).toBe('warning');
    expect(issue('ROW_RAGGED', { row: 5, message: 'ragged' }, 'error').severity).toBe('error');
    const varying = Object.entries(ISSUE_CODES)
      .filter(([, entry]) => entry.length === 3)
      .map(([code]) => code);
    expect(varying).toEqual(['ROW_RAGGED', 'USER_RULE', 'USER_RULE_FAILED']);
    // @ts-expect-error a code whose severity the table fixes takes no override
    issue('GTIN_EMPTY', { row: 1, message: 'm' }, 'warning');
    expect(severityOf('ROW_RAGGED' satisfies IssueCode)).toBe('warning');
  });
});
