import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import * as z from 'zod';
import {
  MANUFACTURED_ITEM_FIELDS,
  MANUFACTURED_ITEM_SEARCH_PARAMS,
  PAGING,
  ROUTE_B_TRADE_ITEM_FIELDS,
  TRADE_ITEM_FIELDS,
  TRADE_ITEM_SEARCH_PARAMS,
  type BodyOperation,
  type QueryParamRule,
} from '../api/fields.ts';
import { bodySchema, querySchema } from '../api/schemas.ts';
import type { Credential } from './auth.ts';
import { credentialOf, normalizeQuery, respondWrite, sendProblem, UUID_RE, type SandboxContext } from './context.ts';
import { badRequest, entriesFromZod, invalid, problem, type ProblemEntry } from './problem.ts';
import {
  MANUFACTURED_ITEM_FILTERS,
  MANUFACTURED_ITEM_TRADE_FILTERS,
  TRADE_ITEM_FILTERS,
  type Filter,
} from './search.ts';
import type { StoredManufacturedItem, StoredTradeItem } from './store.ts';

const OPERATION_LABELS: Record<BodyOperation, string> = {
  'tradeItem.create': 'trade item create (POST /api/tradeItem)',
  'tradeItem.patch': 'trade item partial update (PATCH /api/tradeItems/{id})',
  'tradeItem.put': 'trade item update (PUT /api/tradeItems/{id})',
  'manufacturedItem.createUnderTradeItem':
    'manufactured item create under a trade item (POST /api/tradeItem/{id}/manufacturedItem)',
  'manufacturedItem.createWithTradeItem': 'manufactured item create with its trade item (POST /api/manufacturedItem)',
  'manufacturedItem.patch': 'manufactured item partial update (PATCH /api/manufacturedItems/{id})',
  'manufacturedItem.put': 'manufactured item update (PUT /api/manufacturedItems/{id})',
};

/** Body fields that carry a client-chosen id: string in the spec, but a uuid when given (docs/api-contract.md). */
const ID_FIELDS = ['tradeItemId', 'manufacturedItemId'];

const TRADE_U_FIELDS = TRADE_ITEM_FIELDS.filter((f) => f.ops.includes('U')).map((f) => f.name);
const MANU_U_FIELDS = MANUFACTURED_ITEM_FIELDS.filter((f) => f.ops.includes('U')).map((f) => f.name);

type Body = Record<string, unknown>;
type Checked<T> = { ok: true; value: T } | { ok: false; errors: ProblemEntry[] };

/** Validates a body against the operation's field rules, the createdBy rule and the id format rule. */
function checkBody(op: BodyOperation, body: unknown, cred: Credential): Checked<Body> {
  if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
    return { ok: false, errors: [invalid('body', 'a JSON object is required')] };
  }
  const label = OPERATION_LABELS[op];
  const errors: ProblemEntry[] = [];
  const parsed = bodySchema(op).safeParse(body);
  if (!parsed.success) errors.push(...entriesFromZod(parsed.error, body, (p) => `${p} is not accepted by ${label}`));
  const b = body as Body;
  if (
    b.createdBy !== undefined &&
    b.createdBy !== null &&
    !cred.internal &&
    !errors.some((e) => e.property === 'createdBy')
  ) {
    errors.push(invalid('createdBy', 'createdBy is accepted only from internal service credentials'));
  }
  for (const f of ID_FIELDS) {
    const v = b[f];
    if (typeof v === 'string' && !UUID_RE.test(v) && !errors.some((e) => e.property === f))
      errors.push(invalid(f, `${f} must be a uuid`));
  }
  return errors.length ? { ok: false, errors } : { ok: true, value: structuredClone(b) };
}

/** The path id as a lowercase uuid, or a 400 naming `id`. */
function pathId(req: FastifyRequest): Checked<string> {
  const id = (req.params as { id?: string }).id ?? '';
  return UUID_RE.test(id)
    ? { ok: true, value: id.toLowerCase() }
    : { ok: false, errors: [invalid('id', 'id must be a uuid')] };
}

