/**
 * `product-sync rules`: the rule catalogue (src/rule-catalogue.ts) as a table, JSON, or the Markdown of docs/rules.md
 * (test/rules-catalogue.test.ts keeps that file equal to {@link rulesMarkdown}).
 */
import { EXIT } from '../exit-codes.ts';
import { RULES, type Rule } from '../rule-catalogue.ts';
import { textTable } from './text-table.ts';

/** Flags of `rules` (src/cli.ts). */
export interface RulesFlags {
  format?: string;
}

/** Prints the catalogue: a table (default), `--format json` or `--format markdown` (docs/rules.md). */
export async function rulesCommand(flags: RulesFlags, out: NodeJS.WritableStream = process.stdout): Promise<number> {
  const format = flags.format ?? 'text';
  if (format === 'json') out.write(`${JSON.stringify({ rules: RULES }, null, 2)}\n`);
  else if (format === 'markdown') out.write(rulesMarkdown());
  else
    out.write(
      `${RULES.length} rules (docs/rules.md); a mapping adds its own under rules:\n\n${textTable(
        ['id', 'severity', 'code', 'fields', 'rule'],
        RULES.map((r) => [r.id, r.severity, r.code, r.fields.join(', '), r.message]),
      )}\n`,
    );
  return EXIT.ok;
}

const KIND_TITLES: Readonly<Record<Rule['kind'], string>> = {
  sheet: 'The sheet (readers, duplicate keys)',
  cell: 'Cells (transforms)',
  gtin: 'GTIN',
  row: 'Rows of the mapping',
  field: "The API's field rules (src/api/fields.ts)",
  'cross-field': 'Cross-field rules',
  lookup: 'Lookups (reference lists, harmonized codes, brands)',
  user: "A mapping's own rules",
  api: "The API's answers",
};

const cell = (s: string): string => s.replace(/\|/g, '\\|');

/** docs/rules.md: the catalogue by kind, one table row per rule. */
export function rulesMarkdown(): string {
  const lines = [
    '# Rule catalogue',
    '',
    '<!-- Written by `product-sync rules --format markdown` from src/rule-catalogue.ts; test/rules-catalogue.test.ts',
    '     keeps them equal. Do not edit by hand. -->',
    '',
    `Every check product-sync makes is a rule with a stable id (${RULES.length} rules). An id is never given to`,
    'another rule: a rule that goes away is retired, its id kept out of use. Reports keep the issue codes and add the',
    'rule id of each issue: `(rule PS-GTIN-006)` after each issue in rows.* and rejected.*, the `rule` of summary.json',
    '`issues` and the `rule` column of issues.csv. `product-sync rules` prints this table (`--format json` for tools).',
    '',
    'The severity is the issue code’s (docs/mapping.md, docs/reports.md): an error keeps the row from being sent, a',
    'warning is reported only; `varies` says the code’s severity depends on the case. A mapping’s quality gate',
    '(docs/mapping.md, "Quality gates") can hold a run on any rule id, warnings included. The GS1 column names the',
    'section of the GS1 General Specifications or the GDSN attribute rule a check follows, where one exists.',
    '',
  ];
  for (const kind of Object.keys(KIND_TITLES) as Rule['kind'][]) {
    const rules = RULES.filter((r) => r.kind === kind);
    if (rules.length === 0) continue;
    lines.push(
      `## ${KIND_TITLES[kind]}`,
      '',
      '| id | severity | code | fields | rule | GS1 |',
      '|---|---|---|---|---|---|',
    );
    for (const r of rules)
      lines.push(
        `| \`${r.id}\` | ${r.severity} | \`${r.code}\` | ${r.fields.map((f) => `\`${f}\``).join(', ')} | ${cell(r.message)} | ${cell(r.gs1 ?? '')} |`,
      );
    lines.push('');
  }
  return `${lines.join('\n').trimEnd()}\n`;
}
