/**
 * The console's mapper (issue 11): a sheet is uploaded and a mapping suggested for it (suggestMapping), a person
 * changes fields, the preview of the first rows follows (the same previewSheet as `validate --preview`), and the
 * mapping is saved under a name (validated by parseMapping, written to the console's mappings directory — a name, never
 * a path) as `mapping init` writes the same choices (settleDraft, mappingText). Running it is the console's ordinary
 * upload with that mapping name.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { link, mkdir, readdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import { basename, extname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import * as z from 'zod';
import { buildFile } from '../build-dir.ts';
import type { Config } from '../config.ts';
import { HttpError, ProductSyncError } from '../errors.ts';
import { DEFAULT_LIMITS } from '../formats/limits.ts';
import { startInspection } from '../formats/zip-guard.ts';
import { FIELD_ALIASES } from '../onboarding/header-aliases.ts';
import { defaultType, MappingError, parseMapping, resolveFieldPath, type Mapping } from '../pipeline/map/mapping.ts';
import { COLUMN_TYPES } from '../pipeline/map/transforms.ts';
import { listFields, settleDraft } from '../onboarding/mapper-choices.ts';
import { fieldChoices, mappingText, suggestMapping, type MappingDraft } from '../onboarding/suggest.ts';
import { referenceLabels } from '../pipeline/resolve/list-labels.ts';
import { previewSheet } from '../pipeline/run/preview.ts';
import { contextFromConfig, type CommandContext } from '../runtime.ts';
import { withRedisBanner } from './redis-banner.ts';
import { handleUpload, type Answer, type Upload } from './upload.ts';

/** Where the mapper keeps its sheets and mappings. */
export interface MapperOptions {
  config: Config;
  /** The console's upload directory: the mapper's sheets go to its `.mapper/` folder. */
  uploadDir: string;
  mappingsDir: string;
  maxUpload: number;
  /**
   * How long an uploaded sheet stays available to the mapper (default 24 h); older ones are removed at the next upload.
   */
  sheetTtlMs?: number;
  /** True while Redis does not answer (the page then shows its banner). */
  redisDown?: () => boolean;
}

/** A mapping name the mapper saves: letters, digits, `_` and `-`, 1 to 64 characters (never a path). */
export const MAPPING_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/i;
const SHEET_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.(?:csv|xlsx)$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const TARGETS = ['tradeItem', 'manufacturedItem'] as const;
/** Rows the console previews at most (the CLI's `--preview` takes more). */
const CONSOLE_PREVIEW_MAX = 100;

const text = (max: number) => z.string().max(max);
const word = z.string().regex(/^[A-Za-z0-9-]{1,60}$/, 'must be a name such as trade-item-status');
// The draft comes back from the page: its shape is checked here, its meaning by parseMapping (mappingText's output).
// What mappingText writes without quoting (a type, a lookup's keys and names) is a plain word, so a draft never writes
// YAML of its own into the file.
const lookupShape = z.union([
  z.literal('harmonized-code'),
  z.strictObject({ list: word }),
  z.strictObject({ kind: word }),
  z.strictObject({ brand: z.strictObject({ create: z.boolean().optional() }) }),
]);
const columnSchema = z.looseObject({
  header: text(1000),
  position: z.number().int().min(1).max(100_000),
  column: z
    .strictObject({
      header: text(1000),
      group: text(1000).optional(),
      occurrence: z.number().int().min(1).max(100).optional(),
    })
    .optional(),
  samples: z.array(text(2000)).max(20).default([]),
  field: text(200).optional(),
  type: z
    .string()
    .regex(/^[A-Za-z]{1,40}$/, 'must be a column type such as decimal')
    .optional(),
  lookup: lookupShape.optional(),
  split: text(10).optional(),
  format: text(40).optional(),
  decimal: z.enum([',', '.']).optional(),
  // Written as JSON strings (mappingText), so any text is safe; the count is bounded as the rest of the draft is.
  values: z
    .record(text(2000), text(2000))
    .refine((v) => Object.keys(v).length <= 1000, 'at most 1000 values')
    .optional(),
  unresolved: z
    .array(z.strictObject({ value: text(2000), nearest: z.array(text(2000)).max(20) }))
    .max(1000)
    .optional(),
  reason: text(2000).optional(),
  warning: text(2000).optional(),
});
const draftSchema = z.looseObject({
  name: text(64).optional(),
  target: z.enum(TARGETS),
  language: text(35),
  sheet: text(200).optional(),
  headerRow: z.number().int().min(1).max(1000),
  key: z.enum(['gtin', 'tradeItemId']),
  decimalSeparator: z.enum([',', '.']).optional(),
  columns: z.array(columnSchema).min(1).max(5000),
  defaults: z.record(text(200), text(200)).optional(),
  notes: z.array(text(2000)).max(100).default([]),
  missingKey: text(4000).optional(),
});
const previewBody = z.strictObject({
  sheet: z.string().regex(SHEET_ID, 'not a sheet id of this console'),
  draft: draftSchema,
  rows: z.number().int().min(1).max(CONSOLE_PREVIEW_MAX).optional(),
  owner: z.string().regex(UUID, 'must be a company uuid').optional(),
});
const saveBody = z.strictObject({
  name: z
    .string()
    .regex(
      MAPPING_NAME,
      'a mapping name is 1 to 64 letters, digits, _ or - (starting with a letter or digit), not a path',
    ),
  draft: draftSchema,
  overwrite: z.boolean().optional(),
});

