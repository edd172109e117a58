// The rule catalogue (issue 38 item 1): every check has a stable rule id, docs/rules.md is written from the same table,
// `product-sync rules` lists it, the cross-field rules report warnings with their ids, and a validate's reports give
// each issue's rule id next to its code.
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { MANUFACTURED_ITEM_FIELDS, NESTED_OBJECTS, TRADE_ITEM_FIELDS } from '../src/api/fields.ts';
import { rulesMarkdown } from '../src/commands/rules.ts';
import { ISSUE_CODES } from '../src/issue-codes.ts';
import { crossFieldChecker, crossFieldIssues } from '../src/pipeline/map/cross-field.ts';
import type { Mapping } from '../src/pipeline/map/mapping.ts';
import type { Draft } from '../src/pipeline/types.ts';
import { RETIRED_RULE_IDS, RULES, ruleIdOf } from '../src/rule-catalogue.ts';
import { DEMO_COMPANY_ID } from '../src/sandbox/defaults.ts';
import { cliInProcess } from './helpers/cli.ts';
import { testGtin, writeProductSheet } from './helpers/sheets.ts';

const has = (code: string, field: string) => RULES.some((r) => r.code === code && r.fields.includes(field));

describe('the rule catalogue (src/rule-catalogue.ts)', () => {
  it('gives every rule a unique, well-formed id that no retired rule had', () => {
    const ids = RULES.map((r) => r.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^PS-(SHT|CEL|GTIN|ROW|FLD|XF|REF|USR|API)-\d{3}$/);
    expect(ids.filter((id) => RETIRED_RULE_IDS.includes(id))).toEqual([]);
    expect(RULES.length).toBeGreaterThan(40);
  });

  it('has a rule for every issue code, with the code’s severity', () => {
    for (const [code, entry] of Object.entries(ISSUE_CODES)) {
      const rules = RULES.filter((r) => r.code === code);
      expect(rules.length, code).toBeGreaterThan(0);
      for (const r of rules) expect(r.severity, r.id).toBe(entry.length === 3 ? 'varies' : entry[0]);
    }
  });

  it('has one rule per field constraint of the API field tables', () => {
    for (const f of [...TRADE_ITEM_FIELDS, ...MANUFACTURED_ITEM_FIELDS]) {
      expect(has('FIELD_TYPE', f.name), f.name).toBe(true);
      if (f.requiredOn?.length) expect(has('FIELD_REQUIRED', f.name), f.name).toBe(true);
      if (f.nonEmptyOn?.length) expect(has('FIELD_EMPTY', f.name), f.name).toBe(true);
      if (f.type.kind === 'uuid') expect(has('FIELD_FORMAT', f.name), f.name).toBe(true);
    }
    const tops = [...TRADE_ITEM_FIELDS, ...MANUFACTURED_ITEM_FIELDS].filter(
      (f) => f.type.kind === 'object' || f.type.kind === 'objectArray',
    );
    for (const top of tops) {
      const of = (top.type as { of: keyof typeof NESTED_OBJECTS }).of;
      for (const n of NESTED_OBJECTS[of]) {
        const path = `${top.name}.${n.name}`;
        expect(has('FIELD_TYPE', path), path).toBe(true);
        if (n.type.kind === 'weightUnit') expect(has('FIELD_INVALID', path), path).toBe(true);
      }
    }
    expect(RULES.filter((r) => r.kind === 'cross-field').length).toBeGreaterThanOrEqual(8);
  });

  it('names the rule of an issue by its code and field; an issue naming its own rule keeps it', () => {
    expect(ruleIdOf({ code: 'FIELD_REQUIRED', field: 'tradeItemName' })).toBe('PS-FLD-001');
    const nested = RULES.find((r) => r.code === 'FIELD_TYPE' && r.fields[0] === 'netContents.value')!;
    expect(ruleIdOf({ code: 'FIELD_TYPE', field: 'netContents[2].value' })).toBe(nested.id);
    expect(ruleIdOf({ code: 'FIELD_TYPE', field: 'somethingElse' })).toBe('PS-FLD-097');
    expect(ruleIdOf({ code: 'GTIN_CHECK_DIGIT', field: 'gtin' })).toBe('PS-GTIN-006');
    expect(ruleIdOf({ code: 'DUPLICATE_KEY', field: null })).toBe('PS-SHT-009');
    expect(ruleIdOf({ code: 'USER_RULE', field: null, rule: 'ACME-001' })).toBe('ACME-001');
    expect(ruleIdOf({ code: 'NOT_A_CODE', field: null })).toBeNull();
  });

  it('is docs/rules.md, line for line (regenerate: product-sync rules --format markdown > docs/rules.md)', () => {
    expect(readFileSync(new URL('../docs/rules.md', import.meta.url), 'utf8')).toBe(rulesMarkdown());
  });
});

