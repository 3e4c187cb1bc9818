import type { CliIo } from './io';
import { adapterFromPeft, PEFT_CONFIG, PEFT_WEIGHTS } from '../gpu/peft';
import { readModelFile } from '../models/source-node';
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
import { parse, required } from './args';

export const usage = `nextstate score --model DIR|ID ${REVISION_USAGE} --prompt TEXT --completion TEXT [--adapter DIR]
    ${BACKEND_USAGE} ${QUANTIZE_USAGE} [--json]
  ${QUANTIZE_NOTE}
  ${REVISION_NOTE}`;

export async function scoreCommand(argv: string[], { out, progress }: CliIo): Promise<void> {
  const v = parse(argv, {
    model: { type: 'string' },
    prompt: { type: 'string' },
    completion: { type: 'string' },
    adapter: { type: 'string' },
    json: { type: 'boolean' },
    ...BACKEND_OPTION,
    ...QUANTIZE_OPTION,
    ...REVISION_OPTION,
  });
  const backend = await createBackend(v.backend);
  const { policy, weightFormat } = await loadPolicy(required(v, 'model'), backend, {
    weightFormat: weightFormatOption(v),
    revision: revisionOption(v),
    progress,
  });
  const lora =
    typeof v.adapter === 'string'
      ? adapterFromPeft(backend, policy.config, {
          weights: readModelFile(v.adapter, PEFT_WEIGHTS),
          config: new TextDecoder().decode(readModelFile(v.adapter, PEFT_CONFIG)),
        })
      : undefined;
  const [s] = await policy.scoreText([{ prompt: required(v, 'prompt'), completion: required(v, 'completion') }], lora);
  const logprobs = Array.from(s.logprobs);
  const sum = logprobs.reduce((a, b) => a + b, 0);
  if (v.json) {
    out(JSON.stringify({ tokens: s.tokens, logprobs, sum, weightFormat }));
    return;
  }
  s.tokens.forEach((t, i) => out(`${String(t).padStart(7)}  ${logprobs[i].toFixed(5).padStart(10)}  ${JSON.stringify(policy.tokenizer.decode([t], false))}`));
  out(`sum ${sum.toFixed(5)} over ${s.tokens.length} tokens (weights ${weightFormat})`);
}
