/**
 * Draft validation against the API operation's zod schema (derived from the field rules), and duplicate keys. A fast
 * check derived from the same rules (api/body-check.ts) answers first; zod runs only for drafts it fails, so issues
 * are zod's, as before, and a valid row costs a few property reads.
 */
import * as z from 'zod';
import { bodyFieldChecks, objectCheck, type FieldCheck } from '../../api/body-check.ts';
import type { BodyOperation } from '../../api/fields.ts';
import { bodySchema } from '../../api/schemas.ts';
import { issue, type IssueCode } from '../../issue-codes.ts';
import { valueAt } from '../../value-at.ts';
import type { Draft, Issue } from '../types.ts';

// ownerCompanyId is not in drafts: the planner sets it from the mapping or --owner. Validation stands in a uuid.
const OWNER_PLACEHOLDER = '00000000-0000-4000-8000-000000000000';
const CREATES: ReadonlySet<BodyOperation> = new Set([
  'tradeItem.create',
  'manufacturedItem.createWithTradeItem',
  'manufacturedItem.createUnderTradeItem',
]);

let manufacturedSchema: z.ZodObject | undefined;

// A manufactured item row is sent as route B plus follow-up writes (trade item PUT/PATCH for the trade item fields
// route B does not take, route A/PATCH fields such as countriesOfOrigin): each field is checked with the rule of
// the operation that will carry it, and what no operation takes is rejected.
const MANUFACTURED_EXTRA_OPS = ['tradeItem.create', 'manufacturedItem.createUnderTradeItem'] as const;

function manufacturedItemSchema(): z.ZodObject {
  if (manufacturedSchema) return manufacturedSchema;
  const routeB = bodySchema('manufacturedItem.createWithTradeItem').shape;
  const shape: Record<string, z.ZodType> = { ...routeB };
  for (const op of MANUFACTURED_EXTRA_OPS) {
    for (const [name, s] of Object.entries(bodySchema(op).shape))
      if (!(name in shape)) shape[name] = (s as z.ZodType).optional();
  }
  manufacturedSchema = z.compile(z.strictObject(shape));
  return manufacturedSchema;
}

/** The field checks of manufacturedItemSchema, merged the same way (fields route B does not take made optional). */
function manufacturedItemChecks(): FieldCheck[] {
  const out = [...bodyFieldChecks('manufacturedItem.createWithTradeItem')];
  const names = new Set(out.map((f) => f.name));
  for (const op of MANUFACTURED_EXTRA_OPS) {
    for (const f of bodyFieldChecks(op)) {
      if (names.has(f.name)) continue;
      names.add(f.name);
      out.push({ ...f, optional: true });
    }
  }
  return out;
}

const fastChecks = new Map<BodyOperation, (fields: Record<string, unknown>) => boolean>();

/**
 * True exactly when the operation's schema accepts the draft's fields (with the run's ownerCompanyId where
 * validateDraft stands one in).
 */
function fastCheck(operation: BodyOperation): (fields: Record<string, unknown>) => boolean {
  let check = fastChecks.get(operation);
  if (!check) {
    const fields =
      operation === 'manufacturedItem.createWithTradeItem' ? manufacturedItemChecks() : bodyFieldChecks(operation);
    check = objectCheck(fields, new Set(suppliesOwner(operation) ? ['ownerCompanyId'] : []));
    fastChecks.set(operation, check);
  }
  return check;
}

/** validateDraft stands a uuid in for a missing ownerCompanyId on these operations (the run supplies the real one). */
const suppliesOwner = (operation: BodyOperation): boolean =>
  CREATES.has(operation) && operation !== 'manufacturedItem.createUnderTradeItem';

/** The operation a draft of this target is checked against by default (its create). */
export function createOperationOf(target: Draft['target']): BodyOperation {
  return target === 'tradeItem' ? 'tradeItem.create' : 'manufacturedItem.createWithTradeItem';
}

function formatPath(path: readonly PropertyKey[]): string {
  let s = '';
  for (const p of path) s += typeof p === 'number' ? `[${p}]` : s === '' ? String(p) : `.${String(p)}`;
  return s;
}

function originOf(draft: Draft, path: string): { column: string; value: string | null } | undefined {
  const origins = draft.origins ?? {};
  if (origins[path]) return origins[path];
  // The issue is on a part of what one column fed (countriesOfOrigin[2]) or on an object several columns fed
  // (netContents[0]).
  for (const [p, o] of Object.entries(origins)) if (path.startsWith(`${p}[`) || path.startsWith(`${p}.`)) return o;
  for (const [p, o] of Object.entries(origins)) if (p.startsWith(`${path}[`) || p.startsWith(`${path}.`)) return o;
  return undefined;
}

