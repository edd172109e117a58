/**
 * Completeness of a sheet for the supplier scorecard (report/scorecard.ts): for each mapped field, how many rows have a
 * non-empty cell in one of its columns (its own or a fallback), counted as the rows pass once — a few additions a row,
 * whatever the sheet's size.
 */
import type { Mapping } from './mapping.ts';
import { columnSlots } from './map-row.ts';
import { isEmptyCell } from './transforms.ts';
import type { SheetRow } from '../types.ts';

/** One mapped field and the rows that filled it (summary.json `scorecard.completeness.fields`). */
export interface FieldFillCount {
  field: string;
  /** The sheet column it is read from (its first source found in the sheet); null when none is. */
  column: string | null;
  filled: number;
}

/** Counts, per mapped field, the rows whose cells fill it. */
export class FieldFill {
  readonly #fields: { field: string; column: string | null; at: number[] }[];
  readonly #filled: Float64Array;
  /** Field f's cell indexes, flat: `#cells[#start[f]]` up to `#cells[#start[f + 1]]` (no list to follow per row). */
  readonly #cells: Int32Array;
  readonly #start: Int32Array;

  /** `columnIndex`: matchHeaders' answer for this sheet (each slot's header index, -1 when absent). */
  constructor(mapping: Mapping, headers: readonly string[], columnIndex: readonly number[]) {
    const slots = columnSlots(mapping);
    const byField = new Map<string, { field: string; column: string | null; at: number[] }>();
    mapping.columns.forEach((c, i) => {
      const at = (slots[i] ?? []).map((s) => columnIndex[s] ?? -1).filter((x) => x >= 0);
      const f = byField.get(c.field.path);
      // Two columns of one field (a split list, a fallback written as its own column): either fills it.
      if (f) f.at.push(...at);
      else byField.set(c.field.path, { field: c.field.path, column: at.length > 0 ? headers[at[0]!]! : null, at });
    });
    this.#fields = [...byField.values()];
    this.#filled = new Float64Array(this.#fields.length);
    this.#cells = Int32Array.from(this.#fields.flatMap((f) => f.at));
    this.#start = new Int32Array(this.#fields.length + 1);
    this.#fields.forEach((f, i) => (this.#start[i + 1] = this.#start[i]! + f.at.length));
  }

  add(row: SheetRow): void {
    const cells = row.cells;
    const at = this.#cells;
    const start = this.#start;
    const filled = this.#filled;
    for (let f = 0; f < filled.length; f++) {
      for (let k = start[f]!; k < start[f + 1]!; k++) {
        const cell = cells[at[k]!];
        if (cell !== undefined && !isEmptyCell(cell)) {
          filled[f]!++;
          break;
        }
      }
    }
  }

  result(): FieldFillCount[] {
    return this.#fields.map((f, i) => ({ field: f.field, column: f.column, filled: this.#filled[i]! }));
  }
}
