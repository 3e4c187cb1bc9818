/** A frozen model on the project's engine as a judge, simulated user or evaluator. */
import type { ChatMessage } from '../rl/messages';
import type { Policy } from '../gpu/policy';
import type { GenerateOptions, TextGenerator } from './generator';

export class EngineGenerator implements TextGenerator {
  readonly kind = 'engine' as const;
  readonly label: string;

  constructor(
    private readonly policy: Policy,
    label?: string,
  ) {
    this.label = label ?? `engine: ${policy.source.id}`;
  }

  async generate(messages: ChatMessage[], opts: GenerateOptions = {}): Promise<string> {
    const temperature = opts.temperature ?? 0.6;
    const [g] = await this.policy.generate([messages], {
      maxNewTokens: opts.maxNewTokens ?? 512,
      sampling: { temperature, topP: opts.topP ?? 1, topK: 0 },
      seed: opts.seed ?? 0,
      signal: opts.signal,
    });
    // A cut-off answer is not an answer: callers must not take it for the model's reply.
    if (g.finishReason === 'aborted') throw opts.signal?.reason ?? new DOMException('generation aborted', 'AbortError');
    return g.text;
  }
}