function valueText(v: unknown): string | null {
  if (v === undefined || v === null) return null;
  return typeof v === 'string' ? v : JSON.stringify(v);
}

const HINTS: Readonly<Record<string, string>> = {
  ownerCompanyId: ' (set ownerCompanyId in the mapping or pass --owner)',
  supplierCompanyId: ' (map a supplier column or set supplierCompanyId in the mapping defaults)',
};

/**
 * Issues of a draft against an operation's schema (default: the target's create), each naming the sheet column that
 * fed the field; fields still waiting for lookup resolution are exempt, and ownerCompanyId is supplied by the run.
 */
export function validateDraft(draft: Draft, operation: BodyOperation = createOperationOf(draft.target)): Issue[] {
  // Most rows pass: the fast check says so without zod (it accepts exactly what the schema accepts).
  return fastCheck(operation)(draft.fields) ? [] : schemaIssues(draft, operation);
}

/**
 * validateDraft's issues as zod finds them, without the fast check first (the reference the fast check is tested
 * against).
 */
export function schemaIssues(draft: Draft, operation: BodyOperation = createOperationOf(draft.target)): Issue[] {
  const schema =
    operation === 'manufacturedItem.createWithTradeItem' ? manufacturedItemSchema() : bodySchema(operation);
  // A fresh object literal: the drafts built key by key end up with shapes zod's compiled parser reads several times
  // slower (dictionary-like shapes).
  const body: Record<string, unknown> = Object.fromEntries(Object.entries(draft.fields));
  if (suppliesOwner(operation) && body.ownerCompanyId === undefined) {
    body.ownerCompanyId = OWNER_PLACEHOLDER;
  }
  const result = schema.safeParse(body);
  if (result.success) return [];
  const pending = (draft.lookups ?? []).map((l) => l.field);
  const issues: Issue[] = [];
  for (const zi of result.error.issues) {
    const paths = zi.code === 'unrecognized_keys' ? zi.keys.map((k) => [...zi.path, k]) : [zi.path];
    for (const p of paths) {
      const field = formatPath(p);
      if (
        pending.some(
          (f) => f === field || f.startsWith(`${field}[`) || f.startsWith(`${field}.`) || field.startsWith(`${f}[`),
        )
      )
        continue;
      const value = valueAt(body, p);
      let code: Extract<IssueCode, `FIELD_${string}`>;
      let message: string;
      if (zi.code === 'unrecognized_keys') {
        code = 'FIELD_NOT_ACCEPTED';
        message = `${field} is not accepted by ${operation}`;
      } else if (zi.code === 'invalid_type' && value === undefined) {
        code = 'FIELD_REQUIRED';
        message = `${field} is required${HINTS[field] ?? ''}`;
      } else if (zi.code === 'too_small') {
        code = 'FIELD_EMPTY';
        message = `${field} must not be empty`;
      } else if (zi.code === 'invalid_type') {
        code = 'FIELD_TYPE';
        message = `${field}: ${zi.message}`;
      } else if (zi.code === 'invalid_format') {
        code = 'FIELD_FORMAT';
        message = `${field}: ${zi.message}`;
      } else {
        code = 'FIELD_INVALID';
        message = `${field}: ${zi.message}`;
      }
      const origin = originOf(draft, field);
      issues.push(
        issue(code, {
          row: draft.row,
          column: origin?.column ?? null,
          field,
          value: origin?.value ?? valueText(value),
          message,
        }),
      );
    }
  }
  return issues;
}

/**
 * The DUPLICATE_KEY issue of `row`, one of the `rows` (sheet order) that share `key`, naming the others (the rows are
 * found by run/sheet-keys.ts).
 */
export function duplicateKeyIssue(
  row: number,
  key: string,
  rows: readonly number[],
  options: { column?: string | null; field?: string | null } = {},
): Issue {
  const others = rows.filter((r) => r !== row);
  const shown = others.slice(0, 10).join(', ') + (others.length > 10 ? ` and ${others.length - 10} more` : '');
  return issue('DUPLICATE_KEY', {
    row,
    column: options.column ?? null,
    field: options.field ?? null,
    value: key,
    message: `key ${key} is also on row${others.length > 1 ? 's' : ''} ${shown}; none of these rows is sent`,
  });
}
