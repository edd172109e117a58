/**
 * A brand a gated run creates only once its quality gate lets it write: until then a row's brandId holds this
 * placeholder, named by the brand's label key (labelKey), which the push replaces with the brand's id
 * (run/pending-brands.ts; docs/mapping.md "What a held run writes before its verdict").
 */
const PREFIX = 'ps-pending-brand:';

/** The placeholder of the brand of label key `key`. */
export const pendingBrandId = (key: string): string => `${PREFIX}${key}`;

/** The label key a placeholder names, or null when `value` is no placeholder. */
export const pendingBrandKey = (value: unknown): string | null =>
  typeof value === 'string' && value.startsWith(PREFIX) ? value.slice(PREFIX.length) : null;
