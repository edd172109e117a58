// Mappings (YAML) of the hand-written supplier sheets of the tests, in French: trade items keyed by GTIN.

/** Column lines of a mapping: the `GTIN;Désignation;Poids net;Unité` sheet (sheets.ts writeProductSheet). */
export const COLUMNS = {
  gtin: '  - { column: GTIN, field: gtin, type: gtin }',
  name: '  - { column: Désignation, field: tradeItemName }',
  weight: [
    '  - { column: Poids net, field: "netContents[0].value", type: decimal }',
    '  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit }',
  ],
};

/**
 * The mapping named `name` of `owner`'s trade items keyed by GTIN, in fr-FR: its `columns:` lines, then `after` (rules,
 * a gate, `scope: owner`…). The columns start on line 7.
 */
export function tradeItemMapping(name: string, owner: string, columns: string[], after = ''): string {
  const head = [`name: ${name}`, 'target: tradeItem', `ownerCompanyId: ${owner}`, 'language: fr-FR', 'key: gtin'];
  return `${[...head, 'columns:', ...columns].join('\n')}\n${after}`;
}

/** The mapping of the `GTIN;Désignation;Poids net;Unité` sheet, followed by `after`. */
export const productMapping = (name: string, owner: string, after = ''): string =>
  tradeItemMapping(name, owner, [COLUMNS.gtin, COLUMNS.name, ...COLUMNS.weight], after);

/**
 * The mapping of a `;` sheet with the columns EAN, Nom, Marque (when `brand`: a brand created when the owner has none
 * of that name), Poids and Unité; `scope: owner` when `scope` says so.
 */
export function eanMapping(name: string, owner: string, options: { brand?: boolean; scope?: 'owner' } = {}): string {
  const columns = [
    '  - { column: EAN, field: gtin, type: gtin }',
    '  - { column: Nom, field: tradeItemName }',
    ...(options.brand ? ['  - { column: Marque, field: brandId, lookup: { brand: { create: true } } }'] : []),
    '  - { column: Poids, field: "netContents[0].value", type: decimal }',
    '  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit }',
  ];
  return tradeItemMapping(name, owner, columns, options.scope ? `scope: ${options.scope}\n` : '');
}
