import fc from 'fast-check';
import { canonical, sameCanonical } from '../src/pipeline/sync/canonical.ts';
const v = fc.oneof(fc.string(), fc.constant(''), fc.integer(), fc.double(), fc.boolean(), fc.constant(null), fc.constant(undefined), fc.constant(-0), fc.constant(0), fc.constant('1'), fc.constant(1), fc.constant('true'), fc.constant(true), fc.array(fc.oneof(fc.string(), fc.integer())), fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.constant(null))));
fc.assert(fc.property(v, v, (a, b) => sameCanonical(a, b) === (canonical(a) === canonical(b)) && sameCanonical(a, a) === true || Number.isNaN(a as number)), { numRuns: 200000 });
const pairs: [unknown, unknown][] = Array.from({ length: 1000 }, (_, i) => [`Biscuits ${i}`, i % 3 ? `Biscuits ${i}` : `x`]);
for (const [name, f] of [['canonical', (a: unknown, b: unknown) => canonical(a) === canonical(b)], ['sameCanonical', sameCanonical]] as const) {
  const t0 = performance.now(); let k = 0;
  for (let r = 0; r < 2000; r++) for (const [a, b] of pairs) if (f(a, b)) k++;
  console.log(name, Math.round(2e6 / ((performance.now() - t0) / 1000)), 'compares/s', k);
}