describe('product-sync rules', () => {
  it('lists every rule as a table, and as JSON with --format json', async () => {
    const text = await cliInProcess(['rules']);
    expect(text.code).toBe(0);
    expect(text.stdout).toContain(`${RULES.length} rules`);
    expect(text.stdout).toMatch(/PS-GTIN-006\s+error\s+GTIN_CHECK_DIGIT\s+gtin\s+a GTIN's last digit/);
    const json = await cliInProcess(['rules', '--format', 'json']);
    expect(json.code).toBe(0);
    const parsed = JSON.parse(json.stdout) as { rules: { id: string; gs1: string | null }[] };
    expect(parsed.rules.map((r) => r.id)).toEqual(RULES.map((r) => r.id));
    expect(parsed.rules.find((r) => r.id === 'PS-GTIN-006')!.gs1).toMatch(/GS1 General Specifications §7\.9/);
    const bad = await cliInProcess(['rules', '--format', 'yaml']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('Allowed choices are text, json, markdown');
  });
});

const draft = (fields: Record<string, unknown>): Draft => ({
  row: 2,
  key: 'k',
  target: 'tradeItem',
  fields,
  clear: [],
  issues: [],
  source: [],
  origins: { tradeItemName: { column: 'Nom', value: fields.tradeItemName as string } },
});
const rulesOf = (fields: Record<string, unknown>) => crossFieldIssues(draft(fields)).map((i) => [i.rule, i.severity]);

describe('the cross-field rules', () => {
  it('hold on a consistent row', () => {
    expect(
      rulesOf({
        tradeItemName: 'Sablés au beurre 4K',
        gtin: '03560070000004',
        isConsumerUnit: 'true',
        netContents: [{ value: '250', unitOfMeasure: 'g' }],
        seasonalAvailabilityStartDate: '2026-01-01',
        seasonalAvailabilityEndDate: '2026-03-01',
        isTradeItemSeasonal: 'true',
        variableWeight: { minimumValue: 1, maximumValue: 2, unitOfMeasure: 'kg' },
      }),
    ).toEqual([]);
  });

  it('warn, each with its rule id, where the fields contradict each other', () => {
    expect(rulesOf({ gtin: '13560070000001', isConsumerUnit: 'true' })).toEqual([['PS-GTIN-008', 'warning']]);
    expect(rulesOf({ netContents: [{ value: '250' }] })).toEqual([['PS-XF-001', 'warning']]);
    expect(rulesOf({ netContentValue: '0', netContentUnit: 'g' })).toEqual([['PS-XF-003', 'warning']]);
    expect(rulesOf({ netContentValue: '5' })).toEqual([['PS-XF-002', 'warning']]);
    expect(rulesOf({ seasonalAvailabilityStartDate: '2026-05-01', seasonalAvailabilityEndDate: '2026-03-01' })).toEqual(
      [['PS-XF-005', 'warning']],
    );
    expect(
      rulesOf({ targetMarketsList: [{ startAvailabilityDate: '2026-05-01', endAvailabilityDate: '2025-01-01' }] }),
    ).toEqual([['PS-XF-006', 'warning']]);
    expect(rulesOf({ variableWeight: { minimumValue: 3, maximumValue: 2 } })).toEqual([['PS-XF-007', 'warning']]);
    expect(rulesOf({ tradeItemName: 'SABLES AU BEURRE' })).toEqual([['PS-XF-008', 'warning']]);
    expect(rulesOf({ tradeItemName: 'Sablés <b>beurre</b>' })).toEqual([['PS-XF-009', 'warning']]);
    expect(rulesOf({ tradeItemName: 'Sablés &amp; beurre' })).toEqual([['PS-XF-009', 'warning']]);
    expect(rulesOf({ tradeItemName: 'Sablés & beurre' })).toEqual([]);
    expect(rulesOf({ isTradeItemSeasonal: 'false', seasonalAvailabilityEndDate: '2026-03-01' })).toEqual([
      ['PS-XF-010', 'warning'],
    ]);
    expect(rulesOf({ isTradeItemSeasonal: 'true' })).toEqual([['PS-XF-011', 'warning']]);
    const [i] = crossFieldIssues(draft({ tradeItemName: 'SABLES AU BEURRE' }));
    expect(i).toMatchObject({ row: 2, column: 'Nom', field: 'tradeItemName', code: 'NAME_ALL_CAPITALS' });
  });

  it('warn the same when checked for the mapping that fills the row, which leaves out the checks it cannot fail', () => {
    const filling = (...tops: string[]) =>
      ({ columns: tops.map((top) => ({ field: { top } })), defaults: [] }) as unknown as Pick<
        Mapping,
        'columns' | 'defaults'
      >;
    for (const fields of [
      { gtin: '13560070000001', isConsumerUnit: 'true' },
      { netContents: [{ value: '250' }] },
      { netContentValue: '5' },
      { isTradeItemSeasonal: 'true' },
      { variableWeight: { minimumValue: 3, maximumValue: 2 } },
      { gtin: '03560070000004', tradeItemName: 'SABLES AU BEURRE', netContents: [{ value: '0', unitOfMeasure: 'g' }] },
    ]) {
      const expected = crossFieldIssues(draft(fields));
      expect(expected.length).toBeGreaterThan(0);
      expect(crossFieldChecker(filling(...Object.keys(fields)))(draft(fields))).toEqual(expected);
    }
    // A mapping filling only the GTIN and the name: no level, net content or season check runs.
    expect(crossFieldChecker(filling('gtin', 'tradeItemName'))(draft({ gtin: '13560070000001' }))).toEqual([]);
  });
});

describe('rule ids in the reports of a validate', () => {
  it('names each issue’s rule in rejected.csv, rows.csv, issues.csv and summary.json', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ps-rules-'));
    const { mapping } = writeProductSheet(dir, 1, { owner: DEMO_COMPANY_ID, file: 'unused.csv' });
    // The report in English: the run's own messages and rule ids (French ones: test/report-language.test.ts).
    appendFileSync(mapping, 'reportLanguage: en\n');
    const bad = testGtin(1).slice(0, -1) + String((Number(testGtin(1).at(-1)) + 1) % 10);
    const file = join(dir, 'sheet.csv');
    writeFileSync(
      file,
      `GTIN;Désignation;Poids net;Unité\n${bad};Sablés;100;g\n${testGtin(2)};SABLES AU BEURRE;100;g\n`,
    );
    const reportDir = join(dir, 'reports');
    const r = await cliInProcess(['validate', file, '--mapping', mapping], {
      env: {
        PRODUCT_API_URL: 'http://127.0.0.1:9',
        REFERENCE_API_URL: 'http://127.0.0.1:9',
        API_TOKEN: 'unused',
        REPORT_DIR: reportDir,
        REDIS_URL: '',
      },
    });
    expect(r.code, r.stderr).toBe(1);
    const [run] = readdirSync(reportDir).filter((d) => !d.startsWith('.'));
    const at = (f: string) => readFileSync(join(reportDir, run!, f), 'utf8');
    expect(at('rejected.csv')).toMatch(/ERROR GTIN_CHECK_DIGIT \[GTIN\] ""\d+"": .* \(rule PS-GTIN-006\)"/);
    expect(at('rows.csv')).toContain(
      'WARNING NAME_ALL_CAPITALS [Désignation] ""SABLES AU BEURRE"": tradeItemName is written in capitals only (rule PS-XF-008)',
    );
    const summary = JSON.parse(at('summary.json')) as { issues: { code: string; rule: string }[] };
    expect(summary.issues.map((e) => [e.code, e.rule]).sort()).toEqual([
      ['GTIN_CHECK_DIGIT', 'PS-GTIN-006'],
      ['NAME_ALL_CAPITALS', 'PS-XF-008'],
    ]);
    expect(at('issues.csv')).toMatch(/^\uFEFFcode,severity,column,field,rows,firstRows,values,rule,message\r\n/);
    expect(r.stdout).toMatch(/GTIN_CHECK_DIGIT.*PS-GTIN-006/);
  });
});
