import { joinUrl } from './endpoints.ts';
import { LIST_NAMES, LOOKUPS, type ListName, type LookupKind } from './fields.ts';
import type { ApiTransport } from './http.ts';
import { requestInvalid } from './request-check.ts';
import type { RunScope } from './run-scope.ts';
import type { ListItem, ReferenceRecord } from './types.ts';

/** Options of the list endpoints (sent as `LanguageCode`, `CompanyId`). */
export interface ListOptions {
  languageCode?: string;
  companyId?: string;
}

/** Options of the single-record lookups (sent as `languageCode`, `includeParents`). */
export interface LookupOptions {
  languageCode?: string;
  includeParents?: boolean;
}

/** Settings of a {@link ReferenceClient}. */
export interface ReferenceClientOptions {
  transport: ApiTransport;
  /** Base of `/v2/...`; may carry a path prefix. */
  baseUrl: string;
  /** Refuse unknown list names and lookup kinds before sending (default true). */
  validate?: boolean;
}

const LIST_SET: ReadonlySet<string> = new Set(LIST_NAMES);
const KIND_SET: ReadonlySet<string> = new Set(LOOKUPS.map((l) => l.kind));

/** Typed client of the reference API (spec reference-api-v2): 2 list endpoints and 12 lookups. */
export class ReferenceClient {
  private readonly t: ApiTransport;
  private readonly base: string;
  private readonly validate: boolean;
  readonly #scope: RunScope | undefined;

  constructor(options: ReferenceClientOptions, scope?: RunScope) {
    this.t = options.transport;
    this.base = options.baseUrl;
    this.validate = options.validate ?? true;
    this.#scope = scope;
  }

  /** This client for a run: its requests are counted for it (run-scope.ts). */
  forRun(scope: RunScope): ReferenceClient {
    return new ReferenceClient({ transport: this.t, baseUrl: this.base, validate: this.validate }, scope);
  }

  private check(ok: boolean, property: string, value: string, path: string): void {
    if (this.validate && !ok) {
      throw requestInvalid('GET', joinUrl(this.base, path), [
        { code: 'INVALID_REQUEST', property, message: `unknown ${property} "${value}"`, detail: null },
      ]);
    }
  }

  /** GET /v2/lists/{listName} → the list's items `{id, code, name}` in the language asked for. */
  async getList(listName: ListName, options: ListOptions = {}): Promise<ListItem[]> {
    this.check(LIST_SET.has(listName), 'listName', listName, `/v2/lists/${listName}`);
    const query = { LanguageCode: options.languageCode, CompanyId: options.companyId };
    return (
      (await this.t.call<ListItem[] | null>(
        'list.get',
        { base: this.base, params: { listName }, query },
        this.#scope,
      )) ?? []
    );
  }

  /** GET /v2/lists/{listName}/{itemId} → one item; 404 (HttpError) when missing or not translated into the language. */
  async getListItem(listName: ListName, itemId: string, options: ListOptions = {}): Promise<ReferenceRecord> {
    this.check(LIST_SET.has(listName), 'listName', listName, `/v2/lists/${listName}/${itemId}`);
    const query = { LanguageCode: options.languageCode, CompanyId: options.companyId };
    return this.t.call<ReferenceRecord>(
      'list.item',
      { base: this.base, params: { listName, itemId }, query },
      this.#scope,
    );
  }

  /**
   * GET /v2/{kind}/{id} → one record (harmonized codes by code); `includeParents` adds the parent chain where there is
   * a hierarchy.
   */
  async lookup(kind: LookupKind, id: string, options: LookupOptions = {}): Promise<ReferenceRecord> {
    this.check(KIND_SET.has(kind), 'kind', kind, `/v2/${kind}/${id}`);
    const query = { languageCode: options.languageCode, includeParents: options.includeParents };
    return this.t.call<ReferenceRecord>('lookup', { base: this.base, params: { kind, id }, query }, this.#scope);
  }
}
