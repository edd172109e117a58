// `npm run schema`: writes schemas/mapping.schema.json from the mapping's zod schema (test/mapping-schema.test.ts fails
// while the committed file differs from what this writes).
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { mappingJsonSchemaText } from '../src/onboarding/mapping-json-schema.ts';

const file = fileURLToPath(new URL('../schemas/mapping.schema.json', import.meta.url));
mkdirSync(fileURLToPath(new URL('../schemas/', import.meta.url)), { recursive: true });
writeFileSync(file, mappingJsonSchemaText());
console.log(`wrote ${file}`);
