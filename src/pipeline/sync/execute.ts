import { HttpError, isRetryable, LeaseLostError, ProductSyncError } from '../../errors.ts';
import type { Fence } from '../../api/fence.ts';
import { redact } from '../../redact.ts';
import type { ManufacturedItemRecord, SkipAndTakeQueryStats, TradeItemRecord } from '../../api/types.ts';
import { sameCanonical } from './canonical.ts';
import { gtinKey } from '../gtin.ts';
import { updateAfterConflict, type ArchiveEntry, type FieldChange, type RowPlan, type Step } from './plan.ts';
import { CircuitBreaker, sleep, type Throttle } from './throttle.ts';
import { issue, type FixedSeverityCode } from '../../issue-codes.ts';
import type { Issue } from '../types.ts';
// The create rule every create of a run follows (brands too: resolve/reference-resolver.ts).
import { CREATE_ATTEMPTS, createBackoffMs, findPatiently } from '../../api/create-once.ts';

/** The product API writes and searches the executor needs (the typed client satisfies it). */
export interface ProductWriter {
  searchTradeItems(
    query: Record<string, string | number>,
  ): Promise<{ tradeItems: TradeItemRecord[] | null; skipAndTakeQueryStats: SkipAndTakeQueryStats | null }>;
  searchManufacturedItems(query: Record<string, string | number>): Promise<{
    manufacturedItems: ManufacturedItemRecord[] | null;
    skipAndTakeQueryStats: SkipAndTakeQueryStats | null;
  }>;
  createTradeItem(body: Record<string, unknown>): Promise<{ tradeItemId: string }>;
  patchTradeItem(id: string, body: Record<string, unknown>): Promise<unknown>;
  putTradeItem(id: string, body: Record<string, unknown>): Promise<unknown>;
  unarchiveTradeItem(id: string): Promise<unknown>;
  archiveTradeItems(ids: string[]): Promise<unknown>;
  createManufacturedItem(tradeItemId: string, body: Record<string, unknown>): Promise<{ manufacturedItemId: string }>;
  createManufacturedItemWithTradeItem(
    body: Record<string, unknown>,
  ): Promise<{ tradeItemId: string; manufacturedItemId: string }>;
  patchManufacturedItem(id: string, body: Record<string, unknown>): Promise<unknown>;
  putManufacturedItem(id: string, body: Record<string, unknown>): Promise<unknown>;
  /** The fence its writes must pass (its run's, a client bound with ApiClients.forRun), if any. */
  readonly fence?: Fence | null;
}

/** What the journal must offer the executor (see journal.ts). */
export interface StepJournal {
  state(opId: string): { state: string; result?: unknown } | undefined;
  record(
    opId: string,
    state: 'planned' | 'sent' | 'confirmed' | 'failed',
    data?: unknown,
    durable?: boolean,
  ): void | Promise<void>;
}

/** The outcome of one planned row or archive after execution. */
export interface ExecutedRow {
  row: number | null;
  key: string | null;
  outcome:
    | 'created'
    | 'updated'
    | 'unchanged'
    | 'archived'
    | 'unarchived'
    | 'invalid'
    | 'failed'
    | 'skipped'
    | 'not_attempted'
    | 'valid'
    | 'duplicate_removed';
  tradeItemId: string | null;
  manufacturedItemId: string | null;
  changedFields: string[];
  issues: Issue[];
}

/** Executor settings. */
export interface ExecuteOptions {
  api: ProductWriter;
  ownerCompanyId: string;
  throttle: Throttle;
  journal?: StepJournal;
  /** Consecutive retryable failures that open the circuit (default 8). */
  circuitThreshold?: number;
  /** The longest pause before a create is sent again, ms (CREATE_RETRY_MAX_MS; api/create-once.ts). */
  createRetryMaxMs?: number;
  /** Ids per archive collection request (default 100). */
  archiveBatch?: number;
  signal?: AbortSignal;
  onResult?: (r: ExecutedRow) => void;
  /** Shared by the executors of one run (one per chunk): an abort in one stops them all, failures count run-wide. */
  stop?: RunStop;
  breaker?: CircuitBreaker;
  /**
   * False when another run may have written this owner's items since an earlier attempt of this run sent its creates
   * (the lease was granted to someone else in between): an item found for such a create is then this run's only if it
   * carries the id the create asked for (default true).
   */
  earlierCreatesOurs?: boolean;
}

