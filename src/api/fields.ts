/**
 * The field rules of both API specs, written once as data. Zod schemas (schemas.ts), the sandbox's request
 * validation and the pipeline's draft validation are all derived from these tables.
 */

/** Operations that take a trade item body: C create, P partial update (PATCH), U update (PUT). */
export type TradeItemOp = 'C' | 'P' | 'U';
/** Operations that take a manufactured item body: A create under a trade item, B create with its trade item, P, U. */
export type ManufacturedItemOp = 'A' | 'B' | 'P' | 'U';

/** Names of the nested objects of the product API. */
export type NestedName =
  | 'netContent'
  | 'comment'
  | 'retailerAttribute'
  | 'productCategory'
  | 'contact'
  | 'targetMarket'
  | 'drainedNetWeight'
  | 'variableWeight';

/** A field's type. Scalars are nullable unless `required` says otherwise. */
export type FieldType =
  | { kind: 'string' }
  | { kind: 'uuid' }
  | { kind: 'number' }
  /** a uuid restricted to the seven weight units of units.ts */
  | { kind: 'weightUnit' }
  | { kind: 'array'; of: 'string' | 'uuid' }
  | { kind: 'object'; of: NestedName }
  | { kind: 'objectArray'; of: NestedName };

/** One row of a spec's field table. */
export interface FieldRule<Op extends string = string> {
  name: string;
  type: FieldType;
  ops: readonly Op[];
  /** Operations on which the field must be present and non-null. */
  requiredOn?: readonly Op[];
  /** Operations on which a string must also be non-empty. */
  nonEmptyOn?: readonly Op[];
  deprecated?: string;
  /** Only internal service credentials may send it (`createdBy`). */
  internalOnly?: boolean;
  note?: string;
}

const S = { kind: 'string' } as const;
const UUID = { kind: 'uuid' } as const;
const NUM = { kind: 'number' } as const;
const arr = (of: 'string' | 'uuid') => ({ kind: 'array', of }) as const;
const obj = (of: NestedName) => ({ kind: 'object', of }) as const;
const objs = (of: NestedName) => ({ kind: 'objectArray', of }) as const;
const CPU: readonly TradeItemOp[] = ['C', 'P', 'U'];

