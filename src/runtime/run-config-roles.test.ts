/** A transformers.js role in a run config: where its model is, its device and dtype, and what played each role. */
import { describe, expect, it } from 'vitest';
import { exampleConfig, parseRunConfig } from './run-config';

describe('transformers.js roles in a run config', () => {
  it('keeps source, device and dtype, and the roleSources the lab records', () => {
    const config = {
      ...exampleConfig('storyteller'),
      models: {
        ...exampleConfig('storyteller').models,
        judge: { kind: 'transformers', model: 'my-judge', source: 'files', device: 'wasm', dtype: 'q4' },
      },
      roleSources: { judge: { kind: 'transformers', library: '@huggingface/transformers 4.3.2', device: 'wasm', model: 'my-judge', dtype: 'q4' } },
    };
    const parsed = parseRunConfig(config);
    expect(parsed.models.judge).toEqual({ kind: 'transformers', model: 'my-judge', source: 'files', device: 'wasm', dtype: 'q4' });
    expect(parsed.roleSources?.judge).toMatchObject({ library: '@huggingface/transformers 4.3.2', dtype: 'q4' });
  });

  it('refuses an unknown dtype or device, naming the field', () => {
    const base = exampleConfig('storyteller');
    const judge = (extra: object) => ({ ...base, models: { ...base.models, judge: { kind: 'transformers', model: 'm', ...extra } } });
    expect(() => parseRunConfig(judge({ dtype: 'int3' }))).toThrow(/models\.judge\.dtype must be one of fp32, fp16, q8/);
    expect(() => parseRunConfig(judge({ device: 'cuda' }))).toThrow(/models\.judge\.device must be "webgpu" or "wasm"/);
    expect(() => parseRunConfig({ ...base, roleSources: { judge: { kind: 'oracle' } } })).toThrow(/roleSources\.judge\.kind/);
  });
});
