/** `nextstate plan`: the memory a model needs, by category, from its config.json alone. */
import { existsSync, statSync } from 'node:fs';
import type { CliIo } from './io';
import { basename, dirname, join } from 'node:path';
import { PROJECTIONS } from '../models/config';
import { DEFAULT_LORA } from '../gpu/lora';
import { planMemoryFromJson, type MemoryPlan, type PlanCategories } from '../gpu/plan';
import { readJson } from '../models/source';
import { DirSource, modelSource, packageRoot } from '../models/source-node';
import { DEFAULT_TRAIN } from '../gpu/train-types';
import { isPositiveInt, number, parse, required, UsageError } from './args';
import { QUANTIZE_OPTION, QUANTIZE_USAGE, quantizeOption, REVISION_OPTION, REVISION_USAGE, revisionOption } from './engine';
import { terminalField } from './terminal';
import { gib } from '../base/bytes';

export const usage = `nextstate plan --model DIR|CONFIG.json|NAME|ID ${REVISION_USAGE} ${QUANTIZE_USAGE} [--lora-rank 16 (0: none)]
    [--targets q_proj,...] [--train 16x512] [--micro-batch-tokens 2048] [--recompute none|layer]
    [--generate BxT] [--adapter-copies 1] [--full [--freeze-embedding] [--weight-copies 0]]
    [--backend webgpu|cpu] [--no-shader-f16] [--json]
  NAME is a config shipped in data/model-configs (e.g. Qwen3-4B); nothing but config.json is read
  (of a hub ID, at --revision, through the Hugging Face cache).
  --quantize defaults to f16 (none with --full); --recompute layer plans nextstate train --recompute layer.`;

/** "16x512" -> 16 sequences of 512 tokens. */
function shape(v: Record<string, unknown>, name: string): { n: number; tokens: number } | null {
  const x = v[name];
  if (x === undefined) return null;
  const m = typeof x === 'string' ? /^(\d+)x(\d+)$/.exec(x) : null;
  if (!m || !isPositiveInt(Number(m[1])) || !isPositiveInt(Number(m[2])))
    throw new UsageError(`--${name} must be SEQUENCESxTOKENS such as 16x512, got ${JSON.stringify(x)}`);
  return { n: Number(m[1]), tokens: Number(m[2]) };
}

/** config.json of a folder, a .json file, a config shipped in data/model-configs, or a hub id (config.json only). */
async function readConfig(model: string, revision?: string): Promise<{ json: unknown; from: string }> {
  // Stat, unlike open, never blocks on a FIFO; the reader then refuses anything but a regular file.
  if (existsSync(model)) {
    const file = statSync(model).isDirectory() ? join(model, 'config.json') : model;
    return { json: await readJson(new DirSource(dirname(file)), basename(file)), from: file };
  }
  const shipped = join(packageRoot(), 'data', 'model-configs', `${model}.json`);
  if (/^[\w.-]+$/.test(model) && existsSync(shipped)) return { json: await readJson(new DirSource(dirname(shipped)), basename(shipped)), from: shipped };
  const source = modelSource(model, { revision });
  return { json: await readJson(source, 'config.json'), from: `${source.id}/config.json` };
}

