import { z } from 'zod';
import { bodySchema } from '../src/api/schemas.ts';
import fc from 'fast-check';
const ops = ['tradeItem.create', 'manufacturedItem.createWithTradeItem', 'manufacturedItem.createUnderTradeItem', 'tradeItem.update'] as const;
let n = 0, diff = 0;
for (const op of ops) {
  let compiled: z.ZodObject;
  try { compiled = bodySchema(op as never); } catch { continue; }
  const plain = z.strictObject(compiled.shape);
  const keys = Object.keys(compiled.shape);
  const val = fc.oneof(fc.string(), fc.constant(''), fc.constant(' '), fc.integer(), fc.double(), fc.constant(null), fc.constant(undefined), fc.uuid(), fc.array(fc.oneof(fc.string(), fc.uuid(), fc.integer())), fc.array(fc.dictionary(fc.oneof(fc.constantFrom('value', 'unitOfMeasure', 'languageCode', 'x'), fc.string()), fc.oneof(fc.string(), fc.integer(), fc.constant(null)))), fc.dictionary(fc.string(), fc.string()));
  const body = fc.dictionary(fc.oneof(fc.constantFrom(...keys), fc.string()), val);
  fc.assert(fc.property(body, (b) => {
    n++;
    const a = compiled.safeParse(b), p = plain.safeParse(b);
    const same = a.success === p.success && JSON.stringify(a.success ? a.data : a.error.issues) === JSON.stringify(p.success ? p.data : p.error.issues);
    if (!same) diff++;
    return same;
  }), { numRuns: 3000 });
}
console.log('checked', n, 'diffs', diff);