/** Why a run stopped sending, shared by its executors (null while it goes on). */
export interface RunStop {
  reason: ProductSyncError | null;
}

const OUTCOME: Record<RowPlan['action'], ExecutedRow['outcome']> = {
  create: 'created',
  update: 'updated',
  unarchive: 'unarchived',
  unchanged: 'unchanged',
  skipped: 'skipped',
};

/** True when a failed write may nevertheless have been applied (timeout or reset after sending, or a 5xx). */
export function outcomeUnknown(err: unknown): boolean {
  if (err && typeof err === 'object' && 'outcomeUnknown' in err)
    return Boolean((err as { outcomeUnknown: unknown }).outcomeUnknown);
  if (err instanceof HttpError) return err.status === null ? err.code !== 'PS_ERR_HTTP_CONNECTION' : err.status >= 500;
  return false;
}

/** What a look-up for a create found: the ids, and the records to compare with what the create sent. */
interface FoundItems {
  ids: Partial<RowIds>;
  trade: Record<string, unknown> | null;
  manu: Record<string, unknown> | null;
}

/**
 * A create answered 409 whose item did not hold what it sent: the fields then updated (the row is `updated`, its undo
 * puts the item's earlier values back instead of archiving an item this run did not create).
 */
interface AsUpdate {
  changed: string[];
  fields: FieldChange[];
  /** The items the create would have made that were found instead. */
  found: Array<'tradeItem' | 'manufacturedItem'>;
}

/** Ids known so far for one row: creates fill them in, later steps use them (an API may ignore client-chosen ids). */
interface RowIds {
  tradeItemId: string | null;
  manufacturedItemId: string | null;
}

/**
 * Runs row plans and archives with bounded, adaptive concurrency, journalled and idempotent; never re-sends a create
 * blindly.
 */
export class Executor {
  readonly #o: ExecuteOptions;
  readonly #breaker: CircuitBreaker;
  readonly #stop: RunStop;
  /** Write requests sent (creates, updates, archives, unarchives), retries by the client not counted. */
  writesSent = 0;

  constructor(options: ExecuteOptions) {
    this.#o = options;
    this.#breaker = options.breaker ?? new CircuitBreaker(options.circuitThreshold ?? 8);
    this.#stop = options.stop ?? { reason: null };
  }

