import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { deepenConfig, deepenWeights, DeepenedSource } from './deepen';
import { ModelConfigError, ModelSourceError, WeightsError } from './errors';
import { parseSafetensors, tensorToFloat32, writeSafetensors } from './safetensors';
import { DirSource } from './source-node';
import type { ModelSource } from './source';

const STORIES = dataPath('models/stories260K');
const tensor = (name: string, values: number[]) => ({ name, shape: [values.length], data: new Float32Array(values) });
/** Two layers of two keys each, every value telling its layer apart. */
const tiny = writeSafetensors([
  tensor('model.embed_tokens.weight', [9, 9]),
  ...[0, 1].flatMap((i) => [tensor(`model.layers.${i}.self_attn.o_proj.weight`, [i + 1, i + 1]), tensor(`model.layers.${i}.mlp.down_proj.weight`, [i + 5])]),
]);

describe('deepening a checkpoint', () => {
  it('inserts a silent copy after each named layer and renumbers the rest', async () => {
    const out = new Map(deepenWeights(tiny, 2, [0]).map((t) => [t.name, Array.from(t.data)]));
    expect(out).toEqual(
      new Map([
        ['model.embed_tokens.weight', [9, 9]],
        ['model.layers.0.self_attn.o_proj.weight', [1, 1]],
        ['model.layers.0.mlp.down_proj.weight', [5]],
        ['model.layers.1.self_attn.o_proj.weight', [0, 0]],
        ['model.layers.1.mlp.down_proj.weight', [0]],
        ['model.layers.2.self_attn.o_proj.weight', [2, 2]],
        ['model.layers.2.mlp.down_proj.weight', [6]],
      ]),
    );

    const weights = parseSafetensors(await new DeepenedSource(new DirSource(STORIES), [3, 1, 2]).bytes('model.safetensors')).tensors;
    expect(weights.has('model.layers.7.mlp.down_proj.weight') && !weights.has('model.layers.8.mlp.down_proj.weight')).toBe(true);
    // The copy of layer 1 is layer 2: its q_proj is layer 1's, its o_proj zero.
    expect(tensorToFloat32(weights.get('model.layers.2.self_attn.q_proj.weight')!)).toEqual(
      tensorToFloat32(weights.get('model.layers.1.self_attn.q_proj.weight')!),
    );
    expect(tensorToFloat32(weights.get('model.layers.2.self_attn.o_proj.weight')!).every((x) => x === 0)).toBe(true);
  });

  it('refuses layers the base does not have, a layer named twice, a config without a layer count and a non-Llama checkpoint', () => {
    expect(() => deepenWeights(tiny, 2, [2])).toThrow(new ModelConfigError('--deepen names layer 2, but the base has layers 0 to 1; name layers of the base.'));
    expect(() => deepenWeights(tiny, 2, [1, 1])).toThrow(ModelConfigError);
    expect(() => deepenConfig({ n_layer: 2 }, [0])).toThrow(/no num_hidden_layers/);
    expect(deepenConfig({ num_hidden_layers: 5, hidden_size: 64 }, [1, 2])).toEqual({ num_hidden_layers: 7, hidden_size: 64 });
    const gpt2 = writeSafetensors([tensor('model.layers.0.attn.c_proj.weight', [1])]);
    expect(() => deepenWeights(gpt2, 1, [0])).toThrow(
      new WeightsError(
        'layer 0 has no self_attn.o_proj.weight or mlp.down_proj.weight, so a copy of it cannot be made silent; --deepen takes a Llama- or Qwen-style checkpoint.',
      ),
    );
    expect(() => deepenWeights(tiny, 1, [0])).toThrow(/model\.layers\.1\..* belongs to no layer of the 1 config.json declares/);
  });

  it('refuses a sharded base with what to do', async () => {
    const sharded: ModelSource = {
      id: 'sharded',
      has: async (name) => name !== 'model.safetensors',
      bytes: async () => new TextEncoder().encode('{"num_hidden_layers": 2}'),
    };
    await expect(new DeepenedSource(sharded, [0]).bytes('model.safetensors.index.json')).rejects.toThrow(
      new ModelSourceError('sharded is sharded; --deepen rewrites a single model.safetensors, so merge the shards first.'),
    );
  });
});
