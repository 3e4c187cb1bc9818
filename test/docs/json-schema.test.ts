/**
 * docs/schema/ holds exactly what scripts/json-schema.ts makes from the checkers, and every
 * config and record the repository ships (each `nextstate run --example`, the fixtures) is valid
 * against it, so an editor that checks a config with the published schema agrees with the lab.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { OTHER_CHILD_ARMS, TRAINED_ARMS } from '../../src/runtime/arms';
import { EXAMPLES, RUN_CONFIG_SCHEMA_REF, exampleConfig } from '../../src/runtime/run-config';
import { parseAnyRunConfig } from '../../src/runtime/run-config-check';
import { validateRecord } from '../../src/rl/validate';
import { PUBLISHED_SCHEMAS, SCHEMA_DIR, schemaFileText } from '../../src/runtime/published-schemas';
import { runCli } from '../support/cli/run-cli';
import { ROOT } from '../../scripts/readme-section.mjs';
import { validate } from './json-schema-validator';

const committed = (name: string) => readFileSync(join(ROOT, SCHEMA_DIR, name), 'utf8');
const schema = (name: string) => JSON.parse(committed(name));
const fixture = (name: string) => readFileSync(join(ROOT, 'test/fixtures', name), 'utf8');

describe('the published JSON Schemas', () => {
  it.each(Object.keys(PUBLISHED_SCHEMAS))('docs/schema/%s is what scripts/json-schema.ts makes (npm run -s schema rewrites it)', (name) => {
    expect(committed(name)).toBe(schemaFileText(name));
  });

  // The other child's hints exist for the storyteller only; the other scenarios refuse those arms.
  const armsOf = (name: string) => (name === 'toolcall' ? ['binary'] : TRAINED_ARMS.filter((arm) => name === 'storyteller' || !OTHER_CHILD_ARMS.includes(arm)));
  const examples = EXAMPLES.flatMap((name) => armsOf(name).map((arm) => [name, arm]));
  it.each(examples)('`nextstate run --example %s --method %s` points at the schema and is valid against it', async (name, method) => {
    const { out, code } = await runCli('run', '--example', name, '--method', method);
    expect(code).toBe(0);
    const config = JSON.parse(out.join('\n'));
    expect(config.$schema).toBe(RUN_CONFIG_SCHEMA_REF);
    expect(join(ROOT, config.$schema)).toBe(join(ROOT, SCHEMA_DIR, 'run-config.schema.json'));
    expect(validate(schema('run-config.schema.json'), config)).toEqual([]);
    // The lab reads it back with its "$schema", which it keeps.
    expect(parseAnyRunConfig(config)).toEqual(config);
  });

  it("the v1 run file fixture's config is valid against the run-config schema", () => {
    const header = JSON.parse(fixture('run-file-v1-header.json'));
    expect(validate(schema('run-config.schema.json'), header.run.config)).toEqual([]);
  });

  it.each(['recorded-run.jsonl', 'recorded-toolcall.jsonl', 'recorded-toolcall-outcome.jsonl'])('every record of test/fixtures/%s is valid against the record schema', (file) => {
    const records = schema('record.schema.json');
    const lines = fixture(file).split('\n').filter((l) => l.trim() !== '');
    expect(lines.length).toBeGreaterThan(0);
    lines.forEach((line, i) => {
      const record = JSON.parse(line);
      validateRecord(record, `${file} line ${i + 1}`);
      expect(validate(records, record), `${file} line ${i + 1}`).toEqual([]);
    });
  });

  it('refuses what the lab refuses: a misspelt field, a value out of range, an unknown kind', () => {
    const configs = schema('run-config.schema.json');
    const good = exampleConfig('storyteller');
    expect(validate(configs, good)).toEqual([]);
    expect(validate(configs, { ...good, sedd: 1 })).not.toEqual([]);
    expect(validate(configs, { ...good, schedule: { ...good.schedule, concurrentSessions: 0 } })).not.toEqual([]);
    expect(validate(configs, { ...good, preset: { ...good.preset, optimizer: { ...good.preset.optimizer, lr: 0 } } })).not.toEqual([]);
    expect(validate(configs, { ...good, models: { ...good.models, judge: { kind: 'oracle' } } })).not.toEqual([]);
    const records = schema('record.schema.json');
    const record = JSON.parse(fixture('recorded-run.jsonl').split('\n')[0]);
    expect(validate(records, record)).toEqual([]);
    expect(validate(records, { ...record, kind: 'evaluations' })).not.toEqual([]);
    expect(validate(records, { ...record, version: -1 })).not.toEqual([]);
  });
});
