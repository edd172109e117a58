/**
 * Every issue code of a run, in one table read at runtime: code → [severity, description]. `issue()` takes the
 * severity from here, so no caller writes it. docs/mapping.md (reading the cells: transforms, map-row, validation)
 * and docs/reports.md (readers, reference resolution, the run's own) list every code with this severity and
 * description; test/issue-docs.test.ts checks they agree.
 *
 * A code whose severity depends on the case carries a third element, `'varies'`: its description says when it is
 * which, the severity here is its usual one, and `issue()` takes the other as an explicit override (only for those).
 */

/** How bad an issue is: an `error` keeps the row from being sent, a `warning` is reported only. */
export type Severity = 'error' | 'warning';

/** A problem with a file, a row or a cell — data, never an exception. `row` is the sheet's own 1-based row number. */
export interface Issue {
  row: number | null;
  column: string | null;
  field: string | null;
  value: string | null;
  /** A stable code (docs/mapping.md and docs/reports.md, "Issue codes"), e.g. `GTIN_CHECK_DIGIT`. */
  code: string;
  severity: Severity;
  message: string;
  /**
   * The rule id, when the check names its own (a mapping's rule, a cross-field rule); otherwise the catalogue gives it
   * from the code and field (src/rule-catalogue.ts, ruleIdOf).
   */
  rule?: string;
}

