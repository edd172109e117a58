import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LIST_NAMES, LOOKUPS, type ListName, type LookupKind } from '../api/fields.ts';
import type { ListItem, ReferenceRecord } from '../api/types.ts';
import { normalizeQuery, sendJson, sendProblem, UUID_RE, type SandboxContext } from './context.ts';
import { badRequest, invalid, listItemNotFound, problem, type ProblemEntry } from './problem.ts';
import type { ReferenceSeed, SeedRecord } from './seed/index.ts';

const DEFAULT_LANGUAGE = 'en-US';

/** The name of a record in a language (case-insensitive exact code), with the seed's own spelling of the code. */
export function translation(record: SeedRecord, language: string): { languageCode: string; name: string } | undefined {
  const want = language.toLowerCase();
  for (const [code, name] of Object.entries(record.names))
    if (code.toLowerCase() === want) return { languageCode: code, name };
  return undefined;
}

/** Indexes of one seed, built once: by list / kind, by lowercase id (harmonized codes: by code). */
interface Indexes {
  lists: Map<ListName, Map<string, SeedRecord>>;
  lookups: Map<LookupKind, Map<string, SeedRecord>>;
  byId: Map<LookupKind, Map<string, SeedRecord>>;
}

function index(seed: ReferenceSeed): Indexes {
  const lists = new Map<ListName, Map<string, SeedRecord>>();
  for (const name of LIST_NAMES) lists.set(name, new Map((seed.lists[name] ?? []).map((r) => [r.id.toLowerCase(), r])));
  const lookups = new Map<LookupKind, Map<string, SeedRecord>>();
  const byId = new Map<LookupKind, Map<string, SeedRecord>>();
  for (const { kind, idFormat } of LOOKUPS) {
    const records = seed.lookups[kind] ?? [];
    byId.set(kind, new Map(records.map((r) => [r.id.toLowerCase(), r])));
    lookups.set(
      kind,
      new Map(records.map((r) => [idFormat === 'code' ? normalizeHsCode(r.code) : r.id.toLowerCase(), r])),
    );
  }
  return { lists, lookups, byId };
}

/** `0406.90`, `0406 90` → `040690`. */
function normalizeHsCode(code: string): string {
  return code.replace(/[\s.]/g, '');
}

/**
 * A record as the API answers it (docs/api-contract.md §9): extra attributes, then id, code, name, languageCode,
 * parentId (always, null at a root, on hierarchical kinds and wherever the seed gives one).
 */
function toRecord(r: SeedRecord, t: { languageCode: string; name: string }, hierarchical: boolean): ReferenceRecord {
  const out: ReferenceRecord = {
    ...(r.extra ?? {}),
    id: r.id,
    code: r.code,
    name: t.name,
    languageCode: t.languageCode,
  };
  if (hierarchical || r.parentId !== undefined) out.parentId = r.parentId ?? null;
  return out;
}

