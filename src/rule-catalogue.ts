/**
 * The rule catalogue: every check a run makes, each with a stable rule id (never reused: a rule that goes away is
 * listed in RETIRED_RULE_IDS), the issue code it reports, its severity (the code's, src/issue-codes.ts), the fields
 * it reads, what it asks, and the GS1 rule it follows where there is one. Issues keep their codes; reports add the
 * rule id of each issue (ruleIdOf). `product-sync rules` lists this table and docs/rules.md is written from it
 * (test/rules-catalogue.test.ts keeps them equal, and checks that every issue code and every field constraint of
 * src/api/fields.ts has its rule).
 */
import { ISSUE_CODES, type Issue, type IssueCode, type Severity } from './issue-codes.ts';

/** Where a check is made. */
export type RuleKind = 'sheet' | 'cell' | 'gtin' | 'row' | 'field' | 'cross-field' | 'lookup' | 'user' | 'api';

/** One rule of the catalogue. */
export interface Rule {
  /** `PS-<KIND>-nnn`: stable, never reused. */
  id: string;
  kind: RuleKind;
  /** The issue code its issues carry. */
  code: IssueCode;
  /** The code's severity; `varies` when the code's depends on the case (its message says when). */
  severity: Severity | 'varies';
  /** The API fields it reads (empty: the sheet, a cell of any column, or the API's answer). */
  fields: readonly string[];
  message: string;
  /** The GS1 rule it follows (a section of the GS1 General Specifications, a GDSN attribute rule), or null. */
  gs1: string | null;
}

const GS1_CHECK_DIGIT = 'GS1 General Specifications §7.9 (check digit calculation)';
const GS1_GTIN_FORMAT = 'GS1 General Specifications §4.3 (GTIN rules: GTIN-8, -12, -13, -14)';
const GS1_GTIN_LEVEL =
  'GS1 General Specifications §4.3 (GTIN rules: a GTIN-14 whose indicator digit is 1-8 identifies a grouping of trade items, not a consumer or base unit)';
const GS1_NET_CONTENT = 'GDSN attribute netContent: a value with its measurementUnitCode, greater than zero';
const GS1_DATES = 'GDSN: a start availability date is not after its end availability date';
const GS1_NAME = 'GS1 Global Data Model: descriptive names in the case written on the pack, plain text (no markup)';
const GS1_UNIQUE = 'GS1 General Specifications §4.3 (a GTIN identifies one trade item: once per trade item data set)';

type Entry = Omit<Rule, 'severity'>;
const rule = (
  id: string,
  kind: RuleKind,
  code: IssueCode,
  fields: readonly string[],
  message: string,
  gs1: string | null = null,
): Entry => ({ id, kind, code, fields, message, gs1 });
const fld = (id: string, code: IssueCode, field: string, message: string): Entry =>
  rule(id, 'field', code, field === '' ? [] : [field], message);