/** Trade item input fields (product API v1, "Trade item (input fields)"), in the spec's order. */
export const TRADE_ITEM_FIELDS: readonly FieldRule<TradeItemOp>[] = [
  { name: 'tradeItemName', type: S, ops: CPU, requiredOn: ['C'], nonEmptyOn: ['C'] },
  { name: 'ownerCompanyId', type: UUID, ops: ['C'], requiredOn: ['C'] },
  { name: 'tradeItemId', type: S, ops: ['C'] },
  { name: 'gtin', type: S, ops: CPU },
  { name: 'brandId', type: S, ops: CPU },
  { name: 'categoryListId', type: S, ops: CPU, deprecated: 'use productCategories' },
  { name: 'categoryItemId', type: S, ops: CPU, deprecated: 'use productCategories' },
  { name: 'netContentValue', type: S, ops: CPU, deprecated: 'use netContents' },
  { name: 'netContentUnit', type: S, ops: CPU, deprecated: 'use netContents' },
  { name: 'packagingFormat', type: S, ops: CPU },
  { name: 'productTypeId', type: S, ops: CPU },
  { name: 'tradeItemStatusId', type: S, ops: CPU },
  { name: 'ean7Weight', type: S, ops: CPU },
  { name: 'ean7Price', type: S, ops: CPU },
  { name: 'retailerIdentifiers', type: arr('string'), ops: CPU },
  { name: 'retailerProductManager', type: S, ops: CPU, deprecated: 'use contacts' },
  { name: 'retailerPackagingManager', type: S, ops: CPU, deprecated: 'use contacts' },
  { name: 'retailerQualityManager', type: S, ops: CPU, deprecated: 'use contacts' },
  { name: 'productRange', type: S, ops: CPU },
  { name: 'functionalName', type: S, ops: CPU },
  { name: 'variant', type: S, ops: CPU },
  { name: 'isTradeItemVariableUnit', type: S, ops: CPU },
  { name: 'isTradeItemBaseUnit', type: S, ops: CPU },
  { name: 'isTradeItemSeasonal', type: S, ops: CPU },
  { name: 'seasonalAvailabilityStartDate', type: S, ops: CPU },
  { name: 'seasonalAvailabilityEndDate', type: S, ops: CPU },
  { name: 'dietTypeCodeId', type: S, ops: CPU },
  { name: 'netContents', type: objs('netContent'), ops: CPU },
  { name: 'packagingNetContentDescription', type: S, ops: CPU },
  { name: 'manufacturingPeriod', type: S, ops: CPU },
  { name: 'comments', type: objs('comment'), ops: CPU },
  { name: 'retailerCustomizedAttributes', type: objs('retailerAttribute'), ops: CPU },
  { name: 'isConsumerUnit', type: S, ops: CPU },
  { name: 'productCategories', type: objs('productCategory'), ops: CPU },
  { name: 'multipack', type: S, ops: ['C'] },
  { name: 'productLanguage', type: S, ops: ['C'] },
  { name: 'contacts', type: objs('contact'), ops: CPU },
  { name: 'customProductTypeId', type: S, ops: CPU },
  {
    name: 'createdBy',
    type: S,
    ops: ['C'],
    internalOnly: true,
    note: 'user id of the creator; internal service requests only',
  },
  { name: 'harmonizedCode', type: S, ops: ['C', 'U'], note: 'not accepted by partial update' },
  { name: 'drainedNetWeight', type: obj('drainedNetWeight'), ops: CPU },
  { name: 'variableWeight', type: obj('variableWeight'), ops: CPU },
];

/** Manufactured item input fields (product API v1, "Manufactured item (input fields)"). */
export const MANUFACTURED_ITEM_FIELDS: readonly FieldRule<ManufacturedItemOp>[] = [
  { name: 'manufacturedItemName', type: S, ops: ['A', 'B', 'P', 'U'] },
  { name: 'supplierCompanyId', type: UUID, ops: ['A', 'B'], requiredOn: ['A', 'B'] },
  { name: 'packerCompanyId', type: S, ops: ['A', 'P', 'U'] },
  { name: 'countriesOfOrigin', type: arr('string'), ops: ['A', 'P', 'U'] },
  { name: 'targetMarketsList', type: objs('targetMarket'), ops: ['A', 'B', 'P', 'U'] },
  { name: 'manufacturedItemStatusId', type: S, ops: ['A', 'B', 'P', 'U'] },
  { name: 'manufacturedItemId', type: S, ops: ['A'] },
  {
    name: 'createdBy',
    type: S,
    ops: ['A'],
    internalOnly: true,
    note: 'creator user id; internal service requests only',
  },
];

/** The trade item fields route B (POST /api/manufacturedItem) takes, exactly as the spec lists them. */
export const ROUTE_B_TRADE_ITEM_FIELDS: readonly string[] = [
  'tradeItemName',
  'ownerCompanyId',
  'tradeItemId',
  'tradeItemStatusId',
  'gtin',
  'brandId',
  'categoryListId',
  'categoryItemId',
  'netContentValue',
  'netContentUnit',
  'netContents',
  'packagingNetContentDescription',
  'manufacturingPeriod',
  'comments',
  'retailerCustomizedAttributes',
  'isConsumerUnit',
  'productCategories',
  'multipack',
  'productLanguage',
  'contacts',
  'customProductTypeId',
];

/** A field of a nested object; `ops` limits it to some operations (comment.id: update and partial update only). */
export interface NestedFieldRule {
  name: string;
  type: Exclude<FieldType, { kind: 'object' } | { kind: 'objectArray' }>;
  ops?: readonly string[];
}