/** Registers the reference API (/v2/...) on an authenticated scope. */
export function registerReferenceRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  let cached: { seed: ReferenceSeed; idx: Indexes } | undefined;
  const indexes = (): Indexes => {
    const seed = ctx.referenceSeed();
    if (!cached || cached.seed !== seed) cached = { seed, idx: index(seed) };
    return cached.idx;
  };
  const bad = (req: FastifyRequest, reply: FastifyReply, errors: ProblemEntry[]) =>
    sendProblem(req, reply, badRequest(errors));
  const listQuery = (req: FastifyRequest, errors: ProblemEntry[]) => {
    const q = normalizeQuery(req.query, ['LanguageCode', 'CompanyId']);
    if (q.CompanyId !== undefined && !UUID_RE.test(q.CompanyId))
      errors.push(invalid('CompanyId', 'CompanyId must be a uuid'));
    return q.LanguageCode ?? DEFAULT_LANGUAGE;
  };
  const isListName = (n: string): n is ListName => (LIST_NAMES as readonly string[]).includes(n);

  app.get('/v2/lists/:listName', async (req, reply) => {
    const { listName } = req.params as { listName: string };
    const errors: ProblemEntry[] = [];
    const name = listName.toLowerCase();
    if (!isListName(name)) errors.push(invalid('listName', `listName must be one of ${LIST_NAMES.join(', ')}`));
    const language = listQuery(req, errors);
    if (errors.length || !isListName(name)) return bad(req, reply, errors);
    const items: ListItem[] = [];
    for (const r of indexes().lists.get(name)!.values()) {
      const t = translation(r, language);
      if (t) items.push({ id: r.id, code: r.code, name: t.name });
    }
    return sendJson(req, reply, 200, items);
  });

  app.get('/v2/lists/:listName/:itemId', async (req, reply) => {
    const { listName, itemId } = req.params as { listName: string; itemId: string };
    const errors: ProblemEntry[] = [];
    const name = listName.toLowerCase();
    if (!isListName(name)) errors.push(invalid('listName', `listName must be one of ${LIST_NAMES.join(', ')}`));
    if (!UUID_RE.test(itemId)) errors.push(invalid('itemId', 'itemId must be a uuid'));
    const language = listQuery(req, errors);
    if (errors.length || !isListName(name)) return bad(req, reply, errors);
    const r = indexes().lists.get(name)!.get(itemId.toLowerCase());
    const t = r && translation(r, language);
    if (!r || !t) return sendProblem(req, reply, listItemNotFound());
    return sendJson(req, reply, 200, toRecord(r, t, false));
  });

  for (const { kind, param, idFormat, hierarchy } of LOOKUPS) {
    app.get(`/v2/${kind}/:${param}`, async (req, reply) => {
      const raw = (req.params as Record<string, string>)[param] ?? '';
      const q = normalizeQuery(req.query, ['languageCode', 'includeParents']);
      const errors: ProblemEntry[] = [];
      const key = idFormat === 'code' ? normalizeHsCode(raw) : raw.toLowerCase();
      if (idFormat === 'code' ? !/^\d{2,10}$/.test(key) : !UUID_RE.test(raw)) {
        errors.push(
          invalid(
            param,
            idFormat === 'code' ? `${param} must be a harmonized code of 2 to 10 digits` : `${param} must be a uuid`,
          ),
        );
      }
      const ip = q.includeParents?.toLowerCase();
      if (ip !== undefined && ip !== 'true' && ip !== 'false')
        errors.push(invalid('includeParents', 'includeParents must be true or false'));
      if (errors.length) return bad(req, reply, errors);
      const language = q.languageCode ?? DEFAULT_LANGUAGE;
      const idx = indexes();
      const r = idx.lookups.get(kind)!.get(key);
      const t = r && translation(r, language);
      if (!r || !t) return sendProblem(req, reply, problem(404));
      const hierarchical = hierarchy || r.parentId !== undefined;
      const record = toRecord(r, t, hierarchical);
      if (ip === 'true' && hierarchical) {
        const parents: ReferenceRecord[] = [];
        const byId = idx.byId.get(kind)!;
        const seen = new Set<string>([r.id.toLowerCase()]);
        let parentId = r.parentId;
        while (parentId && !seen.has(parentId.toLowerCase())) {
          seen.add(parentId.toLowerCase());
          const p = byId.get(parentId.toLowerCase()) ?? idx.lookups.get(kind)!.get(normalizeHsCode(parentId));
          if (!p) break;
          // A parent without a translation still belongs to the chain: its name falls back to en-US, then its code.
          const pt = translation(p, language) ??
            translation(p, DEFAULT_LANGUAGE) ?? { languageCode: language, name: p.code };
          parents.push(toRecord(p, pt, true));
          parentId = p.parentId;
        }
        record.parents = parents;
      }
      return sendJson(req, reply, 200, record);
    });
  }
}
