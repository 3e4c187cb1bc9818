/**
 * `npm run bench -- --only accuracy`: each weight format against the f32 engine on the same
 * model, on the CPU reference and on WebGPU (Dawn): teacher-forced mean |d log p| and top-1
 * agreement on the f32 model's own samples (src/gpu/accuracy.ts), and the bytes each format
 * stores; beside them the 4-bit codecs q4 was chosen over (NF4 on every matrix, and llama.cpp's
 * Q4_0, both as fake-quantized f32), and the planner's weight bytes for the paper's model sizes.
 */
import { readFileSync } from 'node:fs';
import { agreement, fakeQuantized, sampledSequences, type Agreement } from '../../src/gpu/accuracy';
import type { Backend } from '../../src/gpu/backend';
import { CpuBackend } from '../../src/gpu/cpu/backend';
import { planMemoryFromJson, quantizeOf } from '../../src/gpu/plan';
import { Policy } from '../../src/gpu/policy';
import { bitsPerWeight, type Codec, type WeightFormat } from '../../src/gpu/quant';
import type { ScoreItem } from '../../src/gpu/score';
import { DirSource } from '../../src/models/source-node';
import { createNodeWebGPUBackend } from '../../src/gpu/webgpu/node';
import { attempt } from '../lib/attempt';
import type { Maybe } from '../lib/types';
import { log } from './log';
import type { BenchModel } from './models';

const FORMATS = ['f16', 'q8', 'q4'] as const;
/** The targets for top-1 agreement with f32. */
export const TARGETS: Record<(typeof FORMATS)[number], number> = { f16: 0.99, q8: 0.98, q4: 0.9 };
const PROMPTS = ['Once upon a time', 'The little dog', 'One day, a girl named Lily', 'Tom had a red ball'];
/** The shipped configs whose weight bytes per format the report plans (data/model-configs). */
const PLANNED = ['Qwen3-0.6B', 'Qwen3-4B'];

export interface FormatAccuracy extends Agreement {
  weightBytes: number;
}

export interface ModelAccuracy {
  positions: number;
  f32WeightBytes: number;
  formats: Record<string, Maybe<FormatAccuracy>>;
  /** Fake-quantized codecs (f32 storage of the codec's values), on the CPU only. */
  codecs?: Record<string, Agreement>;
}

async function measureOn(be: () => Promise<Backend>, model: BenchModel, items: (ref: Policy) => Promise<ScoreItem[]>, codecs: boolean): Promise<ModelAccuracy> {
  const backend = await be();
  try {
    const source = new DirSource(model.dir);
    const ref = await Policy.load(source, backend, { weightFormat: 'f32' });
    const seqs = await items(ref);
    const formats: ModelAccuracy['formats'] = {};
    for (const f of FORMATS) {
      formats[f] = await attempt(
        `${model.name} ${f} on ${backend.kind}`,
        async () => {
          const p = await Policy.load(source, backend, { weightFormat: f });
          const a = { ...(await agreement(ref.model, p.model, seqs)), weightBytes: p.weightBytes };
          for (const t of p.model.weights.values()) backend.dispose(t);
          return a;
        },
        log,
      );
    }
    const out: ModelAccuracy = { positions: seqs.reduce((n, s) => n + s.completion.length, 0), f32WeightBytes: ref.weightBytes, formats };
    if (codecs) {
      out.codecs = {};
      // q4's codec on every matrix (the embedding too), and Q4_0 with the same bytes.
      for (const [name, codec] of [
        ['nf4 (q4 with the embedding in 4 bits too)', 'q4'],
        ['int4 (Q4_0, the same bytes as q4)', 'int4'],
      ] as [string, Codec][]) {
        out.codecs[name] = await agreement(ref.model, await fakeQuantized(ref.model, codec), seqs);
      }
    }
    return out;
  } finally {
    (backend as { destroy?: () => void }).destroy?.();
  }
}

export async function accuracySuite(models: BenchModel[], opts: { sequences: number; tokens: number; dawn: boolean }) {
  const out: Record<string, { cpu: Maybe<ModelAccuracy>; webgpu: Maybe<ModelAccuracy> }> = {};
  for (const m of models) {
    log(`accuracy: ${m.name}`);
    // The same sequences on both backends: sampled once, by the CPU's f32 model.
    let cached: ScoreItem[] | null = null;
    const items = async (ref: Policy) =>
      (cached ??= await sampledSequences(
        ref.model,
        PROMPTS.map((p) => ref.promptIds(p)),
        opts.sequences,
        opts.tokens,
      ));
    const cpu = await attempt(`${m.name} on the CPU`, () => measureOn(async () => new CpuBackend(), m, items, true), log);
    const webgpu: Maybe<ModelAccuracy> = opts.dawn
      ? await attempt(`${m.name} on WebGPU (Dawn)`, () => measureOn(createNodeWebGPUBackend, m, items, false), log)
      : { skipped: '--no-dawn' };
    out[m.name] = { cpu, webgpu };
  }
  const planned = Object.fromEntries(
    PLANNED.map((name) => {
      const config = JSON.parse(readFileSync(new URL(`../../data/model-configs/${name}.json`, import.meta.url), 'utf8')) as unknown;
      const bytes = (format: WeightFormat) =>
        planMemoryFromJson(config, { quantize: quantizeOf(format), backend: 'webgpu', lora: null, train: null }).bytes.weights;
      return [name, Object.fromEntries((['f32', ...FORMATS] as WeightFormat[]).map((f) => [f, { weightBytes: bytes(f), bitsPerWeight: bitsPerWeight(f) }]))];
    }),
  );
  return { targets: TARGETS, sequences: { count: opts.sequences, tokens: opts.tokens, prompts: PROMPTS, temperature: 1, seed: 1 }, models: out, planned };
}
