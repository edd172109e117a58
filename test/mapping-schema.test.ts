// The JSON Schema of the mapping format (issue 11): generated from the zod schema, committed, named by every mapping.
import { readdirSync, readFileSync } from 'node:fs';
import { Ajv } from 'ajv';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { mappingJsonSchema, mappingJsonSchemaText } from '../src/onboarding/mapping-json-schema.ts';
import { columnSchema, mappingSchema, parseMapping, resolveFieldPath } from '../src/pipeline/map/mapping.ts';

const SCHEMA = new URL('../schemas/mapping.schema.json', import.meta.url);
const MAPPINGS = new URL('../mappings/', import.meta.url);
const MODELINE = '# yaml-language-server: $schema=../schemas/mapping.schema.json';
const mappingFiles = readdirSync(MAPPINGS).filter((f) => /\.(ya?ml|json)$/.test(f));

// ajv-formats is CommonJS: its function is the default export's default under Node's ESM loader.
const addFormats = (addFormatsModule as unknown as { default: (ajv: Ajv) => Ajv }).default;

/** ajv 8 (a devDependency) with its formats (uuid, uri…): validates files against the draft-07 schema. */
const ajv = (() => {
  const ajv = new Ajv({ allErrors: true });
  addFormats(ajv);
  return ajv;
})();

describe('schemas/mapping.schema.json', () => {
  it('is what the mapping schema generates now (run `npm run schema` after changing src/pipeline/map/mapping.ts)', () => {
    expect(readFileSync(SCHEMA, 'utf8')).toBe(mappingJsonSchemaText());
  });

  it('is draft-07, with every top-level and column key of the zod schema, unknown keys refused', () => {
    const s = mappingJsonSchema() as {
      $schema: string;
      properties: Record<string, { items?: { properties: object; additionalProperties: boolean } }>;
      additionalProperties: boolean;
      required: string[];
    };
    expect(s.$schema).toBe('http://json-schema.org/draft-07/schema#');
    expect(Object.keys(s.properties)).toEqual(Object.keys(mappingSchema.shape));
    expect(Object.keys(s.properties.columns!.items!.properties)).toEqual(Object.keys(columnSchema.shape));
    expect(s.additionalProperties).toBe(false);
    expect(s.properties.columns!.items!.additionalProperties).toBe(false);
    expect(s.required).toEqual(['target', 'columns']);
  });

  it('offers the field paths as completions of field and of defaults, each one a path a mapping takes', () => {
    const s = mappingJsonSchema() as {
      properties: {
        columns: { items: { properties: { field: { examples: string[] } } } };
        defaults: { properties: Record<string, unknown> };
      };
    };
    const examples = s.properties.columns.items.properties.field.examples;
    expect(examples).toContain('netContents[0].value');
    expect(examples).toContain('countriesOfOrigin');
    for (const p of examples) expect(typeof resolveFieldPath('manufacturedItem', p), p).not.toBe('string');
    expect(Object.keys(s.properties.defaults.properties)).toEqual(examples);
  });

  it.runIf(ajv)(
    'accepts every mapping in mappings/ and refuses an unknown key, a bad type and a missing target',
    () => {
      const validate = ajv!.compile(JSON.parse(readFileSync(SCHEMA, 'utf8')));
      for (const f of mappingFiles) {
        const data = parse(readFileSync(new URL(f, MAPPINGS), 'utf8'));
        expect(validate(data), `${f}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
      const base = { target: 'tradeItem', columns: [{ column: 'EAN', field: 'gtin' }] };
      expect(validate(base)).toBe(true);
      expect(validate({ ...base, colums: [] })).toBe(false);
      expect(validate({ ...base, columns: [{ column: 'EAN', field: 'gtin', type: 'decimals' }] })).toBe(false);
      expect(validate({ columns: base.columns })).toBe(false);
    },
  );
});

describe('mappings/', () => {
  it('every mapping file names the schema: the modeline first in YAML, $schema in JSON; and still loads', () => {
    expect(mappingFiles.length).toBeGreaterThan(0);
    for (const f of mappingFiles) {
      const text = readFileSync(new URL(f, MAPPINGS), 'utf8');
      if (f.endsWith('.json'))
        expect((JSON.parse(text) as { $schema?: string }).$schema, f).toBe('../schemas/mapping.schema.json');
      else expect(text.split('\n')[0], f).toBe(MODELINE);
      parseMapping(text, `mappings/${f}`);
    }
  });
});