/** Validated, name-normalised query of a search endpoint, with Skip and Take defaulted. */
function checkQuery(
  raw: unknown,
  params: readonly QueryParamRule[],
): Checked<{ q: Record<string, string>; skip: number; take: number }> {
  const q = normalizeQuery(
    raw,
    params.map((p) => p.name),
  );
  const parsed = querySchema(params).safeParse(q);
  if (!parsed.success) return { ok: false, errors: entriesFromZod(parsed.error, q, (p) => `${p} is not accepted`) };
  const data = parsed.data as { Skip?: number; Take?: number };
  return { ok: true, value: { q, skip: data.Skip ?? 0, take: data.Take ?? PAGING.defaultTake } };
}

function page<T>(
  all: T[],
  skip: number,
  take: number,
): { items: T[]; stats: { totalCount: number; currentCount: number } } {
  const items = all.slice(skip, skip + take);
  return { items, stats: { totalCount: all.length, currentCount: items.length } };
}

/**
 * A predicate over stored fields for the filters a query uses; computed once per request (a page of a 100 000-item
 * search must not re-read the filter table per item).
 */
function matcher(
  filters: Readonly<Record<string, Filter>>,
  q: Record<string, string>,
): (fields: Record<string, unknown>) => boolean {
  const active = Object.entries(filters).flatMap(([name, filter]) =>
    q[name] === undefined ? [] : [[filter, q[name]] as const],
  );
  if (active.length === 0) return () => true;
  return (fields) => active.every(([filter, v]) => filter(fields, v));
}

function pick(body: Body, names: readonly string[]): Body {
  const out: Body = {};
  for (const n of names) if (n in body) out[n] = body[n];
  return out;
}

function omit(body: Body, names: readonly string[]): Body {
  const out: Body = { ...body };
  for (const n of names) delete out[n];
  return out;
}

/** Registers the product API (/api/...) on an authenticated scope. */
export function registerProductRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const kit = routeKit(ctx);
  registerTradeItemRoutes(app, kit);
  registerManufacturedItemRoutes(app, kit);
  registerBrandRoutes(app, kit);
}

/** What the product routes share: the store, the id of a created item, and their problem answers. */
interface RouteKit {
  store: SandboxContext['store'];
  idOf(asked: unknown): string;
  bad(req: FastifyRequest, reply: FastifyReply, errors: ProblemEntry[]): FastifyReply;
  notFound(req: FastifyRequest, reply: FastifyReply, detail?: string): FastifyReply;
  conflict(req: FastifyRequest, reply: FastifyReply, property: string, message: string): FastifyReply;
}

function routeKit(ctx: SandboxContext): RouteKit {
  const { store } = ctx;
  return {
    store,
    // The id of a created item: the client's, unless the sandbox assigns its own (SandboxOptions.assignIds).
    idOf: (asked) => (typeof asked === 'string' && !ctx.assignIds ? asked.toLowerCase() : store.newId()),
    bad: (req, reply, errors) => sendProblem(req, reply, badRequest(errors)),
    notFound: (req, reply, detail) => sendProblem(req, reply, problem(404, [], detail ? { detail } : {})),
    conflict: (req, reply, property, message) =>
      sendProblem(req, reply, problem(409, [{ code: 'CONFLICT', property, message, detail: null }])),
  };
}

/**
 * The PATCH and PUT handlers of a stored item (`mode`): the body checked by its operation, then merged into the item's
 * fields (patch) or put in place of its updatable ones, `putFields` (put); answered with `answer(item)`.
 */