const ENTRIES: readonly Entry[] = [
  // the sheet as the readers see it
  rule('PS-SHT-001', 'sheet', 'ROW_RAGGED', [], 'a row has as many cells as the header (no cell beyond it)'),
  rule('PS-SHT-002', 'sheet', 'CELL_TOO_LONG', [], 'a cell is at most the cell cap long (Excel: 32 767 characters)'),
  rule('PS-SHT-003', 'sheet', 'ENCODING_REPLACED', [], "a CSV cell's bytes are valid in the file's encoding"),
  rule(
    'PS-SHT-004',
    'sheet',
    'CELL_ERROR',
    [],
    'an XLSX cell holds a value, not an Excel error or a formula without result',
  ),
  rule('PS-SHT-005', 'sheet', 'MERGED_HEADER', [], 'header cells are not merged'),
  rule('PS-SHT-006', 'sheet', 'MERGED_CELL', [], 'cells of a row are not merged'),
  rule('PS-SHT-007', 'sheet', 'ROW_HIDDEN', [], 'no row is hidden in Excel'),
  rule('PS-SHT-008', 'sheet', 'HIDDEN_COLUMN', [], 'no column the mapping reads is hidden in Excel'),
  rule(
    'PS-SHT-009',
    'sheet',
    'DUPLICATE_KEY',
    ['gtin', 'tradeItemId'],
    'a key (GTIN or tradeItemId) is on one row of the sheet only',
    GS1_UNIQUE,
  ),
  // a cell through its transform
  rule('PS-CEL-001', 'cell', 'DECIMAL_INVALID', [], 'a number column holds a number'),
  rule('PS-CEL-002', 'cell', 'DECIMAL_SEPARATOR', [], "a number uses the mapping's decimal separator"),
  rule('PS-CEL-003', 'cell', 'INTEGER_INVALID', [], 'an integer column holds a whole number'),
  rule('PS-CEL-004', 'cell', 'DATE_INVALID', [], 'a date column holds a calendar date (in the named format, if any)'),
  rule('PS-CEL-005', 'cell', 'DATE_AMBIGUOUS', [], 'a date reads as one date only (or the mapping names its format)'),
  rule('PS-CEL-006', 'cell', 'BOOLEAN_INVALID', [], 'a boolean column holds a yes/no value'),
  rule('PS-CEL-007', 'cell', 'UUID_INVALID', [], 'a uuid column holds a uuid'),
  rule(
    'PS-CEL-008',
    'cell',
    'COUNTRY_UNKNOWN',
    ['countriesOfOrigin', 'targetMarketsList.countryCodes'],
    'a country column holds an ISO 3166-1 code or a country name',
    'ISO 3166-1 (GDSN countryCode)',
  ),
  rule(
    'PS-CEL-009',
    'cell',
    'COUNTRY_AMBIGUOUS',
    ['countriesOfOrigin', 'targetMarketsList.countryCodes'],
    'a country name means one country only',
    'ISO 3166-1 (GDSN countryCode)',
  ),
  rule(
    'PS-CEL-010',
    'cell',
    'UNIT_UNKNOWN',
    [],
    'a unit column holds a known unit',
    'UN/ECE Recommendation 20 units (GDSN measurementUnitCode)',
  ),
  rule('PS-CEL-011', 'cell', 'UNIT_WITH_VALUE', [], 'a unit column holds a unit only, not a quantity'),
  rule(
    'PS-CEL-012',
    'cell',
    'UNIT_WRONG_FAMILY',
    [],
    'a unit is of the family the field expects (a weight for a weight)',
  ),
  rule(
    'PS-CEL-013',
    'cell',
    'QUANTITY_NO_UNIT',
    [],
    'a quantity column gives the unit with its number',
    GS1_NET_CONTENT,
  ),
  rule(
    'PS-CEL-014',
    'cell',
    'QUANTITY_NO_VALUE',
    [],
    'a quantity column gives the number with its unit',
    GS1_NET_CONTENT,
  ),
  rule('PS-CEL-015', 'cell', 'QUANTITY_INVALID', [], 'a quantity column holds one number and its unit'),
  rule(
    'PS-CEL-016',
    'cell',
    'QUANTITY_UNIT_MISMATCH',
    ['variableWeight', 'drainedNetWeight', 'netContents'],
    'the quantity columns of one object give one unit',
  ),
  rule(
    'PS-CEL-017',
    'cell',
    'IDENTIFIER_SCIENTIFIC_NOTATION',
    [],
    'an identifier is not written in scientific notation (its digits kept)',
  ),
  rule(
    'PS-CEL-018',
    'cell',
    'IDENTIFIER_NOT_EXACT',
    [],
    'an identifier given as a number is a whole number of at most 15 digits',
  ),
  // GTIN (src/pipeline/gtin.ts)
  rule('PS-GTIN-001', 'gtin', 'GTIN_EMPTY', ['gtin'], 'a GTIN column holds a GTIN', GS1_GTIN_FORMAT),
  rule('PS-GTIN-002', 'gtin', 'GTIN_NOT_DIGITS', ['gtin'], 'a GTIN is digits only', GS1_GTIN_FORMAT),
  rule(
    'PS-GTIN-003',
    'gtin',
    'GTIN_SCIENTIFIC_NOTATION',
    ['gtin'],
    'a GTIN is not written in scientific notation (its digits kept)',
  ),
  rule('PS-GTIN-004', 'gtin', 'GTIN_ALL_ZEROS', ['gtin'], 'a GTIN is not all zeros', GS1_GTIN_FORMAT),
  rule('PS-GTIN-005', 'gtin', 'GTIN_LENGTH', ['gtin'], 'a GTIN has 8, 12, 13 or 14 digits', GS1_GTIN_FORMAT),
  rule(
    'PS-GTIN-006',
    'gtin',
    'GTIN_CHECK_DIGIT',
    ['gtin'],
    "a GTIN's last digit is its mod-10 check digit",
    GS1_CHECK_DIGIT,
  ),
  rule(
    'PS-GTIN-007',
    'gtin',
    'GTIN_LEADING_ZEROS_RESTORED',
    ['gtin'],
    'a GTIN keeps its leading zeros (a text cell, not a number)',
    GS1_GTIN_FORMAT,
  ),
  rule(
    'PS-GTIN-008',
    'gtin',
    'GTIN_LEVEL_MISMATCH',
    ['gtin', 'isConsumerUnit'],
    'a consumer unit is not identified by a GTIN-14 of a grouping (indicator digit 1-8)',
    GS1_GTIN_LEVEL,
  ),
  rule(
    'PS-GTIN-009',
    'gtin',
    'GTIN_LEVEL_MISMATCH',
    ['gtin', 'isTradeItemBaseUnit'],
    'a base unit is not identified by a GTIN-14 of a grouping (indicator digit 1-8)',
    GS1_GTIN_LEVEL,
  ),
  // a row of the mapping
  rule('PS-ROW-001', 'row', 'REQUIRED_EMPTY', [], 'a column marked required: true is filled'),
  rule('PS-ROW-002', 'row', 'KEY_MISSING', ['gtin', 'tradeItemId'], 'a row has its match key (GTIN or tradeItemId)'),
  rule(
    'PS-ROW-003',
    'row',
    'FIELD_DROPPED',
    [],
    'an onInvalid: drop-field cell is readable and accepted by the API rules',
  ),
  rule(
    'PS-ROW-004',
    'row',
    'SCOPE_OUTSIDE',
    ['brandId', 'supplierCompanyId', 'gtin'],
    "a row is within the mapping's scope (brands, suppliers, GTIN prefixes)",
  ),
  rule(
    'PS-ROW-005',
    'row',
    'ROW_SKIPPED',
    [],
    'a row fits the mode (create-only: a new item; update-only: an existing one)',
  ),
  rule(
    'PS-ROW-006',
    'row',
    'FIELD_CREATE_ONLY',
    ['tradeItemId', 'multipack', 'productLanguage'],
    'a field the API sets on create only keeps its stored value',
  ),
  // the API's field rules (src/api/fields.ts): any field, then one rule per field constraint
  rule('PS-FLD-000', 'field', 'FIELD_NOT_ACCEPTED', [], 'the operation accepts every field sent'),
  fld('PS-FLD-001', 'FIELD_REQUIRED', 'tradeItemName', 'trade item tradeItemName is required on create'),
  fld('PS-FLD-002', 'FIELD_EMPTY', 'tradeItemName', 'trade item tradeItemName must not be empty on create'),
  fld('PS-FLD-003', 'FIELD_TYPE', 'tradeItemName', 'trade item tradeItemName is a string'),
  fld('PS-FLD-004', 'FIELD_REQUIRED', 'ownerCompanyId', 'trade item ownerCompanyId is required on create'),
  fld('PS-FLD-005', 'FIELD_TYPE', 'ownerCompanyId', 'trade item ownerCompanyId is a uuid'),
  fld('PS-FLD-006', 'FIELD_FORMAT', 'ownerCompanyId', 'trade item ownerCompanyId is written as a uuid'),
  fld('PS-FLD-007', 'FIELD_NOT_ACCEPTED', 'ownerCompanyId', 'trade item ownerCompanyId is accepted on create only'),
  fld('PS-FLD-008', 'FIELD_TYPE', 'tradeItemId', 'trade item tradeItemId is a string'),
  fld('PS-FLD-009', 'FIELD_NOT_ACCEPTED', 'tradeItemId', 'trade item tradeItemId is accepted on create only'),
  fld('PS-FLD-010', 'FIELD_TYPE', 'gtin', 'trade item gtin is a string'),
  fld('PS-FLD-011', 'FIELD_TYPE', 'brandId', 'trade item brandId is a string'),
  fld('PS-FLD-012', 'FIELD_TYPE', 'categoryListId', 'trade item categoryListId is a string'),
  fld('PS-FLD-013', 'FIELD_TYPE', 'categoryItemId', 'trade item categoryItemId is a string'),
  fld('PS-FLD-014', 'FIELD_TYPE', 'netContentValue', 'trade item netContentValue is a string'),
  fld('PS-FLD-015', 'FIELD_TYPE', 'netContentUnit', 'trade item netContentUnit is a string'),
  fld('PS-FLD-016', 'FIELD_TYPE', 'packagingFormat', 'trade item packagingFormat is a string'),
  fld('PS-FLD-017', 'FIELD_TYPE', 'productTypeId', 'trade item productTypeId is a string'),
  fld('PS-FLD-018', 'FIELD_TYPE', 'tradeItemStatusId', 'trade item tradeItemStatusId is a string'),
  fld('PS-FLD-019', 'FIELD_TYPE', 'ean7Weight', 'trade item ean7Weight is a string'),
  fld('PS-FLD-020', 'FIELD_TYPE', 'ean7Price', 'trade item ean7Price is a string'),
  fld('PS-FLD-021', 'FIELD_TYPE', 'retailerIdentifiers', 'trade item retailerIdentifiers is a list of strings'),
  fld('PS-FLD-022', 'FIELD_TYPE', 'retailerProductManager', 'trade item retailerProductManager is a string'),
  fld('PS-FLD-023', 'FIELD_TYPE', 'retailerPackagingManager', 'trade item retailerPackagingManager is a string'),
  fld('PS-FLD-024', 'FIELD_TYPE', 'retailerQualityManager', 'trade item retailerQualityManager is a string'),
  fld('PS-FLD-025', 'FIELD_TYPE', 'productRange', 'trade item productRange is a string'),
  fld('PS-FLD-026', 'FIELD_TYPE', 'functionalName', 'trade item functionalName is a string'),
  fld('PS-FLD-027', 'FIELD_TYPE', 'variant', 'trade item variant is a string'),
  fld('PS-FLD-028', 'FIELD_TYPE', 'isTradeItemVariableUnit', 'trade item isTradeItemVariableUnit is a string'),
  fld('PS-FLD-029', 'FIELD_TYPE', 'isTradeItemBaseUnit', 'trade item isTradeItemBaseUnit is a string'),
  fld('PS-FLD-030', 'FIELD_TYPE', 'isTradeItemSeasonal', 'trade item isTradeItemSeasonal is a string'),
  fld(
    'PS-FLD-031',
    'FIELD_TYPE',
    'seasonalAvailabilityStartDate',
    'trade item seasonalAvailabilityStartDate is a string',
  ),
  fld('PS-FLD-032', 'FIELD_TYPE', 'seasonalAvailabilityEndDate', 'trade item seasonalAvailabilityEndDate is a string'),
  fld('PS-FLD-033', 'FIELD_TYPE', 'dietTypeCodeId', 'trade item dietTypeCodeId is a string'),
  fld('PS-FLD-034', 'FIELD_TYPE', 'netContents', 'trade item netContents is a list of netContent objects'),
  fld(
    'PS-FLD-035',
    'FIELD_TYPE',
    'packagingNetContentDescription',
    'trade item packagingNetContentDescription is a string',
  ),
  fld('PS-FLD-036', 'FIELD_TYPE', 'manufacturingPeriod', 'trade item manufacturingPeriod is a string'),
  fld('PS-FLD-037', 'FIELD_TYPE', 'comments', 'trade item comments is a list of comment objects'),
  fld(
    'PS-FLD-038',
    'FIELD_TYPE',
    'retailerCustomizedAttributes',
    'trade item retailerCustomizedAttributes is a list of retailerAttribute objects',
  ),
  fld('PS-FLD-039', 'FIELD_TYPE', 'isConsumerUnit', 'trade item isConsumerUnit is a string'),
  fld(
    'PS-FLD-040',
    'FIELD_TYPE',
    'productCategories',
    'trade item productCategories is a list of productCategory objects',
  ),
  fld('PS-FLD-041', 'FIELD_TYPE', 'multipack', 'trade item multipack is a string'),
  fld('PS-FLD-042', 'FIELD_NOT_ACCEPTED', 'multipack', 'trade item multipack is accepted on create only'),
  fld('PS-FLD-043', 'FIELD_TYPE', 'productLanguage', 'trade item productLanguage is a string'),
  fld('PS-FLD-044', 'FIELD_NOT_ACCEPTED', 'productLanguage', 'trade item productLanguage is accepted on create only'),
  fld('PS-FLD-045', 'FIELD_TYPE', 'contacts', 'trade item contacts is a list of contact objects'),
  fld('PS-FLD-046', 'FIELD_TYPE', 'customProductTypeId', 'trade item customProductTypeId is a string'),
  fld('PS-FLD-047', 'FIELD_TYPE', 'createdBy', 'trade item createdBy is a string'),
  fld('PS-FLD-048', 'FIELD_NOT_ACCEPTED', 'createdBy', 'createdBy is sent by internal service credentials only'),
  fld('PS-FLD-049', 'FIELD_TYPE', 'harmonizedCode', 'trade item harmonizedCode is a string'),
  fld(
    'PS-FLD-050',
    'FIELD_NOT_ACCEPTED',
    'harmonizedCode',
    'trade item harmonizedCode is accepted on create, update only',
  ),
  fld('PS-FLD-051', 'FIELD_TYPE', 'drainedNetWeight', 'trade item drainedNetWeight is a drainedNetWeight object'),
  fld('PS-FLD-052', 'FIELD_TYPE', 'variableWeight', 'trade item variableWeight is a variableWeight object'),
  fld('PS-FLD-053', 'FIELD_TYPE', 'manufacturedItemName', 'manufactured item manufacturedItemName is a string'),
  fld(
    'PS-FLD-054',
    'FIELD_REQUIRED',
    'supplierCompanyId',
    'manufactured item supplierCompanyId is required on create under a trade item, create with its trade item',
  ),
  fld('PS-FLD-055', 'FIELD_TYPE', 'supplierCompanyId', 'manufactured item supplierCompanyId is a uuid'),
  fld('PS-FLD-056', 'FIELD_FORMAT', 'supplierCompanyId', 'manufactured item supplierCompanyId is written as a uuid'),
  fld(
    'PS-FLD-057',
    'FIELD_NOT_ACCEPTED',
    'supplierCompanyId',
    'manufactured item supplierCompanyId is accepted on create under a trade item, create with its trade item only',
  ),
  fld('PS-FLD-058', 'FIELD_TYPE', 'packerCompanyId', 'manufactured item packerCompanyId is a string'),
  fld(
    'PS-FLD-059',
    'FIELD_NOT_ACCEPTED',
    'packerCompanyId',
    'manufactured item packerCompanyId is accepted on create under a trade item, partial update, update only',
  ),
  fld('PS-FLD-060', 'FIELD_TYPE', 'countriesOfOrigin', 'manufactured item countriesOfOrigin is a list of strings'),
  fld(
    'PS-FLD-061',
    'FIELD_NOT_ACCEPTED',
    'countriesOfOrigin',
    'manufactured item countriesOfOrigin is accepted on create under a trade item, partial update, update only',
  ),
  fld(
    'PS-FLD-062',
    'FIELD_TYPE',
    'targetMarketsList',
    'manufactured item targetMarketsList is a list of targetMarket objects',
  ),
  fld('PS-FLD-063', 'FIELD_TYPE', 'manufacturedItemStatusId', 'manufactured item manufacturedItemStatusId is a string'),
  fld('PS-FLD-064', 'FIELD_TYPE', 'manufacturedItemId', 'manufactured item manufacturedItemId is a string'),
  fld(
    'PS-FLD-065',
    'FIELD_NOT_ACCEPTED',
    'manufacturedItemId',
    'manufactured item manufacturedItemId is accepted on create under a trade item only',
  ),
  fld('PS-FLD-066', 'FIELD_TYPE', 'netContents.value', 'netContents.value is a string'),
  fld('PS-FLD-067', 'FIELD_TYPE', 'netContents.unitOfMeasure', 'netContents.unitOfMeasure is a string'),
  fld('PS-FLD-068', 'FIELD_TYPE', 'comments.id', 'comments.id is a string'),
  fld('PS-FLD-069', 'FIELD_NOT_ACCEPTED', 'comments.id', 'comments.id is accepted on partial update, update only'),
  fld('PS-FLD-070', 'FIELD_TYPE', 'comments.value', 'comments.value is a string'),
  fld('PS-FLD-071', 'FIELD_TYPE', 'comments.authorId', 'comments.authorId is a string'),
  fld('PS-FLD-072', 'FIELD_TYPE', 'comments.commentDate', 'comments.commentDate is a string'),
  fld(
    'PS-FLD-073',
    'FIELD_TYPE',
    'retailerCustomizedAttributes.retailerLabel',
    'retailerCustomizedAttributes.retailerLabel is a string',
  ),
  fld(
    'PS-FLD-074',
    'FIELD_TYPE',
    'retailerCustomizedAttributes.retailerCode',
    'retailerCustomizedAttributes.retailerCode is a string',
  ),
  fld('PS-FLD-075', 'FIELD_TYPE', 'productCategories.categoryId', 'productCategories.categoryId is a uuid'),
  fld(
    'PS-FLD-076',
    'FIELD_FORMAT',
    'productCategories.categoryId',
    'productCategories.categoryId is written as a uuid',
  ),
  fld('PS-FLD-077', 'FIELD_TYPE', 'productCategories.categoryItemId', 'productCategories.categoryItemId is a uuid'),
  fld(
    'PS-FLD-078',
    'FIELD_FORMAT',
    'productCategories.categoryItemId',
    'productCategories.categoryItemId is written as a uuid',
  ),
  fld('PS-FLD-079', 'FIELD_TYPE', 'contacts.userId', 'contacts.userId is a uuid'),
  fld('PS-FLD-080', 'FIELD_FORMAT', 'contacts.userId', 'contacts.userId is written as a uuid'),
  fld('PS-FLD-081', 'FIELD_TYPE', 'contacts.responsibilityId', 'contacts.responsibilityId is a uuid'),
  fld('PS-FLD-082', 'FIELD_FORMAT', 'contacts.responsibilityId', 'contacts.responsibilityId is written as a uuid'),
  fld(
    'PS-FLD-083',
    'FIELD_TYPE',
    'targetMarketsList.countryCodes',
    'targetMarketsList.countryCodes is a list of strings',
  ),
  fld(
    'PS-FLD-084',
    'FIELD_TYPE',
    'targetMarketsList.pointsOfSales',
    'targetMarketsList.pointsOfSales is a list of uuids',
  ),
  fld(
    'PS-FLD-085',
    'FIELD_FORMAT',
    'targetMarketsList.pointsOfSales',
    'targetMarketsList.pointsOfSales is written as a uuid',
  ),
  fld(
    'PS-FLD-086',
    'FIELD_TYPE',
    'targetMarketsList.startAvailabilityDate',
    'targetMarketsList.startAvailabilityDate is a string',
  ),
  fld(
    'PS-FLD-087',
    'FIELD_TYPE',
    'targetMarketsList.endAvailabilityDate',
    'targetMarketsList.endAvailabilityDate is a string',
  ),
  fld('PS-FLD-088', 'FIELD_TYPE', 'drainedNetWeight.value', 'drainedNetWeight.value is a number'),
  fld(
    'PS-FLD-089',
    'FIELD_TYPE',
    'drainedNetWeight.unitOfMeasure',
    'drainedNetWeight.unitOfMeasure is a string (a weight unit id)',
  ),
  fld(
    'PS-FLD-090',
    'FIELD_INVALID',
    'drainedNetWeight.unitOfMeasure',
    'drainedNetWeight.unitOfMeasure is one of the seven weight unit ids (g, kg, mg, cg, dg, mcg, ton)',
  ),
  fld('PS-FLD-091', 'FIELD_TYPE', 'variableWeight.minimumValue', 'variableWeight.minimumValue is a number'),
  fld('PS-FLD-092', 'FIELD_TYPE', 'variableWeight.maximumValue', 'variableWeight.maximumValue is a number'),
  fld(
    'PS-FLD-093',
    'FIELD_TYPE',
    'variableWeight.unitOfMeasure',
    'variableWeight.unitOfMeasure is a string (a weight unit id)',
  ),
  fld(
    'PS-FLD-094',
    'FIELD_INVALID',
    'variableWeight.unitOfMeasure',
    'variableWeight.unitOfMeasure is one of the seven weight unit ids (g, kg, mg, cg, dg, mcg, ton)',
  ),
  fld('PS-FLD-095', 'FIELD_REQUIRED', '', 'a field the API requires on the operation is given'),
  fld('PS-FLD-096', 'FIELD_EMPTY', '', 'a field the API requires non-empty is not empty'),
  fld('PS-FLD-097', 'FIELD_TYPE', '', "a value has its API field's type"),
  fld('PS-FLD-098', 'FIELD_FORMAT', '', "a value has its API field's format (a uuid)"),
  fld('PS-FLD-099', 'FIELD_INVALID', '', 'a value is one the API field allows'),
  // cross-field rules (src/pipeline/map/cross-field.ts)
  rule(
    'PS-XF-001',
    'cross-field',
    'NET_CONTENT_INCOMPLETE',
    ['netContents.value', 'netContents.unitOfMeasure'],
    'a net content gives its value with its unit of measure',
    GS1_NET_CONTENT,
  ),
  rule(
    'PS-XF-002',
    'cross-field',
    'NET_CONTENT_INCOMPLETE',
    ['netContentValue', 'netContentUnit'],
    'netContentValue and netContentUnit come together',
    GS1_NET_CONTENT,
  ),
  rule(
    'PS-XF-003',
    'cross-field',
    'NET_CONTENT_NOT_POSITIVE',
    ['netContents.value', 'netContentValue'],
    'a net content value is a number greater than zero',
    GS1_NET_CONTENT,
  ),
  rule(
    'PS-XF-004',
    'cross-field',
    'NET_CONTENT_NOT_POSITIVE',
    ['drainedNetWeight.value'],
    'a drained net weight is greater than zero',
    GS1_NET_CONTENT,
  ),
  rule(
    'PS-XF-005',
    'cross-field',
    'DATES_OUT_OF_ORDER',
    ['seasonalAvailabilityStartDate', 'seasonalAvailabilityEndDate'],
    'the seasonal availability starts on or before its end',
    GS1_DATES,
  ),
  rule(
    'PS-XF-006',
    'cross-field',
    'DATES_OUT_OF_ORDER',
    ['targetMarketsList.startAvailabilityDate', 'targetMarketsList.endAvailabilityDate'],
    "a target market's availability starts on or before its end",
    GS1_DATES,
  ),
  rule(
    'PS-XF-007',
    'cross-field',
    'RANGE_INVERTED',
    ['variableWeight.minimumValue', 'variableWeight.maximumValue'],
    'a variable weight minimum is not above its maximum',
  ),
  rule(
    'PS-XF-008',
    'cross-field',
    'NAME_ALL_CAPITALS',
    ['tradeItemName', 'manufacturedItemName'],
    'a name is not written in capitals only',
    GS1_NAME,
  ),
  rule(
    'PS-XF-009',
    'cross-field',
    'NAME_MARKUP',
    ['tradeItemName', 'manufacturedItemName'],
    'a name is plain text (no HTML tags or entities)',
    GS1_NAME,
  ),
  rule(
    'PS-XF-010',
    'cross-field',
    'SEASON_CONTRADICTS_DATES',
    ['isTradeItemSeasonal', 'seasonalAvailabilityStartDate', 'seasonalAvailabilityEndDate'],
    'an item marked not seasonal gives no seasonal availability dates',
  ),
  rule(
    'PS-XF-011',
    'cross-field',
    'SEASON_CONTRADICTS_DATES',
    ['isTradeItemSeasonal', 'seasonalAvailabilityStartDate', 'seasonalAvailabilityEndDate'],
    'an item marked seasonal gives its seasonal availability dates',
  ),
  // lookups: labels to reference ids (src/pipeline/resolve/)
  rule('PS-REF-001', 'lookup', 'REF_UNKNOWN', [], 'a label or code names an item of its reference list'),
  rule('PS-REF-002', 'lookup', 'REF_AMBIGUOUS', [], 'a label names one item of its reference list only'),
  rule('PS-REF-003', 'lookup', 'REF_NO_TRANSLATION', [], "a reference item has a name in the sheet's language"),
  rule('PS-REF-004', 'lookup', 'REF_FALLBACK_LANGUAGE', [], "a label is the item's name in the sheet's language"),
  rule('PS-REF-005', 'lookup', 'REF_ID_UNKNOWN', [], 'an id given in the sheet exists in the reference API'),
  rule(
    'PS-REF-006',
    'lookup',
    'HS_CODE_UNKNOWN',
    ['harmonizedCode'],
    'a harmonized code exists',
    'WCO Harmonized System (GDSN importClassificationValue)',
  ),
  rule(
    'PS-REF-007',
    'lookup',
    'HS_CODE_FORMAT',
    ['harmonizedCode'],
    'a harmonized code is 2 to 10 digits',
    'WCO Harmonized System (GDSN importClassificationValue)',
  ),
  rule(
    'PS-REF-008',
    'lookup',
    'BRAND_UNKNOWN',
    ['brandId'],
    'a brand name is a brand of the owner (or the mapping creates brands)',
  ),
  rule('PS-REF-009', 'lookup', 'BRAND_CREATED', ['brandId'], 'a brand exists before the import'),
  rule(
    'PS-REF-010',
    'lookup',
    'BRAND_WOULD_CREATE',
    ['brandId'],
    'a brand exists (a dry run, a rejected row or a held run would create it)',
  ),
  rule('PS-REF-011', 'lookup', 'BRAND_ARCHIVED', ['brandId'], 'a brand is not archived'),
  rule('PS-REF-012', 'lookup', 'BRAND_CREATE_FAILED', ['brandId'], 'a missing brand is created by the API'),
  // the mapping's own rules (src/pipeline/map/user-rules.ts): their issues carry the mapping rule's id
  rule(
    'PS-USR-001',
    'user',
    'USER_RULE',
    [],
    "a mapping's rule (rules:) holds on the row; the issue carries that rule's id",
  ),
  rule(
    'PS-USR-002',
    'user',
    'USER_RULE_FAILED',
    [],
    "a mapping's rule evaluates on the row without an error; the issue carries that rule's id",
  ),
  // the API's answers (src/pipeline/sync/execute.ts)
  rule('PS-API-001', 'api', 'API_REJECTED', [], 'the API accepts the write (no 400)'),
  rule('PS-API-002', 'api', 'API_CONFLICT', [], 'the API accepts the write (no 409)'),
  rule('PS-API-003', 'api', 'API_FAILED', [], 'the write succeeds within its retries'),
  rule('PS-API-004', 'api', 'REQUEST_INVALID', [], "a request body keeps to its operation's field rules"),
  rule(
    'PS-API-005',
    'api',
    'DUPLICATE_REMOVED',
    [],
    'a key has one item in the API (a late duplicate is archived)',
    GS1_UNIQUE,
  ),
  rule('PS-API-006', 'api', 'NOT_ATTEMPTED', [], 'the run reaches every row (not aborted before it)'),
];

