/**
 * The scorecard file a buyer sends to a supplier (`product-sync scorecard --out FILE.xlsx|.csv`): one line per run —
 * the feed or mapping, when it finished, the file, rows, score, grade, the four parts and the main issues with their
 * messages — with headers and messages in the report's language (report-language.ts).
 */
import { extname } from 'node:path';
import { ProductSyncError } from '../../errors.ts';
import { writingTo } from '../../fs-errors.ts';
import { XlsxWriter } from '../../formats/xlsx-writer.ts';
import { issueMessage, WORDS, type ReportLanguage } from '../report-language.ts';
import { commitTemp, tempPathFor, writeFileAtomic } from './atomic.ts';
import { csvField } from './neutralize.ts';
import type { ScorecardRun } from './scorecard-history.ts';

/** Issue codes shown per run in the file, most rows first. */
export const FILE_TOP_CODES = 3;

const part = (v: number | null, none: string) => (v === null ? none : String(v));

/** The file's header and lines, in `lang`. */
export function scorecardTable(
  runs: readonly ScorecardRun[],
  lang: ReportLanguage,
): { header: string[]; lines: string[][] } {
  const w = WORDS[lang];
  const header = [
    `${w.feed} / ${w.mapping}`,
    w.run,
    w.finished,
    w.file,
    w.rows,
    w.score,
    w.grade,
    w.validity,
    w.completeness,
    w.timeliness,
    w.stability,
    w.invalidRows,
    w.issues,
  ];
  const lines = runs.map((r) => {
    const s = r.scorecard;
    const issues = s.validity.codes
      .slice(0, FILE_TOP_CODES)
      .map((c) => `${c.code} (${c.rows}): ${issueMessage(lang, c.code)}`)
      .join('; ');
    const timely = s.timeliness.met === null ? w.none : s.timeliness.met ? w.yes : w.no;
    return [
      r.feed ?? r.mapping,
      r.runId,
      r.finishedAt.slice(0, 19).replace('T', ' '),
      r.file.split(/[\\/]/).pop() ?? r.file,
      String(r.rows),
      String(s.score),
      s.grade,
      part(s.parts.validity, w.none),
      part(s.parts.completeness, w.none),
      timely,
      part(s.parts.stability, w.none),
      String(s.validity.invalid),
      issues,
    ];
  });
  return { header, lines };
}

/** Writes the scorecard file (XLSX or CSV, by the name's extension) atomically. */
export async function writeScorecardFile(
  path: string,
  runs: readonly ScorecardRun[],
  lang: ReportLanguage,
): Promise<void> {
  const { header, lines } = scorecardTable(runs, lang);
  const ext = extname(path).toLowerCase();
  await writingTo('cannot write the scorecard to', path, async () => {
    if (ext === '.csv') {
      const text = [header, ...lines].map((l) => l.map(csvField).join(',')).join('\r\n');
      await writeFileAtomic(path, `\uFEFF${text}\r\n`);
      return;
    }
    if (ext !== '.xlsx')
      throw new ProductSyncError('PS_ERR_CLI_USAGE', `--out ${path}: the scorecard file is .xlsx or .csv`);
    const grade = header.length - 7;
    const writer = new XlsxWriter(tempPathFor(path), 'scorecard', header, {
      freezeHeader: true,
      autoFilter: true,
      widthsFromRows: 100,
      numberColumns: [4, 5, header.length - 2],
      wrapColumns: [header.length - 1],
      sharedStrings: { columns: [grade], values: ['A', 'B', 'C', 'D', 'E'] },
    });
    for (const l of lines) await writer.add(l);
    await writer.close();
    await commitTemp(path);
  });
}
