// The supplier scorecard through the CLI against the sandbox (issue 38 item 4, docs/scorecard.md): three imports of one
// supplier's sheets — clean, then a renamed and a removed column with 30 % invalid rows, then half invalid — each with
// its scorecard in summary.json and the CLI's last lines, then `scorecard` prints the runs and writes the file for the
// supplier, read back (in French: the mapping's language).
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import ExcelJS from 'exceljs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunSummary } from '../../src/pipeline/report/report.ts';
import { DEMO_COMPANY_ID } from '../../src/sandbox/defaults.ts';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/server.ts';
import { cliInProcess } from '../helpers/cli.ts';
import { inlineEnv } from '../helpers/env.ts';
import { COLUMNS, tradeItemMapping } from '../helpers/mappings.ts';
import { testGtin } from '../helpers/sheets.ts';

let sandbox: RunningSandbox;
let dir: string;
let env: Record<string, string>;
let mapping: string;

/** A GTIN-13 with a wrong check digit. */
const badCheck = (i: number) => {
  const g = testGtin(i, '037000');
  return g.slice(0, -1) + String((Number(g.at(-1)) + 1) % 10);
};

/** 10 rows, the first `invalid` with a wrong check digit; `name`: the name column's header; `extra`: one more. */
function sheet(file: string, o: { invalid: number; name: string; extra: string; emptyWeights?: number }): string {
  const lines = [`GTIN;${o.name};Poids net;Unité;${o.extra}`];
  for (let i = 0; i < 10; i++) {
    const gtin = i < o.invalid ? badCheck(i) : testGtin(i, '037000');
    const weight = i < (o.emptyWeights ?? 0) ? '' : String(100 + i);
    lines.push(`${gtin};Galettes ${i};${weight};g;x${i}`);
  }
  const path = join(dir, file);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return path;
}

async function importSheet(file: string): Promise<{ stdout: string; summary: RunSummary; runDir: string }> {
  const before = new Set(readdirSync(join(dir, 'reports')));
  const r = await cliInProcess(['import', file, '--mapping', mapping], { env });
  expect(r.code, r.stderr).toBeLessThanOrEqual(1);
  const runDir = readdirSync(join(dir, 'reports')).find((d) => !before.has(d) && !d.startsWith('.'))!;
  const summary = JSON.parse(readFileSync(join(dir, 'reports', runDir, 'summary.json'), 'utf8')) as RunSummary;
  return { stdout: r.stdout, summary, runDir: join(dir, 'reports', runDir) };
}

beforeAll(async () => {
  sandbox = await startSandbox({ port: 0 });
  dir = mkdtempSync(join(tmpdir(), 'ps-scorecard-'));
  env = inlineEnv(sandbox.url, dir);
  mapping = join(dir, 'galettes.yaml');
  // The name's column is called Désignation or Libellé, as suppliers name it.
  const columns = [COLUMNS.gtin, '  - { column: [Désignation, Libellé], field: tradeItemName }', ...COLUMNS.weight];
  writeFileSync(mapping, tradeItemMapping('galettes', DEMO_COMPANY_ID, columns, 'scope: owner\n'));
  mkdirSync(join(dir, 'reports'), { recursive: true });
});

afterAll(async () => {
  await sandbox?.close();
});

