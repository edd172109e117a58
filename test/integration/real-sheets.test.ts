import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { contextFromConfig, type CommandContext } from '../../src/runtime.ts';
import { loadConfig } from '../../src/config.ts';
import { runValidate } from '../../src/pipeline/run/run.ts';
import { suggestMapping, type MappingDraft } from '../../src/onboarding/suggest.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { apiEnv } from '../helpers/env.ts';

// Real sheets written by others sit beside the clone (../shared/data), on developer machines and in CI.
const data = new URL('../../../shared/data/real-sheets/', import.meta.url);
let sandbox: RunningSandbox;
let cc: CommandContext;

describe.runIf(existsSync(data))('validate on the real sheets', () => {
  beforeAll(async () => {
    sandbox = await startSandbox({ port: 0 });
    cc = await contextFromConfig(
      loadConfig({
        ...apiEnv(sandbox.url),
        REPORT_DIR: mkdtempSync(join(tmpdir(), 'ps-real-')),
        LOG_LEVEL: 'warn',
      }),
      {},
    );
  });
  afterAll(async () => {
    await cc?.close();
    await sandbox?.close();
  });

  const rows = (dir: string) =>
    readFileSync(join(dir, 'rows.csv'), 'utf8')
      .replace(/^\uFEFF/, '')
      .trim()
      .split(/\r?\n/)
      .slice(1);
  // rows.csv names a rejected row's issues; rejected.csv tells them in full (value and message).
  const rejected = (dir: string) => readFileSync(join(dir, 'rejected.csv'), 'utf8');

  it('Système U export: units read from words, GTINs normalised, Excel-mangled ids named by row and column', async () => {
    const r = await runValidate(
      { file: new URL('systemeu-akeneo-export.csv', data).pathname, mapping: 'systemeu-akeneo' },
      cc.ctx,
    );
    expect(r.summary.counts.rows).toBe(5);
    const lines = rows(r.reportDir);
    expect(lines[0]).toMatch(/^2,03368954957571,invalid,.*IDENTIFIER_SCIENTIFIC_NOTATION \[SVE_idRubrique\]/);
    expect(rejected(r.reportDir)).toContain('IDENTIFIER_SCIENTIFIC_NOTATION [SVE_idRubrique] ""1,76701E+15""');
    expect(lines.join('\n')).not.toMatch(/UNIT_|GTIN_/);
  });

  it('OFF producer sheet: a value with its unit in a decimal column is an issue on that cell; bad check digits on theirs', async () => {
    const r = await runValidate(
      { file: new URL('off-producer-import-fr.xlsx', data).pathname, mapping: 'off-producer-import-fr' },
      cc.ctx,
    );
    const lines = rows(r.reportDir);
    expect(lines[0]).toMatch(/^2,03270190128403,invalid,.*DECIMAL_INVALID \[Poids net\]/);
    expect(lines[1]).toMatch(/^3,,invalid,.*GTIN_CHECK_DIGIT \[Code-barres\]/);
    expect(rejected(r.reportDir)).toContain('GTIN_CHECK_DIGIT [Code-barres] ""4270190128403""');
  });

  it('eco-score template (header on row 2) and the OFF TSV export read to one outcome per row', async () => {
    const eco = await runValidate(
      { file: new URL('eco-score-template.xlsx', data).pathname, mapping: 'eco-score-template' },
      cc.ctx,
    );
    expect(rows(eco.reportDir)[0]).toMatch(/^3,07622210449283,valid/);
    const off = await runValidate(
      { file: new URL('off-export-products.tsv', data).pathname, mapping: 'off-export' },
      cc.ctx,
    );
    expect(rows(off.reportDir)).toHaveLength(off.summary.counts.rows);
    expect(off.summary.counts.rows).toBeGreaterThan(20);
  });

  /** The header each field is drafted from (the draft's own columns). */
  const drafted = (d: MappingDraft): Record<string, string> =>
    Object.fromEntries(d.columns.filter((c) => c.field).map((c) => [c.field!, c.header.trim()]));

  it('mapping init drafts every key field of the four sheets right: 17 of 17', async () => {
    const expected: [string, Record<string, string | RegExp>, number?][] = [
      [
        'systemeu-akeneo-export.csv',
        {
          gtin: 'UGC_ean',
          tradeItemName: 'UGC_libEcommerce',
          brandId: 'UGC_libMarque',
          'netContents[0].value': 'UGC_MesureNette',
          'netContents[0].unitOfMeasure': 'UGC_uniteMesureNette',
        },
      ],
      [
        'off-export-products.tsv',
        { gtin: 'code', tradeItemName: /^product_name_/, brandId: 'brands', 'netContents[0]': 'quantity' },
      ],
      [
        'off-producer-import-fr.xlsx',
        {
          gtin: 'Code-barres',
          tradeItemName: 'Nom du produit',
          brandId: 'Marques',
          'netContents[0]': 'Poids net',
          productLanguage: 'Langue principale',
        },
      ],
      ['eco-score-template.xlsx', { gtin: 'EAN', tradeItemName: 'Nom', brandId: 'Marque' }, 2],
    ];
    let right = 0;
    let total = 0;
    const wrong: string[] = [];
    for (const [file, fields, headerRow] of expected) {
      const d = await suggestMapping(new URL(file, data).pathname);
      if (headerRow) expect(d.headerRow, file).toBe(headerRow);
      else expect(d.headerRow, file).toBe(1);
      const got = drafted(d);
      for (const [field, header] of Object.entries(fields)) {
        total++;
        const h = got[field];
        if (h !== undefined && (typeof header === 'string' ? h === header : header.test(h))) right++;
        else wrong.push(`${file}: ${field} from ${h ?? 'no column'}, expected ${String(header)}`);
      }
    }
    expect(wrong).toEqual([]);
    expect([right, total]).toEqual([17, 17]);
  });
});