function updateRoute<T extends { fields: Body }>(
  { bad, notFound }: Pick<RouteKit, 'bad' | 'notFound'>,
  ops: Record<'patch' | 'put', BodyOperation>,
  find: (id: string) => T | undefined,
  putFields: readonly string[],
  answer: (item: T) => Body,
) {
  return (mode: 'patch' | 'put') => async (req: FastifyRequest, reply: FastifyReply) => {
    const id = pathId(req);
    if (!id.ok) return bad(req, reply, id.errors);
    const c = checkBody(ops[mode], req.body, credentialOf(req));
    if (!c.ok) return bad(req, reply, c.errors);
    const item = find(id.value);
    if (!item) return notFound(req, reply);
    item.fields = mode === 'patch' ? { ...item.fields, ...c.value } : { ...omit(item.fields, putFields), ...c.value };
    return respondWrite(req, reply, answer(item));
  };
}

/** Trade items: search, create, archive a collection, restore, patch and put. */
function registerTradeItemRoutes(app: FastifyInstance, { store, idOf, bad, notFound, conflict }: RouteKit): void {
  app.get('/api/tradeitems', async (req, reply) => {
    const c = checkQuery(req.query, TRADE_ITEM_SEARCH_PARAMS);
    if (!c.ok) return bad(req, reply, c.errors);
    const { q, skip, take } = c.value;
    const owner = q.OwnerCompanyId!.toLowerCase();
    const matches = matcher(TRADE_ITEM_FILTERS, q);
    const owned = store.ownerTradeItems(owner);
    const all: StoredTradeItem[] = Object.keys(q).some((k) => k in TRADE_ITEM_FILTERS)
      ? owned.filter((t) => matches(t.fields))
      : owned;
    const p = page(all, skip, take);
    return { tradeItems: p.items.map((t) => store.tradeItemRecord(t)), skipAndTakeQueryStats: p.stats };
  });

  app.post('/api/tradeItem', async (req, reply) => {
    const c = checkBody('tradeItem.create', req.body, credentialOf(req));
    if (!c.ok) return bad(req, reply, c.errors);
    const body = c.value;
    const id = idOf(body.tradeItemId);
    if (store.tradeItems.has(id)) return conflict(req, reply, 'tradeItemId', `a trade item with id ${id} exists`);
    store.tradeItems.set(id, {
      tradeItemId: id,
      ownerCompanyId: String(body.ownerCompanyId).toLowerCase(),
      archived: false,
      fields: omit(body, ['tradeItemId', 'ownerCompanyId']),
    });
    return respondWrite(req, reply, { tradeItemId: id });
  });

  app.delete('/api/tradeitems/enable/collections', async (req, reply) => {
    const schema = z.strictObject({ idCollection: z.array(z.string().regex(UUID_RE, 'must be a uuid')) });
    const body = req.body;
    if (body === undefined || body === null || typeof body !== 'object' || Array.isArray(body)) {
      return bad(req, reply, [invalid('body', 'a JSON object with idCollection is required')]);
    }
    const parsed = schema.safeParse(body);
    if (!parsed.success)
      return bad(
        req,
        reply,
        entriesFromZod(parsed.error, body, (p) => `${p} is not accepted by archive`),
      );
    const company = credentialOf(req).companyId;
    const ids = parsed.data.idCollection.map((i) => i.toLowerCase());
    const missing = ids.filter((i) => store.tradeItems.get(i)?.ownerCompanyId !== company);
    // All or nothing: an id that is unknown or another company's makes the whole call a 404, so a wrong
    // owner/credential pairing is loud instead of silently archiving part of a collection.
    if (missing.length)
      return notFound(req, reply, `no trade item of the current company with id: ${missing.join(', ')}`);
    for (const i of ids) store.tradeItems.get(i)!.archived = true;
    return respondWrite(req, reply);
  });

  app.post('/api/tradeitems/:id/enable', async (req, reply) => {
    const id = pathId(req);
    if (!id.ok) return bad(req, reply, id.errors);
    const t = store.tradeItems.get(id.value);
    if (!t || t.ownerCompanyId !== credentialOf(req).companyId) return notFound(req, reply);
    t.archived = false;
    return respondWrite(req, reply, { tradeItemId: t.tradeItemId });
  });

  const updateTradeItem = updateRoute(
    { bad, notFound },
    { patch: 'tradeItem.patch', put: 'tradeItem.put' },
    (id) => store.tradeItems.get(id),
    TRADE_U_FIELDS,
    (t) => ({ tradeItemId: t.tradeItemId }),
  );
  app.patch('/api/tradeItems/:id', updateTradeItem('patch'));
  app.put('/api/tradeItems/:id', updateTradeItem('put'));
}