/** The nested objects table of the product API spec. */
export const NESTED_OBJECTS: Readonly<Record<NestedName, readonly NestedFieldRule[]>> = {
  netContent: [
    { name: 'value', type: S },
    { name: 'unitOfMeasure', type: S },
  ],
  comment: [
    { name: 'id', type: S, ops: ['P', 'U'] },
    { name: 'value', type: S },
    { name: 'authorId', type: S },
    { name: 'commentDate', type: S },
  ],
  retailerAttribute: [
    { name: 'retailerLabel', type: S },
    { name: 'retailerCode', type: S },
  ],
  productCategory: [
    { name: 'categoryId', type: UUID },
    { name: 'categoryItemId', type: UUID },
  ],
  contact: [
    { name: 'userId', type: UUID },
    { name: 'responsibilityId', type: UUID },
  ],
  targetMarket: [
    { name: 'countryCodes', type: arr('string') },
    { name: 'pointsOfSales', type: arr('uuid') },
    { name: 'startAvailabilityDate', type: S },
    { name: 'endAvailabilityDate', type: S },
  ],
  drainedNetWeight: [
    { name: 'value', type: NUM },
    { name: 'unitOfMeasure', type: { kind: 'weightUnit' } },
  ],
  variableWeight: [
    { name: 'minimumValue', type: NUM },
    { name: 'maximumValue', type: NUM },
    { name: 'unitOfMeasure', type: { kind: 'weightUnit' } },
  ],
};

/** The body-taking operations of the product API, each with the fields it accepts. */
export type BodyOperation =
  | 'tradeItem.create'
  | 'tradeItem.patch'
  | 'tradeItem.put'
  | 'manufacturedItem.createUnderTradeItem'
  | 'manufacturedItem.createWithTradeItem'
  | 'manufacturedItem.patch'
  | 'manufacturedItem.put';

/** A field as one operation sees it: the rule and the op letter to apply for required / nested checks. */
export interface OperationField {
  rule: FieldRule;
  op: string;
}

/**
 * The fields each body operation accepts, derived from the tables above (route B: manufactured B + the exact trade item
 * list).
 */
export function operationFields(operation: BodyOperation): readonly OperationField[] {
  const trade = (op: TradeItemOp) => TRADE_ITEM_FIELDS.filter((f) => f.ops.includes(op)).map((rule) => ({ rule, op }));
  const manu = (op: ManufacturedItemOp) =>
    MANUFACTURED_ITEM_FIELDS.filter((f) => f.ops.includes(op)).map((rule) => ({ rule, op }));
  switch (operation) {
    case 'tradeItem.create':
      return trade('C');
    case 'tradeItem.patch':
      return trade('P');
    case 'tradeItem.put':
      return trade('U');
    case 'manufacturedItem.createUnderTradeItem':
      return manu('A');
    case 'manufacturedItem.createWithTradeItem':
      return [
        ...TRADE_ITEM_FIELDS.filter((f) => ROUTE_B_TRADE_ITEM_FIELDS.includes(f.name)).map((rule) => ({
          rule,
          op: 'C',
        })),
        ...manu('B'),
      ];
    case 'manufacturedItem.patch':
      return manu('P');
    case 'manufacturedItem.put':
      return manu('U');
  }
}

/** A query parameter of a search endpoint. */
export interface QueryParamRule {
  name: string;
  required?: boolean;
  uuid?: boolean;
  /** Skip / Take: non-negative integers (docs/api-contract.md: Take default 50, max 500). */
  integer?: boolean;
}

const q = (names: string): QueryParamRule[] =>
  names
    .split(/\s+/)
    .filter(Boolean)
    .map((name) => ({ name }));

