/** Search filters of GET /api/tradeitems and GET /api/manufactureditems, as data (docs/api-contract.md §Search). */

type Fields = Record<string, unknown>;
/** A filter: does a record's fields match the parameter's value? */
export type Filter = (fields: Fields, value: string) => boolean;

const lower = (v: unknown): string | undefined => (typeof v === 'string' ? v.toLowerCase() : undefined);
const objects = (v: unknown): Fields[] =>
  Array.isArray(v) ? v.filter((x): x is Fields => !!x && typeof x === 'object') : [];
const strings = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : []);

function sameNumber(a: unknown, v: string): boolean {
  if (typeof a !== 'string' && typeof a !== 'number') return false;
  if (String(a) === v) return true;
  const x = Number(String(a).replace(',', '.'));
  const y = Number(v.replace(',', '.'));
  return Number.isFinite(x) && Number.isFinite(y) && x === y;
}

/** Case-insensitive equality with the named field. */
const eq =
  (name: string): Filter =>
  (f, v) =>
    lower(f[name]) === v.toLowerCase();
/** Case-insensitive substring of the named field. */
const contains =
  (name: string): Filter =>
  (f, v) =>
    lower(f[name])?.includes(v.toLowerCase()) ?? false;
/** The named field starts with the value (dates: `2024-06` matches `2024-06-01`). */
const prefix =
  (name: string): Filter =>
  (f, v) =>
    lower(f[name])?.startsWith(v.toLowerCase()) ?? false;
/** Exact, case-sensitive equality (GTIN). */
const exact =
  (name: string): Filter =>
  (f, v) =>
    f[name] === v;
/** Some object of the named array has `sub` equal (case-insensitive) to the value. */
const someEq =
  (name: string, sub: string): Filter =>
  (f, v) =>
    objects(f[name]).some((o) => lower(o[sub]) === v.toLowerCase());
const either =
  (...filters: Filter[]): Filter =>
  (f, v) =>
    filters.some((p) => p(f, v));

/** Trade item filters by query parameter (OwnerCompanyId, Skip and Take are handled apart). */
export const TRADE_ITEM_FILTERS: Readonly<Record<string, Filter>> = {
  BrandId: eq('brandId'),
  CategoryId: either(eq('categoryListId'), someEq('productCategories', 'categoryId')),
  CategoryItemId: either(eq('categoryItemId'), someEq('productCategories', 'categoryItemId')),
  GTIN: exact('gtin'),
  NetContentValue: (f, v) =>
    sameNumber(f.netContentValue, v) || objects(f.netContents).some((n) => sameNumber(n.value, v)),
  NetContentUnit: either(eq('netContentUnit'), someEq('netContents', 'unitOfMeasure')),
  ItemName: contains('tradeItemName'),
  ProductRange: contains('productRange'),
  FunctionalName: contains('functionalName'),
  Variant: contains('variant'),
  PackagingFormat: eq('packagingFormat'),
  IsTradeItemVariableUnit: eq('isTradeItemVariableUnit'),
  IsTradeItemBaseUnit: eq('isTradeItemBaseUnit'),
  IsTradeItemSeasonal: eq('isTradeItemSeasonal'),
  SeasonalAvailabilityStartDate: prefix('seasonalAvailabilityStartDate'),
  SeasonalAvailabilityEndDate: prefix('seasonalAvailabilityEndDate'),
  ProductTypeId: eq('productTypeId'),
  DietTypeCodeId: eq('dietTypeCodeId'),
  TradeItemStatus: eq('tradeItemStatusId'),
};

/** Manufactured item filters on the manufactured item's own fields (identity fields merged in). */
export const MANUFACTURED_ITEM_FILTERS: Readonly<Record<string, Filter>> = {
  SupplierCompanyId: eq('supplierCompanyId'),
  PackerCompanyId: eq('packerCompanyId'),
  TradeItemId: eq('tradeItemId'),
  ManufacturedItemName: contains('manufacturedItemName'),
  StartAvailabilityDate: (f, v) =>
    objects(f.targetMarketsList).some(
      (t) => typeof t.startAvailabilityDate === 'string' && t.startAvailabilityDate >= v,
    ),
  EndAvailabilityDate: (f, v) =>
    objects(f.targetMarketsList).some((t) => typeof t.endAvailabilityDate === 'string' && t.endAvailabilityDate <= v),
  CountryOfOrigin: (f, v) => strings(f.countriesOfOrigin).some((c) => c.toLowerCase() === v.toLowerCase()),
  TargetMarket: (f, v) =>
    objects(f.targetMarketsList).some((t) => strings(t.countryCodes).some((c) => c.toLowerCase() === v.toLowerCase())),
  PointOfSalesId: (f, v) =>
    objects(f.targetMarketsList).some((t) => strings(t.pointsOfSales).some((c) => c.toLowerCase() === v.toLowerCase())),
};

/** Manufactured item filters applied to its trade item's fields. */
export const MANUFACTURED_ITEM_TRADE_FILTERS: Readonly<Record<string, Filter>> = {
  BrandId: TRADE_ITEM_FILTERS.BrandId!,
  TradeItemName: contains('tradeItemName'),
  CategoryId: TRADE_ITEM_FILTERS.CategoryId!,
  CategoryItemId: TRADE_ITEM_FILTERS.CategoryItemId!,
  NetContentValue: TRADE_ITEM_FILTERS.NetContentValue!,
  NetContentUnitId: TRADE_ITEM_FILTERS.NetContentUnit!,
  GTIN: TRADE_ITEM_FILTERS.GTIN!,
};
