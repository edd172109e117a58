/**
 * A draft a person changed in the console's mapper, put as `mapping init` writes a column it read the same way, so
 * that what the mapper saves is what `mapping init` would write for the same choices:
 *
 * - a column whose type becomes `quantity` on a value field (`netContents[0].value`) feeds the field's object
 *   (`netContents[0]`: the number to its value, the unit to its unitOfMeasure), with the decimal separator its samples
 *   show; a column that fed that unit is no longer mapped (the quantity's cells give it);
 * - a quantity column given another type goes back to the value field;
 * - a list field's column without a separator takes the one its samples show (a person's empty one is kept empty).
 */
import { resolveFieldPath } from '../pipeline/map/mapping.ts';
import { decimalSeparatorOf, listSeparatorOf, quantityNumber } from './sample-kinds.ts';
import { quantityField, type ColumnSuggestion, type MappingDraft } from './suggest.ts';

/** A quantity column's field (`netContents[0]`, `drainedNetWeight`): the object whose value and unit it fills. */
const QUANTITY_OBJECT = /^(?:netContents\[\d+\]|drainedNetWeight)$/;

/** What a column read in the mapper keeps when it is no longer mapped (its header, place and samples). */
const unmapped = (c: ColumnSuggestion, reason: string): ColumnSuggestion => ({
  header: c.header,
  position: c.position,
  ...(c.column ? { column: c.column } : {}),
  samples: c.samples,
  reason,
});

/** The draft with each column as `mapping init` would write it for the field and type chosen (a new draft). */
export function settleDraft(draft: MappingDraft): MappingDraft {
  const columns = draft.columns.map((c) => ({ ...c }));
  columns.forEach((c, i) => {
    if (!c.field) return;
    const object = c.type === 'quantity' ? quantityField(c.field) : undefined;
    if (object) {
      c.field = object;
      if (c.decimal === undefined) {
        const decimal = decimalSeparatorOf(c.samples.map(quantityNumber), draft.language);
        if (decimal && decimal !== draft.decimalSeparator) c.decimal = decimal;
      }
      const unit = `${object}.unitOfMeasure`;
      columns.forEach((other, j) => {
        if (j !== i && other.field === unit)
          columns[j] = unmapped(
            other,
            `${unit} is given by column ${c.position} "${c.header}" (type quantity reads the number and the unit)`,
          );
      });
      return;
    }
    if (c.type !== 'quantity' && QUANTITY_OBJECT.test(c.field)) c.field = `${c.field}.value`;
    if (c.split === undefined && c.lookup === undefined) {
      const field = resolveFieldPath(draft.target, c.field);
      const split = typeof field !== 'string' && field.array ? listSeparatorOf(c.samples) : undefined;
      if (split) c.split = split;
    }
  });
  return { ...draft, columns };
}

/** The fields whose column takes a list separator (`split`): list fields such as countriesOfOrigin. */
export function listFields(target: MappingDraft['target'], fields: readonly string[]): string[] {
  return fields.filter((f) => {
    const t = resolveFieldPath(target, f);
    return typeof t !== 'string' && t.array;
  });
}
