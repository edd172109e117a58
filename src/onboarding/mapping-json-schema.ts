/**
 * The JSON Schema (draft-07) of the mapping file format, generated from the mapping's zod schema so it never drifts
 * from what parseMapping accepts; committed as schemas/mapping.schema.json (`npm run schema` writes it, a test checks
 * it is current) and named by every mapping file's `# yaml-language-server: $schema=…` line, so YAML editors complete
 * and check mappings.
 */
import { dirname, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as z from 'zod';
import { projectFile } from '../build-dir.ts';
import { mappingSchema } from '../pipeline/map/mapping.ts';
import { fieldChoices } from './suggest.ts';

/** The JSON Schema of the mapping format, shipped with the package (schemas/ beside src/ and dist/). */
export const MAPPING_SCHEMA_FILE = fileURLToPath(projectFile('schemas/mapping.schema.json'));

/** The `$schema` reference of a mapping written at `out`: the schema file, relative to it (`../schemas/…`). */
export function schemaRefFor(out: string): string {
  return relative(dirname(resolve(out)), MAPPING_SCHEMA_FILE)
    .split(sep)
    .join('/');
}

type JsonObject = Record<string, unknown>;

const asObject = (v: unknown): JsonObject | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : undefined;

/** The field paths editors offer: a manufactured item mapping's, which take every trade item field too. */
function fieldPaths(): string[] {
  return fieldChoices('manufacturedItem');
}

/**
 * The JSON Schema of a mapping file: mappingSchema as input (draft-07), with the field paths as completions of `field`
 * and `defaults`.
 */
export function mappingJsonSchema(): JsonObject {
  const schema = z.toJSONSchema(mappingSchema, { target: 'draft-7', io: 'input' }) as JsonObject;
  const paths = fieldPaths();
  const properties = asObject(schema.properties);
  const field = asObject(asObject(asObject(asObject(properties?.columns)?.items)?.properties)?.field);
  // examples, not enum: any index from 0 to 99 is a path (netContents[3].value), and field problems are parseMapping's
  // to name.
  if (field) field.examples = paths;
  const defaults = asObject(properties?.defaults);
  if (defaults && defaults.additionalProperties !== undefined) {
    // Keys offered for completion, each with the schema every other key has: nothing is refused that was accepted.
    schema.definitions = { ...asObject(schema.definitions), defaultValue: defaults.additionalProperties };
    defaults.additionalProperties = { $ref: '#/definitions/defaultValue' };
    defaults.properties = Object.fromEntries(paths.map((p) => [p, { $ref: '#/definitions/defaultValue' }]));
  }
  return {
    $schema: schema.$schema,
    title: 'product-sync mapping',
    description:
      'Which column of a supplier sheet feeds which product API field, how each cell is read and which labels are looked up (docs/mapping.md).',
    ...Object.fromEntries(Object.entries(schema).filter(([k]) => k !== '$schema')),
  };
}

/** The text of schemas/mapping.schema.json. */
export function mappingJsonSchemaText(): string {
  return `${JSON.stringify(mappingJsonSchema(), null, 2)}\n`;
}
