/**
 * A run's quality gate (mapping `gate:`, docs/mapping.md "Quality gates"): the rows of the second pass counted as they
 * are prepared — invalid rows, and rows failing a rule the gate lists — and, once every chunk is prepared and before
 * any is pushed, the verdict: over the gate, the run writes nothing (PS_ERR_QUALITY_GATE, exit 3).
 */
import { ProductSyncError } from '../../errors.ts';
import { ruleIdOf } from '../../rule-catalogue.ts';
import type { QualityGate } from '../map/mapping.ts';
import type { Draft } from '../types.ts';

/** What summary.json `held` says of a run its gate held. */
export interface HeldRun {
  gate: QualityGate;
  rows: number;
  invalidRows: number;
  invalidShare: number;
  /** Rows failing each rule of the gate's list that failed at all. */
  ruleRows: Record<string, number>;
  message: string;
}

/** Counts a run's rows against its gate. */
export class GateTally {
  rows = 0;
  invalid = 0;
  readonly #rules: ReadonlySet<string>;
  readonly ruleRows = new Map<string, number>();
  constructor(readonly gate: QualityGate) {
    this.#rules = new Set(gate.rules ?? []);
  }

  /** The drafts of a chunk, resolved and checked (prepare-chunk.ts). */
  add(drafts: readonly Draft[]): void {
    for (const d of drafts) {
      this.rows++;
      let error = false;
      const hit = new Set<string>();
      for (const i of d.issues) {
        if (i.severity === 'error') error = true;
        if (this.#rules.size > 0) {
          const id = ruleIdOf(i);
          if (id !== null && this.#rules.has(id)) hit.add(id);
        }
      }
      if (error) this.invalid++;
      for (const id of hit) this.ruleRows.set(id, (this.ruleRows.get(id) ?? 0) + 1);
    }
  }

  /** The run's verdict: null when it passes, else why it is held. */
  verdict(): HeldRun | null {
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
      message: `held by the quality gate: ${reasons.join('; ')}; nothing was written (to apply it anyway: import again with --waive-gate)`,
    };
  }
}

const percent = (x: number): string => `${Math.round(x * 1000) / 10} %`;

/** The error that stops a held run before its first write. */
export function qualityGateError(held: HeldRun): ProductSyncError {
  return new ProductSyncError('PS_ERR_QUALITY_GATE', held.message);
}
