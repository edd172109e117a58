/**
 * A run's quality gate (mapping or feed `gate:`, docs/mapping.md "Quality gates"): the rows of the second pass counted
 * as they are prepared — invalid rows, and rows failing a rule the gate lists — and, once every chunk is prepared and
 * before any is pushed, the verdict: over the gate, the run writes nothing (PS_ERR_QUALITY_GATE, exit 3). Both drivers
 * (inline and queued) decide it here; run.json keeps the verdict, so a resumed run does not decide it again.
 */
import { ProductSyncError } from '../../errors.ts';
import { ruleIdOf } from '../../rule-catalogue.ts';
import { labelKey } from '../resolve/reference-resolver.ts';
import type { QualityGate } from '../map/mapping.ts';
import type { RunStop } from '../sync/execute.ts';
import type { Draft, Issue } from '../types.ts';
import { readChunk, readResults } from './chunks.ts';
import { writeRunState, type HeldRun, type RunState } from './run-state.ts';

export type { HeldRun } from './run-state.ts';

const BRAND_CREATED_RULE = ruleIdOf({ code: 'BRAND_CREATED', field: 'brandId' })!;

/** Counts a run's rows against its gate. */
export class GateTally {
  rows = 0;
  invalid = 0;
  readonly #rules: ReadonlySet<string>;
  readonly ruleRows = new Map<string, number>();
  /** The new brands valid rows named so far (their first row counts for BRAND_CREATED's rule). */
  readonly #newBrands = new Set<string>();
  constructor(
    readonly gate: QualityGate,
    /** The verdict an earlier attempt of the run reached (run.json `held`): it stands. */
    readonly earlier?: HeldRun,
  ) {
    this.#rules = new Set(gate.rules ?? []);
  }

  /** The drafts of a chunk, resolved and checked (prepare-chunk.ts). */
  add(drafts: readonly Draft[]): void {
    for (const d of drafts) this.#addRow(d.issues);
  }

  /**
   * A chunk an earlier attempt of the run prepared (its chunk file) or settled without a request (its results), before
   * the verdict: counted from disk, as its drafts were.
   */
  async addEarlier(workDir: string, index: number, status: 'prepared' | 'pushed'): Promise<void> {
    if (status === 'prepared') {
      const chunk = await readChunk(workDir, 'rows', index);
      for (const r of chunk.settled) this.#addRow(r.issues);
      for (const p of chunk.plans) this.#addRow(p.issues);
    } else for await (const r of readResults(workDir, 'rows', index)) this.#addRow(r.issues);
  }

  #addRow(issues: readonly Issue[]): void {
    this.rows++;
    let error = false;
    const hit = new Set<string>();
    let newBrand: Issue | undefined;
    for (const i of issues) {
      // A row an earlier attempt stopped before (the run interrupted) is counted for what it is, not for that.
      if (i.code === 'NOT_ATTEMPTED') continue;
      if (i.severity === 'error') error = true;
      if (i.code === 'BRAND_WOULD_CREATE') newBrand = i;
      if (this.#rules.size > 0) {
        const id = ruleIdOf(i);
        if (id !== null && this.#rules.has(id)) hit.add(id);
      }
    }
    // Before the verdict a valid row's new brand is planned, not created (run/pending-brands.ts): the first row naming
    // it counts as the row that creates it would without a gate.
    const brand = newBrand && !error && this.#rules.has(BRAND_CREATED_RULE) ? labelKey(String(newBrand.value)) : null;
    if (brand !== null && !this.#newBrands.has(brand)) {
      this.#newBrands.add(brand);
      hit.add(BRAND_CREATED_RULE);
    }
    if (error) this.invalid++;
    for (const id of hit) this.ruleRows.set(id, (this.ruleRows.get(id) ?? 0) + 1);
  }

  /** The run's verdict: null when it passes, else why it is held. */
  verdict(): HeldRun | null {
    if (this.earlier) return this.earlier;
    const share = this.rows === 0 ? 0 : this.invalid / this.rows;
    const reasons: string[] = [];
    const max = this.gate.maxInvalidShare;
    if (max !== undefined && share > max)
      reasons.push(
        `${percent(share)} of the rows are invalid (${this.invalid} of ${this.rows}), over maxInvalidShare ${percent(max)}`,
      );
    for (const [id, n] of this.ruleRows)
      reasons.push(`${n} row${n === 1 ? '' : 's'} fail${n === 1 ? 's' : ''} rule ${id}`);
    if (reasons.length === 0) return null;
    return {
      gate: this.gate,
      rows: this.rows,
      invalidRows: this.invalid,
      invalidShare: share,
      ruleRows: Object.fromEntries(this.ruleRows),
      message: `held by the quality gate: ${reasons.join('; ')}; nothing was written (to apply it anyway: import or enqueue again with --waive-gate, or the console's Apply anyway)`,
    };
  }
}

const percent = (x: number): string => `${Math.round(x * 1000) / 10} %`;

/** The error that stops a held run before its first write. */
export function qualityGateError(held: HeldRun): ProductSyncError {
  return new ProductSyncError('PS_ERR_QUALITY_GATE', held.message);
}

/**
 * The gate a run must pass before its first write, or undefined: none applies (validate, a dry run, no gate, waived
 * with `--waive-gate`), or an earlier attempt of the run passed it. The feed's gate replaces the mapping's (the run's
 * request carries it).
 */
export function runGate(state: RunState, mappingGate: QualityGate | undefined): GateTally | undefined {
  const gate = state.request.gate ?? mappingGate;
  if (state.kind !== 'import' || state.request.dryRun || !gate || state.request.waiveGate || state.gatePassed)
    return undefined;
  return new GateTally(gate, state.held);
}

/**
 * Once every chunk is prepared, before any is pushed: the verdict, kept in run.json. Held: the run's stop reason is the
 * gate (every planned row is then settled not attempted, saying why). Returns it (null: the run goes on, or stopped
 * for another reason already).
 */
export async function decideGate(
  tally: GateTally,
  run: { state: RunState; workDir: string; share: { stop: RunStop } },
): Promise<HeldRun | null> {
  // Stopped before (interrupted, the lease lost, the API away): nothing is sent anyway, and rows left unresolved would
  // make a verdict of the rest; the run, resumed, decides it.
  if (run.share.stop.reason) return null;
  const held = tally.verdict();
  if (held) {
    run.state.held = held;
    run.share.stop.reason ??= qualityGateError(held);
  } else run.state.gatePassed = true;
  await writeRunState(run.workDir, run.state);
  return held;
}
