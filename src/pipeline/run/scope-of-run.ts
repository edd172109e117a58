/** A run's scope: the feed's (request), else the mapping's, resolved against the owner's brands if it names any. */
import type { Mapping } from '../map/mapping.ts';
import { labelKey } from '../resolve/reference-resolver.ts';
import { resolveScope, type ResolvedScope } from '../scope.ts';
import type { RunContext } from './run-context.ts';
import type { ImportRequest } from './run-state.ts';

/** The run's resolved scope, or undefined when neither the request nor the mapping gives one. */
export async function runScope(
  req: Pick<ImportRequest, 'scope'>,
  mapping: Mapping,
  owner: string,
  ctx: Pick<RunContext, 'clients'>,
): Promise<ResolvedScope | undefined> {
  const spec = req.scope ?? mapping.scope;
  if (spec === undefined) return undefined;
  // One brand list of the owner (archived brands included: their items are still the scope's).
  const brands = spec !== 'owner' && spec.brands ? await ctx.clients.product.listBrands(owner) : [];
  return resolveScope(spec, brands, labelKey);
}