export async function planCommand(argv: string[], { out }: CliIo): Promise<void> {
  const v = parse(argv, {
    model: { type: 'string' },
    ...QUANTIZE_OPTION,
    ...REVISION_OPTION,
    'lora-rank': { type: 'string' },
    targets: { type: 'string' },
    train: { type: 'string' },
    'micro-batch-tokens': { type: 'string' },
    recompute: { type: 'string', default: 'none' },
    generate: { type: 'string' },
    'adapter-copies': { type: 'string' },
    full: { type: 'boolean' },
    'freeze-embedding': { type: 'boolean' },
    'weight-copies': { type: 'string' },
    backend: { type: 'string', default: 'webgpu' },
    'no-shader-f16': { type: 'boolean' },
    json: { type: 'boolean' },
  });
  const full = v.full === true;
  const quantize = quantizeOption(v) ?? (full ? 'none' : 'f16');
  if (v.backend !== 'webgpu' && v.backend !== 'cpu') throw new UsageError(`--backend must be webgpu or cpu, got ${JSON.stringify(v.backend)}`);
  if (v.recompute !== 'none' && v.recompute !== 'layer') throw new UsageError(`--recompute must be none or layer, got ${JSON.stringify(v.recompute)}`);
  const rank = number(v, 'lora-rank', DEFAULT_LORA.rank, (n) => Number.isInteger(n) && n >= 0);
  const targets = typeof v.targets === 'string' ? v.targets.split(',').map((t) => (t.endsWith('_proj') ? t : `${t}_proj`)) : [...PROJECTIONS];
  const train = shape(v, 'train');
  const gen = shape(v, 'generate');
  const { json, from } = await readConfig(required(v, 'model'), revisionOption(v));
  const plan = planMemoryFromJson(json, {
    quantize,
    backend: v.backend,
    shaderF16: !v['no-shader-f16'],
    lora: rank > 0 && !full ? { rank, targets } : null,
    full: full ? { freezeEmbedding: v['freeze-embedding'] === true, weightCopies: number(v, 'weight-copies', 0, (n) => Number.isInteger(n) && n >= 0) } : null,
    adapterCopies: number(v, 'adapter-copies', 1, isPositiveInt),
    train: train && { sequences: train.n, tokens: train.tokens },
    microBatchTokens: number(v, 'micro-batch-tokens', DEFAULT_TRAIN.microBatchTokens, isPositiveInt),
    recompute: v.recompute,
    generate: gen && { batch: gen.n, tokens: gen.tokens },
  });
  if (v.json) {
    out(terminalField(JSON.stringify({ config: from, ...plan })));
    return;
  }
  for (const line of planLines(plan, terminalField(from))) out(line);
}

const LABELS: Record<keyof PlanCategories, string> = {
  weights: 'weights',
  kvCache: 'KV cache',
  activations: 'activations kept for the backward',
  lora: 'LoRA weights and gradient',
  optimizer: 'AdamW moments',
  scratch: 'scratch (transient peak)',
};

function planLines(p: MemoryPlan, from: string): string[] {
  const f = p.weightFormat;
  const lines = [
    `${p.architecture} from ${from}: ${p.parameters.toLocaleString('en-US')} parameters` +
      (p.loraParameters ? `, LoRA ${p.loraParameters.toLocaleString('en-US')}` : ''),
    `weights as ${f.storage}${f.groupSize ? ` (groups of ${f.groupSize}, f16 scales, ${f.bitsPerWeight} bits a weight)` : ''}`,
  ];
  const width = Math.max(...Object.values(LABELS).map((l) => l.length));
  const labels = p.training === 'full' ? { ...LABELS, weights: 'weights (and frozen copies)', lora: 'weight gradient' } : LABELS;
  for (const [key, label] of Object.entries(labels) as [keyof PlanCategories, string][]) {
    lines.push(`  ${label.padEnd(width)}  ${gib(p.bytes[key]).padStart(11)}  ${p.bytes[key].toLocaleString('en-US').padStart(16)} bytes`);
  }
  lines.push(`  ${'total'.padEnd(width)}  ${gib(p.bytes.total).padStart(11)}  ${p.bytes.total.toLocaleString('en-US').padStart(16)} bytes`);
  const top = p.largest[0];
  if (top) lines.push(`largest buffer: ${top.name} [${top.shape.join(', ')}], ${gib(top.bytes)}`);
  for (const l of p.limits) {
    const extra = [
      l.splitWeights.length ? `stored split by rows: ${l.splitWeights.join(', ')}` : '',
      l.tooLarge.length ? `too large to bind: ${l.tooLarge.join(', ')}` : '',
    ].filter(Boolean);
    lines.push(`  ${l.name} binding limit: ${l.fits ? 'fits' : 'does not fit'}${extra.length ? ` (${extra.join('; ')})` : ''}`);
  }
  for (const n of p.notes) lines.push(`note: ${n}`);
  return lines;
}