/** Manufactured items: search, create under a trade item or with one, patch and put. */
function registerManufacturedItemRoutes(
  app: FastifyInstance,
  { store, idOf, bad, notFound, conflict }: RouteKit,
): void {
  app.get('/api/manufactureditems', async (req, reply) => {
    const c = checkQuery(req.query, MANUFACTURED_ITEM_SEARCH_PARAMS);
    if (!c.ok) return bad(req, reply, c.errors);
    const { q, skip, take } = c.value;
    const owner = q.OwnerCompanyId!.toLowerCase();
    const all: StoredManufacturedItem[] = [];
    const ownMatches = matcher(MANUFACTURED_ITEM_FILTERS, q);
    const tradeMatches = matcher(MANUFACTURED_ITEM_TRADE_FILTERS, q);
    for (const m of store.manufacturedItems.values()) {
      const t = store.tradeItems.get(m.tradeItemId);
      if (!t || t.ownerCompanyId !== owner) continue;
      const own = { ...m.fields, supplierCompanyId: m.supplierCompanyId, tradeItemId: m.tradeItemId };
      if (ownMatches(own) && tradeMatches(t.fields)) all.push(m);
    }
    const p = page(all, skip, take);
    return { manufacturedItems: p.items.map((m) => store.manufacturedItemRecord(m)), skipAndTakeQueryStats: p.stats };
  });

  const newManufactured = (body: Body, tradeItemId: string): StoredManufacturedItem => ({
    manufacturedItemId: idOf(body.manufacturedItemId),
    tradeItemId,
    supplierCompanyId: String(body.supplierCompanyId).toLowerCase(),
    fields: omit(body, ['manufacturedItemId', 'supplierCompanyId']),
  });

  app.post('/api/tradeItem/:id/manufacturedItem', async (req, reply) => {
    const id = pathId(req);
    if (!id.ok) return bad(req, reply, id.errors);
    const c = checkBody('manufacturedItem.createUnderTradeItem', req.body, credentialOf(req));
    if (!c.ok) return bad(req, reply, c.errors);
    if (!store.tradeItems.has(id.value)) return notFound(req, reply, `no trade item with id ${id.value}`);
    const m = newManufactured(c.value, id.value);
    if (store.manufacturedItems.has(m.manufacturedItemId)) {
      return conflict(req, reply, 'manufacturedItemId', `a manufactured item with id ${m.manufacturedItemId} exists`);
    }
    store.manufacturedItems.set(m.manufacturedItemId, m);
    return respondWrite(req, reply, { manufacturedItemId: m.manufacturedItemId });
  });

  app.post('/api/manufacturedItem', async (req, reply) => {
    const c = checkBody('manufacturedItem.createWithTradeItem', req.body, credentialOf(req));
    if (!c.ok) return bad(req, reply, c.errors);
    const tradePart = pick(c.value, ROUTE_B_TRADE_ITEM_FIELDS);
    const manuPart = omit(c.value, ROUTE_B_TRADE_ITEM_FIELDS);
    const tradeItemId = idOf(tradePart.tradeItemId);
    if (store.tradeItems.has(tradeItemId))
      return conflict(req, reply, 'tradeItemId', `a trade item with id ${tradeItemId} exists`);
    const t: StoredTradeItem = {
      tradeItemId,
      ownerCompanyId: String(tradePart.ownerCompanyId).toLowerCase(),
      archived: false,
      fields: omit(tradePart, ['tradeItemId', 'ownerCompanyId']),
    };
    const m = newManufactured(manuPart, tradeItemId);
    store.tradeItems.set(tradeItemId, t);
    store.manufacturedItems.set(m.manufacturedItemId, m);
    return respondWrite(req, reply, { tradeItemId, manufacturedItemId: m.manufacturedItemId });
  });

  const updateManufactured = updateRoute(
    { bad, notFound },
    { patch: 'manufacturedItem.patch', put: 'manufacturedItem.put' },
    (id) => store.manufacturedItems.get(id),
    MANU_U_FIELDS,
    (m) => ({ manufacturedItemId: m.manufacturedItemId }),
  );
  app.patch('/api/manufacturedItems/:id', updateManufactured('patch'));
  app.put('/api/manufacturedItems/:id', updateManufactured('put'));
}

