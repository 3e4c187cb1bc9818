/**
 * Adapters as PEFT files, so a trained adapter loads unchanged in Python PEFT and vLLM:
 * adapter_model.safetensors with PEFT's tensor names and adapter_config.json. Also merging an
 * adapter into the base weights, for serving a merged copy or exporting an HF folder.
 */
import type { Backend, Tensor } from './backend';
import { PROJECTIONS, expectedTensors, projectionModule, projectionShape, type ModelConfig, type Projection } from '../models/config';
import { EngineError, WeightsError } from './errors';
import { LoraAdapter, type LoraConfig } from './lora';
import { CausalLM, type Weights } from './model';
import { finiteTensor, parseSafetensors, writeSafetensors } from '../models/safetensors';
import { portableModelName } from '../models/source';

export const PEFT_WEIGHTS = 'adapter_model.safetensors';
export const PEFT_CONFIG = 'adapter_config.json';

export function peftName(layer: number, p: Projection, which: 'A' | 'B'): string {
  return `base_model.model.model.layers.${layer}.${projectionModule(p)}.${p}.lora_${which}.weight`;
}

export interface PeftFiles {
  [PEFT_WEIGHTS]: Uint8Array;
  [PEFT_CONFIG]: string;
}

export async function adapterToPeft(backend: Backend, adapter: LoraAdapter, baseModel: string): Promise<PeftFiles> {
  const named: { name: string; tensor: Tensor }[] = [];
  for (let l = 0; l < adapter.modelConfig.numLayers; l++) {
    for (const p of adapter.config.targets) {
      const pair = adapter.get(l, p);
      if (!pair) throw new EngineError(`the adapter has no ${p} pair in layer ${l}: it was disposed or built for another model`);
      named.push({ name: peftName(l, p, 'A'), tensor: pair.A }, { name: peftName(l, p, 'B'), tensor: pair.B });
    }
  }
  // Every read in flight at once: one wait for the GPU, not one per tensor.
  const data = await Promise.all(named.map((n) => backend.read(n.tensor)));
  const tensors = named.map((n, i) => ({ name: n.name, shape: [...n.tensor.shape], data: data[i] }));
  const config = {
    peft_type: 'LORA',
    task_type: 'CAUSAL_LM',
    // The file travels (run files, uploads): a local folder is named, not located.
    base_model_name_or_path: portableModelName(baseModel),
    r: adapter.config.rank,
    lora_alpha: adapter.config.alpha,
    lora_dropout: 0,
    target_modules: [...adapter.config.targets],
    bias: 'none',
    fan_in_fan_out: false,
    inference_mode: true,
    use_rslora: false,
    use_dora: false,
    init_lora_weights: true,
    modules_to_save: null,
    layers_to_transform: null,
  };
  return {
    [PEFT_WEIGHTS]: writeSafetensors(tensors, { format: 'pt' }),
    [PEFT_CONFIG]: JSON.stringify(config, null, 2),
  };
}

/** Far above any rank worth training, and a bound on what a hostile config can ask to allocate. */
export const MAX_LORA_RANK = 4096;

/**
 * Checks adapter_config.json: a LORA config the engine can apply, with a positive integer
 * rank and a finite, non-negative alpha (anything else gave TypeErrors or NaN scores).
 *
 * @throws WeightsError naming the field
 */
