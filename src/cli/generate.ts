import { GREEDY } from '../gpu/sampler';
import type { CliIo } from './io';
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
  BACKEND_USAGE,
} from './engine';
import { isNonNegative, isPositiveInt, number, parse, required, UsageError } from './args';

export const usage = `nextstate generate --model DIR|ID ${REVISION_USAGE} --prompt TEXT [--chat] [--max-new-tokens N]
    [--greedy | --temperature T --top-p P --top-k K --seed S] ${BACKEND_USAGE} ${QUANTIZE_USAGE} [--json]
  ${QUANTIZE_NOTE}
  ${REVISION_NOTE}`;

export async function generateCommand(argv: string[], { out, progress }: CliIo): Promise<void> {
  const v = parse(argv, {
    model: { type: 'string' },
    prompt: { type: 'string' },
    chat: { type: 'boolean' },
    'max-new-tokens': { type: 'string' },
    greedy: { type: 'boolean' },
    temperature: { type: 'string' },
    'top-p': { type: 'string' },
    'top-k': { type: 'string' },
    seed: { type: 'string' },
    json: { type: 'boolean' },
    ...BACKEND_OPTION,
    ...QUANTIZE_OPTION,
    ...REVISION_OPTION,
  });
  const prompt = required(v, 'prompt');
  const temperature = number(v, 'temperature', 0, isNonNegative);
  if (v.greedy && temperature > 0) throw new UsageError('--greedy and --temperature exclude each other');
  const sampling =
    v.greedy || temperature === 0
      ? GREEDY
      : {
          temperature,
          topP: number(v, 'top-p', 1, (p) => p > 0 && p <= 1),
          topK: number(v, 'top-k', 0, (k) => Number.isInteger(k) && k >= 0),
        };
  const { policy, weightFormat } = await loadPolicy(required(v, 'model'), await createBackend(v.backend), {
    weightFormat: weightFormatOption(v),
    revision: revisionOption(v),
    progress,
  });
  const [g] = await policy.generate([v.chat ? [{ role: 'user', content: prompt }] : prompt], {
    maxNewTokens: number(v, 'max-new-tokens', 128, isPositiveInt),
    sampling,
    seed: number(v, 'seed', 0, Number.isInteger),
  });
  out(v.json ? JSON.stringify({ text: g.text, tokens: g.tokens, logprobs: g.logprobs, weightFormat }) : g.text);
}
