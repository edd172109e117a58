import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { gtinCheckDigit } from '../../src/pipeline/gtin.ts';
import { eanMapping } from './mappings.ts';

/** A valid GTIN-13 numbered `i` within a family (`prefix`: 6 digits). */
export function testGtin(i: number, prefix = '035000'): string {
  const body = `${prefix}${String(i).padStart(6, '0')}`;
  return body + gtinCheckDigit(body);
}

/**
 * Writes a `;` CSV of `rows` products (GTIN, name, net weight, unit) and its mapping into `dir`; returns both paths.
 */
export function writeProductSheet(
  dir: string,
  rows: number,
  options: { owner: string; name?: (i: number) => string; prefix?: string; file?: string },
): { file: string; mapping: string } {
  const name = options.name ?? ((i: number) => `Biscuits au beurre ${i}`);
  const lines = ['GTIN;Désignation;Poids net;Unité'];
  for (let i = 0; i < rows; i++) lines.push(`${testGtin(i, options.prefix)};${name(i)};${(i % 900) + 100};g`);
  const file = join(dir, options.file ?? 'products.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const mapping = join(dir, 'products.yaml');
  writeFileSync(
    mapping,
    `name: test-products
target: tradeItem
ownerCompanyId: ${options.owner}
language: fr-FR
key: gtin
columns:
  - { column: GTIN, field: gtin, type: gtin }
  - { column: Désignation, field: tradeItemName }
  - { column: Poids net, field: "netContents[0].value", type: decimal }
  - { column: Unité, field: "netContents[0].unitOfMeasure", type: unit }
scope: owner   # the whole catalogue: full-mode tests archive what the sheet drops
`,
  );
  return { file, mapping };
}

/**
 * The sheet of a queued run that plans again: `rows` items named `Queued <i>` (EAN;Nom;Marque;Poids;Unité), a brand
 * column whose second label ("Marque B") first appears on row `secondBrandAt`, and its mapping (`name`, scope owner).
 */
export function brandSheet(
  dir: string,
  rows: number,
  secondBrandAt: number,
  o: { name: string; owner: string },
): { file: string; mapping: string } {
  const lines = ['EAN;Nom;Marque;Poids;Unité'];
  for (let i = 0; i < rows; i++)
    lines.push(`${testGtin(i)};Queued ${i};${i < secondBrandAt ? 'Marque A' : 'Marque B'};${100 + i};g`);
  const file = join(dir, 'queued.csv');
  writeFileSync(file, `${lines.join('\n')}\n`);
  const mapping = join(dir, 'queued.yaml');
  writeFileSync(mapping, eanMapping(o.name, o.owner, { brand: true, scope: 'owner' }));
  return { file, mapping };
}