/** Rule ids that once meant a rule that is gone: never given again. */
export const RETIRED_RULE_IDS: readonly string[] = [];

/** Every rule, in catalogue order, with its severity (the code's). */
export const RULES: readonly Rule[] = ENTRIES.map((e) => {
  const entry: readonly unknown[] = ISSUE_CODES[e.code];
  return { ...e, severity: entry.length === 3 ? 'varies' : (entry[0] as Severity) };
});

/** The id of a rule by its code and one field it reads (`code\0field`), and by its code alone (the code's first). */
const BY_CODE_FIELD = new Map<string, string>();
const BY_CODE = new Map<string, string>();
for (const r of RULES) {
  // A code's rule without fields is its any-field rule (PS-FLD-095…), else its first rule.
  if (!BY_CODE.has(r.code) || r.fields.length === 0) BY_CODE.set(r.code, r.id);
  for (const f of r.fields) if (!BY_CODE_FIELD.has(`${r.code}\0${f}`)) BY_CODE_FIELD.set(`${r.code}\0${f}`, r.id);
}
const INDEX = /\[\d+\]/g;
const memo = new Map<string, string | null>();

/**
 * The rule an issue follows: its own (a mapping's rule) or the catalogue's for its code and field
 * (`netContents[0].value` is `netContents.value`); a code whose rule reads no particular field has one rule. Null
 * for a code of no rule.
 */
export function ruleIdOf(i: Pick<Issue, 'code' | 'field'> & { rule?: string }): string | null {
  if (i.rule !== undefined) return i.rule;
  const key = i.field === null ? i.code : `${i.code}\0${i.field}`;
  let id = memo.get(key);
  if (id === undefined) {
    const field = i.field?.replace(INDEX, '') ?? null;
    id = (field !== null ? BY_CODE_FIELD.get(`${i.code}\0${field}`) : undefined) ?? BY_CODE.get(i.code) ?? null;
    if (memo.size < 10_000) memo.set(key, id);
  }
  return id;
}
