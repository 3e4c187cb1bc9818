import { mkdtempSync, copyFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { dataPath } from '../../test/data-dir';
import { CpuBackend } from './cpu/backend';
import { WeightsError } from './errors';
import { LoraAdapter } from './lora';
import { adapterFromPeft, adapterToPeft, mergedSafetensors, mergeIntoCopy, parseAdapterConfig, PEFT_CONFIG, PEFT_WEIGHTS, peftName } from './peft';
import { Policy } from './policy';
import { parseSafetensors } from '../models/safetensors';
import { score } from './score';
import { DirSource } from '../models/source-node';
import { LoraTrainer } from './train';
import { DEFAULT_TRAIN } from './train-types';

const stories = dataPath('models/stories260K');

describe('PEFT save, load and merge', () => {
  it('round-trips a trained adapter and its merged model to the same log-probs (1e-5)', async () => {
    const be = new CpuBackend();
    const policy = await Policy.load(new DirSource(stories), be);
    const prompt = policy.promptIds('Once upon a time');
    const completion = policy.tokenizer.encode(' there was a cat.', false);
    const adapter = LoraAdapter.init(
      be,
      policy.config,
      { rank: 4, alpha: 8, targets: ['q_proj', 'k_proj', 'v_proj', 'o_proj', 'gate_proj', 'up_proj', 'down_proj'] },
      2,
    );
    const trainer = new LoraTrainer(policy.model, adapter, { ...DEFAULT_TRAIN, lr: 1e-2 });
    await trainer.trainStep([{ prompt, completion, advantages: completion.map(() => 1) }]);
    await trainer.trainStep([{ prompt, completion, advantages: completion.map(() => 1) }]);
    const item = [{ prompt, completion }];
    const trained = (await score(policy.model, item, { lora: adapter }))[0].logprobs;
    const base = (await score(policy.model, item))[0].logprobs;
    expect(Math.max(...trained.map((x, i) => Math.abs(x - base[i])))).toBeGreaterThan(1e-3);

    const files = await adapterToPeft(be, adapter, 'stories260K');
    const names = [...parseSafetensors(files[PEFT_WEIGHTS]).tensors.keys()];
    expect(names).toContain('base_model.model.model.layers.0.self_attn.q_proj.lora_A.weight');
    expect(names).toContain('base_model.model.model.layers.4.mlp.down_proj.lora_B.weight');
    expect(JSON.parse(files[PEFT_CONFIG])).toMatchObject({ peft_type: 'LORA', r: 4, lora_alpha: 8, base_model_name_or_path: 'stories260K' });

    const loaded = adapterFromPeft(be, policy.config, { weights: files[PEFT_WEIGHTS], config: files[PEFT_CONFIG] });
    const again = (await score(policy.model, item, { lora: loaded }))[0].logprobs;
    again.forEach((x, i) => expect(Math.abs(x - trained[i])).toBeLessThan(1e-5));

    const merged = await mergeIntoCopy(policy.model, adapter);
    const viaMerge = (await score(merged, item))[0].logprobs;
    viaMerge.forEach((x, i) => expect(Math.abs(x - trained[i])).toBeLessThan(1e-5));

    // The merged folder is an ordinary HF checkpoint the loader accepts.
    const dir = mkdtempSync(join(tmpdir(), 'merged-'));
    for (const f of ['config.json', 'tokenizer.json', 'tokenizer_config.json']) copyFileSync(join(stories, f), join(dir, f));
    writeFileSync(join(dir, 'model.safetensors'), await mergedSafetensors(policy.model, adapter));
    const reloaded = await Policy.load(new DirSource(dir), be);
    const viaFolder = (await score(reloaded.model, item))[0].logprobs;
    viaFolder.forEach((x, i) => expect(Math.abs(x - trained[i])).toBeLessThan(1e-5));
  });

  it('refuses an adapter trained for another model, naming the tensor', async () => {
    const be = new CpuBackend();
    const policy = await Policy.load(new DirSource(stories), be);
    const adapter = LoraAdapter.init(be, policy.config, { rank: 2, alpha: 4, targets: ['q_proj'] }, 1);
    const files = await adapterToPeft(be, adapter, 'x');
    const other = { ...policy.config, hiddenSize: 32 };
    expect(() => adapterFromPeft(be, other, { weights: files[PEFT_WEIGHTS], config: files[PEFT_CONFIG] })).toThrow(WeightsError);
    expect(() => adapterFromPeft(be, other, { weights: files[PEFT_WEIGHTS], config: files[PEFT_CONFIG] })).toThrow(peftName(0, 'q_proj', 'A'));
    expect(() => adapterFromPeft(be, policy.config, { weights: files[PEFT_WEIGHTS], config: '{"peft_type":"IA3"}' })).toThrow(/only LORA/);
  });

  it('refuses a malformed adapter_config.json with a WeightsError naming the field', async () => {
    const be = new CpuBackend();
    const policy = await Policy.load(new DirSource(stories), be);
    const adapter = LoraAdapter.init(be, policy.config, { rank: 2, alpha: 4, targets: ['q_proj'] }, 1);
    const files = await adapterToPeft(be, adapter, 'x');
    const good = JSON.parse(files[PEFT_CONFIG]);
    const load = (config: string) => () => adapterFromPeft(be, policy.config, { weights: files[PEFT_WEIGHTS], config });
    // These gave a TypeError, or NaN scores with exit 0.
    for (const [config, message] of [
      ['null', /adapter_config.json is not a JSON object/],
      ['[1]', /is not a JSON object/],
      ['"LORA"', /is not a JSON object/],
      [JSON.stringify({ ...good, r: 'two' }), /r must be an integer from 1 to 4096, found "two"/],
      [JSON.stringify({ ...good, r: 2.5 }), /r must be an integer/],
      [JSON.stringify({ ...good, r: 1e9 }), /r must be an integer/],
      [JSON.stringify({ ...good, lora_alpha: 'four' }), /lora_alpha must be a finite number of at least 0, found "four"/],
      [JSON.stringify({ ...good, lora_alpha: null }), /lora_alpha must be a finite number/],
      [JSON.stringify({ ...good, lora_alpha: -1 }), /lora_alpha must be a finite number/],
      [JSON.stringify({ r: 2, lora_alpha: 4 }), /peft_type is undefined/],
    ] as const) {
      expect(load(config), config).toThrow(WeightsError);
      expect(load(config), config).toThrow(message);
    }
    expect(parseAdapterConfig(JSON.stringify({ ...good, lora_alpha: 0 }))).toEqual({ rank: 2, alpha: 0, targets: ['q_proj'] });
  });

  it('refuses NaN or infinite adapter weights when it loads them', async () => {
    const be = new CpuBackend();
    const policy = await Policy.load(new DirSource(stories), be);
    const adapter = LoraAdapter.init(be, policy.config, { rank: 2, alpha: 4, targets: ['q_proj'] }, 1);
    const files = await adapterToPeft(be, adapter, 'x');
    const weights = new Uint8Array(files[PEFT_WEIGHTS]);
    const a = parseSafetensors(weights).tensors.get(peftName(0, 'q_proj', 'A'))!;
    new DataView(a.bytes.buffer, a.bytes.byteOffset).setFloat32(4, NaN, true);
    expect(() => adapterFromPeft(be, policy.config, { weights, config: files[PEFT_CONFIG] })).toThrow(
      `adapter_model.safetensors: tensor ${peftName(0, 'q_proj', 'A')} holds 1 NaN or infinite value of`,
    );
  });

  it('names a local base model by its folder name, not its path, in adapter_config.json', async () => {
    const be = new CpuBackend();
    const policy = await Policy.load(new DirSource(stories), be);
    const adapter = LoraAdapter.init(be, policy.config, { rank: 2, alpha: 4, targets: ['q_proj'] }, 1);
    const named = async (base: string) => JSON.parse((await adapterToPeft(be, adapter, base))[PEFT_CONFIG]).base_model_name_or_path;
    expect(await named(policy.source.id)).toBe('stories260K');
    expect(await named('/home/alice/secret-project/models/Qwen3-0.6B/')).toBe('Qwen3-0.6B');
    expect(await named('C:\\Users\\alice\\models\\Qwen3-0.6B')).toBe('Qwen3-0.6B');
    expect(await named('./models/tiny')).toBe('tiny');
    expect(await named('Qwen/Qwen3-0.6B')).toBe('Qwen/Qwen3-0.6B');
    expect(await named('https://huggingface.co/Qwen/Qwen3-0.6B/resolve/main')).toBe('https://huggingface.co/Qwen/Qwen3-0.6B/resolve/main');
  });
});
