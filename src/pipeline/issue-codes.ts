/** The issue codes of mapping and validation (docs/mapping.md lists them): code → severity and description, as data. */
import type { Severity } from './types.ts';

/** Every issue code the mapping, transform and validation stages emit. */
export const ISSUE_CODES = {
  // transforms
  DECIMAL_INVALID: ['error', 'the cell is not a number'],
  DECIMAL_SEPARATOR: ['error', "the number uses the other decimal separator than the mapping's (1,5 where 1.5 is expected, or the reverse; 1.500 in a decimal-comma sheet)"],
  INTEGER_INVALID: ['error', 'the cell is not a whole number'],
  DATE_INVALID: ['error', 'the cell is not a date, or not a calendar date (2025-02-30), or does not match the named format'],
  DATE_AMBIGUOUS: ['error', 'a date like 03/04/2025 reads as two different dates and the mapping names no format'],
  BOOLEAN_INVALID: ['error', 'the cell is not a yes/no value'],
  UUID_INVALID: ['error', 'the cell is not a uuid'],
  COUNTRY_UNKNOWN: ['error', "the cell is not an ISO 3166-1 alpha-2/alpha-3 code or a country name in the mapping's language or English"],
  UNIT_UNKNOWN: ['error', 'the cell is not a known unit'],
  UNIT_WITH_VALUE: ['error', 'a quantity with its unit (0,5 kg) where only a unit is expected'],
  UNIT_WRONG_FAMILY: ['error', 'a unit of another family (a volume where a weight is expected); never converted'],
  GTIN_NOT_DIGITS: ['error', 'the GTIN holds something other than digits'],
  IDENTIFIER_SCIENTIFIC_NOTATION: ['error', 'an identifier column was written by Excel in scientific notation (1,76701E+15): its digits are lost; format the column as Text'],
  IDENTIFIER_NOT_EXACT: ['error', 'an identifier came as a number that is not a whole number of at most 15 digits'],
  GTIN_SCIENTIFIC_NOTATION: ['error', 'the GTIN was written by Excel in scientific notation (5,58199E+12): its digits are lost; format the column as Text'],
  GTIN_ALL_ZEROS: ['error', 'the GTIN is all zeros'],
  GTIN_LENGTH: ['error', 'the GTIN does not have 8, 12, 13 or 14 digits (nor 7, 9–11 digits that lost leading zeros)'],
  GTIN_CHECK_DIGIT: ['error', 'the GTIN check digit (mod 10) is wrong'],
  GTIN_EMPTY: ['error', 'the GTIN is empty'],
  GTIN_LEADING_ZEROS_RESTORED: ['warning', 'the GTIN had lost its leading zeros (a number in Excel); they were restored because the check digit passes'],
  // map-row
  REQUIRED_EMPTY: ['error', 'the cell of a column marked required: true is empty'],
  KEY_MISSING: ['error', "the row has no match key (empty GTIN / tradeItemId cell); it cannot be matched or created"],
  // validation against the operation's schema (src/api/schemas.ts)
  FIELD_REQUIRED: ['error', 'the API requires this field and the row gives no value'],
  FIELD_EMPTY: ['error', 'the API requires a non-empty value'],
  FIELD_TYPE: ['error', 'the value has the wrong type for the API field'],
  FIELD_FORMAT: ['error', 'the value has the wrong format for the API field (e.g. not a uuid)'],
  FIELD_NOT_ACCEPTED: ['error', 'the operation does not accept this field'],
  FIELD_INVALID: ['error', 'the value is not allowed for the API field (e.g. a weight unit id that is not one of the seven)'],
  // sheet-level
  DUPLICATE_KEY: ['error', 'the same key (GTIN or tradeItemId) is on several rows of the sheet; none of them is sent'],
} as const satisfies Record<string, readonly [Severity, string]>;

/** One of the issue codes above. */
export type IssueCode = keyof typeof ISSUE_CODES;

/** The severity an issue code has. */
export function severityOf(code: IssueCode): Severity {
  return ISSUE_CODES[code][0];
}