/** Every issue code the run emits. */
export const ISSUE_CODES = {
  // readers (openSheet: formats/read-csv.ts, formats/read-xlsx.ts)
  ROW_RAGGED: [
    'warning',
    'a CSV row has fewer cells than the header (the missing ones are empty), or an XLSX row has cells right of the last header; an error when a CSV row has non-empty cells beyond the header (they would be lost)',
    'varies',
  ],
  CELL_TOO_LONG: [
    'error',
    "a cell is longer than the cell cap (Excel's own limit is 32 767 characters); it is read as empty",
  ],
  ENCODING_REPLACED: [
    'error',
    "a CSV cell holds � where bytes were not valid in the file's encoding; the value is damaged",
  ],
  CELL_ERROR: [
    'error',
    'an XLSX cell holds an Excel error (#N/A, #REF!…) or a formula without a usable result; it is read as empty',
  ],
  MERGED_HEADER: [
    'warning',
    'header cells are merged: the title is in the first column only, the others have an empty header',
  ],
  MERGED_CELL: [
    'warning',
    'cells of this row are part of a merged range whose value is in its top-left cell only; they are read as empty',
  ],
  ROW_HIDDEN: ['warning', 'the row is hidden in Excel; it is imported like the others'],
  HIDDEN_COLUMN: [
    'warning',
    'a column the mapping reads is hidden in Excel; it is imported like the others (hidden columns the mapping does not use are not reported)',
  ],
  // transforms
  DECIMAL_INVALID: ['error', 'the cell is not a number'],
  DECIMAL_SEPARATOR: [
    'error',
    "the number uses the other decimal separator than the mapping's (1,5 where 1.5 is expected, or the reverse; 1.500 in a decimal-comma sheet)",
  ],
  INTEGER_INVALID: ['error', 'the cell is not a whole number'],
  DATE_INVALID: [
    'error',
    'the cell is not a date, or not a calendar date (2025-02-30), or does not match the named format',
  ],
  DATE_AMBIGUOUS: ['error', 'a date like 03/04/2025 reads as two different dates and the mapping names no format'],
  BOOLEAN_INVALID: ['error', 'the cell is not a yes/no value'],
  UUID_INVALID: ['error', 'the cell is not a uuid'],
  COUNTRY_UNKNOWN: [
    'error',
    'the cell is not an ISO 3166-1 alpha-2/alpha-3 code or a country name in any language of the country data',
  ],
  COUNTRY_AMBIGUOUS: [
    'error',
    "the name means different countries (Kongo: Congo in Polish, DR Congo in German), in the language that knows it (the mapping's, else English, else all others); write the ISO code",
  ],
  UNIT_UNKNOWN: ['error', 'the cell is not a known unit'],
  UNIT_WITH_VALUE: ['error', 'a quantity with its unit (0,5 kg) where only a unit is expected'],
  UNIT_WRONG_FAMILY: ['error', 'a unit of another family (a volume where a weight is expected); never converted'],
  QUANTITY_NO_UNIT: ['error', 'a quantity column holds a number without its unit (500 where 500 g is expected)'],
  QUANTITY_NO_VALUE: ['error', 'a quantity column holds a unit without its number (kg)'],
  QUANTITY_INVALID: [
    'error',
    'a quantity column holds something that is not one number and its unit: text, or several quantities (6 x 33 cl)',
  ],
  QUANTITY_UNIT_MISMATCH: [
    'error',
    'two quantity columns of a row give one object different units (variableWeight minimum in kg, maximum in g); never converted',
  ],
  GTIN_NOT_DIGITS: ['error', 'the GTIN holds something other than digits'],
  IDENTIFIER_SCIENTIFIC_NOTATION: [
    'error',
    'an identifier column was written by Excel in scientific notation (1,76701E+15): its digits are lost; format the column as Text',
  ],
  IDENTIFIER_NOT_EXACT: ['error', 'an identifier came as a number that is not a whole number of at most 15 digits'],
  GTIN_SCIENTIFIC_NOTATION: [
    'error',
    'the GTIN was written by Excel in scientific notation (5,58199E+12): its digits are lost; format the column as Text',
  ],
  GTIN_ALL_ZEROS: ['error', 'the GTIN is all zeros'],
  GTIN_LENGTH: ['error', 'the GTIN does not have 8, 12, 13 or 14 digits (nor 7, 9–11 digits that lost leading zeros)'],
  GTIN_CHECK_DIGIT: ['error', 'the GTIN check digit (mod 10) is wrong'],
  GTIN_EMPTY: ['error', 'the GTIN is empty'],
  GTIN_LEADING_ZEROS_RESTORED: [
    'warning',
    'the GTIN had lost its leading zeros (a number in Excel); they were restored because the check digit passes',
  ],
  // map-row
  REQUIRED_EMPTY: ['error', 'the cell of a column marked required: true is empty'],
  KEY_MISSING: ['error', 'the row has no match key (empty GTIN / tradeItemId cell); it cannot be matched or created'],
  FIELD_DROPPED: [
    'warning',
    'a cell of an onInvalid: drop-field column could not be read, or its value was refused by the API rules: the field is left out and the row goes on (the message gives the original problem)',
  ],
  // validation against the operation's schema (src/api/schemas.ts)
  FIELD_REQUIRED: ['error', 'the API requires this field and the row gives no value'],
  FIELD_EMPTY: ['error', 'the API requires a non-empty value'],
  FIELD_TYPE: ['error', 'the value has the wrong type for the API field'],
  FIELD_FORMAT: ['error', 'the value has the wrong format for the API field (e.g. not a uuid)'],
  FIELD_NOT_ACCEPTED: ['error', 'the operation does not accept this field'],
  FIELD_INVALID: [
    'error',
    'the value is not allowed for the API field (e.g. a weight unit id that is not one of the seven)',
  ],
  // cross-field rules (map/cross-field.ts): warnings, so that a gate's rule list can hold a run on them
  NET_CONTENT_INCOMPLETE: [
    'warning',
    'a net content gives a value without its unit of measure, or a unit without its value',
  ],
  NET_CONTENT_NOT_POSITIVE: [
    'warning',
    'a net content value or a drained net weight is not a number greater than zero',
  ],
  DATES_OUT_OF_ORDER: ['warning', 'an availability (seasonal, a target market) starts after its end'],
  RANGE_INVERTED: ['warning', 'a variable weight minimum is above its maximum'],
  GTIN_LEVEL_MISMATCH: [
    'warning',
    'a consumer unit or a base unit is identified by a GTIN-14 whose indicator digit (1-8) marks a grouping of trade items',
  ],
  NAME_ALL_CAPITALS: ['warning', 'a name is written in capitals only'],
  NAME_MARKUP: ['warning', 'a name holds HTML tags or entities'],
  SEASON_CONTRADICTS_DATES: [
    'warning',
    'an item marked not seasonal gives seasonal availability dates, or one marked seasonal gives none',
  ],
  // the mapping's own rules (map/user-rules.ts): the severity is the rule's
  USER_RULE: [
    'error',
    "a rule of the mapping (rules:) does not hold on the row; a warning when the rule's severity is warning",
    'varies',
  ],
  USER_RULE_FAILED: [
    'error',
    "a rule of the mapping (rules:) could not be evaluated on the row (its expression raised an error); a warning when the rule's severity is warning",
    'varies',
  ],
  // sheet-level
  DUPLICATE_KEY: ['error', 'the same key (GTIN or tradeItemId) is on several rows of the sheet; none of them is sent'],
  // reference resolution (resolve/reference-resolver.ts, prepare.ts). REF_FALLBACK_LANGUAGE: the sheet used the label
  // of a fallback language for an item that *has* a name in the sheet's language (the sheet could say it in its own
  // language). REF_NO_TRANSLATION: the item has no name at all in the sheet's language, so the label or code could
  // only be found in a fallback language — a gap of the reference data, not of the sheet. Both resolve the id.
  REF_UNKNOWN: ['error', 'the label or code matches no item of the list in any language of the chain'],
  REF_AMBIGUOUS: ['error', 'the label matches several items of the list'],
  REF_NO_TRANSLATION: ['warning', 'resolved in a fallback language: the item has no translation in the sheet language'],
  REF_FALLBACK_LANGUAGE: [
    'warning',
    'resolved through a label of a fallback language (the item has another name in the sheet language)',
  ],
  REF_ID_UNKNOWN: ['error', 'an id given in the sheet does not exist in the reference API'],
  HS_CODE_UNKNOWN: ['error', 'the harmonized code does not exist'],
  HS_CODE_FORMAT: ['error', 'a harmonized code is 2 to 10 digits (dots and spaces allowed)'],
  BRAND_UNKNOWN: ['error', 'no brand of the owner has this name, and the mapping does not create brands'],
  BRAND_CREATED: ['warning', 'the brand did not exist and was created'],
  BRAND_WOULD_CREATE: [
    'warning',
    'the brand does not exist and would be created (dry run, a row rejected for another issue, or a run whose quality gate is not yet decided)',
  ],
  BRAND_ARCHIVED: ['warning', 'the brand of this name is archived'],
  // scope (pipeline/scope.ts)
  SCOPE_OUTSIDE: [
    'error',
    "the row is outside the mapping's scope (another brand, another supplier, a GTIN outside the prefixes); nothing of it is written",
  ],
  BRAND_CREATE_FAILED: [
    'error',
    'the brand did not exist and the API would not create it (after its retries and look-ups): the row is failed, not sent; run the import again',
  ],
  // plan (sync/plan.ts)
  ROW_SKIPPED: [
    'warning',
    'the mode says leave the row: create-only on an existing item, update-only on a missing one (or a tradeItemId key that matches no item)',
  ],
  FIELD_CREATE_ONLY: [
    'warning',
    'a field the API sets only when the item is created differs from the stored value; the API keeps its value',
  ],
  // execute (sync/execute.ts, the run and the queue workers)
  API_REJECTED: ['error', 'the API refused the write with a 400; the message gives its own words'],
  API_CONFLICT: ['error', 'the API answered 409 (conflict) to the write'],
  API_FAILED: ['error', 'the write failed otherwise (5xx, 429, timeout, connection) after its retries'],
  REQUEST_INVALID: [
    'error',
    "the client refused to send a body its operation's field rules forbid (names the property); nothing was sent",
  ],
  DUPLICATE_REMOVED: [
    'warning',
    "a second item for a key, created by a run after its lease had run out (the fence's last window), was archived",
  ],
  NOT_ATTEMPTED: [
    'error',
    'the run was aborted before this row (archive guard, circuit open, credential rejected, lease lost, interrupted)',
  ],
} as const satisfies Record<string, readonly [Severity, string] | readonly [Severity, string, 'varies']>;

