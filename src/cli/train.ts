import { existsSync, statSync } from 'node:fs';
import { FILE_LIMITS, readLocalFile } from '../models/local-file';
import { totalmem } from 'node:os';
import { join } from 'node:path';
import type { Backend } from '../gpu/backend';
import { PROJECTIONS, type Projection } from '../models/config';
import {
  checkFullTrainingFits,
  COPIED_FILES,
  copyWeights,
  fullModelFolder,
  MODEL_WEIGHTS,
  OPTIMIZER_FILE,
  optimizerFromSafetensors,
  optimizerToSafetensors,
  parameterShape,
} from '../gpu/full';
import { loadConfig, resolveWeightFormat } from '../gpu/load';
import { LoraAdapter } from '../gpu/lora';
import { CausalLM } from '../gpu/model';
import { adapterToPeft, PEFT_CONFIG, PEFT_WEIGHTS } from '../gpu/peft';
import { Policy } from '../gpu/policy';
import { scoringTemperature } from '../gpu/sampler';
import { score } from '../gpu/score';
import { modelSource, readModelFile } from '../models/source-node';
import { FullTrainer, LoraTrainer, type Trainer } from '../gpu/train';
import { DEFAULT_FULL_TRAIN, DEFAULT_TRAIN, type Reference, type TrainSettings } from '../gpu/train-types';
import { KL_TYPES, type KlType } from '../rl/ppo';
import {
  BACKEND_OPTION,
  createBackend,
  loadPolicy,
  QUANTIZE_NOTE,
  QUANTIZE_OPTION,
  QUANTIZE_USAGE,
  REVISION_NOTE,
  REVISION_OPTION,
  REVISION_USAGE,
  revisionOption,
  weightFormatOption,
} from './engine';
import { isNonNegative, isPositiveInt, number, parse, required, UsageError } from './args';
import { timeLeft, type CliIo } from './io';
import { loadProgress } from './load-progress';
import { checkOutputFolder, FORCE_OPTION, notStdout, writeOutputFolder, type WriteOptions } from './output';
import { decodeTrainData, parseTrainData, toTrainSample } from './train-data';

export const usage = `nextstate train --model DIR|ID ${REVISION_USAGE} --data FILE.jsonl --out ADAPTER_DIR [--lora-rank R --lora-alpha A
    --targets q,k,v,o,gate,up,down --lr LR --steps N --batch B --seed S --beta B --kl-type low_var_kl|k3
    --clip-low E --clip-high E --temperature T --recompute none|layer --backend cpu|cpu-reference|webgpu] ${QUANTIZE_USAGE} [--force] [--json]
nextstate train --full --model DIR|ID ${REVISION_USAGE} --data FILE.jsonl --out MODEL_DIR [--freeze-embedding] [--resume] [--force]
    [--lr LR (default 1e-5) --weight-decay W (0.1) --steps N --batch B --beta B --kl-type low_var_kl|k3
    --clip-low E --clip-high E --temperature T --recompute none|layer --backend cpu|cpu-reference|webgpu] [--json]
  Each data line: {"prompt": TEXT, "completion": TEXT, "advantage": NUMBER | [NUMBER per completion token]},
  or a sample row as nextstate export --samples writes it (prompt_ids, completion_ids, advantages,
  loss_mask, rollout_log_probs and any OPD term), trained as the run's own step trained it.
  --temperature is the one the rows were sampled at (the run's sampling.policy.temperature; 0.6 in the
  student and teacher examples; default 1): every log-prob divides the logits by it, as the run's did.
  --full trains every weight and writes a Hugging Face model folder (config, tokenizer, model.safetensors)
  with optimizer.safetensors beside it; --resume continues from the optimizer.safetensors in --model.
  --out is written whole or not at all; it is never --model, and --force replaces files already there.
  --recompute layer keeps only each layer's input and re-runs the layer in the backward: one layer's
  activations and K/V at a time instead of all (nextstate plan --recompute layer), the same step, slower.
  ${QUANTIZE_NOTE} Under a LoRA adapter they stay frozen at that
  format (QLoRA with q8, q4); --full trains f32 weights and takes only --quantize none.
  ${REVISION_NOTE}`;

/** Whether two existing paths are one file or folder (the same device and inode), however each is spelt. */
function sameFile(a: string, b: string): boolean {
  const x = statSync(a);
  const y = statSync(b);
  return x.dev === y.dev && x.ino === y.ino;
}

