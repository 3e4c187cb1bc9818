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
  /**
   * Generation ends at the first of these strings, which the reply does not include. Honoured by
   * transformers.js models and endpoints; others ignore it.
   */
  stop?: string[];
  signal?: AbortSignal;
}

/** What played a role, for the run file: the library and its version, the device, the model. */
export interface GeneratorSource {
  kind: GeneratorKind;
  /** e.g. "@huggingface/transformers 4.3.2". */
  library?: string;
  /** e.g. "webgpu", "wasm", "cpu". */
  device?: string;
  /** Hub id, folder name or endpoint model. */
  model?: string;
  /** Weight variant, e.g. "q4", "fp32". */
  dtype?: string;
}

/** Anything that answers a chat: the policy engine, a frozen judge, a simulated user. */
export interface TextGenerator {
  readonly label: string;
  readonly kind: GeneratorKind;
  /** What plays the role, where the generator knows it. */
  readonly source?: GeneratorSource;
  generate(messages: ChatMessage[], opts?: GenerateOptions): Promise<string>;
}
