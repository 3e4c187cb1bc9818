/** Command-line flags of `npm run bench -- ...`. */
import { parseArgs } from 'node:util';

export interface BenchArgs {
  quick: boolean;
  models: string[];
  budgetS?: number;
  browser: boolean;
  dawn: boolean;
  /** Measure only this part (the others take minutes). */
  only: (typeof ONLY)[number] | null;
}

const ONLY = ['durability', 'judge', 'accuracy', 'paper', 'serve', 'hostile'] as const;

export const USAGE = `npm run bench -- [--quick] [--model DIR]... [--budget SECONDS] [--no-browser] [--no-dawn]

  --quick        256^3 matmul, shorter prompts and decodes, 20 s per measurement (default: 1024^3, 60 s)
  --model DIR    also measure this Hugging Face model folder (repeatable); the tiny fixture,
                 stories260K from data/models (or NEXTSTATE_SHARED) and stories-wide-random (random
                 weights 256 wide on stories260K's tokenizer) are always measured
  --budget S     most seconds one measurement may take; slower ones are reported as skipped
  --no-browser   skip headless Chromium (the engine there and the transformers.js peer)
  --no-dawn      skip the engine's WebGPU backend in Node
  --only durability
                 measure only what strict IndexedDB durability costs a training step, in headless
                 Chromium with a profile on disk (seconds); written to bench/results/durability.json
  --only judge   measure only what a judged turn costs with transformers.js as the judge (a binary
                 and a hint vote, 64 new tokens each; --quick: 16) on the models' ONNX copies, WASM
                 and WebGPU in headless Chromium; written to bench/results/judge.json
  --only accuracy
                 measure only the weight formats against f32 (top-1 agreement, mean |d log p|,
                 weight bytes) on the CPU and on Dawn; written to bench/results/accuracy.json
  --only paper   measure only the paper's policy size: Qwen3-4B with random q4 weights on Dawn
                 (--quick: Qwen3-0.6B) and Qwen3-0.6B in headless Chromium, loading, generating
                 and one QLoRA step, peak memory against the plan; written to bench/results/paper.json
  --only serve   measure only nextstate serve on the tiny fixture: requests/s and p50/p99 latency at
                 1, 4 and 16 concurrent OpenAI clients on 127.0.0.1, batched (--max-batch 32) and one
                 at a time (--max-batch 1), and their ratio; written to bench/results/serve.json
  --only hostile every hostile input of the security review (devices, FIFOs, endless downloads,
                 runaway configs and templates, overflowing weights, hostile optimizer states,
                 writes through links) given to the real bin, one process each: exit code, the
                 refusal line, seconds and peak memory; written to bench/results/hostile.json

Prints one JSON object to stdout and writes it to bench/results/latest.json; progress goes to stderr.`;

export function parseBenchArgs(argv: string[]): BenchArgs {
  const { values } = parseArgs({
    args: argv,
    options: {
      quick: { type: 'boolean', default: false },
      model: { type: 'string', multiple: true, default: [] },
      budget: { type: 'string' },
      'no-browser': { type: 'boolean', default: false },
      'no-dawn': { type: 'boolean', default: false },
      only: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.error(USAGE);
    process.exit(0);
  }
  const budgetS = values.budget === undefined ? undefined : Number(values.budget);
  if (budgetS !== undefined && !(budgetS > 0)) throw new Error(`--budget takes a positive number of seconds, got "${values.budget}"`);
  if (values.only !== undefined && !(ONLY as readonly string[]).includes(values.only))
    throw new Error(`--only takes ${ONLY.map((o) => `"${o}"`).join(', ')}, got "${values.only}"`);
  return {
    quick: values.quick,
    models: values.model,
    budgetS,
    browser: !values['no-browser'],
    dawn: !values['no-dawn'],
    only: (values.only as BenchArgs['only']) ?? null,
  };
}
