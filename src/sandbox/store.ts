import { randomUUID } from 'node:crypto';
import type { BrandRecord, ManufacturedItemRecord, TradeItemRecord } from '../api/types.ts';

/** A stored trade item: identity and archive state apart from the fields as last written. */
export interface StoredTradeItem {
  tradeItemId: string;
  ownerCompanyId: string;
  archived: boolean;
  fields: Record<string, unknown>;
}

/** A stored manufactured item; its archive state is its trade item's. */
export interface StoredManufacturedItem {
  manufacturedItemId: string;
  tradeItemId: string;
  supplierCompanyId: string;
  fields: Record<string, unknown>;
}

/** A stored brand. */
export interface StoredBrand {
  brandId: string;
  companyId: string;
  name: string;
  archived: boolean;
}

/** Count of requests per `METHOD /route`, and of writes (POST / PUT / PATCH / DELETE of the product API). */
export interface RequestCounts {
  total: number;
  writes: number;
  byRoute: Record<string, number>;
  faults: Record<string, number>;
}

/** The sandbox's in-memory state. Maps keep insertion order, which is the order of every listing. */
export class SandboxStore {
  readonly tradeItems = new Map<string, StoredTradeItem>();
  readonly manufacturedItems = new Map<string, StoredManufacturedItem>();
  readonly brands = new Map<string, StoredBrand>();
  counts: RequestCounts = { total: 0, writes: 0, byRoute: {}, faults: {} };
  #generation = 0;
  #byOwner = new Map<string, { generation: number; size: number; items: StoredTradeItem[] }>();

  /**
   * The trade items of one owner in listing order. Items are only ever added (or all removed by reset), so the list is
   * kept until the collection grows: paging a million-item catalogue does not scan it once per page.
   */
  ownerTradeItems(owner: string): StoredTradeItem[] {
    const cached = this.#byOwner.get(owner);
    if (cached && cached.generation === this.#generation && cached.size === this.tradeItems.size) return cached.items;
    const items: StoredTradeItem[] = [];
    for (const t of this.tradeItems.values()) if (t.ownerCompanyId === owner) items.push(t);
    this.#byOwner.set(owner, { generation: this.#generation, size: this.tradeItems.size, items });
    return items;
  }

  /** Empties every collection and the request counts. */
  reset(): void {
    this.#generation++;
    this.tradeItems.clear();
    this.manufacturedItems.clear();
    this.brands.clear();
    this.counts = { total: 0, writes: 0, byRoute: {}, faults: {} };
  }

  /** A fresh id no collection uses. */
  newId(): string {
    return randomUUID();
  }

  /** The search-result form of a trade item: stored fields as last written, plus its id, owner and archive state. */
  tradeItemRecord(t: StoredTradeItem): TradeItemRecord {
    return { ...t.fields, tradeItemId: t.tradeItemId, ownerCompanyId: t.ownerCompanyId, archived: t.archived };
  }

  /**
   * The search-result form of a manufactured item: its fields plus ids, owner (of its trade item) and archive state.
   */
  manufacturedItemRecord(m: StoredManufacturedItem): ManufacturedItemRecord {
    const t = this.tradeItems.get(m.tradeItemId);
    return {
      ...m.fields,
      manufacturedItemId: m.manufacturedItemId,
      tradeItemId: m.tradeItemId,
      ownerCompanyId: t?.ownerCompanyId ?? null,
      supplierCompanyId: m.supplierCompanyId,
      archived: t?.archived ?? false,
    };
  }

  /** The API form of a brand. */
  brandRecord(b: StoredBrand): BrandRecord {
    return { brandId: b.brandId, name: b.name, companyId: b.companyId, archived: b.archived };
  }

  /** A JSON-able dump of everything (GET /__admin/state). */
  dump(): { tradeItems: TradeItemRecord[]; manufacturedItems: ManufacturedItemRecord[]; brands: BrandRecord[] } {
    return {
      tradeItems: [...this.tradeItems.values()].map((t) => this.tradeItemRecord(t)),
      manufacturedItems: [...this.manufacturedItems.values()].map((m) => this.manufacturedItemRecord(m)),
      brands: [...this.brands.values()].map((b) => this.brandRecord(b)),
    };
  }
}
