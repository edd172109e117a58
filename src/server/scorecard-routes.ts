/**
 * The console's scorecard page (issue 38, docs/scorecard.md): `GET /scorecard?feed=NAME` (or `?mapping=NAME`) is a page
 * with the feed's or mapping's grade and a chart of its score over its last runs, drawn by `scorecard.js` from
 * `GET /scorecards?feed=&mapping=` — the runs of the report directory with a scorecard (their summary.json), oldest
 * first. Read from the report files: it answers while Redis is away.
 */
import { readFile } from 'node:fs/promises';
import type { FastifyInstance } from 'fastify';
import { buildFile } from '../build-dir.ts';
import { readScorecardRuns, type ScorecardFilter } from '../pipeline/report/scorecard-history.ts';
import { mappingName } from './runs.ts';

/** Runs a page shows at most (the last ones). */
export const SCORECARD_RUNS = 30;

/** One run as `GET /scorecards` lists it. */
export interface ScorecardPoint {
  runId: string;
  finishedAt: string;
  file: string;
  rows: number;
  score: number;
  grade: string;
  parts: Record<string, number | null>;
  capped: string | null;
}

/** Registers GET /scorecard (the page), /scorecard.js and /scorecards (JSON). */
export function registerScorecards(app: FastifyInstance, opts: { reportDir: string }): void {
  app.get('/scorecards', async (req, reply) => {
    const q = req.query as { feed?: unknown; mapping?: unknown };
    const filter: ScorecardFilter = {};
    if (typeof q.feed === 'string' && q.feed !== '') filter.feed = q.feed;
    else if (typeof q.mapping === 'string' && q.mapping !== '') filter.mapping = mappingName(q.mapping);
    else return reply.code(400).send({ error: 'name a feed (?feed=) or a mapping (?mapping=)' });
    const runs = (await readScorecardRuns(opts.reportDir, filter)).slice(-SCORECARD_RUNS);
    const last = runs.at(-1);
    return {
      ...filter,
      score: last?.scorecard.score ?? null,
      grade: last?.scorecard.grade ?? null,
      runs: runs.map((r): ScorecardPoint => ({
        runId: r.runId,
        finishedAt: r.finishedAt,
        file: r.file.split(/[\\/]/).pop() ?? r.file,
        rows: r.rows,
        score: r.scorecard.score,
        grade: r.scorecard.grade,
        parts: r.scorecard.parts,
        capped: r.scorecard.capped ?? null,
      })),
    };
  });
  app.get('/scorecard', async (_req, reply) =>
    reply.type('text/html; charset=utf-8').send(await readFile(buildFile('server/public/scorecard.html'), 'utf8')),
  );
  app.get('/scorecard.js', async (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').send(await readFile(buildFile('server/public/scorecard.js'), 'utf8')),
  );
}
