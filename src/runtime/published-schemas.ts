/**
 * The JSON Schemas published in docs/schema/, made from the same checkers that read run configs
 * and records, so an editor's completion and the lab's reader agree. scripts/json-schema.ts writes
 * them; test/docs/json-schema.test.ts fails when a committed file differs from what this makes.
 */
import type { JsonSchema } from '../base/check';
import { recordChecker } from '../rl/validate';
import { personalConfigChecker, toolCallConfigChecker } from './run-config-check';

/** Where the files live, relative to the repository. */
export const SCHEMA_DIR = 'docs/schema';

const DRAFT = 'http://json-schema.org/draft-07/schema#';

/** File name -> its schema. */
export const PUBLISHED_SCHEMAS: Record<string, JsonSchema> = {
  'run-config.schema.json': {
    title: 'Next-State Lab run config',
    description:
      'What `nextstate run --config` reads and a run file carries (print one with `nextstate run --example storyteller`). ' +
      'A config without "track" is a personal-agent one. Rules between fields (a method needs its judges; the preset\'s method is the config\'s) are checked by the lab, not here.',
    oneOf: [personalConfigChecker.schema, toolCallConfigChecker.schema],
  },
  'record.schema.json': {
    title: 'Next-State Lab run record',
    description:
      'One line of a run file after its header (and of RUN_FILE.journal): one record, its kind picking its shape. ' +
      "Rules between fields (a judge result's teacher log-probs match its count, ...) are checked by the lab, not here.",
    ...recordChecker.schema,
  },
};

/** A published file's text, exactly as committed. */
export function schemaFileText(name: string): string {
  const schema = PUBLISHED_SCHEMAS[name];
  if (!schema) throw new Error(`no published schema ${name}; there are ${Object.keys(PUBLISHED_SCHEMAS).join(', ')}`);
  return `${JSON.stringify({ $schema: DRAFT, ...schema }, null, 2)}\n`;
}