/** Device memory for the fit check: the machine's RAM on the CPU backend; WebGPU tells only its buffer limit. */
function deviceLimits(backend: Backend): { memoryBytes?: number; maxBufferBytes?: number } {
  if (backend.kind === 'cpu') return { memoryBytes: totalmem() };
  const limits = (backend as Backend & { device?: GPUDevice }).device?.limits;
  return limits ? { maxBufferBytes: Math.min(limits.maxStorageBufferBindingSize, limits.maxBufferSize) } : {};
}

export async function trainCommand(argv: string[], io: CliIo): Promise<void> {
  const v = parse(argv, {
    model: { type: 'string' },
    data: { type: 'string' },
    out: { type: 'string' },
    full: { type: 'boolean' },
    'freeze-embedding': { type: 'boolean' },
    resume: { type: 'boolean' },
    'weight-decay': { type: 'string' },
    'lora-rank': { type: 'string' },
    'lora-alpha': { type: 'string' },
    targets: { type: 'string' },
    lr: { type: 'string' },
    steps: { type: 'string' },
    batch: { type: 'string' },
    seed: { type: 'string' },
    beta: { type: 'string' },
    'kl-type': { type: 'string', default: 'low_var_kl' },
    'clip-low': { type: 'string' },
    'clip-high': { type: 'string' },
    temperature: { type: 'string' },
    recompute: { type: 'string', default: 'none' },
    json: { type: 'boolean' },
    ...FORCE_OPTION,
    ...BACKEND_OPTION,
    ...QUANTIZE_OPTION,
    ...REVISION_OPTION,
  });
  const dataFile = required(v, 'data');
  const outDir = notStdout(required(v, 'out'), 'out', 'a folder');
  const modelArg = required(v, 'model');
  const revision = revisionOption(v);
  const full = v.full === true;
  const loraOnly = ['lora-rank', 'lora-alpha', 'targets'].filter((k) => v[k] !== undefined);
  if (full && loraOnly.length) throw new UsageError(`--full trains every weight; --${loraOnly[0]} is a LoRA option`);
  const fullOnly = ['freeze-embedding', 'resume'].filter((k) => v[k] !== undefined);
  if (!full && fullOnly.length) throw new UsageError(`--${fullOnly[0]} needs --full`);
  const weightFormat = weightFormatOption(v) ?? (full ? 'f32' : 'auto');
  if (full && weightFormat !== 'f32')
    throw new UsageError(`--full trains every weight in f32, so it loads f32 weights; use --quantize none (or leave it out), not ${v.quantize}`);
  // Before any work: training for an hour and then finding the folder taken loses the hour.
  const writes: WriteOptions = { option: 'out', force: v.force === true };
  if (existsSync(modelArg) && existsSync(outDir) && sameFile(modelArg, outDir)) {
    throw new UsageError(`--out ${outDir} is the --model folder: writing there would replace the weights training starts from; name another folder`);
  }
  checkOutputFolder(outDir, full ? [...COPIED_FILES, MODEL_WEIGHTS, OPTIMIZER_FILE] : [PEFT_WEIGHTS, PEFT_CONFIG], writes);
  const rows = parseTrainData(decodeTrainData(readLocalFile(dataFile, FILE_LIMITS.trainData), dataFile), dataFile);
  const targets = String(v.targets ?? 'q,k,v,o,gate,up,down')
    .split(',')
    .map((t) => `${t.trim()}_proj`);
  const bad = targets.filter((t) => !PROJECTIONS.includes(t as Projection));
  if (bad.length) throw new UsageError(`--targets: unknown ${bad.join(', ')}; use q,k,v,o,gate,up,down`);
  const rank = number(v, 'lora-rank', 16, isPositiveInt);
  const recompute = v.recompute;
  if (recompute !== 'none' && recompute !== 'layer') throw new UsageError(`--recompute must be none or layer, got ${JSON.stringify(recompute)}`);
  const klType = v['kl-type'];
  if (!KL_TYPES.includes(klType as KlType)) throw new UsageError(`--kl-type must be ${KL_TYPES.join(' or ')}, got ${JSON.stringify(klType)}`);
  const defaults = full ? DEFAULT_FULL_TRAIN : DEFAULT_TRAIN;
  const klCoef = number(v, 'beta', 0, isNonNegative);
  const settings: TrainSettings = {
    ...defaults,
    lr: number(v, 'lr', defaults.lr, isNonNegative),
    weightDecay: number(v, 'weight-decay', defaults.weightDecay, isNonNegative),
    klCoef,
    klType: klType as KlType,
    epsLow: number(v, 'clip-low', defaults.epsLow, isNonNegative),
    epsHigh: number(v, 'clip-high', defaults.epsHigh, isNonNegative),
    recompute,
    temperature: scoringTemperature(number(v, 'temperature', 1, isNonNegative)),
  };
  const optimizerFile = join(modelArg, OPTIMIZER_FILE);
  if (v.resume && !existsSync(optimizerFile))
    throw new UsageError(`--resume: ${optimizerFile} not found; resume from a folder that nextstate train --full wrote`);
  const backend = await createBackend(v.backend);
  const used = resolveWeightFormat(weightFormat, backend);
  let policy: Policy;
  let trainer: Trainer;
  let lora: LoraAdapter | undefined;
  let reference: Reference | undefined;
  if (full) {
    const source = modelSource(modelArg, { revision });
    // Before anything is loaded: the weights, their gradients and moments, and the KL term's frozen copy.
    checkFullTrainingFits(await loadConfig(source), { ...deviceLimits(backend), copies: klCoef > 0 ? 1 : 0 });
    policy = await Policy.load(source, backend, { weightFormat: used, ...loadProgress(io.progress, modelArg) });
    const t = new FullTrainer(policy.model, settings, { freezeEmbedding: v['freeze-embedding'] === true });
    if (v.resume) t.restoreOptimizer(optimizerFromSafetensors(readModelFile(modelArg, OPTIMIZER_FILE)));
    if (klCoef > 0) reference = { kind: 'model', model: new CausalLM(backend, policy.config, copyWeights(backend, policy.model)) };
    trainer = t;
  } else {
    ({ policy } = await loadPolicy(modelArg, backend, { weightFormat: used, revision, progress: io.progress }));
    lora = LoraAdapter.init(
      backend,
      policy.config,
      { rank, alpha: number(v, 'lora-alpha', 2 * rank, isNonNegative), targets: targets as Projection[] },
      number(v, 'seed', 0, Number.isInteger),
    );
    trainer = new LoraTrainer(policy.model, lora, settings);
  }
  const samples = rows.map((r, i) => toTrainSample(policy, r, i));
  const meanLogp = async () => {
    const scored = await score(policy.model, samples, { lora, temperature: settings.temperature });
    const all = scored.flatMap((s) => Array.from(s.logprobs));
    return all.reduce((a, b) => a + b, 0) / all.length;
  };
  const before = await meanLogp();
  const steps = number(v, 'steps', 1, isPositiveInt);
  const batch = number(v, 'batch', Math.min(16, samples.length), isPositiveInt);
  const started = Date.now();
  for (let s = 0; s < steps; s++) {
    const picked = Array.from({ length: batch }, (_, i) => samples[(s * batch + i) % samples.length]);
    const stats = await trainer.trainStep(picked, { reference });
    if (v.json) io.out(JSON.stringify(stats));
    else
      io.progress(
        `step ${stats.step}/${steps}: loss ${stats.loss.toFixed(5)} grad-norm ${stats.gradNorm.toFixed(4)} entropy ${stats.entropy.toFixed(3)} ${stats.stepMs.toFixed(0)} ms${stats.skipped ? ` SKIPPED: ${stats.skipped}` : ''}${timeLeft(started, s + 1, steps)}`,
      );
  }
  const after = await meanLogp();
  // Every file is made before the first is written, and written beside the folder first.
  if (lora) {
    const files = await adapterToPeft(backend, lora, policy.source.id);
    writeOutputFolder(
      outDir,
      [
        [PEFT_WEIGHTS, files[PEFT_WEIGHTS]],
        [PEFT_CONFIG, files[PEFT_CONFIG]],
      ],
      writes,
    );
  } else {
    const files = await fullModelFolder(policy.model, policy.source);
    files.set(OPTIMIZER_FILE, optimizerToSafetensors(await trainer.optimizerState(), parameterShape(policy.model)));
    writeOutputFolder(outDir, files, writes);
  }
  io.out(JSON.stringify({ before, after, weightFormat: used }));
  io.note(`${lora ? 'adapter' : 'model'} written to ${outDir}`);
}
