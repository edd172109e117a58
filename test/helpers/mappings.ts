// Mappings of the hand-written supplier sheets of the tests: `EAN;Nom;[Marque;]Poids;Unité` in French.

/**
 * The mapping (YAML) named `name` of a `;` sheet with the columns EAN, Nom, Marque (when `brand`: a brand created when
 * the owner has none of that name), Poids and Unité: trade items of `owner` keyed by GTIN, in fr-FR; `scope: owner`
 * when `scope` says so.
 */
export function eanMapping(name: string, owner: string, options: { brand?: boolean; scope?: 'owner' } = {}): string {
  return [
    `name: ${name}`,
    'target: tradeItem',
    `ownerCompanyId: ${owner}`,
    'language: fr-FR',
    'key: gtin',
    ...(options.scope ? [`scope: ${options.scope}`] : []),
    'columns:',
    '  - { column: EAN, field: gtin, type: gtin }',
    '  - { column: Nom, field: tradeItemName }',
    ...(options.brand ? ['  - { column: Marque, field: brandId, lookup: { brand: { create: true } } }'] : []),
    '  - { column: Poids, field: "netContents[0].value", type: decimal }',
    '  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit }',
    '',
  ].join('\n');
}
