/** Shapes of API records as docs/api-contract.md fixes them; shared by the client, the sandbox and the pipeline. */

/** `skipAndTakeQueryStats` of a paged answer. */
export interface SkipAndTakeQueryStats {
  totalCount: number;
  currentCount: number;
}

/** A list item as GET /v2/lists/{listName} answers it. */
export interface ListItem {
  id: string;
  code: string;
  name: string;
}

/** A single reference record (list item detail, allergen, country, division, fishing zone, harmonized code, …). */
export interface ReferenceRecord {
  id: string;
  code: string;
  name: string;
  languageCode: string;
  parentId?: string | null;
  /** Present with includeParents=true: the chain of parents, nearest first. */
  parents?: ReferenceRecord[];
  /** Extra attributes some kinds carry (e.g. a country's alpha3, a nutrient's unit). */
  [extra: string]: unknown;
}

/** A trade item as search results return it: the stored record as last written, plus its id and archive state. */
export interface TradeItemRecord {
  tradeItemId: string;
  ownerCompanyId: string;
  archived: boolean;
  gtin?: string | null;
  tradeItemName?: string | null;
  [field: string]: unknown;
}

/** A manufactured item as search results return it. */
export interface ManufacturedItemRecord {
  manufacturedItemId: string;
  tradeItemId: string;
  supplierCompanyId: string;
  archived: boolean;
  [field: string]: unknown;
}

/** A brand record (GET /api/brands?companyId=). */
export interface BrandRecord {
  brandId: string;
  name: string;
  companyId: string;
  archived: boolean;
}
