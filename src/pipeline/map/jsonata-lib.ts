/**
 * The jsonata package, loaded the first time a mapping's rule needs it: most runs have no rule, and the package is a
 * large file that every command would otherwise parse and compile at start (Node 20 has no compile cache).
 * Synchronous (`require`), as a mapping is checked while it loads.
 */
import { createRequire } from 'node:module';
import type Jsonata from 'jsonata';

let lib: typeof Jsonata | undefined;

/** jsonata's `jsonata(expression)`: parses the expression (throws on a syntax error). */
export function jsonata(expression: string): Jsonata.Expression {
  lib ??= createRequire(import.meta.url)('jsonata') as typeof Jsonata;
  return lib(expression);
}

export type JsonataExpression = Jsonata.Expression;