/** Query parameters of GET /api/tradeitems. */
export const TRADE_ITEM_SEARCH_PARAMS: readonly QueryParamRule[] = [
  { name: 'OwnerCompanyId', required: true, uuid: true },
  ...q(
    'BrandId CategoryId CategoryItemId GTIN NetContentValue NetContentUnit ItemName ProductRange FunctionalName Variant PackagingFormat',
  ),
  ...q(
    'IsTradeItemVariableUnit IsTradeItemBaseUnit IsTradeItemSeasonal SeasonalAvailabilityStartDate SeasonalAvailabilityEndDate',
  ),
  ...q('ProductTypeId DietTypeCodeId TradeItemStatus'),
  { name: 'Skip', integer: true },
  { name: 'Take', integer: true },
];

/** Query parameters of GET /api/manufactureditems. */
export const MANUFACTURED_ITEM_SEARCH_PARAMS: readonly QueryParamRule[] = [
  { name: 'OwnerCompanyId', required: true, uuid: true },
  ...q('SupplierCompanyId PackerCompanyId TradeItemId ManufacturedItemName StartAvailabilityDate EndAvailabilityDate'),
  ...q(
    'CountryOfOrigin TargetMarket PointOfSalesId BrandId TradeItemName CategoryId CategoryItemId NetContentValue NetContentUnitId GTIN',
  ),
  { name: 'Skip', integer: true },
  { name: 'Take', integer: true },
];

/** Paging limits (docs/api-contract.md). */
export const PAGING = { defaultTake: 50, maxTake: 500 } as const;

/** The 16 allowed list names of GET /v2/lists/{listName}. */
export const LIST_NAMES = [
  'preservation-method',
  'storage-condition-temperature',
  'storage-condition-context',
  'production-date-indication',
  'consumer-shelf-life-indication',
  'guaranteed-shelf-life',
  'origin-type',
  'control-phase',
  'characteristic-type',
  'cleaning-treatment',
  'treatment-type',
  'packaging-materials',
  'template-type',
  'languages',
  'portal-types',
  'trade-item-status',
] as const;

/** One of the 16 list names. */
export type ListName = (typeof LIST_NAMES)[number];

/** The twelve single-record lookups of the reference API. */
export const LOOKUPS = [
  { kind: 'allergens', param: 'allergenId', idFormat: 'uuid', languageAware: true, hierarchy: true },
  { kind: 'countries', param: 'countryId', idFormat: 'uuid', languageAware: true, hierarchy: false },
  { kind: 'country-divisions', param: 'countryDivisionId', idFormat: 'uuid', languageAware: true, hierarchy: true },
  { kind: 'fishing-zones', param: 'fishingZoneId', idFormat: 'uuid', languageAware: true, hierarchy: true },
  { kind: 'harmonized-codes', param: 'hsCode', idFormat: 'code', languageAware: true, hierarchy: false },
  { kind: 'markets', param: 'marketId', idFormat: 'uuid', languageAware: false, hierarchy: false },
  { kind: 'nutrient-families', param: 'nutrientFamilyId', idFormat: 'uuid', languageAware: false, hierarchy: false },
  { kind: 'nutrients', param: 'nutrientId', idFormat: 'uuid', languageAware: false, hierarchy: false },
  {
    kind: 'raw-material-classification-items',
    param: 'rawMaterialClassificationItemId',
    idFormat: 'uuid',
    languageAware: false,
    hierarchy: false,
  },
  { kind: 'raw-material-parts', param: 'rawMaterialPartId', idFormat: 'uuid', languageAware: false, hierarchy: false },
  {
    kind: 'substance-functions',
    param: 'substanceFunctionId',
    idFormat: 'uuid',
    languageAware: false,
    hierarchy: false,
  },
  { kind: 'substances', param: 'substanceId', idFormat: 'uuid', languageAware: false, hierarchy: false },
] as const;

/** One of the twelve lookup kinds (the path segment after /v2/). */
export type LookupKind = (typeof LOOKUPS)[number]['kind'];
