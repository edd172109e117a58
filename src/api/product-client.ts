import { bodyCheck } from './body-check.ts';
import { ENDPOINTS, joinUrl, type EndpointName } from './endpoints.ts';
import {
  MANUFACTURED_ITEM_SEARCH_PARAMS,
  PAGING,
  TRADE_ITEM_SEARCH_PARAMS,
  type BodyOperation,
  type QueryParamRule,
} from './fields.ts';
import { requestUrl, type ApiTransport, type CallInput } from './http.ts';
import { assertBody, assertQuery } from './request-check.ts';
import type { Fence } from './fence.ts';
import type { RunScope } from './run-scope.ts';
import type { BrandRecord, ManufacturedItemRecord, SkipAndTakeQueryStats, TradeItemRecord } from './types.ts';

/**
 * Query of a search endpoint: `OwnerCompanyId` plus any of the endpoint's parameters (spec names, e.g. `GTIN`, `Skip`,
 * `Take`).
 */
export type SearchQuery = { OwnerCompanyId: string } & Record<string, string | number>;

/** A request body: the fields of one operation (checked against its field rules before sending). */
export type Body = Record<string, unknown>;

/** GET /api/tradeitems answer. */
export interface TradeItemPage {
  tradeItems: TradeItemRecord[] | null;
  skipAndTakeQueryStats: SkipAndTakeQueryStats | null;
}

/** GET /api/manufactureditems answer. */
export interface ManufacturedItemPage {
  manufacturedItems: ManufacturedItemRecord[] | null;
  skipAndTakeQueryStats: SkipAndTakeQueryStats | null;
}

/** Paging of the iterators: records per request (default and maximum 500). */
export interface IterateOptions {
  pageSize?: number;
}

/** Settings of a {@link ProductClient}. */
export interface ProductClientOptions {
  transport: ApiTransport;
  baseUrl: string;
  /** Check bodies and search queries against the field rules before sending (default true). */
  validate?: boolean;
}

/** The writes of a client and of the clients bound from it (one count). */
interface WriteCount {
  n: number;
}

const bodyChecks = new Map<BodyOperation, (body: Record<string, unknown>) => boolean>();

/** True when `body` passes its operation's field rules (then the zod check would too). */
function bodyPasses(operation: BodyOperation, body: unknown): boolean {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return false;
  let check = bodyChecks.get(operation);
  if (!check) {
    check = bodyCheck(operation);
    bodyChecks.set(operation, check);
  }
  return check(body as Record<string, unknown>);
}

/**
 * Typed client of every endpoint of the product API (spec product-api-v1; docs/api-contract.md for the "not shown"
 * parts).
 */
export class ProductClient {
  private readonly t: ApiTransport;
  private readonly base: string;
  private readonly validate: boolean;
  readonly #writes: WriteCount;
  readonly #scope: RunScope | undefined;

  constructor(options: ProductClientOptions, bound?: { writes: WriteCount; scope: RunScope }) {
    this.t = options.transport;
    this.base = options.baseUrl;
    this.validate = options.validate ?? true;
    this.#writes = bound?.writes ?? { n: 0 };
    this.#scope = bound?.scope;
  }