export function parseAdapterConfig(text: string): LoraConfig {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw new WeightsError(`${PEFT_CONFIG} is not valid JSON; export the adapter again.`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new WeightsError(`${PEFT_CONFIG} is not a JSON object; export the adapter again.`);
  }
  const c = raw as Record<string, unknown>;
  if (c.peft_type !== 'LORA') throw new WeightsError(`${PEFT_CONFIG}: peft_type is ${String(c.peft_type)}; only LORA adapters load.`);
  if (c.use_dora === true || c.use_rslora === true) throw new WeightsError(`${PEFT_CONFIG}: DoRA and rsLoRA adapters are not supported.`);
  const rawTargets = Array.isArray(c.target_modules) ? c.target_modules : [];
  const targets = rawTargets.filter((t): t is Projection => PROJECTIONS.includes(t as Projection));
  if (targets.length !== rawTargets.length || targets.length === 0) {
    throw new WeightsError(`${PEFT_CONFIG}: target_modules ${JSON.stringify(c.target_modules)} must be a list of ${PROJECTIONS.join(', ')}.`);
  }
  const { r, lora_alpha: alpha } = c;
  if (typeof r !== 'number' || !Number.isInteger(r) || r < 1 || r > MAX_LORA_RANK) {
    throw new WeightsError(`${PEFT_CONFIG}: r must be an integer from 1 to ${MAX_LORA_RANK}, found ${JSON.stringify(r)}; export the adapter again.`);
  }
  if (typeof alpha !== 'number' || !Number.isFinite(alpha) || alpha < 0) {
    throw new WeightsError(`${PEFT_CONFIG}: lora_alpha must be a finite number of at least 0, found ${JSON.stringify(alpha)}; export the adapter again.`);
  }
  return { rank: r, alpha, targets };
}

/** Reads PEFT files for this model, checking every name, shape and value. */
export function adapterFromPeft(backend: Backend, modelConfig: ModelConfig, files: { weights: Uint8Array; config: string }): LoraAdapter {
  const config = parseAdapterConfig(files.config);
  const adapter = new LoraAdapter(config, modelConfig);
  const { tensors } = parseSafetensors(files.weights, PEFT_WEIGHTS);
  for (let l = 0; l < modelConfig.numLayers; l++) {
    for (const p of config.targets) {
      const [out, inp] = projectionShape(modelConfig, p);
      const load = (which: 'A' | 'B', shape: number[]) => {
        const t = tensors.get(peftName(l, p, which));
        if (!t) throw new WeightsError(`${PEFT_WEIGHTS} lacks ${peftName(l, p, which)}; was it trained for another model?`);
        if (t.shape.join(',') !== shape.join(',')) {
          throw new WeightsError(`${peftName(l, p, which)} has shape [${t.shape}], this model needs [${shape}]; the adapter belongs to another model.`);
        }
        return backend.tensor(finiteTensor(t, PEFT_WEIGHTS), shape);
      };
      adapter.pairs.set(LoraAdapter.key(l, p), { A: load('A', [config.rank, inp]), B: load('B', [out, config.rank]) });
    }
  }
  return adapter;
}

/** W + (alpha/r) B A for every targeted projection; other weights as they are, as f32 arrays. */
export async function mergedWeights(model: CausalLM, adapter: LoraAdapter): Promise<Map<string, Float32Array>> {
  const be = model.backend;
  const out = new Map<string, Float32Array>();
  for (const e of expectedTensors(model.config)) {
    const w = await be.read(model.w(e.name));
    const m = /^model\.layers\.(\d+)\.\w+\.(\w+_proj)\.weight$/.exec(e.name);
    const pair = m ? adapter.get(Number(m[1]), m[2] as Projection) : undefined;
    if (pair) {
      const delta = be.matmul(pair.B, pair.A, false, false);
      const d = await be.read(delta);
      be.dispose(delta);
      for (let i = 0; i < w.length; i++) w[i] += adapter.scale * d[i];
    }
    out.set(e.name, w);
  }
  return out;
}

/** A second model on the same backend with the adapter merged in: serving without the LoRA branch. */
export async function mergeIntoCopy(model: CausalLM, adapter: LoraAdapter): Promise<CausalLM> {
  const weights: Weights = new Map();
  for (const [name, data] of await mergedWeights(model, adapter)) {
    weights.set(name, model.backend.tensor(data, model.weights.get(name)!.shape));
  }
  return new CausalLM(model.backend, model.config, weights);
}

/** model.safetensors of the merged model, HF names, for a folder next to config.json. */
export async function mergedSafetensors(model: CausalLM, adapter: LoraAdapter): Promise<Uint8Array> {
  const merged = await mergedWeights(model, adapter);
  return writeSafetensors(
    expectedTensors(model.config).map((e) => ({ name: e.name, shape: e.shape, data: merged.get(e.name)! })),
    { format: 'pt' },
  );
}
