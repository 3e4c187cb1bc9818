// Writes the JSON Schemas of docs/schema/ from the checkers that read run configs and records
// (src/runtime/published-schemas.ts), so the published schema cannot drift from the reader.
// test/docs/json-schema.test.ts fails when a committed file is stale; rerun this then.
//
//   npm run -s schema
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PUBLISHED_SCHEMAS, SCHEMA_DIR, schemaFileText } from '../src/runtime/published-schemas';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
for (const name of Object.keys(PUBLISHED_SCHEMAS)) {
  const path = join(root, SCHEMA_DIR, name);
  writeFileSync(path, schemaFileText(name));
  console.log(`wrote ${join(SCHEMA_DIR, name)}`);
}