  /** This client for a run: its requests carry `scope` (fence, count, tally: run-scope.ts). */
  forRun(scope: RunScope): ProductClient {
    return new ProductClient(
      { transport: this.t, baseUrl: this.base, validate: this.validate },
      { writes: this.#writes, scope },
    );
  }

  /** The fence this client's writes must pass (its run's), if any. */
  get fence(): Fence | null {
    return this.#scope?.fence ?? null;
  }

  /**
   * Write requests (every method but GET) this client and those bound from it have sent, retries not counted: a
   * command that fails after one has changed the catalogue.
   */
  get writes(): number {
    return this.#writes.n;
  }

  private async call<T>(name: EndpointName, input: Omit<CallInput, 'base'> = {}): Promise<T> {
    const ep = ENDPOINTS[name];
    // The plain yes/no check first (body-check.ts, rule for rule zod's); zod runs only to word a refusal.
    if (this.validate && 'body' in ep && input.body !== undefined && !bodyPasses(ep.body, input.body)) {
      assertBody(ep.body, input.body, ep.method, requestUrl(this.base, ep.path, input.params));
    }
    if (ep.method !== 'GET') this.#writes.n++;
    return this.t.call<T>(name, { ...input, base: this.base }, this.#scope);
  }

  private async search<T>(name: EndpointName, params: readonly QueryParamRule[], query: SearchQuery): Promise<T> {
    if (this.validate) assertQuery(params, query, 'GET', joinUrl(this.base, ENDPOINTS[name].path, query));
    return this.call<T>(name, { query });
  }

  private async *pages<R>(
    fetch: (q: SearchQuery) => Promise<{ records: R[]; stats: SkipAndTakeQueryStats | null }>,
    query: SearchQuery,
    options: IterateOptions,
  ): AsyncGenerator<R> {
    const take = Math.min(Math.max(1, options.pageSize ?? PAGING.maxTake), PAGING.maxTake);
    let skip = Number(query.Skip ?? 0);
    for (;;) {
      const { records, stats } = await fetch({ ...query, Skip: skip, Take: take });
      yield* records;
      skip += records.length;
      // The totalCount decides when there is one: a server may cap Take below the page size asked for.
      if (records.length === 0 || (stats ? skip >= stats.totalCount : records.length < take)) return;
    }
  }

  /** One page of trade items (GET /api/tradeitems): archived ones included, each with `tradeItemId` and `archived`. */
  searchTradeItems(query: SearchQuery): Promise<TradeItemPage> {
    return this.search<TradeItemPage>('tradeItems.search', TRADE_ITEM_SEARCH_PARAMS, query);
  }

  /** Every trade item matching `query`, page after page (Skip/Take), in the API's order. */
  iterateTradeItems(query: SearchQuery, options: IterateOptions = {}): AsyncGenerator<TradeItemRecord> {
    return this.pages(
      async (q) => {
        const p = await this.searchTradeItems(q);
        return { records: p.tradeItems ?? [], stats: p.skipAndTakeQueryStats };
      },
      query,
      options,
    );
  }

  /**
   * POST /api/tradeItem → the new id. Never re-sent unless it certainly did not reach the server (error.outcomeUnknown
   * tells).
   */
  createTradeItem(body: Body): Promise<{ tradeItemId: string }> {
    return this.call('tradeItem.create', { body });
  }

  /** PATCH /api/tradeItems/{id} with the fields to change (harmonizedCode is not accepted: use PUT). */
  patchTradeItem(id: string, body: Body): Promise<{ tradeItemId: string }> {
    return this.call('tradeItem.patch', { params: { id }, body });
  }

  /** PUT /api/tradeItems/{id} with the full record. */
  putTradeItem(id: string, body: Body): Promise<{ tradeItemId: string }> {
    return this.call('tradeItem.put', { params: { id }, body });
  }

  /** DELETE /api/tradeitems/enable/collections: archives the listed trade items. */
  async archiveTradeItems(ids: readonly string[]): Promise<void> {
    await this.call('tradeItems.archive', { body: { idCollection: [...ids] } });
  }

  /** POST /api/tradeitems/{id}/enable: unarchives a trade item for the credential's company. */
  unarchiveTradeItem(id: string): Promise<{ tradeItemId: string }> {
    return this.call('tradeItem.unarchive', { params: { id } });
  }

  /** One page of manufactured items (GET /api/manufactureditems). */
  searchManufacturedItems(query: SearchQuery): Promise<ManufacturedItemPage> {
    return this.search<ManufacturedItemPage>('manufacturedItems.search', MANUFACTURED_ITEM_SEARCH_PARAMS, query);
  }

  /** Every manufactured item matching `query`, page after page. */
  iterateManufacturedItems(query: SearchQuery, options: IterateOptions = {}): AsyncGenerator<ManufacturedItemRecord> {
    return this.pages(
      async (q) => {
        const p = await this.searchManufacturedItems(q);
        return { records: p.manufacturedItems ?? [], stats: p.skipAndTakeQueryStats };
      },
      query,
      options,
    );
  }

  /** Route A: POST /api/tradeItem/{tradeItemId}/manufacturedItem → the new id (a create: never blindly re-sent). */
  createManufacturedItem(tradeItemId: string, body: Body): Promise<{ manufacturedItemId: string }> {
    return this.call('manufacturedItem.createUnderTradeItem', { params: { id: tradeItemId }, body });
  }

  /** Route B: POST /api/manufacturedItem creates the trade item and the manufactured item together (a create). */
  createManufacturedItemWithTradeItem(body: Body): Promise<{ tradeItemId: string; manufacturedItemId: string }> {
    return this.call('manufacturedItem.createWithTradeItem', { body });
  }

  /** PATCH /api/manufacturedItems/{id}. */
  patchManufacturedItem(id: string, body: Body): Promise<{ manufacturedItemId: string }> {
    return this.call('manufacturedItem.patch', { params: { id }, body });
  }

  /** PUT /api/manufacturedItems/{id}. */
  putManufacturedItem(id: string, body: Body): Promise<{ manufacturedItemId: string }> {
    return this.call('manufacturedItem.put', { params: { id }, body });
  }

  /** GET /api/brands?companyId= → the company's brands, archived ones included. */
  async listBrands(companyId: string): Promise<BrandRecord[]> {
    return (await this.call<BrandRecord[] | null>('brands.list', { query: { companyId } })) ?? [];
  }

  /** POST /api/brands {companyId, name} → the new brand id (a create: never blindly re-sent). */
  createBrand(input: { companyId: string; name: string }): Promise<{ brandId: string }> {
    return this.call('brand.create', { body: { companyId: input.companyId, name: input.name } });
  }

  /** PUT /api/brands/{id} {name}. */
  async renameBrand(id: string, name: string): Promise<void> {
    await this.call('brand.rename', { params: { id }, body: { name } });
  }

  /** DELETE /api/brands/{id}/enable: archives the brand for the credential's company. */
  async archiveBrand(id: string): Promise<void> {
    await this.call('brand.archive', { params: { id } });
  }

  /** POST /api/brands/{id}/enable: unarchives the brand for the credential's company. */
  async unarchiveBrand(id: string): Promise<void> {
    await this.call('brand.unarchive', { params: { id } });
  }
}
