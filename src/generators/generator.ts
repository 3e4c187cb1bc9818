import type { ChatMessage } from '../rl/messages';

/**
 * Where a generator's text comes from. The run loop treats every kind alike; the kind is shown to
 * the person so that a rule-based simulator is never mistaken for a model.
 */
export type GeneratorKind = 'engine' | 'transformers' | 'endpoint' | 'rules';

export interface GenerateOptions {
  temperature?: number;
  topP?: number;
  maxNewTokens?: number;
  /** Backends that cannot seed their sampler ignore it. */
  seed?: number;
  signal?: AbortSignal;
}

/** Anything that answers a chat: the policy engine, a frozen judge, a simulated user. */
export interface TextGenerator {
  readonly label: string;
  readonly kind: GeneratorKind;
  generate(messages: ChatMessage[], opts?: GenerateOptions): Promise<string>;
}