describe('the supplier scorecard', () => {
  it('grades each run as it streams by, compares its columns with the previous run, and the scorecard command writes the supplier file', async () => {
    // 1. Clean, but two rows without a weight: completeness 95 (4 fields: 100, 100, 80, 100).
    const first = await importSheet(
      sheet('s1.csv', { invalid: 0, name: 'Désignation', extra: 'Marque', emptyWeights: 2 }),
    );
    const s1 = first.summary.scorecard!;
    expect(s1.validity).toMatchObject({ rows: 10, invalid: 0, invalidShare: 0 });
    expect(s1.completeness.fields).toEqual([
      { field: 'gtin', column: 'GTIN', filled: 10, share: 100 },
      { field: 'tradeItemName', column: 'Désignation', filled: 10, share: 100 },
      { field: 'netContents[0].value', column: 'Poids net', filled: 8, share: 80 },
      { field: 'netContents[0].unitOfMeasure', column: 'Unité', filled: 10, share: 100 },
    ]);
    expect(s1.parts.completeness).toBe(95);
    expect(s1.parts.timeliness).toBeNull();
    expect(s1.language).toBe('fr');
    expect(first.stdout).toMatch(
      /scorecard: \d+\/100, grade [A-E] \(validity 100, completeness 95, timeliness –, stability /,
    );
    expect(first.stdout.trim().split('\n').slice(-3, -2)[0]).toContain('scorecard:');

    // 2. The name column renamed (Désignation → Libellé, both known to the mapping), Marque gone, Couleur new; 3 of 10
    // rows invalid: over 20 %, so D at best.
    const second = await importSheet(sheet('s2.csv', { invalid: 3, name: 'Libellé', extra: 'Couleur' }));
    const s2 = second.summary.scorecard!;
    expect(s2.stability).toMatchObject({
      previousRunId: first.summary.runId,
      columnsRenamed: [{ from: 'Désignation', to: 'Libellé' }],
      columnsAdded: ['Couleur'],
      columnsRemoved: ['Marque'],
    });
    expect(s2.validity.codes).toEqual([{ code: 'GTIN_CHECK_DIGIT', rule: 'PS-GTIN-006', severity: 'error', rows: 3 }]);
    expect(s2.parts.validity).toBe(70);
    expect(['D', 'E']).toContain(s2.grade);
    expect(s2.score).toBeLessThan(70);
    // The rejected rows are told in the supplier's language (the mapping's: fr-FR).
    const rejected = readFileSync(join(second.runDir, 'rejected.csv'), 'utf8');
    expect(rejected).toContain('ERREUR GTIN_CHECK_DIGIT [GTIN]');
    expect(rejected).toContain('la clé de contrôle du GTIN est fausse');
    const issues = readFileSync(join(second.runDir, 'issues.csv'), 'utf8');
    expect(issues).toContain(',message\r\n');
    expect(issues).toContain('la clé de contrôle du GTIN est fausse');

    // 3. Half the rows invalid: E.
    const third = await importSheet(sheet('s3.csv', { invalid: 5, name: 'Libellé', extra: 'Couleur' }));
    const s3 = third.summary.scorecard!;
    expect(s3.grade).toBe('E');
    expect(s3.capped).toBe('E');
    expect(s3.stability.previousRunId).toBe(second.summary.runId);
    expect(s3.stability.columnsAdded).toEqual([]);

    // The command: the mapping's runs, oldest first, with score and grade.
    const r = await cliInProcess(['scorecard', '--report-dir', join(dir, 'reports'), '--mapping', 'galettes'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toContain(`mapping galettes: 3 run(s), last score ${s3.score}, grade E`);
    const lines = r.stdout.split('\n');
    const at = (runId: string) => lines.findIndex((l) => l.includes(runId));
    expect(at(first.summary.runId)).toBeLessThan(at(second.summary.runId));
    expect(at(second.summary.runId)).toBeLessThan(at(third.summary.runId));
    expect(lines[at(third.summary.runId)]).toMatch(new RegExp(`\\b${s3.score}\\s+E\\b`));

    // The file for the supplier, in its language, read back.
    const out = join(dir, 'galettes.xlsx');
    const w = await cliInProcess(
      ['scorecard', '--report-dir', join(dir, 'reports'), '--mapping', mapping, '--out', out],
      { env },
    );
    expect(w.code, w.stderr).toBe(0);
    const wb = new ExcelJS.Workbook();
    await wb.xlsx.readFile(out);
    const ws = wb.getWorksheet('scorecard')!;
    const header = (ws.getRow(1).values as unknown[]).slice(1);
    expect(header).toEqual([
      'flux / correspondance',
      'import',
      'terminé le',
      'fichier',
      'lignes',
      'note',
      'classe',
      'lignes valides %',
      'champs remplis %',
      "à l'heure",
      'stabilité',
      'lignes invalides',
      'principaux problèmes',
    ]);
    expect(ws.rowCount).toBe(4);
    const last = ws.getRow(4);
    expect(last.getCell(2).value).toBe(third.summary.runId);
    expect(last.getCell(6).value).toBe(s3.score);
    expect(last.getCell(7).value).toBe('E');
    expect(String(last.getCell(13).value)).toBe('GTIN_CHECK_DIGIT (5): la clé de contrôle du GTIN est fausse');

    // The same in German on request, as CSV.
    const csv = join(dir, 'galettes.csv');
    const c = await cliInProcess(
      ['scorecard', '--report-dir', join(dir, 'reports'), '--mapping', 'galettes', '--out', csv, '--language', 'de'],
      { env },
    );
    expect(c.code, c.stderr).toBe(0);
    const text = readFileSync(csv, 'utf8');
    expect(text).toContain('Punkte,Note');
    expect(text).toContain('die Prüfziffer der GTIN ist falsch');

    // Nothing of another mapping: exit 2, said.
    const none = await cliInProcess(['scorecard', '--report-dir', join(dir, 'reports'), '--feed', 'nope'], { env });
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no run of feed nope with a scorecard');
  }, 120_000);
});
