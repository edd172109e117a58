// The scorecard's arithmetic (docs/scorecard.md): grade boundaries, weights, the invalid-share caps, stability.
import { describe, expect, it } from 'vitest';
import {
  buildScorecard,
  gradeOf,
  ruleIdOf,
  scoreOf,
  stabilityPart,
  WEIGHTS,
  type ScoreParts,
  type ScorecardInput,
} from '../src/pipeline/report/scorecard.ts';
import { ValidityTally } from '../src/pipeline/report/scorecard-tally.ts';
import { issue } from '../src/issue-codes.ts';
import { runEndEvent } from '../src/events/run-events.ts';
import { ProcessMetrics } from '../src/metrics/metrics.ts';
import type { RunSummary } from '../src/pipeline/report/report.ts';

const all = (v: number): ScoreParts => ({ validity: v, completeness: v, timeliness: v, stability: v });

describe('the scorecard', () => {
  it('grades A ≥ 90, B ≥ 80, C ≥ 70, D ≥ 60, E below', () => {
    expect([100, 90, 89, 80, 79, 70, 69, 60, 59, 0].map(gradeOf)).toEqual([
      'A',
      'A',
      'B',
      'B',
      'C',
      'C',
      'D',
      'D',
      'E',
      'E',
    ]);
  });

  it('weighs the parts 55 / 25 / 10 / 10, validity first, and leaves out a part not measured', () => {
    expect(WEIGHTS).toEqual({ validity: 55, completeness: 25, timeliness: 10, stability: 10 });
    expect(Object.values(WEIGHTS).reduce((a, b) => a + b, 0)).toBe(100);
    expect(scoreOf({ validity: 100, completeness: 0, timeliness: 0, stability: 0 }, 0).score).toBe(55);
    expect(scoreOf({ validity: 0, completeness: 100, timeliness: 0, stability: 0 }, 0).score).toBe(25);
    expect(scoreOf({ validity: 0, completeness: 0, timeliness: 100, stability: 0 }, 0).score).toBe(10);
    expect(scoreOf({ validity: 0, completeness: 0, timeliness: 0, stability: 100 }, 0).score).toBe(10);
    // No deadline, no previous run: validity and completeness keep their proportions (55 : 25).
    expect(scoreOf({ validity: 100, completeness: 60, timeliness: null, stability: null }, 0).score).toBe(
      Math.round((55 * 100 + 25 * 60) / 80),
    );
    expect(scoreOf({ validity: null, completeness: null, timeliness: null, stability: null }, 0).score).toBe(0);
    expect(scoreOf(all(100), 0)).toEqual({ score: 100 });
  });

  it('caps the grade by the invalid share: more than 20 % is D at best, more than 40 % E', () => {
    expect(scoreOf(all(100), 0.2)).toEqual({ score: 100 });
    expect(scoreOf(all(100), 0.2001)).toEqual({ score: 69, capped: 'D' });
    expect(gradeOf(scoreOf(all(100), 0.21).score)).toBe('D');
    expect(scoreOf(all(100), 0.4)).toEqual({ score: 69, capped: 'D' });
    expect(scoreOf(all(100), 0.41)).toEqual({ score: 59, capped: 'E' });
    // A score already under the cap stays as it is.
    expect(scoreOf(all(50), 0.3)).toEqual({ score: 50 });
  });

  it('builds the parts from a run: validity, completeness, timeliness, stability', () => {
    const input: ScorecardInput = {
      rows: 100,
      invalid: 10,
      created: 5,
      archived: 5,
      codes: [],
      fill: [
        { field: 'gtin', column: 'EAN', filled: 100 },
        { field: 'tradeItemName', column: 'Libellé', filled: 50 },
      ],
      headers: ['EAN', 'Libellé', 'Couleur'],
      language: 'fr',
      deadline: { met: false },
      previous: {
        runId: 'r1',
        scorecard: {
          columns: ['EAN', 'Désignation', 'Marque'],
          completeness: { fields: [{ field: 'tradeItemName', column: 'Désignation', filled: 1, share: 100 }] },
        },
      },
    };
    const s = buildScorecard(input);
    expect(s.parts).toEqual({ validity: 90, completeness: 75, timeliness: 0, stability: 57.5 });
    expect(s.stability).toMatchObject({
      previousRunId: 'r1',
      columnsRenamed: [{ from: 'Désignation', to: 'Libellé' }],
      columnsAdded: ['Couleur'],
      columnsRemoved: ['Marque'],
      churn: 0.1,
    });
    // 3 column changes leave a quarter of the column half; churn 10 %: 0.5 × 0.25 + 0.5 × 0.9.
    expect(stabilityPart(s.stability)).toBe(57.5);
    expect(s.score).toBe(Math.round((55 * 90 + 25 * 75 + 10 * 0 + 10 * 57.5) / 100));
    expect(s.grade).toBe(gradeOf(s.score));
    expect(s.timeliness).toEqual({ expected: true, met: false });
    // The first run of a mapping has no stability part.
    expect(buildScorecard({ ...input, previous: undefined }).parts.stability).toBeNull();
  });

  it('counts each code once a row, errors over warnings, and names its rule', () => {
    const t = new ValidityTally();
    const at = (row: number) => ({ row, column: 'GTIN', message: 'x' });
    t.add(2, [issue('GTIN_CHECK_DIGIT', at(2)), issue('GTIN_CHECK_DIGIT', { ...at(2), column: 'EAN' })]);
    t.add(3, [issue('GTIN_CHECK_DIGIT', at(3)), issue('ROW_HIDDEN', at(3))]);
    t.add(null, [issue('GTIN_CHECK_DIGIT', at(4))]);
    expect(t.result()).toEqual([
      { code: 'GTIN_CHECK_DIGIT', rule: ruleIdOf('GTIN_CHECK_DIGIT'), severity: 'error', rows: 2 },
      { code: 'ROW_HIDDEN', rule: 'PS-SHT-007', severity: 'warning', rows: 1 },
    ]);
  });

  it('is a gauge per mapping and feed on /metrics, and in run.finished', async () => {
    const scorecard = buildScorecard({
      rows: 10,
      invalid: 1,
      created: 0,
      archived: 0,
      codes: [],
      fill: [{ field: 'gtin', column: 'GTIN', filled: 10 }],
      headers: ['GTIN'],
      language: 'en',
    });
    const summary = {
      runId: 'r1',
      source: { file: 'a.csv', sha256: 'x', rows: 10 },
      mapping: 'acme',
      mode: 'upsert',
      dryRun: false,
      startedAt: '2026-11-28T10:00:00.000Z',
      finishedAt: '2026-11-28T10:00:01.000Z',
      counts: { rows: 10, created: 0, updated: 9, unchanged: 0, archived: 0, unarchived: 0, invalid: 1, failed: 0 },
      requests: { reference: 0, product: 0 },
      exitCode: 1,
      scorecard,
    } as unknown as RunSummary;
    const m = new ProcessMetrics();
    m.recordRun(summary, 'nightly');
    expect(await m.text()).toContain(`product_sync_scorecard_score{mapping="acme",feed="nightly"} ${scorecard.score}`);
    const e = runEndEvent({ runId: 'r1', exitCode: 1, summary, reportDir: '/tmp/none' }, {});
    expect(e.data.scorecard).toEqual({ score: scorecard.score, grade: scorecard.grade, parts: scorecard.parts });
  });
});