/**
 * How a column picked by hand for a field is read (type, lookup), from the alias table: `tradeItemStatusId` takes a
 * list lookup.
 */
const FIELD_SETTINGS: Readonly<Record<string, { type?: string; lookup?: unknown }>> = Object.fromEntries(
  FIELD_ALIASES.filter((a) => a.type !== undefined || a.lookup !== undefined).map((a) => [
    a.field,
    { ...(a.type ? { type: a.type } : {}), ...(a.lookup ? { lookup: a.lookup } : {}) },
  ]),
);

/**
 * The type each field reads without a `type` (defaultType): the page shows it as the type select's default, and offers
 * a date format or a decimal separator by the type in effect.
 */
const fieldTypes = (target: MappingDraft['target']): Record<string, string> =>
  Object.fromEntries(
    fieldChoices(target).flatMap((f) => {
      const t = resolveFieldPath(target, f);
      return typeof t === 'string' ? [] : [[f, defaultType(t)]];
    }),
  );

const zodAnswer = (err: z.ZodError): Answer => ({
  code: 400,
  body: { error: 'invalid request', problems: err.issues.map((i) => ({ path: i.path.join('.'), message: i.message })) },
});

/**
 * The text and parsed mapping of a draft, as `mapping init` writes the choices made (settleDraft: a quantity column
 * feeds its object, a list column its separator), with that draft; or the 400 answer listing the mapping's problems.
 */
function mappingOf(
  changed: MappingDraft,
  name: string,
): { text: string; mapping: Mapping; draft: MappingDraft } | Answer {
  const draft = settleDraft(changed);
  const text = mappingText({ ...draft, name });
  try {
    return { text, mapping: parseMapping(text, `${name}.yaml`), draft };
  } catch (err) {
    if (!(err instanceof MappingError)) throw err;
    return { code: 400, body: { error: 'invalid mapping', problems: err.problems, text, draft } };
  }
}

/** A failure of the preview as an answer: the sheet or mapping's fault is 400, the API's 502. */
function failureAnswer(err: unknown): Answer {
  if (err instanceof HttpError)
    return { code: 502, body: { error: `the API could not be read: ${err.message}`, code: err.code } };
  if (err instanceof ProductSyncError) return { code: 400, body: { error: err.message, code: err.code } };
  throw err;
}