/** Brands (docs/api-contract.md §8): list, create, rename, archive and restore. */
function registerBrandRoutes(app: FastifyInstance, { store, bad, notFound }: RouteKit): void {
  const brandCreate = z.strictObject({
    companyId: z.string().regex(UUID_RE, 'must be a uuid'),
    name: z.string().trim().min(1, 'must not be empty'),
  });
  const brandRename = z.strictObject({ name: z.string().trim().min(1, 'must not be empty') });
  const objectBody = (req: FastifyRequest): Checked<Body> =>
    req.body !== null && typeof req.body === 'object' && !Array.isArray(req.body)
      ? { ok: true, value: req.body as Body }
      : { ok: false, errors: [invalid('body', 'a JSON object is required')] };

  app.get('/api/brands', async (req, reply) => {
    const q = normalizeQuery(req.query, ['companyId']);
    if (q.companyId !== undefined && !UUID_RE.test(q.companyId))
      return bad(req, reply, [invalid('companyId', 'companyId must be a uuid')]);
    const company = (q.companyId ?? credentialOf(req).companyId).toLowerCase();
    return [...store.brands.values()].filter((b) => b.companyId === company).map((b) => store.brandRecord(b));
  });

  app.post('/api/brands', async (req, reply) => {
    const b = objectBody(req);
    if (!b.ok) return bad(req, reply, b.errors);
    const parsed = brandCreate.safeParse(b.value);
    if (!parsed.success)
      return bad(
        req,
        reply,
        entriesFromZod(parsed.error, b.value, (p) => `${p} is not accepted by brand create`),
      );
    const brandId = store.newId();
    store.brands.set(brandId, {
      brandId,
      companyId: parsed.data.companyId.toLowerCase(),
      name: String(b.value.name),
      archived: false,
    });
    return respondWrite(req, reply, { brandId });
  });

  const ownBrand = (req: FastifyRequest) => {
    const id = pathId(req);
    if (!id.ok) return id;
    const brand = store.brands.get(id.value);
    return { ok: true as const, value: brand && brand.companyId === credentialOf(req).companyId ? brand : undefined };
  };

  app.put('/api/brands/:id', async (req, reply) => {
    const found = ownBrand(req);
    if (!found.ok) return bad(req, reply, found.errors);
    const b = objectBody(req);
    if (!b.ok) return bad(req, reply, b.errors);
    const parsed = brandRename.safeParse(b.value);
    if (!parsed.success)
      return bad(
        req,
        reply,
        entriesFromZod(parsed.error, b.value, (p) => `${p} is not accepted by brand update`),
      );
    if (!found.value) return notFound(req, reply);
    found.value.name = String(b.value.name);
    return respondWrite(req, reply, { brandId: found.value.brandId });
  });

  const setBrandArchived = (archived: boolean) => async (req: FastifyRequest, reply: FastifyReply) => {
    const found = ownBrand(req);
    if (!found.ok) return bad(req, reply, found.errors);
    if (!found.value) return notFound(req, reply);
    found.value.archived = archived;
    return respondWrite(req, reply, archived ? undefined : { brandId: found.value.brandId });
  };
  app.delete('/api/brands/:id/enable', setBrandArchived(true));
  app.post('/api/brands/:id/enable', setBrandArchived(false));
}