  get #aborted(): ProductSyncError | null {
    return this.#stop.reason;
  }

  set #aborted(reason: ProductSyncError | null) {
    this.#stop.reason = reason;
  }

  /** The error that stopped the run (circuit open, credential rejected), or null. */
  get abortReason(): ProductSyncError | null {
    return this.#aborted;
  }

  /**
   * Executes every row plan; rows not attempted after an abort come back `not_attempted`. Yields results as they
   * finish.
   */
  async run(plans: AsyncIterable<RowPlan> | Iterable<RowPlan>): Promise<void> {
    const inFlight = new Set<Promise<void>>();
    for await (const plan of plans) {
      if (this.#stopped()) {
        this.#emit(this.#notAttempted(plan));
        continue;
      }
      if (plan.steps.length === 0) {
        this.#emit(this.#journalled(plan) ?? this.#result(plan, OUTCOME[plan.action], plan.issues));
        continue;
      }
      await this.#o.throttle.acquire();
      const p = this.#runRow(plan).finally(() => inFlight.delete(p));
      inFlight.add(p);
    }
    await Promise.all(inFlight);
  }

  /** Archives the entries in collections (retried by the client: archiving is idempotent). */
  async archive(entries: readonly ArchiveEntry[]): Promise<void> {
    const batch = this.#o.archiveBatch ?? 100;
    for (let i = 0; i < entries.length; i += batch) {
      const chunk = entries.slice(i, i + batch);
      const opId = `archive:${chunk[0]!.tradeItemId}:${chunk.length}`;
      const emit = (outcome: ExecutedRow['outcome'], issues: Issue[] = []) => {
        for (const e of chunk)
          this.#emit({
            row: null,
            key: e.key,
            outcome,
            tradeItemId: e.tradeItemId,
            manufacturedItemId: null,
            changedFields: outcome === 'archived' ? ['archived'] : [],
            issues,
          });
      };
      if (this.#stopped()) {
        emit('not_attempted', [runIssue('NOT_ATTEMPTED', `not attempted: ${this.#aborted?.message ?? 'run stopped'}`)]);
        continue;
      }
      if (this.#o.journal?.state(opId)?.state === 'confirmed') {
        emit('archived');
        continue;
      }
      await this.#o.throttle.acquire();
      try {
        this.writesSent++;
        await this.#o.api.archiveTradeItems(chunk.map((e) => e.tradeItemId));
        await this.#o.journal?.record(opId, 'confirmed');
        this.#breaker.success();
        this.#o.throttle.release(true);
        emit('archived');
      } catch (err) {
        this.#o.throttle.release(false);
        this.#noteFailure(err);
        // Refused by the run's fence: not sent.
        if (err instanceof LeaseLostError)
          emit('not_attempted', [runIssue('NOT_ATTEMPTED', `not attempted: ${err.message}`)]);
        else emit('failed', [apiIssue(null, err)]);
      }
    }
  }

  #stopped(): boolean {
    return this.#aborted !== null || this.#o.signal?.aborted === true;
  }

  #emit(r: ExecutedRow): void {
    this.#o.onResult?.(r);
  }

  #result(plan: RowPlan, outcome: ExecutedRow['outcome'], issues: Issue[], ids?: RowIds): ExecutedRow {
    return {
      row: plan.row,
      key: plan.key,
      outcome,
      tradeItemId: ids ? ids.tradeItemId : plan.tradeItemId,
      manufacturedItemId: ids ? ids.manufacturedItemId : plan.manufacturedItemId,
      changedFields: outcome === 'unchanged' || outcome === 'skipped' ? [] : plan.changedFields,
      issues,
    };
  }

  /** A row with nothing to send whose writes a killed earlier attempt of this run already made keeps that outcome. */
  #journalled(plan: RowPlan): ExecutedRow | undefined {
    const done = this.#o.journal?.state(`row:${plan.row}`);
    if (done?.state !== 'confirmed') return undefined;
    const r = done.result as ExecutedRow;
    return { ...r, issues: [...r.issues, ...plan.issues] };
  }

  #notAttempted(plan: RowPlan): ExecutedRow {
    const ids = createdIds(plan, { tradeItemId: plan.tradeItemId, manufacturedItemId: plan.manufacturedItemId });
    return this.#result(
      plan,
      'not_attempted',
      [
        ...plan.issues,
        runIssue('NOT_ATTEMPTED', `not attempted: ${this.#aborted?.message ?? 'run stopped'}`, plan.row),
      ],
      ids,
    );
  }

  #noteFailure(err: unknown): void {
    if (err instanceof LeaseLostError) {
      this.#aborted ??= err;
      return;
    }
    if (err instanceof HttpError && err.code === 'PS_ERR_HTTP_UNAUTHORIZED') {
      this.#aborted ??= new ProductSyncError('PS_ERR_RUN_ABORTED', `credential rejected: ${err.message}`);
      return;
    }
    if (isRetryable(err) && this.#breaker.failure()) {
      this.#aborted ??= new ProductSyncError(
        'PS_ERR_CIRCUIT_OPEN',
        `API unavailable: ${this.#breaker.threshold} consecutive failures after retries (last: ${(err as Error).message})`,
      );
    }
  }

  async #runRow(plan: RowPlan): Promise<void> {
    // The ids a create of this row makes are known once it succeeded (the plan's are only asked for).
    const ids: RowIds = createdIds(plan, {
      tradeItemId: plan.tradeItemId,
      manufacturedItemId: plan.manufacturedItemId,
    });
    // Set once a request of this row has gone out (or a step was confirmed by an earlier attempt).
    const sent: RowProgress = { any: false };
    let ok = true;
    try {
      for (let i = 0; i < plan.steps.length; i++) {
        if (this.#stopped()) {
          this.#emit({ ...this.#notAttempted(plan), ...(i > 0 ? { outcome: 'failed' as const } : {}) });
          return;
        }
        await this.#step(plan, i, ids, sent);
      }
      this.#breaker.success();
      if (sent.asUpdate) asUpdated(plan, sent.asUpdate);
      const r = this.#result(plan, OUTCOME[plan.action], plan.issues, ids);
      // A buffered record returns nothing: awaited only when it returns a promise (no microtask turn spent on it).
      const recorded = this.#o.journal?.record(`row:${plan.row}`, 'confirmed', r);
      if (recorded) await recorded;
      this.#emit(r);
    } catch (err) {
      ok = false;
      this.#noteFailure(err);
      // The fence refused the row's first request: nothing of it was sent.
      if (err instanceof LeaseLostError && !sent.any) this.#emit(this.#notAttempted(plan));
      else if (err instanceof FoundNotOurs)
        this.#emit(
          this.#result(plan, 'failed', [...plan.issues, runIssue('API_CONFLICT', err.message, plan.row)], {
            ...ids,
            ...err.found,
          }),
        );
      else this.#emit(this.#result(plan, 'failed', [...plan.issues, apiIssue(plan.row, err)], ids));
    } finally {
      this.#o.throttle.release(ok);
    }
  }

  /**
   * Sends step `i` of a row unless the journal says it was confirmed; a create with an unknown outcome is looked up
   * before any resend.
   */
  async #step(plan: RowPlan, i: number, ids: RowIds, sent: RowProgress): Promise<void> {
    const step = plan.steps[i]!;
    const opId = `${plan.key}:${i}:${step.kind}`;
    const j = this.#o.journal;
    const prior = j?.state(opId);
    if (prior?.state === 'confirmed') {
      sent.any = true;
      // (`late`: a mark for the duplicate check, not an id.)
      const {
        asUpdate,
        late: _late,
        ...found
      } = prior.result as Partial<RowIds> & {
        asUpdate?: AsUpdate;
        late?: boolean;
      };
      Object.assign(ids, found);
      if (asUpdate) sent.asUpdate = asUpdate;
      return;
    }
    if (prior?.state === 'sent') sent.any = true;
    const isCreate =
      step.kind === 'tradeItem.create' ||
      step.kind === 'manufacturedItem.createWithTradeItem' ||
      step.kind === 'manufacturedItem.createUnderTradeItem';
    if (isCreate && prior?.state === 'sent') {
      // A previous attempt (killed process) sent this create and never heard back: look before sending again.
      const found = await this.#findItemsPatiently(plan, step, ids);
      if (found) {
        // Made by that attempt — unless another run may have made it since, and it does not carry the id we asked for.
        if (this.#o.earlierCreatesOurs === false && !carriesAskedId(step, found.ids))
          throw new FoundNotOurs(plan, found.ids);
        Object.assign(ids, await this.#claim(plan, step, ids, found, sent, opId));
        return;
      }
    }
    // Only a create needs its `sent` on disk first: updates are idempotent and simply sent again after a crash.
    if (isCreate) await j?.record(opId, 'sent', undefined, true);
    let result: Partial<RowIds> | null = null;
    for (let attempt = 1; result === null; attempt++) {
      try {
        result = await this.#send(step, ids);
        sent.any = true;
      } catch (err) {
        // Refused by the fence before it was written: the journal keeps what it said (a create `sent` by an earlier
        // attempt stays `sent`, so a resumed run looks before sending it again).
        if (err instanceof LeaseLostError) throw err;
        sent.any = true;
        const conflict = err instanceof HttpError && err.status === 409;
        const unknown = outcomeUnknown(err);
        // An update whose answer was lost (5xx after the commit, a reset) after its retries: the API may hold it. It is
        // reported by what the API holds (updated), never `failed` for a write that is there.
        if (!isCreate && unknown && (await this.#applied(plan, step, ids).catch(() => false))) {
          result = {};
          break;
        }
        if (!isCreate || !(conflict || unknown || isRetryable(err)) || attempt >= CREATE_ATTEMPTS) {
          await j?.record(opId, 'failed', { message: redact((err as Error).message) });
          throw err;
        }
        // Unknown outcome (or the id already exists): never two items for one (owner, GTIN) — search before any resend.
        if (conflict) {
          // The id or key is taken: ours (an earlier send that was applied) only if the item holds what we sent;
          // otherwise the fields that differ are updated (the row is then reported updated).
          const found = await this.#findItemsPatiently(plan, step, ids);
          if (found === null) throw err;
          Object.assign(ids, await this.#claim(plan, step, ids, found, sent, opId));
          return;
        }
        if (unknown) result = await this.#findCreatedPatiently(plan, step, ids);
        if (result === null) await sleep(createBackoffMs(attempt, Math.random, this.#o.createRetryMaxMs));
      }
    }
    Object.assign(ids, result);
    // Answered when the run's fence no longer held (the process was paused past its lease after the request passed
    // the check): the item may have been made after another run took the lease over — a possible duplicate, looked for
    // before the run ends (run/duplicates.ts).
    const late = isCreate && !fenceHolds(this.#o.api.fence);
    const recorded = j?.record(opId, 'confirmed', late ? { ...result, late: true } : result);
    if (recorded) await recorded;
  }

  async #send(step: Step, ids: RowIds): Promise<Partial<RowIds>> {
    const api = this.#o.api;
    this.writesSent++;
    switch (step.kind) {
      case 'tradeItem.create':
        return { tradeItemId: (await api.createTradeItem(step.body)).tradeItemId };
      case 'tradeItem.patch':
        await api.patchTradeItem(ids.tradeItemId ?? step.id, step.body);
        return {};
      case 'tradeItem.put':
        await api.putTradeItem(ids.tradeItemId ?? step.id, step.body);
        return {};
      case 'tradeItem.unarchive':
        await api.unarchiveTradeItem(ids.tradeItemId ?? step.id);
        return {};
      case 'manufacturedItem.createUnderTradeItem':
        return {
          manufacturedItemId: (await api.createManufacturedItem(ids.tradeItemId ?? step.tradeItemId, step.body))
            .manufacturedItemId,
        };
      case 'manufacturedItem.createWithTradeItem': {
        const r = await api.createManufacturedItemWithTradeItem(step.body);
        return { tradeItemId: r.tradeItemId, manufacturedItemId: r.manufacturedItemId };
      }
      case 'manufacturedItem.patch':
        await api.patchManufacturedItem(ids.manufacturedItemId ?? step.id, step.body);
        return {};
      case 'manufacturedItem.put':
        await api.putManufacturedItem(ids.manufacturedItemId ?? step.id, step.body);
        return {};
    }
  }

  /** True when the API holds what an update step sent (read back after an answer was lost). */
  async #applied(plan: RowPlan, step: Step, ids: RowIds): Promise<boolean> {
    const api = this.#o.api;
    const owner = this.#o.ownerCompanyId;
    if (step.kind === 'tradeItem.patch' || step.kind === 'tradeItem.put' || step.kind === 'tradeItem.unarchive') {
      const id = ids.tradeItemId ?? step.id;
      const gtin = 'body' in step && typeof step.body.gtin === 'string' ? step.body.gtin : plan.key;
      if (!gtin || !/^\d{8,14}$/.test(gtin)) return false;
      const page = await api.searchTradeItems({ OwnerCompanyId: owner, GTIN: gtin, Take: 500 });
      const record = (page.tradeItems ?? []).find((t) => t.tradeItemId === id) as
        (TradeItemRecord & Record<string, unknown>) | undefined;
      if (!record) return false;
      if (step.kind === 'tradeItem.unarchive') return record.archived === false;
      return Object.entries(step.body).every(([field, value]) => sameCanonical(value, record[field]));
    }
    if (step.kind === 'manufacturedItem.patch' || step.kind === 'manufacturedItem.put') {
      const tradeItemId = ids.tradeItemId ?? plan.tradeItemId;
      if (!tradeItemId) return false;
      const page = await api.searchManufacturedItems({ OwnerCompanyId: owner, TradeItemId: tradeItemId, Take: 500 });
      const record = (page.manufacturedItems ?? []).find(
        (m) => m.manufacturedItemId === (ids.manufacturedItemId ?? step.id),
      ) as (ManufacturedItemRecord & Record<string, unknown>) | undefined;
      return (
        record !== undefined && Object.entries(step.body).every(([field, value]) => sameCanonical(value, record[field]))
      );
    }
    return false;
  }

  /**
   * #findCreated, tried again (after a pause) when the search itself keeps failing: never resend a create unverified.
   */
  async #findCreatedPatiently(plan: RowPlan, step: Step, ids: RowIds): Promise<Partial<RowIds> | null> {
    return (await this.#findItemsPatiently(plan, step, ids))?.ids ?? null;
  }

  /**
   * Takes the item found for a create as the row's: as it is when it holds what the create sent, else after updating
   * the fields that differ (the row is then reported updated). Journals the create confirmed; returns the ids.
   */
  async #claim(
    plan: RowPlan,
    step: Step,
    ids: RowIds,
    found: FoundItems,
    sent: RowProgress,
    opId: string,
  ): Promise<Partial<RowIds>> {
    const update = updateAfterConflict(step, found.trade, found.manu);
    let asUpdate: AsUpdate | undefined;
    if (update.steps.length > 0) {
      const now = { ...ids, ...found.ids };
      for (const s of update.steps) await this.#send(s, now);
      sent.any = true;
      asUpdate = {
        changed: update.changed,
        fields: update.fields,
        found: step.kind === 'tradeItem.create' ? ['tradeItem'] : ['tradeItem', 'manufacturedItem'],
      };
      if (step.kind === 'manufacturedItem.createUnderTradeItem') asUpdate.found = ['manufacturedItem'];
      sent.asUpdate = asUpdate;
    }
    await this.#o.journal?.record(opId, 'confirmed', asUpdate ? { ...found.ids, asUpdate } : found.ids);
    return found.ids;
  }

  /** #findCreatedItems, tried again (after a pause) when the search itself keeps failing. */
  #findItemsPatiently(plan: RowPlan, step: Step, ids: RowIds): Promise<FoundItems | null> {
    return findPatiently(() => this.#findCreatedItems(plan, step, ids));
  }

  /**
   * Looks up what a create may have made: the owner's trade item with this GTIN (and its manufactured item for the
   * supplier), with the records found (to compare with what was sent).
   */
  async #findCreatedItems(plan: RowPlan, step: Step, ids: RowIds): Promise<FoundItems | null> {
    const api = this.#o.api;
    const owner = this.#o.ownerCompanyId;
    if (step.kind === 'manufacturedItem.createUnderTradeItem' || step.kind === 'manufacturedItem.createWithTradeItem') {
      const supplier = String(step.body.supplierCompanyId);
      const query: Record<string, string> = { OwnerCompanyId: owner, SupplierCompanyId: supplier, Take: '500' };
      if (step.kind === 'manufacturedItem.createUnderTradeItem')
        query.TradeItemId = ids.tradeItemId ?? step.tradeItemId;
      else query.GTIN = String(step.body.gtin ?? plan.key);
      const page = await api.searchManufacturedItems(query);
      const hit = (page.manufacturedItems ?? []).find(
        (m) => m.supplierCompanyId.toLowerCase() === supplier.toLowerCase(),
      );
      if (!hit) return null;
      let trade: Record<string, unknown> | null = null;
      if (step.kind === 'manufacturedItem.createWithTradeItem') {
        const gtin = String(step.body.gtin ?? plan.key);
        const t = await api.searchTradeItems({ OwnerCompanyId: owner, GTIN: gtin, Take: 500 });
        trade = ((t.tradeItems ?? []).find((x) => x.tradeItemId === hit.tradeItemId) ?? null) as Record<
          string,
          unknown
        > | null;
      }
      return {
        ids: { tradeItemId: hit.tradeItemId, manufacturedItemId: hit.manufacturedItemId },
        trade,
        manu: hit as unknown as Record<string, unknown>,
      };
    }
    const gtin = String(step.kind === 'tradeItem.create' ? (step.body.gtin ?? plan.key) : plan.key);
    const page = await api.searchTradeItems({ OwnerCompanyId: owner, GTIN: gtin, Take: 500 });
    const want = gtinKey(gtin);
    const hits = (page.tradeItems ?? []).filter((t) => gtinKey(t.gtin) === want);
    const preferred =
      hits.find((t) => t.tradeItemId === (step.kind === 'tradeItem.create' ? step.body.tradeItemId : undefined)) ??
      hits[0];
    return preferred
      ? { ids: { tradeItemId: preferred.tradeItemId }, trade: preferred as Record<string, unknown>, manu: null }
      : null;
  }
}

/** A row issue of the executor: its text quotes the API and errors, so credentials are redacted (redact.ts). */
function runIssue(code: FixedSeverityCode, message: string, row: number | null = null): Issue {
  return issue(code, { row, message: redact(message) });
}

/** A planned row that ends failed without (more of) its writes, with `issues`. */
export function failedRow(p: RowPlan, issues: Issue[]): ExecutedRow {
  const { row, key, tradeItemId, manufacturedItemId } = p;
  return { row, key, outcome: 'failed', tradeItemId, manufacturedItemId, changedFields: [], issues };
}

/** The API's own words for a failed write, as a row issue (credentials redacted: the text goes into the reports). */
export function apiIssue(row: number | null, err: unknown): Issue {
  if (err instanceof HttpError) {
    const code = err.status === 400 ? 'API_REJECTED' : err.status === 409 ? 'API_CONFLICT' : 'API_FAILED';
    return runIssue(code, `${err.method} ${err.url} → ${err.status ?? err.code}: ${err.apiMessage}`, row);
  }
  if (err instanceof ProductSyncError && err.code === 'PS_ERR_HTTP_REQUEST_INVALID')
    return runIssue('REQUEST_INVALID', err.message, row);
  return runIssue('API_FAILED', (err as Error)?.message ?? String(err), row);
}

/**
 * `ids` without what the row's creates make: unknown until a create has succeeded (an asked-for id may never exist).
 */
function createdIds(plan: RowPlan, ids: RowIds): RowIds {
  for (const step of plan.steps) {
    if (step.kind === 'tradeItem.create') ids.tradeItemId = null;
    else if (step.kind === 'manufacturedItem.createWithTradeItem') ids.tradeItemId = ids.manufacturedItemId = null;
    else if (step.kind === 'manufacturedItem.createUnderTradeItem') ids.manufacturedItemId = null;
  }
  return ids;
}

/** What #step learns about its row: whether a request went out, and a create that became an update. */
interface RowProgress {
  any: boolean;
  asUpdate?: AsUpdate;
}

/** True unless the fence of the executor's writes refuses them now (a lease lost or run out). */
function fenceHolds(fence: Fence | null | undefined): boolean {
  try {
    fence?.check();
    return true;
  } catch {
    return false;
  }
}

/**
 * A row whose create found an item holding other values, updated instead: reported `updated` with the fields that
 * differed, and its undo ledger puts those values back rather than archiving the item found.
 */
function asUpdated(plan: RowPlan, u: AsUpdate): void {
  if (plan.action === 'create') plan.action = 'update';
  plan.changedFields = u.changed;
  if (plan.undo) {
    plan.undo = {
      ...plan.undo,
      created: plan.undo.created.filter((c) => !u.found.includes(c)),
      fields: [...plan.undo.fields.filter((f) => !u.found.includes(f.item)), ...u.fields],
    };
  }
}

/** True when the item found for a create carries the id that create asked for. */
function carriesAskedId(step: Step, found: Partial<RowIds>): boolean {
  if (step.kind === 'tradeItem.create') return found.tradeItemId === step.body.tradeItemId;
  if (step.kind === 'manufacturedItem.createWithTradeItem' || step.kind === 'manufacturedItem.createUnderTradeItem')
    return found.manufacturedItemId === step.body.manufacturedItemId;
  return false;
}

/**
 * An item found for a create an earlier attempt sent, that another run may have made (it is not claimed as created).
 */
class FoundNotOurs extends Error {
  constructor(
    plan: RowPlan,
    readonly found: Partial<RowIds>,
  ) {
    super(
      `an item with the key ${plan.key} exists, made by an earlier attempt of this run or by another run since (the API does not keep the id this run asked for, so it cannot tell): nothing was sent for this row; run the import again to bring it up to date`,
    );
  }
}
