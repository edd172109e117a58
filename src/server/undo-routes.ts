/**
 * The console's "Undo" of a finished run (docs/undo.md): `GET /runs/:id/undo-plan` reads the run's items and answers
 * the dry-run plan (nothing sent); `POST /runs/:id/undo` starts the undo; `GET /runs/:id/undo` tells how it goes, and
 * `/runs/:id/undo/files/<name>` serves its report.
 *
 * The undo runs in this process, not as a queued job: it holds the owner's lease in Redis as a queued import does (a
 * worker's run of the same owner waits for it, and it waits for none: a busy lease is refused at once), fences every
 * write by it, and journals each item before writing it — a console restarted mid-undo leaves it unfinished: `GET
 * /runs/:id/undo` then answers `unfinished` (read from its directory) and the next Undo resumes it. Queuing it would
 * add a job kind to the workers for no gain in safety.
 */
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Config } from '../config.ts';
import { ProductSyncError } from '../errors.ts';
import { redact } from '../redact.ts';
import { runUndo, type UndoItem, type UndoResult } from '../pipeline/undo/undo.ts';
import { lastUndoOf } from '../pipeline/undo/undo-runs.ts';
import type { UndoOutcome } from '../events/undo-lineage.ts';
import type { RunStatus } from '../queue/enqueue.ts';
import { contextFromConfig, type CommandContext } from '../runtime.ts';

/** Items of a plan the answer lists (the counts hold them all; items already as before are not listed). */
const PLAN_ITEMS = 100;
const UNDO_FILES = new Set(['summary.json', 'rows.csv', 'conflicts.csv', 'undo.jsonl']);

interface UndoState {
  status: 'running' | 'done' | 'failed';
  runId?: string;
  result?: Pick<UndoResult, 'runId' | 'exitCode' | 'summary'>;
  error?: string;
}

/** Registers the undo routes; `status` finds a run's job (its report directory is `result.runId`). */
export function registerUndo(
  app: FastifyInstance,
  o: { config: Config; reportDir: string; status: (id: string) => Promise<RunStatus | null> },
): void {
  let context: Promise<CommandContext> | undefined;
  const ctx = () => (context ??= contextFromConfig(o.config, { redis: o.config.REDIS_URL ? 'required' : 'off' }));
  app.addHook('onClose', async () => {
    if (context) await (await context).close().catch(() => undefined);
  });
  const undos = new Map<string, UndoState>();

  /** The run directory's name of a finished job, or an answer to send. */
  const runDirOf = async (id: string): Promise<{ dir: string } | { code: number; error: string }> => {
    const s = await o.status(id);
    const runId = s?.result?.runId;
    if (!s || !runId) return { code: 404, error: 'no finished run with this id' };
    if (!/^[A-Za-z0-9-]{8,200}$/.test(runId)) return { code: 404, error: 'no such run' };
    return { dir: runId };
  };
  const refusal = (err: unknown) => {
    if (err instanceof ProductSyncError && (err.code === 'PS_ERR_UNDO' || err.code === 'PS_ERR_UNDO_BLOCKED'))
      return { code: err.code === 'PS_ERR_UNDO' ? 400 : 409, body: { error: err.message, code: err.code } };
    return { code: 500, body: { error: redact((err as Error).message) } };
  };

  app.get<{ Params: { id: string }; Querystring: { force?: string } }>('/runs/:id/undo-plan', async (req, reply) => {
    const run = await runDirOf(req.params.id);
    if ('error' in run) return reply.code(run.code).send({ error: run.error });
    const items: UndoItem[] = [];
    let listed = 0;
    try {
      const c = await ctx();
      const r = await runUndo(
        { target: run.dir, reportDir: o.reportDir, dryRun: true, force: req.query.force === '1' },
        {
          ...c.ctx,
          onItem: (i) => {
            if (i.outcome === 'unchanged') return;
            listed++;
            if (items.length < PLAN_ITEMS) items.push(i);
          },
        },
      );
      return { undoes: run.dir, counts: r.summary.counts, items, more: listed - items.length };
    } catch (err) {
      const { code, body } = refusal(err);
      return reply.code(code).send(body);
    }
  });

  app.post<{ Params: { id: string }; Querystring: { force?: string } }>('/runs/:id/undo', async (req, reply) => {
    const run = await runDirOf(req.params.id);
    if ('error' in run) return reply.code(run.code).send({ error: run.error });
    if (undos.get(run.dir)?.status === 'running') return reply.code(409).send({ error: 'this undo is running' });
    const state: UndoState = { status: 'running' };
    undos.set(run.dir, state);
    // OPENLINEAGE_URL: the undo's OpenLineage events at its end, as an inline run's (undo-lineage.ts).
    const undone = { target: run.dir, reportDir: o.reportDir };
    const lineage = (outcome: UndoOutcome) =>
      o.config.OPENLINEAGE_URL
        ? import('../events/undo-lineage.ts').then((m) => m.deliverUndoLineage(o.config, undone, outcome))
        : undefined;
    void ctx()
      .then((c) => runUndo({ target: run.dir, reportDir: o.reportDir, force: req.query.force === '1' }, c.ctx))
      .then(
        async (r) => {
          Object.assign(state, { status: 'done', runId: r.runId, result: r });
          await lineage(r);
        },
        async (err: unknown) => {
          Object.assign(state, { status: 'failed', error: refusal(err).body.error });
          await lineage({ failed: err });
        },
      );
    return reply.code(202).send({ status: 'running', url: `/runs/${req.params.id}/undo` });
  });

  app.get<{ Params: { id: string } }>('/runs/:id/undo', async (req, reply) => {
    const run = await runDirOf(req.params.id);
    if ('error' in run) return reply.code(run.code).send({ error: run.error });
    const state = undos.get(run.dir);
    if (!state) {
      // Not started by this process (the console restarted since, or another replica runs it): its directory tells.
      const last = await lastUndoOf(o.reportDir, run.dir);
      if (!last) return reply.code(404).send({ error: 'no undo of this run was started' });
      if (!last.summary)
        return {
          status: 'unfinished',
          runId: last.runId,
          error: `undo ${last.runId} did not finish (the console restarted, or another console runs it): press Undo again to resume it`,
        };
      return { status: 'done', runId: last.runId, exitCode: last.summary.exitCode, summary: last.summary };
    }
    return {
      status: state.status,
      ...(state.result
        ? { runId: state.result.runId, exitCode: state.result.exitCode, summary: state.result.summary }
        : {}),
      ...(state.error ? { error: state.error } : {}),
    };
  });

  app.get<{ Params: { id: string; name: string } }>('/runs/:id/undo/files/:name', async (req, reply) => {
    const run = await runDirOf(req.params.id);
    const undoId =
      'dir' in run ? (undos.get(run.dir)?.runId ?? (await lastUndoOf(o.reportDir, run.dir))?.runId) : undefined;
    if (!undoId || !UNDO_FILES.has(req.params.name)) return reply.code(404).send({ error: 'no such file' });
    const file = join(o.reportDir, undoId, req.params.name);
    if (!existsSync(file)) return reply.code(404).send({ error: 'no such file' });
    reply.header('content-disposition', `attachment; filename="${undoId}-${req.params.name}"`);
    return reply
      .type(req.params.name.endsWith('.csv') ? 'text/csv; charset=utf-8' : 'application/json')
      .send(createReadStream(file));
  });
}