/** Registers the mapper's routes: POST /mapper/sheets, /mapper/preview, /mapper/mappings; GET /mapper (the page). */
export async function registerMapper(app: FastifyInstance, o: MapperOptions): Promise<void> {
  // Made at the first upload: a console whose mapper is not used keeps UPLOAD_DIR to the queued uploads.
  const sheetsDir = join(o.uploadDir, '.mapper');
  const ttl = o.sheetTtlMs ?? 24 * 3600_000;
  // API clients for previews, made at the first one (a console that never previews never opens them).
  let runtime: Promise<CommandContext> | undefined;
  const context = (): Promise<CommandContext> => (runtime ??= contextFromConfig(o.config, {}));
  app.addHook('onClose', async () => {
    await (await runtime)?.close();
  });

  // Sheets older than the TTL go at the next upload (a run reads its own copy, made by the ordinary upload).
  const sweep = async (): Promise<void> => {
    const now = Date.now();
    for (const f of await readdir(sheetsDir)) {
      const file = join(sheetsDir, f);
      const st = await stat(file).catch(() => null);
      if (st && now - st.mtimeMs > ttl) await rm(file, { force: true }).catch(() => {});
    }
  };

  app.get('/mapper', async (_req, reply) =>
    reply.type('text/html; charset=utf-8').send(withRedisBanner(await page('mapper.html'), o.redisDown?.() ?? false)),
  );
  app.get('/mapper.js', async (_req, reply) =>
    reply.type('text/javascript; charset=utf-8').send(await page('mapper.js')),
  );

  /** The draft mapping of an uploaded sheet (kept only when there is one). */
  const suggest = async ({ path, name, fields }: Upload): Promise<Answer & { keep?: boolean }> => {
    const target = fields.target || 'tradeItem';
    if (!(TARGETS as readonly string[]).includes(target))
      return { code: 400, body: { error: `target must be ${TARGETS.join(' or ')}` } };
    if (fields.language && !/^[a-zA-Z]{2,3}(?:[-_][a-zA-Z0-9]{2,8})*$/.test(fields.language))
      return { code: 400, body: { error: `language must be a code such as fr-FR, got "${fields.language}"` } };
    const headerRow = fields.headerRow ? Number(fields.headerRow) : undefined;
    if (headerRow !== undefined && !(Number.isInteger(headerRow) && headerRow >= 1 && headerRow <= 1000))
      return { code: 400, body: { error: 'headerRow must be a row number from 1 to 1000' } };
    let draft: MappingDraft;
    try {
      // Labels of the reference lists, so a column of list labels gets its lookup (the owner's own list items too).
      const owner = o.config.OWNER_COMPANY_ID;
      const labels = referenceLabels(
        (await context()).ctx.clients.reference,
        owner && UUID.test(owner) ? { companyId: owner } : {},
      );
      draft = await suggestMapping(path, {
        target: target as MappingDraft['target'],
        ...(fields.language ? { language: fields.language } : {}),
        ...(fields.sheet ? { sheet: fields.sheet } : {}),
        ...(headerRow ? { headerRow } : {}),
        labels,
        name: nameOf(name),
      });
      // The stored file's name is ours: the draft names the client's.
      draft.source = basename(name);
    } catch (err) {
      if (err instanceof ProductSyncError)
        return { code: 400, body: { error: err.message.split(path).join(name), code: err.code } };
      throw err;
    }
    const id = path.slice(sheetsDir.length + 1);
    const sheets = id.endsWith('.xlsx') ? await visibleSheets(path) : undefined;
    return {
      code: 201,
      body: {
        sheet: id,
        fileName: name,
        ...(sheets ? { sheets } : {}),
        draft,
        choices: fieldChoices(draft.target),
        listFields: listFields(draft.target, fieldChoices(draft.target)),
        settings: FIELD_SETTINGS,
        types: COLUMN_TYPES,
        fieldTypes: fieldTypes(draft.target),
      },
      keep: true,
    };
  };

  app.post('/mapper/sheets', async (req, reply) => {
    await mkdir(sheetsDir, { recursive: true });
    await sweep();
    return handleUpload(req, reply, sheetsDir, o.maxUpload, suggest);
  });

  app.post('/mapper/preview', async (req, reply) => {
    const send = (a: Answer) => reply.code(a.code).send(a.body);
    const body = previewBody.safeParse(req.body);
    if (!body.success) return send(zodAnswer(body.error));
    const file = join(sheetsDir, body.data.sheet);
    if (!existsSync(file))
      return send({ code: 404, body: { error: 'no such sheet (uploads are kept for a day): upload it again' } });
    const draft = body.data.draft as unknown as MappingDraft;
    const m = mappingOf(draft, draft.name && MAPPING_NAME.test(draft.name) ? draft.name : 'draft');
    if ('code' in m) return send(m);
    try {
      const cc = await context();
      const preview = await previewSheet(
        {
          file,
          mapping: m.mapping,
          ...(body.data.rows ? { rows: body.data.rows } : {}),
          ...(body.data.owner ? { owner: body.data.owner } : {}),
        },
        cc.ctx,
      );
      // The page shows its sheet by the name it was given, not the stored one.
      return send({
        code: 200,
        body: { preview: { ...preview, file: body.data.sheet }, text: m.text, draft: m.draft },
      });
    } catch (err) {
      return send(failureAnswer(err));
    }
  });

  app.post('/mapper/mappings', async (req, reply) => {
    const send = (a: Answer) => reply.code(a.code).send(a.body);
    const body = saveBody.safeParse(req.body);
    if (!body.success) return send(zodAnswer(body.error));
    const { name, overwrite } = body.data;
    const m = mappingOf(body.data.draft as unknown as MappingDraft, name);
    if ('code' in m) return send(m);
    const target = join(o.mappingsDir, `${name}.yaml`);
    const others = ['.yml', '.json'].map((ext) => join(o.mappingsDir, `${name}${ext}`)).filter((f) => existsSync(f));
    const existed = existsSync(target) || others.length > 0;
    if (!overwrite && existed) {
      return send({
        code: 409,
        body: { error: `a mapping named "${name}" exists: choose another name, or overwrite it`, exists: true },
      });
    }
    await mkdir(o.mappingsDir, { recursive: true });
    const tmp = join(o.mappingsDir, `.${name}.${randomUUID()}.tmp`);
    await writeFile(tmp, m.text);
    try {
      if (overwrite) {
        await rename(tmp, target);
        await Promise.all(others.map((f) => rm(f, { force: true })));
      } else {
        // link() refuses an existing name: two saves under one name never overwrite each other.
        await link(tmp, target);
      }
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST')
        return send({
          code: 409,
          body: { error: `a mapping named "${name}" exists: choose another name, or overwrite it`, exists: true },
        });
      throw err;
    } finally {
      await rm(tmp, { force: true });
    }
    return send({
      code: existed ? 200 : 201,
      body: { name, file: `${name}.yaml`, replaced: existed, text: m.text, draft: m.draft },
    });
  });
}

/**
 * The visible worksheets of a workbook, in its order: the sheets the mapper offers (a hidden one is not what a supplier
 * sends). The workbook was read whole by suggestMapping already, so the inspection's checks pass here too.
 */
async function visibleSheets(file: string): Promise<string[]> {
  const started = await startInspection(file, DEFAULT_LIMITS);
  // scan() closes the file; its checks were passed by the read that made the draft.
  await started.scan().catch(() => {});
  return started.head.sheets.filter((s) => s.state === 'visible').map((s) => s.name);
}

/** A mapping name from the client's file name (`Tarif Été 2025.xlsx` → `tarif-ete-2025`), within MAPPING_NAME. */
function nameOf(fileName: string): string {
  const base = basename(fileName, extname(fileName))
    .normalize('NFKD')
    .replace(/\p{M}/gu, '')
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, '-')
    .replace(/^[-_]+|-+$/g, '');
  return base.slice(0, 64) || 'new-mapping';
}

/** A file of the mapper's page (src/server/public/, copied to dist/ by the build). */
function page(name: 'mapper.html' | 'mapper.js'): Promise<string> {
  return readFile(buildFile(`server/public/${name}`), 'utf8');
}