/** One of the issue codes above. */
export type IssueCode = keyof typeof ISSUE_CODES;

/**
 * The codes whose severity depends on the case (marked `'varies'` in the table): only they take a severity override.
 */
export type VaryingSeverityCode = {
  [C in IssueCode]: (typeof ISSUE_CODES)[C] extends readonly [Severity, string, 'varies'] ? C : never;
}[IssueCode];

/** The codes whose severity the table alone decides (every code but the `'varies'` ones). */
export type FixedSeverityCode = Exclude<IssueCode, VaryingSeverityCode>;

/** The severity an issue code has. */
export function severityOf(code: IssueCode): Severity {
  return ISSUE_CODES[code][0];
}

/** Where an issue is and what it says; what is not given is null. */
export interface IssueAt {
  row: number | null;
  column?: string | null;
  field?: string | null;
  value?: string | null;
  message: string;
}

/** An issue of `code`, with the severity the table gives it (or, for a code whose severity varies, the one passed). */
export function issue(code: FixedSeverityCode, at: IssueAt): Issue;
export function issue(code: VaryingSeverityCode, at: IssueAt, severity: Severity): Issue;
export function issue(code: IssueCode, at: IssueAt, severity: Severity = severityOf(code)): Issue {
  return {
    row: at.row,
    column: at.column ?? null,
    field: at.field ?? null,
    value: at.value ?? null,
    code,
    severity,
    message: at.message,
  };
}
