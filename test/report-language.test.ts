// Reports in the supplier's language (issue 38 item 5, docs/reports.md): one message table per language keyed by issue
// code, every code in every language with the same placeholders; rejected.* and issues.csv written in it.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ISSUE_CODES, issue } from '../src/issue-codes.ts';
import { parseMapping } from '../src/pipeline/map/mapping.ts';
import {
  formatIssuesIn,
  issueMessage,
  MESSAGES,
  placeholdersOf,
  REPORT_LANGUAGES,
  reportLanguageOf,
  WORDS,
} from '../src/pipeline/report-language.ts';
import { createReportWriter, type RunSummary } from '../src/pipeline/report/report.ts';
import { IssueBreakdown } from '../src/pipeline/report/issue-breakdown.ts';

const MAPPING = (extra: string) => `target: tradeItem
language: fr-FR
${extra}
columns:
  - { column: GTIN, field: gtin, type: gtin }
`;

describe('report languages', () => {
  it('every issue code has a message in every language, with the same placeholders as in English', () => {
    const codes = Object.keys(ISSUE_CODES);
    expect(REPORT_LANGUAGES).toEqual(expect.arrayContaining(['en', 'fr', 'de']));
    for (const lang of REPORT_LANGUAGES) {
      expect(Object.keys(MESSAGES[lang]).sort(), lang).toEqual([...codes].sort());
      for (const code of codes) {
        expect(MESSAGES[lang][code]!.trim(), `${lang} ${code}`).not.toBe('');
        expect(placeholdersOf(MESSAGES[lang][code]!), `${lang} ${code}`).toEqual(placeholdersOf(MESSAGES.en[code]!));
      }
      expect(Object.keys(WORDS[lang]).sort()).toEqual(Object.keys(WORDS.en).sort());
    }
  });

  it('fills the placeholders, and defaults to the sheet language (en when it has no table)', () => {
    expect(issueMessage('de', 'FIELD_REQUIRED', { field: 'tradeItemName' })).toBe(
      'tradeItemName ist Pflicht und fehlt',
    );
    expect(issueMessage('fr', 'NO_SUCH_CODE')).toBe('NO_SUCH_CODE');
    expect(reportLanguageOf('fr-FR')).toBe('fr');
    expect(reportLanguageOf('de_AT')).toBe('de');
    expect(reportLanguageOf('es-ES')).toBe('en');
    expect(parseMapping(MAPPING(''), 'm.yaml').reportLanguage).toBe('fr');
    expect(parseMapping(MAPPING('reportLanguage: de'), 'm.yaml').reportLanguage).toBe('de');
    expect(() => parseMapping(MAPPING('reportLanguage: es'), 'm.yaml')).toThrow(
      /reportLanguage: reports are written in en, fr, de/,
    );
  });

  it("writes rejected.* and issues.csv in the report's language; the API's own words are kept after the message", async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-report-lang-'));
    const w = await createReportWriter(dir, { sourceHeaders: ['GTIN', 'Name'], language: 'de' });
    const issues = [
      issue('GTIN_CHECK_DIGIT', {
        row: 2,
        column: 'GTIN',
        field: 'gtin',
        value: '5601234567891',
        message: 'check digit should be 3',
      }),
      issue('API_REJECTED', { row: 2, message: 'gtin: refused' }),
    ];
    await w.addRow({ row: 2, key: null, outcome: 'invalid', issues });
    await w.addRejected(2, ['5601234567891', 'Kekse'], issues);
    const b = new IssueBreakdown();
    b.add(2, issues);
    const summary = { counts: {}, issues: b.entries() } as unknown as RunSummary;
    await w.finish(summary);
    const rejected = readFileSync(join(dir, 'rejected.csv'), 'utf8');
    expect(rejected).toContain(
      'FEHLER GTIN_CHECK_DIGIT [GTIN] ""5601234567891"": die Prüfziffer der GTIN ist falsch (rule PS-GTIN-006); ' +
        'FEHLER API_REJECTED: der Katalog hat die Zeile abgelehnt — gtin: refused (rule PS-API-001)',
    );
    const csv = readFileSync(join(dir, 'issues.csv'), 'utf8')
      .replace(/^\uFEFF/, '')
      .split('\r\n');
    expect(csv[0]!.endsWith(',message')).toBe(true);
    expect(csv.find((l) => l.startsWith('GTIN_CHECK_DIGIT,'))).toMatch(/,die Prüfziffer der GTIN ist falsch$/);
    expect(formatIssuesIn('fr', [issues[0]!], (s) => s)).toBe(
      'ERREUR GTIN_CHECK_DIGIT [GTIN] "5601234567891": la clé de contrôle du GTIN est fausse (rule PS-GTIN-006)',
    );
  });
});
